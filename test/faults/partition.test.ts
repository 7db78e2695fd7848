/**
 * Fault matrix row 7, a silent network partition between the agent (a child process) and the
 * broker: our proxy holds the connection (nothing passes either way, and neither side is told
 * anything) while the service keeps publishing to the broker. Keepalive is 5 s.
 *
 * Invariant: both ends notice by keepalive alone: the broker publishes the agent's retained last
 * will `{"online":false,...,"at":null}`; the agent drops the dead link and keeps retrying without
 * exiting. When the partition heals it reconnects to its persistent session and prints what was
 * published meanwhile, each order once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { faultSuite } from './harness.js';

describe('row 7: silent network partition (child process)', {
  skip: skipWithoutMosquitto(),
}, () => {
  const env = faultSuite({ persistence: true });

  it('row 7: held connection: keepalive detects it, last will published, agent recovers and prints', async () => {
    const s = await env.stores.create({
      name: 'r7',
      broker: env.broker,
      brokerProxy: true,
      keepaliveSec: 5,
    });
    const agent = await s.startOnline();
    await s.publish(1);
    await s.waitForState(1, 'printed');

    const proxy = s.brokerProxy!;
    const statusesBefore = s.statuses.length;
    const outputBefore = s.output.length;
    const connectionsBefore = proxy.connections;
    proxy.setMode('hold');
    // Published during the partition: the broker has them, the agent cannot get them.
    await s.publish(2);
    await s.publish(3);

    await waitFor(
      'the last will, published by the broker',
      () => s.statuses.slice(statusesBefore).some((x) => x.online === false && x.at === null),
      25_000,
    );
    await waitFor(
      'the agent gave up the dead link and is trying again',
      () => proxy.connections > connectionsBefore,
      25_000,
    );
    // The log travels through a pipe, the will through the broker: either may arrive first.
    await waitFor('"broker offline" logged', () =>
      /broker offline/.test(s.output.slice(outputBefore)),
    );
    assert.ok(agent.alive);
    assert.ok(!s.printsByOrder().has(s.orderNo(2)) && !s.printsByOrder().has(s.orderNo(3)));
    assert.deepEqual(s.states(2), []);

    if (process.env.FAULTS_DEBUG) console.log(s.output.slice(outputBefore));
    proxy.setMode('pass');
    await s.waitForState(3, 'printed', 30_000);
    await s.waitForState(2, 'printed', 5_000);
    await waitFor('online again', () => s.lastStatus()?.online === true, 20_000);
    assert.ok(agent.alive, 'the same process throughout');
    assert.ok(s.output.includes('"sessionPresent":true'));
    assert.deepEqual(s.printedOrders(), [s.orderNo(1), s.orderNo(2), s.orderNo(3)]);
    for (const p of s.prints()) assert.deepEqual(p.markings, []);
    s.assertInvariants();
  });
});
