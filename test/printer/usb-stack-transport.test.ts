/**
 * Issue 38, item 2: the `usb:VID:PID` transport through the real `usb` package (node-usb-rs on
 * nusb), against emulated kernel devices (test/usbfs/): what test/helpers/fake-usb.ts stands in
 * for everywhere else, here for real. Each case is a way a store's USB printer behaves: told
 * apart by serial, usblp holding it, CUPS holding it, no IN endpoint, a composite device, a
 * stalled endpoint, unplug and replug, an unplug during open, garbage on bulk IN, a short write.
 * Every printer is the project's emulator; assertions read its paper and the device calls the
 * supervisor saw, never the transport's insides.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { before, describe, it } from 'node:test';
import { waitFor } from '../../harness/waiting.js';
import { AgentError } from '../../src/errors.js';
import { openPrinter } from '../../src/printer/open-printer.js';
import type { ConfirmMode, Printer } from '../../src/printer/printer.js';
import { getProfile } from '../../src/receipt/profile.js';
import { renderReceipt } from '../../src/receipt/render.js';
import { paperText } from '../helpers/paper-text.js';
import { loadFixture, STORE_OPTIONS } from '../helpers/receipts.js';
import { type EmulatedUsbPrinter, UsbStack, usbStackSkip } from '../usbfs/usb-stack.js';

const receipt = renderReceipt({
  source: loadFixture('table-offline-simple'),
  profile: getProfile('generic-80mm'),
  options: STORE_OPTIONS,
});

/** Replies are heard on a busy machine; only the cases without an IN endpoint wait them out. */
const OPTIONS = { statusTimeoutMs: 2000, confirmTimeoutMs: 3000 };

/** An AgentError with `code`, whatever the promise gave. */
async function failure(p: Promise<unknown>): Promise<AgentError> {
  const outcome = await p.then(
    (value) => value,
    (error: unknown) => error,
  );
  assert.ok(outcome instanceof AgentError, `an AgentError, got ${JSON.stringify(outcome)}`);
  return outcome;
}

