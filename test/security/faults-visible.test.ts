/**
 * Issue 13 item 7: faults that vanish or kill (reliability guarantee 11). Before, the spooler's
 * `fault` events had no listener (database errors during commit retries and state conflicts were
 * never logged), and a store read error while the status was built (`Reporter.publishStatus` ->
 * `Agent.status()` -> `store.queueStats()`) became an unhandled rejection that ended the daemon.
 *
 * Now every fault is logged (printer, jobId, code) and shown in the status (`fault`) until the
 * store works again; the daemon stays up, says what is wrong, and prints again when it clears.
 *
 * Nothing real makes an open SQLite database fail its reads on demand, so the failure is injected
 * through the fault-point mechanism (src/jobs/fault-points.ts): with
 * `PRINTER_AGENT_FAULT=store-fails-while:FILE` every store read and write fails like a disk I/O
 * error while FILE exists. The agent is a child process; Mosquitto and the emulator are real.
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { faultSuite, type Json } from '../faults/harness.js';

describe('store faults are visible, never fatal (child process)', {
  skip: skipWithoutMosquitto(),
}, () => {
  const env = faultSuite({ persistence: true });

  it('the store fails: logged, in the status, the daemon stays up; it clears: the held instruction prints', async () => {
    const s = await env.stores.create({ name: 'fv', broker: env.broker });
    const flag = join(s.dir, 'store-broken');
    const agent = await s.startOnline({ PRINTER_AGENT_FAULT: `store-fails-while:${flag}` });
    await s.publish(1);
    await s.waitForState(1, 'printed');

    const fromStatus = s.statuses.length;
    const fromOutput = s.output.length;
    const since = () => s.output.slice(fromOutput);
    writeFileSync(flag, '');
    // Nothing arrives yet: the spooler alone meets the broken store (its loop reads the queue).
    // Its fault is logged with printer, jobId and code, and the status built for it (which
    // cannot read the queue figures either) says what is wrong.
    await waitFor('the spooler fault logged', () => /"msg":"spooler fault"/.test(since()), 30_000);
    const line = since()
      .split('\n')
      .find((l) => l.includes('"msg":"spooler fault"'))!;
    const logged = JSON.parse(line) as Json;
    assert.equal(logged.printer, 'receipt');
    assert.equal(logged.code, 'STORE_FAILED');
    assert.ok('jobId' in logged);
    const faulted = () =>
      s.statuses
        .slice(fromStatus)
        .filter((x) => x.online === true && (x.fault as Json | undefined)?.code === 'STORE_FAILED');
    await waitFor('a status saying STORE_FAILED', () => faulted().length > 0, 30_000);
    assert.match(String((faulted()[0]!.fault as Json).message), /disk I\/O error \(injected/);
    // The log line and the status travel apart (pipe, broker): either may arrive first.
    await waitFor('the queue figures logged unreadable', () =>
      /cannot read the queue figures/.test(since()),
    );

    // An instruction now: the broker takes it, the agent cannot store it.
    await s.publish(2);
    // No ack, reconnect, redelivery, again and again; each refusal rebuilds the status (the path
    // that used to reject unhandled), and we are alive.
    await waitFor(
      'three refused deliveries',
      () => (since().match(/cannot store the message: not acknowledged/g) ?? []).length >= 3,
      30_000,
    );
    assert.ok(agent.alive, 'the daemon is still running');
    assert.ok(!s.states(2).includes('queued'), 'not stored while broken');
    assert.equal(s.prints().length, 1);

    // The disk is back.
    const fromClear = s.statuses.length;
    rmSync(flag);
    await s.waitForState(2, 'printed', 30_000);
    await waitFor(
      'a status without fault',
      () => s.statuses.slice(fromClear).some((x) => x.online === true && !x.fault),
      30_000,
    );
    await waitFor('the fault logged cleared', () => /fault cleared/.test(since()));
    assert.ok(agent.alive);
    assert.equal(s.agent, agent, 'the same process throughout');
    s.assertInvariants();
  });
});
