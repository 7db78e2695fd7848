/**
 * UsbTransport against a fake device at the `usb` package's API boundary (there is no USB bus on
 * the build machines), and against a real printer when PRINTER_URL=usb:VID:PID is set.
 *
 * The fake enforces the rules a real device (usb 3.1 on Linux, nusb underneath) enforces, the way
 * serialport's MockBinding does, so the transport cannot pass by doing things a printer would
 * refuse:
 * - nothing but `open()` works on a closed device, and reading `configuration` before `open()` is
 *   an error here (usb 3.x would open the device synchronously, on the event loop);
 * - the kernel driver (usblp) binds to the printer interface whenever the configuration is set,
 *   and `claimInterface` fails with "interface is busy" while it is bound;
 * - transfers fail unless their interface is claimed, and an endpoint takes one transfer at a
 *   time (the real package then says "endpoint not found");
 * - a claim lasts until `releaseInterface` AND the end of the transfers in flight: `close()`
 *   without releasing leaves it claimed, so the next open cannot claim it;
 * - the "printer" takes bytes while running; paused, it buffers `bufferSize` bytes and then NAKs,
 *   so a transfer stalls until its timeout and fails with `Cancelled`, without saying how many of
 *   its bytes went in (exactly what usb 3.1 reports);
 * - unplugging fails pending and later transfers with `Disconnected` and fires the detach event.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { AgentError } from '../../src/errors.js';
import { parsePrinterUrl } from '../../src/printer/printer-url.js';
import { isStatusByte } from '../../src/printer/status.js';
import type { UsbInterfaceInfo } from '../../src/printer/usb-device.js';
import { UsbTransport } from '../../src/printer/usb-transport.js';
import {
  bulk,
  type FakeOptions,
  FakeUsbBus,
  FakeUsbPrinter,
  PID,
  printerInterface,
  VID,
} from '../helpers/fake-usb.js';

function setup(options: FakeOptions = {}, serialNumber: string | null = null) {
  const bus = new FakeUsbBus();
  const printer = bus.plug(new FakeUsbPrinter(options));
  const transport = new UsbTransport(
    { vendorId: VID, productId: PID, serialNumber },
    { backend: bus },
  );
  return { bus, printer, transport };
}

function bytes(length: number, seed = 0): Uint8Array {
  return Uint8Array.from({ length }, (_, i) => (i * 7 + seed) & 0xff);
}

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<AgentError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AgentError, `expected an AgentError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected ${code}, but it resolved`);
}

describe('fake USB printer (keeps the tests honest)', () => {
  it('enforces the device rules the transport relies on', async () => {
    const bus = new FakeUsbBus();
    const printer = bus.plug(new FakeUsbPrinter());
    await assert.rejects(printer.nativeTransferOut(1, 100, bytes(4)), /endpoint not found/);
    assert.throws(() => printer.configuration, /closed device/);
    await printer.open();
    await assert.rejects(printer.nativeTransferOut(1, 100, bytes(4)), /endpoint not found/);
    await assert.rejects(printer.claimInterface(0), /interface is busy/); // usblp holds it
    await printer.detachKernelDriver(0);
    await assert.rejects(printer.detachKernelDriver(0), /no kernel driver attached/);
    await printer.claimInterface(0);
    assert.equal(await printer.nativeTransferOut(1, 100, bytes(4)), 4);
    printer.pause();
    const first = printer.nativeTransferOut(1, 100, bytes(64 * 1024 + 1));
    await assert.rejects(printer.nativeTransferOut(1, 100, bytes(1)), /endpoint not found/);
    await printer.releaseInterface(0);
    // Released, but the transfer in flight still holds the interface.
    await assert.rejects(printer.attachKernelDriver(0), /interface is busy/);
    await assert.rejects(first, /Cancelled/);
    await printer.claimInterface(0);
    await printer.close(); // without releasing: the claim stays
    await printer.open();
    await assert.rejects(printer.claimInterface(0), /interface is busy/);
    await printer.releaseInterface(0);
    await printer.claimInterface(0);
    const input = printer.nativeTransferIn(2, 1000, 64);
    bus.unplug(printer);
    await assert.rejects(input, /transferIn error: Disconnected/);
    await assert.rejects(
      printer.nativeTransferOut(1, 100, bytes(1)),
      /transferOut error: Disconnected/,
    );
  });
});

describe('UsbTransport with a fake device', () => {
  it('opens the device by VID:PID: detaches usblp, claims the printer interface', async () => {
    const { bus, printer, transport } = setup();
    bus.plug(new FakeUsbPrinter({ vendorId: 0x0416, productId: 0x5011 })); // another printer
    await transport.open();
    try {
      assert.equal(transport.isOpen, true);
      assert.equal(transport.description, 'usb:04b8:0202');
      assert.deepEqual(printer.calls.slice(0, 3), [
        'open',
        'detachKernelDriver(0)',
        'claimInterface(0)',
      ]);
      assert.equal(printer.driverBound(0), false);
      assert.equal(printer.isClaimed(0), true);
    } finally {
      await transport.close();
    }
  });

  it('chooses the device by serial number, and says so in the description', async () => {
    const bus = new FakeUsbBus();
    const a = bus.plug(new FakeUsbPrinter({ serialNumber: 'A1' }));
    const b = bus.plug(new FakeUsbPrinter({ serialNumber: 'B2' }));
    const address = parsePrinterUrl('usb:04b8:0202?serial=B2');
    assert.equal(address.kind, 'usb');
    if (address.kind !== 'usb') return;
    const transport = new UsbTransport(address, { backend: bus });
    await transport.open();
    try {
      assert.equal(transport.description, 'usb:04b8:0202?serial=B2');
      assert.deepEqual(a.calls, []);
      assert.equal(b.isClaimed(0), true);
    } finally {
      await transport.close();
    }
  });

  it('takes the first of several matching devices without a serial, and says so', async () => {
    const bus = new FakeUsbBus();
    const a = bus.plug(new FakeUsbPrinter({ serialNumber: 'A1' }));
    const b = bus.plug(new FakeUsbPrinter({ serialNumber: 'B2' }));
    const transport = new UsbTransport(
      { vendorId: VID, productId: PID, serialNumber: null },
      { backend: bus },
    );
    await transport.open();
    try {
      assert.equal(transport.description, 'usb:04b8:0202 (first of 2 matching devices, serial=A1)');
      assert.equal(a.isClaimed(0), true);
      assert.deepEqual(b.calls, []);
    } finally {
      await transport.close();
    }
  });

  it('rejects with PRINTER_UNREACHABLE naming the address when nothing matches', async () => {
    const { bus, printer } = setup();
    const bySerial = new UsbTransport(
      { vendorId: VID, productId: PID, serialNumber: 'NOPE' },
      { backend: bus },
    );
    const error = await rejectsWith(bySerial.open(), 'PRINTER_UNREACHABLE');
    assert.match(error.message, /usb:04b8:0202\?serial=NOPE/);
    assert.match(error.message, /none with this serial number/);
    assert.deepEqual(printer.calls, []);

    const absent = new UsbTransport(
      { vendorId: 0x0519, productId: 0x0001, serialNumber: null },
      { backend: bus },
    );
    const error2 = await rejectsWith(absent.open(), 'PRINTER_UNREACHABLE');
    assert.match(error2.message, /^usb:0519:0001: no such USB device/);
    assert.equal(absent.isOpen, false);
    await rejectsWith(absent.write(bytes(1), 100), 'PRINTER_DISCONNECTED');

    bus.enumerationError = new Error('getDevices error: /sys/bus/usb/devices/ not found (errno 2)');
    const error3 = await rejectsWith(absent.open(), 'PRINTER_UNREACHABLE');
    assert.match(error3.message, /cannot list USB devices: .*sys\/bus\/usb/);
  });

  it('leaves the device as it was when the interface cannot be claimed', async () => {
    const { printer, transport } = setup();
    printer.heldByOthers.add(0);
    const error = await rejectsWith(transport.open(), 'PRINTER_UNREACHABLE');
    assert.match(error.message, /cannot claim interface 0: .*interface is busy/);
    assert.equal(printer.driverBound(0), true, 'usblp re-attached');
    assert.equal(printer.isOpened, false);
  });

  it('re-attaches the kernel driver on close, once, and can open again', async () => {
    const { bus, printer, transport } = setup();
    await transport.open();
    assert.equal(bus.watcherCount, 1);
    await Promise.all([transport.close(), transport.close()]);
    await transport.close();
    assert.equal(transport.isOpen, false);
    assert.deepEqual(printer.calls, [
      'open',
      'detachKernelDriver(0)',
      'claimInterface(0)',
      'releaseInterface(0)',
      'attachKernelDriver(0)',
      'close',
    ]);
    assert.equal(printer.driverBound(0), true);
    assert.equal(printer.isClaimed(0), false);
    assert.equal(printer.transferPending.in, false, 'no IN transfer left behind');
    assert.equal(bus.watcherCount, 0, 'hotplug watcher stopped');

    await transport.open();
    await transport.write(bytes(10), 1000);
    await transport.close();
    assert.equal(printer.received.length, 10);
  });

  it('does not re-attach a driver that was not there; selects configuration 1 when unconfigured', async () => {
    const { printer, transport } = setup({ activeConfiguration: 0, kernelDriverOn: [] });
    await transport.open();
    await transport.close();
    assert.deepEqual(printer.calls, [
      'open',
      'selectConfiguration(1)',
      'detachKernelDriver(0)',
      'claimInterface(0)',
      'releaseInterface(0)',
      'close',
    ]);
  });

  it('detaches usblp that binds when the configuration is selected', async () => {
    const { printer, transport } = setup({ activeConfiguration: 0, kernelDriverOn: [0] });
    await transport.open();
    await transport.close();
    assert.ok(printer.calls.includes('selectConfiguration(1)'));
    assert.equal(printer.driverBound(0), true);
  });

  it('prefers the printer-class interface, else the first one with a bulk OUT endpoint', async () => {
    const vendor: UsbInterfaceInfo = {
      interfaceNumber: 0,
      alternate: { interfaceClass: 0xff, endpoints: [bulk(3, 'out'), bulk(4, 'in')] },
    };
    const hid: UsbInterfaceInfo = {
      interfaceNumber: 0,
      alternate: {
        interfaceClass: 3,
        endpoints: [{ endpointNumber: 5, direction: 'in', type: 'interrupt', packetSize: 8 }],
      },
    };
    {
      const { printer, transport } = setup({
        interfaces: [vendor, printerInterface(1)],
        kernelDriverOn: [1],
      });
      await transport.open();
      await transport.write(bytes(3), 1000);
      await transport.close();
      assert.ok(printer.calls.includes('claimInterface(1)'));
      assert.deepEqual(printer.received, [...bytes(3)]);
    }
    {
      const second = { ...vendor, interfaceNumber: 1 };
      const { printer, transport } = setup({ interfaces: [hid, second], kernelDriverOn: [] });
      await transport.open();
      await transport.write(bytes(3), 1000);
      await transport.close();
      assert.ok(printer.calls.includes('claimInterface(1)'));
    }
    {
      const { transport } = setup({ interfaces: [hid], kernelDriverOn: [] });
      const error = await rejectsWith(transport.open(), 'PRINTER_UNREACHABLE');
      assert.match(error.message, /no interface with a bulk OUT endpoint/);
    }
  });

  it('writes in whole-packet chunks, in order, and reports progress through write()', async () => {
    const { printer, transport } = setup();
    await transport.open();
    try {
      const a = bytes(10_000, 1);
      const b = bytes(300, 2);
      await Promise.all([transport.write(a, 2000), transport.write(b, 2000)]);
      assert.deepEqual(printer.transfers, [4096, 4096, 1808, 300]);
      assert.deepEqual(Uint8Array.from(printer.received), Uint8Array.from([...a, ...b]));
    } finally {
      await transport.close();
    }

    const small = setup({
      interfaces: [printerInterface(0, [bulk(1, 'out', 512), bulk(2, 'in', 512)])],
    });
    const odd = new UsbTransport(
      { vendorId: VID, productId: PID, serialNumber: null },
      { backend: small.bus, chunkSize: 1000 },
    );
    await odd.open();
    try {
      await odd.write(bytes(1500), 2000);
      assert.deepEqual(small.printer.transfers, [512, 512, 476]);
    } finally {
      await odd.close();
    }
  });

  it('hands status replies from the IN endpoint to read()', async () => {
    const { printer, transport } = setup();
    printer.respond = (data) => (data[0] === 0x10 && data[1] === 0x04 ? Uint8Array.of(0x16) : null);
    await transport.open();
    try {
      await transport.write(Uint8Array.of(0x10, 0x04, 0x01), 1000);
      assert.deepEqual(await transport.read(1000), Uint8Array.of(0x16));
      printer.reply([0x12, 0x12]); // unsolicited (automatic status)
      assert.deepEqual(await transport.read(1000), Uint8Array.of(0x12, 0x12));
    } finally {
      await transport.close();
    }
  });

  it('read() returns empty bytes on silence', async () => {
    const { transport } = setup();
    await transport.open();
    try {
      const started = performance.now();
      const reply = await transport.read(60);
      assert.equal(reply.length, 0);
      assert.ok(performance.now() - started < 300);
    } finally {
      await transport.close();
    }
  });

  it('times out a write the printer stops taking: TRANSPORT_TIMEOUT, sentBytes, nothing resent', async () => {
    const { printer, transport } = setup({ bufferSize: 6000 });
    await transport.open();
    try {
      printer.pause();
      const data = bytes(20_000, 3);
      const started = performance.now();
      const error = await rejectsWith(transport.write(data, 150), 'TRANSPORT_TIMEOUT');
      assert.ok(performance.now() - started < 300);
      // The first 4096-byte transfer went through; the second was cut short by its timeout
      // after 1904 bytes, which the API does not report: they are "unconfirmed".
      assert.equal(error.details.sentBytes, 4096);
      assert.equal(error.details.totalBytes, 20_000);
      assert.equal(error.details.unconfirmedBytes, 4096);
      assert.equal(error.retryable, true);
      assert.equal(printer.received.length, 6000);

      printer.resume();
      const next = bytes(5, 9);
      await transport.write(next, 1000);
      // Exactly the prefix the printer took, then the next write: no byte sent twice.
      assert.deepEqual(
        Uint8Array.from(printer.received),
        Uint8Array.from([...data.subarray(0, 6000), ...next]),
      );
    } finally {
      await transport.close();
    }
  });

  it('maps a stalled OUT endpoint to TRANSPORT_TIMEOUT and clears the halt', async () => {
    const { printer, transport } = setup();
    await transport.open();
    try {
      printer.stallOut();
      const error = await rejectsWith(transport.write(bytes(10), 1000), 'TRANSPORT_TIMEOUT');
      assert.equal(error.details.sentBytes, 0);
      assert.match(error.message, /stalled/);
      assert.ok(printer.calls.includes('clearHalt(out, 1)'));
      await transport.write(bytes(10), 1000);
      assert.equal(printer.received.length, 10);
    } finally {
      await transport.close();
    }
  });

  it('unplugged: emits close once, later writes reject PRINTER_DISCONNECTED', async () => {
    const { bus, printer, transport } = setup();
    await transport.open();
    let closes = 0;
    transport.on('close', () => closes++);
    const closed = once(transport, 'close');
    bus.unplug(printer);
    const [reason] = (await closed) as [AgentError];
    assert.equal(reason.code, 'PRINTER_DISCONNECTED');
    assert.equal(transport.isOpen, false);
    await rejectsWith(transport.write(bytes(3), 500), 'PRINTER_DISCONNECTED');
    assert.equal((await transport.read(20)).length, 0);
    await transport.close();
    assert.equal(closes, 1);
    assert.equal(bus.watcherCount, 0);
  });

  it('unplugged during a write: PRINTER_DISCONNECTED with sentBytes', async () => {
    const { bus, printer, transport } = setup({ bufferSize: 5000 });
    await transport.open();
    printer.pause();
    const closed = once(transport, 'close');
    const stalled = once(printer.events, 'stalled');
    const writing = transport.write(bytes(9000), 5000);
    await stalled;
    bus.unplug(printer);
    const error = await rejectsWith(writing, 'PRINTER_DISCONNECTED');
    assert.equal(error.details.sentBytes, 4096);
    await closed;
    await transport.close();
  });

  it('notices an unplug through the detach event when no transfer is pending (no IN endpoint)', async () => {
    const { bus, printer, transport } = setup({
      interfaces: [printerInterface(0, [bulk(1, 'out')])],
    });
    await transport.open();
    await transport.write(bytes(4), 1000);
    const closed = once(transport, 'close');
    bus.unplug(printer);
    await closed;
    await rejectsWith(transport.write(bytes(3), 500), 'PRINTER_DISCONNECTED');
    await transport.close();
  });

  it('reopens after a replug, detaching the driver of the new device', async () => {
    const { bus, printer, transport } = setup({ serialNumber: 'S1' });
    await transport.open();
    const closed = once(transport, 'close');
    bus.unplug(printer);
    await closed;
    await rejectsWith(transport.open(), 'PRINTER_UNREACHABLE'); // still unplugged

    const again = bus.plug(new FakeUsbPrinter({ serialNumber: 'S1' }));
    await transport.open();
    try {
      assert.equal(transport.isOpen, true);
      assert.equal(again.driverBound(0), false);
      await transport.write(bytes(100), 1000);
      assert.equal(again.received.length, 100);
    } finally {
      await transport.close();
    }
    assert.equal(again.driverBound(0), true);
  });
});

describe('UsbTransport with the usb package', () => {
  it('rejects with PRINTER_UNREACHABLE for a device that is not there', async () => {
    const transport = new UsbTransport({ vendorId: 0xfffe, productId: 0xfffd, serialNumber: null });
    const error = await rejectsWith(transport.open(), 'PRINTER_UNREACHABLE');
    assert.match(error.message, /^usb:fffe:fffd: /);
    await transport.close();
  });

  const url = process.env.PRINTER_URL ?? '';
  it('talks to the real printer at PRINTER_URL: ESC @, then DLE EOT 1 gets a status byte', {
    skip: url.startsWith('usb:') ? false : 'set PRINTER_URL=usb:VID:PID[?serial=SN] to run',
  }, async () => {
    const address = parsePrinterUrl(url);
    assert.equal(address.kind, 'usb');
    if (address.kind !== 'usb') return;
    const transport = new UsbTransport(address);
    await transport.open();
    try {
      transport.discardInput();
      await transport.write(Uint8Array.of(0x1b, 0x40, 0x10, 0x04, 0x01), 2000);
      let reply: Uint8Array = new Uint8Array(0);
      const deadline = performance.now() + 2000;
      while (reply.length === 0 && performance.now() < deadline) reply = await transport.read(500);
      assert.ok(reply.length > 0, 'no reply to DLE EOT 1');
      assert.ok(isStatusByte(reply[reply.length - 1]!), `not a status byte: ${[...reply]}`);
    } finally {
      await transport.close();
    }
  });
});
