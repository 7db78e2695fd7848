/**
 * The usbfs emulator itself (issue 38, item 1), seen through the real `usb` package and Node's fs
 * in this process, as the agent's transports see it: sysfs enumeration (ids, serial, interface
 * layouts), plug/unplug/replug with udev hotplug events, usbfs claims and the kernel driver, bulk
 * transfers to the emulator's paper and its replies, and the usblp node's semantics. What the
 * transports make of all this is tested in test/printer/usb-stack-transport.test.ts.
 */
import assert from 'node:assert/strict';
import {
  closeSync,
  constants,
  existsSync,
  openSync,
  readdirSync,
  readSync,
  writeSync,
} from 'node:fs';
import { before, describe, it } from 'node:test';
import { waitFor } from '../../harness/waiting.js';
import { renderText } from '../../src/emulator/index.js';
import { type EmulatedUsbPrinter, UsbStack, usbStackSkip } from './usb-stack.js';

type UsbModule = typeof import('usb');
type Device = Awaited<ReturnType<UsbModule['usb']['getDevices']>>[number];
/** The part of WebUSB's USBConfiguration read here (the package's own types leave it open). */
interface Configuration {
  interfaces: Array<{
    interfaceNumber: number;
    alternate: {
      interfaceClass: number;
      endpoints: Array<{ direction: string; endpointNumber: number; type: string }>;
    };
  }>;
}
const configurationOf = (d: Device) => d.configuration as unknown as Configuration;

const DLE_EOT_1 = [0x10, 0x04, 0x01];

function errno(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? String(error);
  }
  return 'no error';
}

