/**
 * Fault matrix row 8, a flapping link: our proxy resets the agent's broker connection (TCP RST,
 * both sides) every 1 to 2 s while the service publishes a stream of instructions. The agent is a
 * child process; a reset can land between its commit and its PUBACK, so the broker redelivers.
 * This is also the suite's memory check: the agent's RSS is sampled from /proc throughout.
 *
 * Invariants: every acknowledged instruction prints; none prints twice without a marking
 * (redeliveries are answered `duplicate`); reconnects are bounded (about one per reset, no storm)
 * and the agent ends up online; the daemon never exits; its memory stays bounded. Job events are
 * delivered at least once too, so they are counted by distinct `eventId` (print-protocol v1.1 §6):
 * a resent event is the same event.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { faultSuite } from './harness.js';

const N = 80;
/** A generous bound: the agent idles at about 100 MB under tsx. */
const MAX_RSS_MB = 300;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('row 8: flapping broker link (child process)', {
  skip: skipWithoutMosquitto(),
}, () => {
  const env = faultSuite({ persistence: true });

  it('row 8: connection reset every 1-2 s during a stream of 80: all printed, none twice unmarked', async () => {
    const s = await env.stores.create({ name: 'r8', broker: env.broker, brokerProxy: true });
    const agent = await s.startOnline();
    const proxy = s.brokerProxy!;

    let flapping = true;
    const flapper = (async () => {
      while (flapping) {
        await sleep(1000 + Math.random() * 1000);
        if (flapping) proxy.reset();
      }
    })();
    const publishes: Array<Promise<void>> = [];
    for (let n = 1; n <= N; n++) {
      publishes.push(s.publish(n));
      await sleep(120);
    }
    await Promise.all(publishes);
    flapping = false;
    await flapper;
    assert.ok(proxy.resets >= 3, `the link was reset ${proxy.resets} times`);

    try {
      await waitFor(`all ${N} printed`, () => s.printedOrders().length === N, 45_000);
    } catch (error) {
      const printed = new Set(s.printedOrders());
      const missing = [...s.acked].filter((o) => !printed.has(o));
      throw new Error(`${(error as Error).message}: missing ${missing.join(' ')}\n${s.tail()}`);
    }
    await waitFor('online at the end', () => s.lastStatus()?.online === true, 20_000);
    const distinct = (state: string) =>
      new Set(s.messages.filter((e) => e.state === state).map((e) => e.eventId)).size;
    // A job's `printed` event leaves after its cut (confirmation, commit, publish), and one held
    // up by a reset is resent after the reconnect: the last ones can still be on their way.
    await waitFor(`${N} printed events`, () => distinct('printed') >= N, 20_000);
    s.assertInvariants();

    // Bounded reconnects: one per reset, plus one for a reset that hit a connection attempt.
    assert.ok(
      proxy.connections <= 2 * proxy.resetConnections + 2,
      `${proxy.connections} connections for ${proxy.resetConnections} resets`,
    );
    assert.ok(agent.alive, 'the same process throughout');
    const duplicates = distinct('duplicate');
    assert.equal(distinct('printed'), N, `${duplicates} redeliveries answered duplicate`);
    // One printed event per order, whatever the broker resent.
    const printedJobs = s.messages.filter((e) => e.state === 'printed').map((e) => e.jobId);
    assert.equal(new Set(printedJobs).size, N);
    for (const e of s.messages) {
      const first = s.events.find((x) => x.eventId === e.eventId);
      assert.deepEqual(e, first, 'a resent event is the same event');
    }

    assert.ok(s.rssSamples > 10, `${s.rssSamples} RSS samples`);
    assert.ok(s.maxRssMb < MAX_RSS_MB, `agent RSS peaked at ${s.maxRssMb.toFixed(0)} MB`);
    if (process.env.FAULTS_DEBUG)
      console.log({
        resets: proxy.resets,
        connections: proxy.connections,
        duplicates,
        resentEvents: s.messages.length - s.events.length,
        maxRssMb: s.maxRssMb,
      });
  });
});
