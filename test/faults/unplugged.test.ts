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
import { after, before, describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { listenTcp } from '../../src/emulator/index.js';
import { UsbStack, usbStackSkip } from '../usbfs/usb-stack.js';
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

/**
 * Row 10's USB half (issue 38): the printer is an emulated USB device on the real driver stack
 * (test/usbfs/), the agent a child process under it. Unplugged mid-job, the device is gone from
 * sysfs and its node; plugged back, it has a new device number, and the agent finds it again by
 * its ids and serial (the printer monitor's next poll reopens the transport: nusb has no replug
 * notice that the agent needs). Through the `usb` package, and through the kernel's usblp node.
 */
for (const through of ['usb', 'usblp'] as const) {
  describe(`row 10 over USB, through ${through === 'usb' ? 'the usb package' : 'usblp'} (child process)`, {
    skip: skipWithoutMosquitto() || usbStackSkip(),
  }, () => {
    const env = faultSuite();
    let stack: UsbStack;
    before(async () => {
      stack = await UsbStack.start();
    });
    after(async () => {
      await env.stores.tearDown();
      await stack?.close();
    });

    it(`row 10 (${through}): unplugged mid-job: waiting, then printed again marked after the replug`, async () => {
      const s = await env.stores.create({
        name: `r10${through}`,
        broker: env.broker,
        usb: { stack, through },
      });
      const device = s.usbDevice!;
      await s.startOnline();
      await waitFor('printer ready', () => s.printerState() === 'ready', 15_000);
      device.slot.setSlowLink(1000);

      await s.publish(1);
      let unplugged = false;
      const stop = s.countDelivered((total) => {
        if (!unplugged && total >= 300) {
          unplugged = true;
          device.unplug();
        }
      });
      try {
        await waitFor('the unplug', () => unplugged, 20_000);
      } finally {
        stop();
      }
      assert.equal(s.emulator.paper.tickets.length, 0, 'unplugged before the cut');
      const address = device.devnum;

      const waiting = await s.waitForState(1, 'waiting');
      assert.match(waiting.reason?.code ?? '', /^PRINTER_(DISCONNECTED|UNREACHABLE)$/);
      await waitFor('status disconnected', () => s.printerState() === 'disconnected', 15_000);
      await s.publish(2);
      await s.waitForState(2, 'queued');
      assert.ok(!s.states(2).includes('printing'));

      // Plugged back in: a new device number, full speed.
      device.slot.setSlowLink(null);
      device.plug();
      assert.notEqual(device.devnum, address);
      await s.waitForState(2, 'printed');
      const reprinting = s.eventsOf(1).filter((e) => e.state === 'printing');
      assert.equal(reprinting.length, 2, s.states(1).join());
      assert.deepEqual(reprinting[1]!.markings, ['POSSIBLE DUPLICATE']);
      assert.deepEqual(s.printedOrders(), [s.orderNo(1), s.orderNo(2)], 'in order');
      assert.deepEqual(s.printsByOrder().get(s.orderNo(2))!.length, 1);
      s.assertInvariants();
    });
  });
}
