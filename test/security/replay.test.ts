/**
 * Issue 13 item 4: replay after the dedupe ledger has forgotten an order (print-protocol v1.1 §4
 * freshness). Before, a genuine instruction replayed ~105 days later printed unmarked: retention
 * had pruned its job and its ledger keys. Now, while the system clock is known to be synchronized,
 * an instruction whose createTime is older than the anti-replay age (7 days) is stored `failed`
 * STALE_ORDER, reported and not printed (`jobs retry` prints it); a late one younger than that
 * prints; a duplicate is still a duplicate. While the clock is not known to be
 * synchronized the age is not checked (a Pi without RTC must never drop a receipt) and the event
 * says so.
 *
 * Fixtures use the current time, formatted in the zone the agent reads (the host's: no zone
 * configured), and each store sets `freshness.clock` explicitly: the file passes on any date and
 * on synchronized and unsynchronized machines alike.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { faultSuite, nowCreateTime } from '../faults/harness.js';
import { runCliInProcess } from '../helpers/cli.js';

const DAY = 86_400_000;

describe('replay of an old genuine instruction (child process)', {
  skip: skipWithoutMosquitto(),
}, () => {
  const env = faultSuite();

  it('clock synchronized: 105 days old is STALE_ORDER, not printed; 2 hours old prints; retry prints the stale one', async () => {
    const s = await env.stores.create({
      name: 'replay',
      broker: env.broker,
      configure: (c) => {
        c.freshness = { clock: 'synchronized', maxAgeDays: 7 };
      },
    });
    const agent = await s.startOnline();
    // The replay: a genuine instruction 105 days old that this agent no longer remembers (its
    // job and ledger keys pruned long ago: here, never seen).
    const replay = s.envelope(s.instruction(1, {}, { createTime: nowCreateTime(-105 * DAY) }));
    await s.publishRaw(replay);
    const failed = await s.waitForState(1, 'failed');
    assert.equal(failed.reason?.code, 'STALE_ORDER');
    assert.match(
      failed.reason!.message,
      /105(\.0)? days old, older than 7 days \(freshness\.maxAgeDays\)/,
    );
    assert.deepEqual(s.states(1), ['failed'], 'stored failed at once: no queued, no printing');
    // The log comes through the child's stdout, which may trail its MQTT events.
    await waitFor('the stale log line', () =>
      /stale instruction stored failed, not printed/.test(s.output),
    );

    // A late one (the broker held it for two hours) still prints. LATE stays the store-time rule
    // (decision 55): createTime's zone is only configured, an hour's error must not mark it.
    await s.publish(2, {}, { createTime: nowCreateTime(-2 * 3_600_000) });
    await s.waitForState(2, 'printed');
    assert.equal(s.printsByOrder().get(s.orderNo(2))?.length, 1);
    assert.equal(s.printsByOrder().has(s.orderNo(1)), false, 'the replay never printed');

    // A duplicate is a duplicate before the age: the replay again is answered duplicate.
    await s.publishRaw(replay);
    await waitFor('duplicate', () => s.states(1).includes('duplicate'), 20_000);

    // A person decides it was genuine: `jobs retry` prints it.
    const job = await runCliInProcess([
      'jobs',
      'list',
      '--state',
      'failed',
      '--json',
      '--state-dir',
      s.stateDir,
    ]);
    assert.equal(job.status, 0, job.stderr);
    const [stale] = JSON.parse(job.stdout) as Array<{ id: number; jobId: string }>;
    assert.equal(stale?.jobId, s.jobId(1));
    const retried = await runCliInProcess([
      'jobs',
      'retry',
      String(stale!.id),
      '--state-dir',
      s.stateDir,
    ]);
    assert.equal(retried.status, 0, retried.stderr);
    await waitFor('the retried job printed', () => s.states(1).includes('printed'), 20_000);
    assert.equal(s.printsByOrder().get(s.orderNo(1))?.length, 1);
    assert.ok(agent.alive);
    s.assertInvariants({ expected: [s.orderNo(1), s.orderNo(2)] });
  });

  it('clock not known synchronized: the age is not checked, the receipt prints, and the event says why', async () => {
    const s = await env.stores.create({
      name: 'replayu',
      broker: env.broker,
      configure: (c) => {
        c.freshness = { clock: 'unsynchronized' };
      },
    });
    await s.startOnline();
    // A Pi that booted in 1970 (or 105 days behind) must not drop a paid receipt.
    await s.publish(1, {}, { createTime: nowCreateTime(-105 * DAY) });
    await s.waitForState(1, 'printed');
    const queued = s.eventsOf(1).find((e) => e.state === 'queued');
    assert.deepEqual(
      queued?.warnings?.map((w) => w.code),
      ['CLOCK_UNSYNCHRONIZED'],
    );
    assert.match(queued!.warnings![0]!.message, /freshness\.clock: unsynchronized.*not checked/);
    assert.equal(queued?.markings, undefined, 'no LATE from a clock nobody trusts');
    await waitFor('the unchecked ages log line', () =>
      /instruction ages are not checked/.test(s.output),
    );
    s.assertInvariants();
  });
});