describe('the usbfs emulator, through the real usb package', { skip: usbStackSkip() }, () => {
  let stack: UsbStack;
  let usb: UsbModule['usb'];
  const bySerial = async (serial: string | null, vendorId = 0x04b8): Promise<Device[]> =>
    (await usb.getDevices()).filter((d) => d.vendorId === vendorId && d.serialNumber === serial);

  before(async () => {
    stack = await UsbStack.forThisProcess();
    ({ usb } = await import('usb'));
  });

  it('lists what is plugged, from sysfs: ids, strings, serial, each interface layout', async () => {
    const printer = stack.plug({ serial: 'LIST-P', product: 'TM-T20III' });
    const vendor = stack.plug({
      vendorId: 0x0519,
      productId: 0x0003,
      serial: null,
      manufacturer: 'Star Micronics',
      layout: 'vendor',
    });
    const composite = stack.plug({ serial: 'LIST-C', layout: 'composite' });
    try {
      const [p] = await bySerial('LIST-P');
      assert.ok(p, 'the printer-class device is listed');
      assert.deepEqual([p.vendorId, p.productId, p.productName], [0x04b8, 0x0202, 'TM-T20III']);
      assert.deepEqual(
        configurationOf(p).interfaces.map((i) => [
          i.interfaceNumber,
          i.alternate.interfaceClass,
          i.alternate.endpoints.map((e) => `${e.direction}${e.endpointNumber}/${e.type}`).join(),
        ]),
        [[0, 7, 'out1/bulk,in2/bulk']],
      );
      const [v] = await bySerial(null, 0x0519);
      assert.ok(v, 'a device without a serial number is listed, serial null');
      assert.equal(v.manufacturerName, 'Star Micronics');
      assert.deepEqual(
        configurationOf(v).interfaces.map((i) => [
          i.alternate.interfaceClass,
          i.alternate.endpoints.length,
        ]),
        [[0xff, 1]],
      );
      const [c] = await bySerial('LIST-C');
      assert.deepEqual(
        c &&
          configurationOf(c).interfaces.map((i) => [i.interfaceNumber, i.alternate.interfaceClass]),
        [
          [0, 0xff],
          [1, 7],
        ],
      );
    } finally {
      for (const d of [printer, vendor, composite]) d.unplug();
    }
    assert.deepEqual(await bySerial('LIST-P'), [], 'an unplugged device is not listed');
  });

  it('plug and unplug reach the package as udev hotplug events; a replug has a new device number', async () => {
    const seen: string[] = [];
    const onConnect = (e: { device: Device }) => seen.push(`connect ${e.device.serialNumber}`);
    const onDisconnect = (e: { device: Device }) =>
      seen.push(`disconnect ${e.device.serialNumber}`);
    const sockets = stack.hotplugSockets;
    usb.addEventListener('connect', onConnect as never);
    usb.addEventListener('disconnect', onDisconnect as never);
    let device: EmulatedUsbPrinter | undefined;
    try {
      // The package's watcher opens its udev socket in the background: what is plugged before
      // that is not announced (nor is it on a Pi), so plug once it listens.
      await waitFor('the hotplug watcher', () => stack.hotplugSockets > sockets);
      device = stack.plug({ serial: 'HOTPLUG-1' });
      await waitFor('the connect event', () => seen.includes('connect HOTPLUG-1'));
      const before = device.devnum;
      device.unplug();
      await waitFor('the disconnect event', () => seen.includes('disconnect HOTPLUG-1'));
      device.plug();
      await waitFor('the second connect event', () => seen.length === 3);
      assert.ok(device.devnum > before, `device number ${device.devnum} after ${before}`);
      assert.deepEqual(seen, ['connect HOTPLUG-1', 'disconnect HOTPLUG-1', 'connect HOTPLUG-1']);
    } finally {
      usb.removeEventListener('connect', onConnect as never);
      usb.removeEventListener('disconnect', onDisconnect as never);
      device?.unplug();
    }
  });

  it('usbfs: claim, bulk OUT onto the paper, the status reply on bulk IN, a silent IN times out', async () => {
    const device = stack.plug({ serial: 'URB-1' });
    const [d] = await bySerial('URB-1');
    assert.ok(d);
    try {
      await d.open();
      await d.claimInterface(0);
      const job = Buffer.from('\x1b@Hello over usbfs\n\x1dVB\x00');
      assert.equal(await d.nativeTransferOut(1, 2000, job), job.length);
      await waitFor('the ticket', () => device.printer.paper.tickets.length === 1);
      assert.match(renderText(device.printer.paper.tickets[0]!), /Hello over usbfs/);
      assert.equal(await d.nativeTransferOut(1, 2000, Uint8Array.from(DLE_EOT_1)), 3);
      const reply = await d.nativeTransferIn(2, 2000, 64);
      assert.deepEqual([...(reply ?? [])], [0x12], 'DLE EOT 1 of a ready printer');
      await assert.rejects(d.nativeTransferIn(2, 100, 64), /Cancelled/);
      await d.releaseInterface(0);
      await d.close();
      await waitFor('the close', () => device.calls.at(-1) === 'close');
      assert.deepEqual(device.calls, ['open', 'claim(0)', 'release(0)', 'close']);
    } finally {
      device.unplug();
    }
  });

  it('usbfs: an interface usblp holds is busy until detached; attaching gives usblp its node back', async () => {
    const device = stack.plug({ serial: 'DRIVER-1', kernelDriver: true });
    const [d] = await bySerial('DRIVER-1');
    assert.ok(d);
    try {
      assert.ok(existsSync(device.lpPath), `${device.lpPath} while usblp is bound`);
      await d.open();
      await assert.rejects(d.claimInterface(0), /busy/i);
      await d.detachKernelDriver(0);
      assert.equal(existsSync(device.lpPath), false, 'usblp let go: its node is gone');
      await d.claimInterface(0);
      await assert.rejects(d.detachKernelDriver(0), /no kernel driver/i);
      await d.releaseInterface(0);
      await d.attachKernelDriver(0);
      assert.ok(existsSync(device.lpPath), 'usblp is back');
      await d.close();
      assert.deepEqual(
        device.calls.filter((c) => c !== 'open' && c !== 'close'),
        ['claim-refused(0)', 'detach(0)', 'claim(0)', 'release(0)', 'attach(0)'],
      );
    } finally {
      device.unplug();
    }
  });

  it('another program holding the interface (CUPS) refuses the claim with EBUSY', async () => {
    const device = stack.plug({ serial: 'HELD-1' });
    device.holdInterface(true);
    const [d] = await bySerial('HELD-1');
    assert.ok(d);
    try {
      await d.open();
      await assert.rejects(d.claimInterface(0), /busy/i);
      device.holdInterface(false);
      await d.claimInterface(0);
      await d.close();
    } finally {
      device.unplug();
    }
  });

  describe('usblp (/dev/usb/lpN)', () => {
    let device: EmulatedUsbPrinter;
    before(() => {
      device = stack.plug({ serial: 'LP-1', kernelDriver: true });
    });

    const open = () => openSync(device.lpPath, constants.O_RDWR | constants.O_NONBLOCK);

    it('is listed in /dev/usb while usblp is bound, and one program may open it at a time', () => {
      assert.ok(readdirSync('/dev/usb').includes(device.lpPath.slice('/dev/usb/'.length)));
      const fd = open();
      try {
        assert.equal(errno(open), 'EBUSY');
      } finally {
        closeSync(fd);
      }
    });

    it('a write takes at most 8192 bytes; the next is EAGAIN until that transfer completes', async () => {
      const fd = open();
      try {
        const job = Buffer.alloc(10_000, 0x41);
        // The transfer completes when the printer takes it, on this process's event loop, so
        // these two synchronous writes see it still in flight.
        assert.equal(writeSync(fd, job), 8192);
        assert.equal(
          errno(() => writeSync(fd, job.subarray(8192))),
          'EAGAIN',
        );
        await waitFor(
          'the transfer completes',
          () => errno(() => writeSync(fd, job.subarray(8192))) !== 'EAGAIN',
        );
        await waitFor('every byte on the printer', () => device.printer.decoder.received >= 10_000);
        assert.equal(device.printer.decoder.received, 10_000, 'nothing twice');
      } finally {
        closeSync(fd);
      }
    });

    it('a read is EAGAIN until the printer answers, then gives its reply', async () => {
      const fd = open();
      const buffer = Buffer.alloc(64);
      try {
        assert.equal(
          errno(() => readSync(fd, buffer)),
          'EAGAIN',
        );
        writeSync(fd, Uint8Array.from(DLE_EOT_1));
        let n = 0;
        await waitFor('the reply', () => {
          try {
            n = readSync(fd, buffer);
            return true;
          } catch {
            return false;
          }
        });
        assert.deepEqual([...buffer.subarray(0, n)], [0x12]);
      } finally {
        closeSync(fd);
      }
    });

    it('after an unplug: writes and reads are ENODEV on the open file, and the node is gone', () => {
      const fd = open();
      try {
        device.unplug();
        assert.equal(
          errno(() => writeSync(fd, Buffer.from('x'))),
          'ENODEV',
        );
        assert.equal(
          errno(() => readSync(fd, Buffer.alloc(8))),
          'ENODEV',
        );
        assert.equal(existsSync(device.lpPath), false);
        assert.equal(errno(open), 'ENOENT');
      } finally {
        closeSync(fd);
      }
      device.plug();
      assert.ok(existsSync(device.lpPath), 'back after the replug');
      closeSync(open());
      device.unplug();
    });
  });
});
