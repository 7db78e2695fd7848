/**
 * Issue 13 item 11: job events carry `eventId` (print-protocol v1.1 §6), unique per event and the
 * same on every redelivery, so the service (and the tests) count distinct events under QoS 1's
 * at-least-once delivery.
 *
 * The redelivery is made real, and certain: the agent reaches the broker through our TCP proxy.
 * A job waits for paper, and every event the agent sent so far has been acknowledged (its outbox
 * in the SQLite file is empty). The proxy then drops everything the broker sends the agent, while
 * the agent's own packets still get through; the paper comes back, the agent prints the job and
 * publishes its events: the broker takes them and passes them to the service, and their PUBACKs
 * are dropped. Once the service has an event still in the agent's outbox (so never acknowledged),
 * the event is lost for the agent in one of the two ways at-least-once delivery covers:
 * - the link is reset: after reconnecting, mqtt.js sends the unacknowledged publish again;
 * - the agent is killed: the next agent process publishes it again from its outbox.
 * Either way the service receives it twice, with one `eventId`: one event.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import Database from '../../src/host/sqlite.js';
import { DATABASE_FILE } from '../../src/jobs/store.js';
import type { JobEvent } from '../../src/protocol/print-protocol.js';
import { type FaultStore, faultSuite } from '../faults/harness.js';

describe('eventId (child process)', { skip: skipWithoutMosquitto() }, () => {
  const env = faultSuite({ persistence: true });

  /**
   * A store whose agent talks to the broker through a proxy, with orders 1 to 3 printed; the
   * agent is stopped when the test `t` ends.
   */
  async function storeWithHistory(t: TestContext, name: string): Promise<FaultStore> {
    const s = await env.stores.create({
      name,
      broker: env.broker,
      brokerProxy: true,
      // No keepalive ping while broker-to-agent bytes are dropped: the test ends that itself.
      keepaliveSec: 60,
    });
    t.after(() => s.stopAgent());
    await s.startOnline();
    for (let n = 1; n <= 3; n++) await s.publish(n);
    await waitFor(
      'three printed',
      () => [1, 2, 3].every((n) => s.states(n).includes('printed')),
      20_000,
    );
    return s;
  }

  /** The job events in the agent's outbox, from its database file (removed after their PUBACK). */
  function outboxOf(t: TestContext, s: FaultStore): () => JobEvent[] {
    const db = new Database(join(s.stateDir, DATABASE_FILE), {
      readonly: true,
      fileMustExist: true,
    });
    t.after(() => db.close());
    const rows = db.prepare("SELECT payload FROM outbox WHERE kind = 'job' ORDER BY id");
    return () =>
      (rows.all() as Array<{ payload: string }>).map((r) => JSON.parse(r.payload) as JobEvent);
  }

  /**
   * Order `n` waits for paper; then broker-to-agent bytes are dropped and the paper comes back.
   * Returns an event of order `n` the service has received and the agent holds unacknowledged.
   */
  async function loseAPuback(s: FaultStore, outbox: () => JobEvent[], n: number) {
    const proxy = s.brokerProxy!;
    s.emulator.setFault('paper-out', true);
    await waitFor('paper out', () => s.printerState() === 'paper-out', 15_000);
    await s.publish(n);
    await s.waitForState(n, 'waiting');
    // Switched in the same turn as the check (the proxy forwards nothing in between): every event
    // written before it was acknowledged, every PUBACK after it is dropped.
    await waitFor('every event so far acknowledged', () => outbox().length === 0, 20_000);
    proxy.setMode('drop-to-client');
    s.emulator.setFault('paper-out', false);
    let lost: JobEvent | undefined;
    await waitFor(
      'an event the service received and the agent holds unacknowledged',
      () => {
        const received = new Set(s.messages.map((e) => e.eventId));
        lost = outbox().find((e) => received.has(e.eventId));
        return lost !== undefined;
      },
      30_000,
    );
    assert.equal(lost!.jobId, s.jobId(n));
    await waitFor('a PUBACK dropped on its way to the agent', () => proxy.droppedBytes.down > 0);
    assert.equal(proxy.droppedBytes.up, 0, 'everything the agent sent got through');
    return lost!;
  }

  const copiesOf = (s: FaultStore, event: JobEvent) =>
    s.messages.filter((e) => e.eventId === event.eventId);

  it('distinct events have distinct ids; an event published again after a lost PUBACK has the same id', async (t) => {
    const s = await storeWithHistory(t, 'evid');
    const outbox = outboxOf(t, s);
    const lost = await loseAPuback(s, outbox, 4);

    const proxy = s.brokerProxy!;
    proxy.setMode('pass');
    assert.ok(proxy.reset() >= 1, 'the link was reset');
    await waitFor(
      `the ${lost.state} event of job 4 published again`,
      () => copiesOf(s, lost).length >= 2,
      30_000,
    );
    await s.waitForState(4, 'printed', 30_000);
    await waitFor('the outbox emptied', () => outbox().length === 0, 30_000);
    for (const copy of copiesOf(s, lost)) assert.deepEqual(copy, lost, 'the same event');

    // Every distinct event has its own id: no two events (by content) share one.
    const byId = new Map<string, JobEvent>();
    for (const e of s.messages) {
      const seen = byId.get(e.eventId);
      if (seen) assert.deepEqual(e, seen, `${e.eventId} names two different events`);
      else byId.set(e.eventId, e);
    }
    const distinct = new Set(s.messages.map((e) => JSON.stringify(e)));
    assert.equal(byId.size, distinct.size, 'as many ids as distinct events');
    assert.ok(s.messages.length > byId.size, 'some events were delivered more than once');
    // Counting by eventId gives the truth: one queued and one printed event per order.
    for (let n = 1; n <= 4; n++) {
      const states = s.eventsOf(n).map((e) => e.state);
      assert.equal(states.filter((x) => x === 'queued').length, 1, `${n}: ${states.join()}`);
      assert.equal(states.filter((x) => x === 'printed').length, 1, `${n}: ${states.join()}`);
    }
    assert.ok(s.agent!.alive);
    s.assertInvariants();
  });

  it('an event the agent died before seeing acknowledged is published again by the next process, same id', async (t) => {
    const s = await storeWithHistory(t, 'evid-crash');
    const outbox = outboxOf(t, s);
    const lost = await loseAPuback(s, outbox, 4);

    await s.stopAgent('SIGKILL');
    s.brokerProxy!.setMode('pass');
    await s.startOnline();
    await waitFor(
      `the ${lost.state} event of job 4 published again by the new process`,
      () => copiesOf(s, lost).length >= 2,
      30_000,
    );
    for (const copy of copiesOf(s, lost)) assert.deepEqual(copy, lost, 'the same event');
    await s.waitForState(4, 'printed', 30_000);
    // The job was killed while printing: the new process queues it again (a new event, its own
    // id) and prints it again, marked.
    const states = s.eventsOf(4).map((e) => e.state);
    assert.equal(states.filter((x) => x === 'printed').length, 1, states.join());
    s.assertInvariants();
  });
});
