/**
 * Issue 13 item 11: job events carry `eventId` (print-protocol v1.1 §6), unique per event and the
 * same on every redelivery, so the service (and the tests) count distinct events under QoS 1's
 * at-least-once delivery.
 *
 * The redelivery is made real: the agent reaches the broker through our TCP proxy; with a delay
 * on the link, the agent's `queued` event reaches the broker (and the service) while the broker's
 * PUBACK is still in the proxy; the link is then reset, so the PUBACK is lost, and the agent
 * publishes the event again after it reconnects. The service receives it twice: one event.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JobEvent } from '../../src/protocol/print-protocol.js';
import { faultSuite } from '../faults/harness.js';
import { skipWithoutMosquitto } from '../helpers/mosquitto.js';
import { waitFor } from '../helpers/waiting.js';

describe('eventId (child process)', { skip: skipWithoutMosquitto() }, () => {
  const env = faultSuite({ persistence: true });

  it('distinct events have distinct ids; an event published again after a lost PUBACK has the same id', async () => {
    const s = await env.stores.create({ name: 'evid', broker: env.broker, brokerProxy: true });
    const agent = await s.startOnline();
    for (let n = 1; n <= 3; n++) await s.publish(n);
    await waitFor(
      'three printed',
      () => [1, 2, 3].every((n) => s.states(n).includes('printed')),
      20_000,
    );

    const proxy = s.brokerProxy!;
    proxy.delayMs = 1500;
    const from = s.messages.length;
    await s.publish(4);
    // The queued event reached the service: its PUBACK is on its way back, held by the delay.
    await waitFor(
      'queued event at the service',
      () => s.messages.slice(from).some((e) => e.jobId === s.jobId(4) && e.state === 'queued'),
      20_000,
    );
    proxy.delayMs = 0;
    proxy.reset();
    await waitFor(
      'the queued event published again',
      () => s.messages.filter((e) => e.jobId === s.jobId(4) && e.state === 'queued').length >= 2,
      30_000,
    );
    await s.waitForState(4, 'printed', 30_000);

    const copies = s.messages.filter((e) => e.jobId === s.jobId(4) && e.state === 'queued');
    assert.equal(new Set(copies.map((e) => e.eventId)).size, 1, 'a redelivery is the same event');
    for (const copy of copies) assert.deepEqual(copy, copies[0]);

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
    assert.ok(agent.alive);
    s.assertInvariants();
  });
});
