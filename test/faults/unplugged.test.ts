/**
 * Fault matrix row 10, printer unplugged mid-job: the emulator's TCP endpoint closes (it stops
 * listening and drops the link, the printer keeps what reached it) while a receipt is on its way,
 * and comes back later on the same port. The emulator's slow link makes the receipt take about a
 * second, so the unplug lands inside it. The agent is a child process.
 *
 * Invariant: the interrupted job goes back to `waiting` (nothing is lost, nothing given up), the
 * queue behind it holds, the status says `disconnected`; after the replug the job prints again
 * marked POSSIBLE DUPLICATE, then the rest in order, each once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { listenTcp } from '../../src/emulator/index.js';
import { skipWithoutMosquitto } from '../helpers/mosquitto.js';
import { waitFor } from '../helpers/waiting.js';
import { faultSuite } from './harness.js';

describe('row 10: printer unplugged mid-job (child process)', {
  skip: skipWithoutMosquitto(),
}, () => {
  const env = faultSuite();

  it('row 10: endpoint closed mid-job: waiting, then printed again marked after the replug', async () => {
    const s = await env.stores.create({ name: 'r10', broker: env.broker });
    await s.startOnline();
    await waitFor('printer ready', () => s.printerState() === 'ready', 15_000);
    const port = s.tcp.port;
    s.tcp.slot.setSlowLink(1000);

    await s.publish(1);
    let unplugged = false;
    const stop = s.countDelivered((total) => {
      if (!unplugged && total >= 300) {
        unplugged = true;
        void s.endpoint.close();
      }
    });
    try {
      await waitFor('the unplug', () => unplugged, 20_000);
    } finally {
      stop();
    }
    assert.equal(s.emulator.paper.tickets.length, 0, 'unplugged before the cut');

    const waiting = await s.waitForState(1, 'waiting');
    assert.match(waiting.reason?.code ?? '', /^PRINTER_(DISCONNECTED|UNREACHABLE)$/);
    await waitFor('status disconnected', () => s.printerState() === 'disconnected', 15_000);
    // Arrives while the printer is away: waits behind the interrupted job.
    await s.publish(2);
    await s.waitForState(2, 'queued');
    assert.ok(!s.states(2).includes('printing'));

    // Plugged back in, same port, full speed.
    s.endpoint = await listenTcp(s.emulator, { port });
    await s.waitForState(2, 'printed');
    const reprinting = s.eventsOf(1).filter((e) => e.state === 'printing');
    assert.equal(reprinting.length, 2, s.states(1).join());
    assert.deepEqual(reprinting[1]!.markings, ['POSSIBLE DUPLICATE']);
    assert.equal(s.states(1).filter((x) => x === 'printed').length, 1);

    assert.deepEqual(s.printedOrders(), [s.orderNo(1), s.orderNo(2)], 'in order');
    const again = s.printsByOrder().get(s.orderNo(1))!.at(-1)!;
    assert.ok(again.markings.includes('POSSIBLE DUPLICATE'), JSON.stringify(again));
    assert.deepEqual(s.printsByOrder().get(s.orderNo(2))!.length, 1);
    s.assertInvariants();
  });
});
