/**
 * Fault matrix row 3, crash while printing: the agent (a child process) is killed with SIGKILL
 * after part of a receipt has reached the emulator. The printer link is our proxy, throttled so a
 * receipt takes about a second, and lossy: what the proxy had not forwarded when the agent died
 * is lost, like bytes in a cable, so the first copy really is cut short.
 *
 * Invariant: a job found in `printing` after a crash is printed again marked POSSIBLE DUPLICATE;
 * the order is printed in full at least once and never twice without that marking.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { faultSuite } from './harness.js';

/** Bytes of the receipt that reach the emulator before the kill (a receipt is about 900). */
const KILL_AFTER = 300;

describe('row 3: crash while printing (child process)', { skip: skipWithoutMosquitto() }, () => {
  const env = faultSuite({ persistence: true });

  it('row 3: SIGKILL after N bytes reached the emulator: printed again marked POSSIBLE DUPLICATE', async () => {
    const s = await env.stores.create({
      name: 'r3',
      broker: env.broker,
      printerProxy: { throttleBps: 1000, discardOnClose: true },
    });
    const agent = await s.startOnline();
    await s.publish(1);
    // Counting starts with the publish; the status polls before the job add a few bytes only.
    let killedAt = -1;
    const stop = s.countDelivered((total) => {
      if (killedAt < 0 && total >= KILL_AFTER) {
        killedAt = total;
        agent.child.kill('SIGKILL');
      }
    });
    try {
      await waitFor('the kill', () => killedAt >= 0, 20_000);
    } finally {
      stop();
    }
    assert.equal((await agent.exited).signal, 'SIGKILL');
    assert.equal(s.emulator.paper.tickets.length, 0, 'killed mid-job: nothing was cut yet');
    assert.ok(s.emulator.tickets().length === 1, 'a part of the receipt is on the paper');

    // The same store comes back at full speed.
    s.printerProxy!.throttleBps = null;
    await s.startOnline();
    await s.waitForState(1, 'printed');
    const events = s.eventsOf(1);
    // The first `printing` was committed before the first byte, so its event survived the kill in
    // the outbox; the restart re-queued the job and printed it again, marked.
    assert.deepEqual(
      events.map((e) => e.state),
      ['queued', 'printing', 'queued', 'printing', 'printed'],
    );
    assert.deepEqual(events[1]!.markings ?? [], []);
    assert.equal(events[2]!.reason?.code, 'JOB_INTERRUPTED');
    assert.deepEqual(events[3]!.markings, ['POSSIBLE DUPLICATE']);

    const prints = s.printsByOrder().get(s.orderNo(1)) ?? [];
    const last = prints.at(-1)!;
    assert.ok(last.cut && last.markings.includes('POSSIBLE DUPLICATE'), JSON.stringify(prints));
    assert.equal(s.emulator.paper.tickets.length, 1);
    if (process.env.FAULTS_DEBUG) console.log(s.ticketTexts().join('\n=====\n'));
    s.assertInvariants();
  });
});