describe('usb: transport through the real usb package', { skip: usbStackSkip() }, () => {
  let stack: UsbStack;
  const printers: Printer[] = [];
  const open = (url: string, confirm: ConfirmMode = 'process-id', overrides = {}) => {
    const printer = openPrinter(
      url,
      { confirm, realtimeStatus: true },
      { ...OPTIONS, ...overrides },
    );
    printers.push(printer);
    return printer;
  };
  const closeAll = async () => {
    for (const p of printers.splice(0)) await p.close();
  };
  const tickets = (d: EmulatedUsbPrinter) => d.printer.paper.tickets;

  before(async () => {
    stack = await UsbStack.forThisProcess();
  });

  it('two identical printers are told apart by serial; without one, the first is taken and named', async () => {
    const a = stack.plug({ serial: 'TWIN-A' });
    const b = stack.plug({ serial: 'TWIN-B' });
    try {
      assert.equal(a.url.replace('TWIN-A', ''), b.url.replace('TWIN-B', ''), 'same ids');
      assert.equal((await open(b.url).print(receipt.bytes)).outcome, 'printed');
      assert.equal((await open(a.url).print(receipt.bytes)).outcome, 'printed');
      assert.deepEqual([tickets(a).length, tickets(b).length], [1, 1]);
      assert.equal(paperText(tickets(b)[0]!), receipt.text);
      await closeAll();
      const either = open('usb:04b8:0202');
      assert.equal((await either.print(receipt.bytes)).outcome, 'printed');
      assert.match(
        either.transport.description,
        /\(first of \d+ matching devices, serial=TWIN-[AB]\)/,
      );
      assert.equal(tickets(a).length + tickets(b).length, 3);
    } finally {
      await closeAll();
      a.unplug();
      b.unplug();
    }
  });

  it('usblp bound to the printer: detached while the agent holds it, given back on close', async () => {
    const device = stack.plug({ serial: 'USBLP-HELD', kernelDriver: true });
    try {
      assert.ok(existsSync(device.lpPath));
      const printer = open(device.url);
      assert.equal((await printer.print(receipt.bytes)).outcome, 'printed');
      assert.equal(existsSync(device.lpPath), false, 'usblp detached: its node is gone');
      await printer.close();
      await waitFor('the close', () => device.calls.at(-1) === 'close');
      assert.ok(existsSync(device.lpPath), 'usblp re-attached: /dev/usb/lp* is back');
      const calls = device.calls.filter((c) => !['open', 'close'].includes(c));
      assert.deepEqual(calls, ['detach(0)', 'claim(0)', 'release(0)', 'attach(0)']);
    } finally {
      await closeAll();
      device.unplug();
    }
  });

  it('another program holds the interface (CUPS): a clear error naming the cause, then it prints', async () => {
    const device = stack.plug({ serial: 'CUPS-HELD' });
    device.holdInterface(true);
    try {
      const printer = open(device.url);
      const e = await failure(printer.print(receipt.bytes));
      assert.equal(e.code, 'PRINTER_UNREACHABLE');
      assert.equal(e.retryable, true);
      assert.match(e.message, /cannot claim interface 0/);
      assert.match(e.message, /another program/, e.message);
      assert.equal(tickets(device).length, 0);
      device.holdInterface(false);
      assert.equal((await printer.print(receipt.bytes)).outcome, 'printed');
      assert.equal(tickets(device).length, 1);
    } finally {
      await closeAll();
      device.unplug();
    }
  });

  it('a vendor-class printer with bulk OUT only: prints, its state unknown, the job unconfirmed', async () => {
    const device = stack.plug({ serial: 'OUT-ONLY', layout: 'vendor' });
    try {
      const printer = open(device.url, 'process-id', {
        statusTimeoutMs: 300,
        confirmTimeoutMs: 300,
      });
      assert.equal((await printer.status()).state, 'unknown');
      const result = await printer.print(receipt.bytes);
      assert.equal(result.outcome, 'unconfirmed');
      await waitFor('printed once', () => tickets(device).length === 1);
      assert.equal(paperText(tickets(device)[0]!), receipt.text);
    } finally {
      await closeAll();
      device.unplug();
    }
  });

  it('a composite device: the printer-class interface (1) is claimed, not the first one', async () => {
    const device = stack.plug({ serial: 'COMPOSITE', layout: 'composite' });
    try {
      assert.equal((await open(device.url).print(receipt.bytes)).outcome, 'printed');
      assert.ok(device.calls.includes('claim(1)'), device.calls.join(' '));
      assert.ok(!device.calls.includes('claim(0)'));
    } finally {
      await closeAll();
      device.unplug();
    }
  });

  it('a stalled OUT endpoint: a typed error with the bytes taken, the halt cleared, the next job prints', async () => {
    const device = stack.plug({ serial: 'STALL-OUT' });
    try {
      const printer = open(device.url, 'process-id');
      assert.equal((await printer.status()).state, 'ready');
      // The endpoint stalls once the job's bytes start coming.
      const stop = () => {
        device.off('out', onOut);
        device.stall('out');
      };
      const onOut = (bytes: Uint8Array) => {
        if (bytes.length > 16) stop();
      };
      device.on('out', onOut);
      const e = await failure(printer.print(receipt.bytes));
      assert.equal(e.code, 'TRANSPORT_TIMEOUT');
      assert.match(e.message, /stalled the endpoint/);
      assert.equal(typeof e.details.sentBytes, 'number');
      // The supervisor reports each ioctl on its own socket, which may be read after the error.
      if (!device.calls.includes('clear-halt(1)')) await device.waitFor('clear-halt', 1);
      const before = tickets(device).length;
      assert.equal((await printer.print(receipt.bytes)).outcome, 'printed');
      assert.equal(tickets(device).length, before + 1);
      // The stalled job's first bytes stay on the paper before the new job (the printer had
      // them); they were not sent again.
      const text = paperText(tickets(device).at(-1)!);
      assert.ok(text.endsWith(receipt.text), text);
      assert.ok(text.length < 2 * receipt.text.length, 'the stalled job was not re-sent');
    } finally {
      await closeAll();
      device.unplug();
    }
  });

  it('a stalled IN endpoint is cleared by the reader, and status answers again', async () => {
    const device = stack.plug({ serial: 'STALL-IN' });
    try {
      const printer = open(device.url);
      assert.equal((await printer.status()).state, 'ready');
      device.stall('in');
      await waitFor('the halt cleared', () => device.calls.includes('clear-halt(130)'));
      assert.equal((await printer.status()).state, 'ready');
    } finally {
      await closeAll();
      device.unplug();
    }
  });

  it('unplugged mid-job: PRINTER_DISCONNECTED with the bytes sent; after the replug (new address) it prints', async () => {
    const device = stack.plug({ serial: 'UNPLUG-MID' });
    try {
      const printer = open(device.url);
      assert.equal((await printer.status()).state, 'ready');
      const job = new Uint8Array(64 * 1024).fill(0x41);
      device.slot.setSlowLink(20_000); // about 3 s for the job: the unplug lands inside it
      let seen = 0;
      const onDeliver = (bytes: Uint8Array) => {
        seen += bytes.length;
        if (seen > 4096) {
          device.slot.off('deliver', onDeliver);
          device.unplug();
        }
      };
      device.slot.on('deliver', onDeliver);
      const e = await failure(printer.print(job));
      assert.equal(e.code, 'PRINTER_DISCONNECTED');
      assert.equal(e.retryable, true);
      const sent = e.details.sentBytes as number;
      assert.ok(sent > 0 && sent < job.length, `sentBytes ${sent}`);
      assert.equal(printer.transport.isOpen, false);
      const address = device.devnum;
      device.slot.setSlowLink(null);
      device.plug();
      assert.notEqual(device.devnum, address);
      const before = tickets(device).length;
      assert.equal((await printer.print(receipt.bytes)).outcome, 'printed');
      assert.equal(tickets(device).length, before + 1);
    } finally {
      await closeAll();
      device.unplug();
    }
  });

  it('an idle printer without an IN endpoint unplugged: the hotplug event closes the link', async () => {
    // Nothing is in flight (no IN endpoint to poll, no job): only udev's remove event can tell.
    const device = stack.plug({ serial: 'HOTPLUG-IDLE', layout: 'vendor' });
    try {
      const sockets = stack.hotplugSockets;
      const printer = open(device.url, 'none');
      await printer.send(Uint8Array.of(0x1b, 0x40));
      assert.equal(printer.transport.isOpen, true);
      // The package starts its watcher and learns the devices it will report in the background
      // (as on a Pi, an unplug before that is noticed by the next transfer instead): wait for
      // both, the second read off the package's own map (not typed, but there).
      const { usb } = await import('usb');
      const known = (usb as unknown as { knownDevices: Map<string, { serialNumber?: string }> })
        .knownDevices;
      await waitFor(
        'the hotplug watcher, knowing the device',
        () =>
          stack.hotplugSockets > sockets &&
          [...known.values()].some((d) => d.serialNumber === 'HOTPLUG-IDLE'),
      );
      device.unplug();
      await waitFor('the link closed by the hotplug event', () => !printer.transport.isOpen);
      assert.equal(printer.transport.isOpen, false);
    } finally {
      await closeAll();
      device.unplug();
    }
  });

  it('a device that disappears during open: a typed state naming the cause, then it opens once back', async () => {
    const device = stack.plug({ serial: 'GONE-AT-OPEN' });
    try {
      device.unplugOnNextOpen();
      const printer = open(device.url);
      const condition = await printer.status();
      assert.equal(condition.state, 'disconnected');
      assert.match(condition.causes.join(), /cannot open the device: .*device not found/);
      const e = await failure(printer.print(receipt.bytes));
      assert.equal(e.code, 'PRINTER_UNREACHABLE');
      assert.equal(e.retryable, true);
      assert.equal(device.isPlugged, false, 'gone from sysfs as well');
      device.plug();
      assert.equal((await printer.status()).state, 'ready');
      assert.equal((await printer.print(receipt.bytes)).outcome, 'printed');
      assert.equal(tickets(device).length, 1);
    } finally {
      await closeAll();
      device.unplug();
    }
  });

  it('garbage and empty packets on bulk IN: typed errors at most, never a crash; the job prints once', async () => {
    const device = stack.plug({ serial: 'GARBAGE-IN' });
    try {
      const printer = open(device.url);
      assert.equal((await printer.status()).state, 'ready');
      // Every byte value, then a run that looks like status bytes of every kind.
      device.sendIn(new Uint8Array(0));
      device.sendIn(Uint8Array.from({ length: 256 }, (_, i) => (i * 167) & 0xff));
      device.sendIn(new Uint8Array(0));
      device.sendIn(Uint8Array.of(0x1a, 0x16, 0x12, 0x72, 0x5e, 0x0f, 0x00));
      // What the spooler does: try again after a typed, retryable error. Garbage read as a
      // status answer may stop a job before its first byte; it must never print half of one.
      let result: Awaited<ReturnType<Printer['print']>> | undefined;
      for (let attempt = 1; attempt <= 5 && !result; attempt++) {
        result = await printer.print(receipt.bytes).catch((e: unknown) => {
          assert.ok(e instanceof AgentError, String(e));
          assert.equal(e.retryable, true, e.message);
          assert.equal(e.details.sentBytes ?? 0, 0, e.message);
          return undefined;
        });
      }
      assert.ok(
        result && ['printed', 'unconfirmed'].includes(result.outcome),
        JSON.stringify(result),
      );
      await waitFor('printed', () => tickets(device).length === 1);
      assert.equal(paperText(tickets(device)[0]!), receipt.text);
      assert.equal((await printer.status()).state, 'ready');
      assert.equal(tickets(device).length, 1, 'printed once');
    } finally {
      await closeAll();
      device.unplug();
    }
  });

  it('usblp: an empty transfer on bulk IN is no hang-up; the link stays and the next job prints', async () => {
    const device = stack.plug({ serial: 'USBLP-ZLP', kernelDriver: true });
    try {
      const printer = open(`file:${device.lpPath}`);
      assert.equal((await printer.status()).state, 'ready');
      let closed = false;
      printer.transport.on('close', () => {
        closed = true;
      });
      device.sendIn(new Uint8Array(0));
      // The read of the empty transfer returns 0 at once; then a status round trip shows the
      // reader went on (a reader that took it for the end would have closed the link).
      assert.equal((await printer.status()).state, 'ready');
      assert.equal(closed, false, 'the link was not taken for hung up');
      assert.equal((await printer.print(receipt.bytes)).outcome, 'printed');
      assert.equal(tickets(device).length, 1);
    } finally {
      await closeAll();
      device.unplug();
    }
  });

  it('a short write: the rest follows, and the receipt arrives whole and once', async () => {
    const device = stack.plug({ serial: 'SHORT-WRITE' });
    try {
      const printer = open(device.url);
      assert.equal((await printer.status()).state, 'ready');
      device.shortNextWrite(100);
      assert.equal((await printer.print(receipt.bytes)).outcome, 'printed');
      assert.equal(tickets(device).length, 1);
      assert.equal(paperText(tickets(device)[0]!), receipt.text);
    } finally {
      await closeAll();
      device.unplug();
    }
  });
});
