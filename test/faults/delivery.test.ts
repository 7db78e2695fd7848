/**
 * Delivery guarantees end to end (reliability guarantees 1-3, fault matrix rows 1, 2 and 5):
 * `printer-agent run` as a child process against a real Mosquitto with persistence and the
 * emulator on TCP, through the fault harness.
 *
 * - Row 1: the agent dies (fault point `inbox-before-commit`) after receiving an instruction and
 *   before committing it. Nothing was acked: the restarted agent gets it again from the broker and
 *   prints it once.
 * - Row 2: the agent dies (fault point `after-insert`) after the commit, before the PUBACK. The
 *   broker redelivers, the store answers `duplicate`, and it prints once.
 * - Row 5: the broker restarts in the middle of a burst of 200 instructions: every order prints,
 *   and no order prints twice without a POSSIBLE DUPLICATE or REPRINT marking.
 *
 * Each case has its own store identity (topics, client id) and state directory.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { faultSuite } from './harness.js';

describe('delivery: ack after commit, broker restart (child process)', {
  skip: skipWithoutMosquitto(),
}, () => {
  // Persistence on: the agent's session and its queued messages survive the restart.
  const env = faultSuite({ persistence: true });

  // Invariant: an instruction is acknowledged only after its job is committed, so a crash before
  // the commit leaves it with the broker, which delivers it again; it prints exactly once.
  it('row 1: killed after receiving, before the commit: not acked, redelivered, printed once', async () => {
    const s = await env.stores.create({ name: 'r1', broker: env.broker });
    const killed = await s.startOnline({ PRINTER_AGENT_FAULT: 'inbox-before-commit' });
    await s.publish(1);
    const end = await killed.exited;
    assert.equal(end.signal, 'SIGKILL', s.tail(2000));
    assert.deepEqual(s.states(1), [], 'nothing was stored, so no event');
    assert.equal(s.emulator.paper.tickets.length, 0);

    // Same state dir, same config, no fault: only the broker still has the instruction, which it
    // can only have kept because no PUBACK reached it.
    await s.startOnline();
    await s.waitForState(1, 'printed');
    assert.deepEqual(s.states(1), ['queued', 'printing', 'printed']);
    assert.equal(s.printsByOrder().get(s.orderNo(1))?.length, 1);
    assert.equal(s.emulator.paper.tickets.length, 1);
    s.assertInvariants();
  });

  // Invariant: a redelivery of a committed instruction is answered `duplicate`; it prints once.
  it('row 2: killed after the commit, before the ack: redelivered, duplicate, printed once', async () => {
    const s = await env.stores.create({ name: 'r2', broker: env.broker });
    const killed = await s.startOnline({ PRINTER_AGENT_FAULT: 'after-insert' });
    await s.publish(1);
    const end = await killed.exited;
    assert.equal(end.signal, 'SIGKILL', s.tail(2000));

    await s.startOnline();
    await waitFor(
      'printed and the redelivery answered duplicate',
      () => s.states(1).includes('printed') && s.states(1).includes('duplicate'),
      20_000,
    );
    const states = s.states(1);
    assert.equal(states.filter((x) => x === 'queued').length, 1, states.join(','));
    assert.equal(states.filter((x) => x === 'printed').length, 1, states.join(','));
    assert.equal(states.filter((x) => x === 'duplicate').length, 1, states.join(','));
    assert.ok(
      states.indexOf('queued') < states.indexOf('printing') &&
        states.indexOf('printing') < states.indexOf('printed'),
      states.join(','),
    );
    assert.equal(s.printsByOrder().get(s.orderNo(1))?.length, 1);
    assert.equal(s.emulator.paper.tickets.length, 1);
    s.assertInvariants();
  });

  // Invariants: across a broker restart no acknowledged instruction is lost (persistent session
  // on a persistent broker) and none prints twice unmarked.
  it('row 5: broker restart during a burst of 200: none lost, none printed twice unmarked', async () => {
    const N = 200;
    const s = await env.stores.create({ name: 'r5', broker: env.broker });
    await s.startOnline();

    // First half: published, acknowledged by the broker, printing under way.
    const publishes: Array<Promise<unknown>> = [];
    for (let n = 1; n <= N / 2; n++) publishes.push(s.publish(n));
    await waitFor('some of the burst printed', () => s.printedOrders().length >= 10, 30_000);

    // Broker restart in the middle: the second half is published while it is down or coming
    // back (mqtt.js keeps QoS 1 publishes and sends them after reconnecting).
    const restarted = env.broker.restart();
    for (let n = N / 2 + 1; n <= N; n++) publishes.push(s.publish(n));
    await restarted;
    await Promise.all(publishes);
    // The broker kept the agent's session (persistence), so no gap for catch-up to fill.
    await waitFor(
      'the agent resumed its session',
      () => s.output.includes('"sessionPresent":true'),
      20_000,
    );

    try {
      await waitFor(`all ${N} orders printed`, () => s.printedOrders().length === N, 50_000);
    } catch (error) {
      const printed = new Set(s.printedOrders());
      const missing = [];
      for (let n = 1; n <= N; n++) if (!printed.has(s.orderNo(n))) missing.push(n);
      if (process.env.DELIVERY_DEBUG_DIR) {
        writeFileSync(join(process.env.DELIVERY_DEBUG_DIR, 'agent.log'), s.output);
        writeFileSync(join(process.env.DELIVERY_DEBUG_DIR, 'broker.log'), env.broker.log);
      }
      const queued = new Set(s.events.filter((e) => e.state === 'queued').map((e) => e.jobId));
      throw new Error(
        `${(error as Error).message}: ${printed.size} printed, ${queued.size} queued, missing ${missing.join(' ')}\n${s.tail()}`,
      );
    }
    assert.equal(s.acked.size, N);
    s.assertInvariants();
    // Memory stays bounded through the burst and the reconnect (sampled from /proc).
    assert.ok(s.rssSamples > 0);
    assert.ok(s.maxRssMb < 300, `agent RSS peaked at ${s.maxRssMb.toFixed(0)} MB`);
    assert.ok(s.output.length > 0);
    assert.ok(!s.output.includes(s.storeKey), 'the store key is not in the logs');
  });
});
