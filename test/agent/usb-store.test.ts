/**
 * Issue 38, item 5: one store whose printers hang on USB. `printer-agent run` (the bundle, with
 * the systemd unit's environment) runs under the emulated USB stack (test/usbfs/) with the
 * counter's receipt printer reached through the `usb` package (`usb:VID:PID?serial=`, no kernel
 * driver) and the kitchen printer through the kernel's usblp node (`file:/dev/usb/lpN`). A signed
 * instruction from Mosquitto prints the receipt at the counter and the ticket in the kitchen; both
 * printers' states, a paper-out included, show in the retained status and on the local page's API.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { unitEnvironment } from '../../harness/unit-environment.js';
import { waitFor } from '../../harness/waiting.js';
import { renderText, VirtualPrinter } from '../../src/emulator/index.js';
import { faultSuite, type Json } from '../faults/harness.js';
import { UsbStack, usbStackSkip } from '../usbfs/usb-stack.js';

interface PrinterStatus {
  id: string;
  state: string;
}

describe('a store on USB: the agent with a usb: printer and a usblp printer (child process)', {
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

  it('prints the receipt over usb: and the kitchen ticket over /dev/usb/lp*, and reports both printers', async () => {
    const kitchenPrinter = new VirtualPrinter({ columns: 48 });
    const kitchen = stack.plug({
      printer: kitchenPrinter,
      serial: 'KITCHEN-1',
      product: 'TM-T20II',
      kernelDriver: true,
    });
    const port = await freePort();
    const s = await env.stores.create({
      name: 'usbstore',
      broker: env.broker,
      usb: { stack },
      configure: (c) => {
        const printers = c.printers as Json[];
        printers.push({
          id: 'kitchen',
          url: `file:${kitchen.lpPath}`,
          profile: 'generic-80mm',
          statusIntervalMs: 1000,
        });
        c.routing = [{ role: 'receipt' }, { role: 'kitchen' }];
        c.console = { port };
      },
    });
    const counter = s.usbDevice!;
    const statesIn = (status: Json | undefined) =>
      Object.fromEntries(
        ((status?.printers as PrinterStatus[] | undefined) ?? []).map((p) => [p.id, p.state]),
      );
    const latest = () => statesIn(s.statuses.findLast((x) => x.online === true));
    const page = async () => {
      const response = await fetch(`http://127.0.0.1:${port}/api/status`);
      assert.equal(response.status, 200);
      return statesIn((await response.json()) as Json);
    };

    await s.startOnline(unitEnvironment());
    await waitFor(
      'both printers ready in the retained status',
      () => latest().receipt === 'ready' && latest().kitchen === 'ready',
      20_000,
    );
    assert.deepEqual(await page(), { receipt: 'ready', kitchen: 'ready' });

    await s.publish(1, { orderType: 1 });
    // The kitchen's job has a job id of its own (`...#kitchen`): find both by the order number.
    const printedOn = (role: string) =>
      s.events.some(
        (e) => e.orderNo === s.orderNo(1) && e.printer === role && e.state === 'printed',
      );
    await waitFor(
      'receipt and kitchen ticket printed',
      () => printedOn('receipt') && printedOn('kitchen'),
      20_000,
    );
    const receiptText = s.ticketTexts().join('\n');
    assert.match(receiptText, new RegExp(s.orderNo(1)));
    assert.match(receiptText, /TOTAL/);
    const kitchenText = kitchenPrinter.paper.tickets.map((t) => renderText(t)).join('\n');
    assert.match(kitchenText, new RegExp(s.orderNo(1)));
    assert.match(kitchenText, /KITCHEN/);
    assert.doesNotMatch(kitchenText, /TOTAL/);
    // The counter's printer through usbfs (claimed), the kitchen's through usblp (opened).
    assert.ok(counter.calls.includes('claim(0)'), counter.calls.join(' '));
    assert.ok(kitchen.calls.includes('lp-open'), kitchen.calls.join(' '));
    assert.ok(!kitchen.calls.includes('claim(0)'), 'usblp keeps the kitchen printer');

    // Paper out in the kitchen: its state, and only its, in the status and on the page.
    kitchenPrinter.setFault('paper-out', true);
    await waitFor(
      'kitchen paper-out in the retained status',
      () => latest().kitchen === 'paper-out',
      20_000,
    );
    assert.equal(latest().receipt, 'ready');
    assert.deepEqual(await page(), { receipt: 'ready', kitchen: 'paper-out' });
    kitchenPrinter.setFault('paper-out', false);
    await waitFor('kitchen ready again', () => latest().kitchen === 'ready', 20_000);
    s.assertInvariants();
  });
});
