/**
 * USB printers from sysfs for `printers scan` (issue 41 item 1). Three parts:
 * - `listUsbPrinters(root)` in this process, with `root` the usbfs emulator's own tree
 *   (test/usbfs/usb-stack.ts writes `sys/bus/usb/devices` as the kernel lays it out; this process
 *   is not put under the supervisor, it reads those files directly): two identical printers told
 *   apart by serial, one usblp holds (its lp node and both URL forms), a composite device with
 *   usblp on interface 1, two vendor-class clones of a known vendor with no serial (they cannot be
 *   told apart), and two mass-storage devices that are no printer (one of them with Epson's ID).
 *   The same devices through the supervisor, the CLI as a child process reading the real
 *   `/sys/bus/usb/devices`, are test/cli/printers-scan-usb.test.ts's.
 * - the pure rules (`usbPrintersAmong`) on facts written here: what the emulator does not model
 *   (a claim through usbfs, a serial with URL-special characters, same serials on two clones);
 * - the vendor table and the udev rules name the same vendor IDs, so the agent can open what the
 *   scan lists.
 * Every URL printed is parsed back with the project's own parser (printer-url.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parsePrinterUrl } from '../../src/printer/printer-url.js';
import {
  listUsbPrinters,
  type SysfsUsbDevice,
  type UsbPrinter,
  usbPrintersAmong,
} from '../../src/printer/usb-printers.js';
import { ESC_POS_USB_VENDORS } from '../../src/printer/usb-vendors.js';
import { ROOT } from '../helpers/cli.js';
import { UsbStack, usbStackSkip } from '../usbfs/usb-stack.js';

/** The parts of a listing a test states in full. */
const summary = (p: UsbPrinter) => ({
  name: p.name,
  ids: `${p.vendorId}:${p.productId}`,
  serial: p.serial,
  reason: p.reason,
  interface: p.interface,
  driver: p.driver,
  lp: p.lp,
  url: p.url,
  usbUrl: p.usbUrl,
  matches: p.usbUrlMatches,
});

describe('listUsbPrinters on the usbfs emulator’s sysfs tree (this process, no supervisor)', {
  skip: usbStackSkip(),
}, () => {
  let stack: UsbStack;
  before(async () => {
    stack = await UsbStack.start();
  });
  after(async () => {
    await stack?.close();
  });

  it('lists printer-class and known-vendor devices with serial, usblp node and URLs; no other device', () => {
    const plugged = [
      stack.plug({ productId: 0x0e15, serial: 'TWIN-A', product: 'TM-T20II' }),
      stack.plug({ productId: 0x0e15, serial: 'TWIN-B', product: 'TM-T20II' }),
      stack.plug({ serial: 'KITCHEN-1', product: 'TM-T88V', kernelDriver: true }),
      stack.plug({
        vendorId: 0x0416,
        productId: 0x5011,
        serial: null,
        manufacturer: 'Xprinter',
        product: 'POS-58',
        layout: 'vendor',
      }),
      stack.plug({
        vendorId: 0x0416,
        productId: 0x5011,
        serial: null,
        manufacturer: 'Xprinter',
        product: 'POS-58',
        layout: 'vendor',
      }),
      stack.plug({
        vendorId: 0x1a86,
        productId: 0x7584,
        serial: null,
        manufacturer: 'WCH',
        product: 'POS80 composite',
        layout: 'composite',
        kernelDriver: true,
      }),
      stack.plug({
        vendorId: 0x0781,
        productId: 0x5567,
        serial: '4C530001',
        manufacturer: 'SanDisk',
        product: 'Cruzer Blade',
        layout: 'storage',
      }),
      stack.plug({ productId: 0x0851, serial: null, product: 'Storage', layout: 'storage' }),
    ];
    try {
      const found = listUsbPrinters(stack.root);
      assert.deepEqual(found.map(summary), [
        {
          name: '1-1',
          ids: '04b8:0e15',
          serial: 'TWIN-A',
          reason: 'printer-class',
          interface: 0,
          driver: null,
          lp: null,
          url: 'usb:04b8:0e15?serial=TWIN-A',
          usbUrl: 'usb:04b8:0e15?serial=TWIN-A',
          matches: 1,
        },
        {
          name: '1-2',
          ids: '04b8:0e15',
          serial: 'TWIN-B',
          reason: 'printer-class',
          interface: 0,
          driver: null,
          lp: null,
          url: 'usb:04b8:0e15?serial=TWIN-B',
          usbUrl: 'usb:04b8:0e15?serial=TWIN-B',
          matches: 1,
        },
        {
          name: '1-3',
          ids: '04b8:0202',
          serial: 'KITCHEN-1',
          reason: 'printer-class',
          interface: 0,
          driver: 'usblp',
          lp: '/dev/usb/lp0',
          url: 'file:/dev/usb/lp0',
          usbUrl: 'usb:04b8:0202?serial=KITCHEN-1',
          matches: 1,
        },
        {
          name: '1-4',
          ids: '0416:5011',
          serial: null,
          reason: 'vendor-id',
          interface: 0,
          driver: null,
          lp: null,
          url: 'usb:0416:5011',
          usbUrl: 'usb:0416:5011',
          matches: 2,
        },
        {
          name: '1-5',
          ids: '0416:5011',
          serial: null,
          reason: 'vendor-id',
          interface: 0,
          driver: null,
          lp: null,
          url: 'usb:0416:5011',
          usbUrl: 'usb:0416:5011',
          matches: 2,
        },
        {
          name: '1-6',
          ids: '1a86:7584',
          serial: null,
          reason: 'printer-class',
          interface: 1,
          driver: 'usblp',
          lp: '/dev/usb/lp1',
          url: 'file:/dev/usb/lp1',
          usbUrl: 'usb:1a86:7584',
          matches: 1,
        },
      ]);
      const kitchen = found[2]!;
      assert.deepEqual(
        [kitchen.manufacturer, kitchen.product, kitchen.vendor, kitchen.fileUrl],
        ['EPSON', 'TM-T88V', 'Epson', 'file:/dev/usb/lp0'],
      );
      assert.equal(found[3]!.vendor, 'Winbond chip (Xprinter, Zjiang and other clones)');
      assert.equal(found[5]!.vendor, null, 'the printer class needs no known vendor');
      // The emulator's own idea of each device's usb: URL, and the project's parser, agree.
      for (const [p, device] of found.map((p, i) => [p, plugged[i]!] as const)) {
        assert.equal(p.usbUrl, device.url);
        assert.deepEqual(parsePrinterUrl(p.usbUrl), {
          kind: 'usb',
          vendorId: device.vendorId,
          productId: device.productId,
          serialNumber: device.serial,
        });
      }
      assert.deepEqual(parsePrinterUrl(kitchen.url), { kind: 'file', path: '/dev/usb/lp0' });

      // Unplugged: gone from the list; the usblp one's URL falls back to usb: once its driver goes.
      plugged[0]!.unplug();
      plugged[4]!.unplug();
      const after = listUsbPrinters(stack.root);
      assert.deepEqual(
        after.map((p) => [p.name, p.usbUrlMatches]),
        [
          ['1-2', 1],
          ['1-3', 1],
          ['1-4', 1],
          ['1-6', 1],
        ],
      );
    } finally {
      for (const d of plugged) d.unplug();
    }
  });

  it('no sys/ under the root: no USB printers, no error', () => {
    const empty = mkdtempSync(join(tmpdir(), 'pa-usb-none-'));
    try {
      assert.deepEqual(listUsbPrinters(empty), []);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('usbPrintersAmong: the rules on facts', () => {
  const device = (over: Partial<SysfsUsbDevice>): SysfsUsbDevice => ({
    name: '1-1',
    vendorId: 0x04b8,
    productId: 0x0e15,
    manufacturer: 'EPSON',
    product: 'TM-T20II',
    serial: null,
    interfaces: [{ number: 0, class: 7, driver: null, lp: null }],
    ...over,
  });

  it('a serial with URL-special characters round-trips through the project’s parser', () => {
    for (const serial of ['A 1&b=2', 'X+Y?Z#', "O'Brien/%", 'ÜÄ-42']) {
      const [p] = usbPrintersAmong([device({ serial })]);
      assert.equal(parsePrinterUrl(p!.url).kind, 'usb');
      assert.equal(
        (parsePrinterUrl(p!.url) as { serialNumber: string | null }).serialNumber,
        serial,
      );
      assert.doesNotMatch(p!.url, /['\s#&]/, 'no character a shell or a config would trip on');
    }
  });

  it('same ids and the same serial (clones ship one): cannot be told apart; a serial tells one from a no-serial twin', () => {
    const clones = usbPrintersAmong([
      device({ name: '1-1', serial: '0123456789' }),
      device({ name: '1-2', serial: '0123456789' }),
    ]);
    assert.deepEqual(
      clones.map((p) => p.usbUrlMatches),
      [2, 2],
    );
    const mixed = usbPrintersAmong([
      device({ name: '1-1', serial: 'S1' }),
      device({ name: '1-2', serial: null }),
    ]);
    // usb:04b8:0e15 (no serial) is matched by both, as the transport would match it.
    assert.deepEqual(
      mixed.map((p) => [p.usbUrl, p.usbUrlMatches]),
      [
        ['usb:04b8:0e15?serial=S1', 1],
        ['usb:04b8:0e15', 2],
      ],
    );
  });

  it('a claim through usbfs (CUPS, a running agent) is reported as the driver; a class says what a known vendor’s device is', () => {
    const [claimed] = usbPrintersAmong([
      device({ interfaces: [{ number: 0, class: 7, driver: 'usbfs', lp: null }] }),
    ]);
    assert.deepEqual([claimed!.driver, claimed!.url], ['usbfs', 'usb:04b8:0e15']);
    const others = usbPrintersAmong([
      // Epson scanner-like: vendor-specific, listed as a maybe; Epson keyboard-like HID: not.
      device({ name: '1-1', interfaces: [{ number: 0, class: 0xff, driver: null, lp: null }] }),
      device({ name: '1-2', interfaces: [{ number: 0, class: 0x03, driver: 'usbhid', lp: null }] }),
      // A vendor-specific interface of an unknown vendor: nothing says printer.
      device({
        name: '1-3',
        vendorId: 0x1234,
        interfaces: [{ number: 0, class: 0xff, driver: null, lp: null }],
      }),
    ]);
    assert.deepEqual(
      others.map((p) => [p.name, p.reason]),
      [['1-1', 'vendor-id']],
    );
  });
});

describe('the vendor table and the udev rules', () => {
  it('name the same vendor IDs, so the agent may open every usb: URL the scan prints', () => {
    const rules = readFileSync(join(ROOT, 'systemd/99-printer-agent.rules'), 'utf8');
    const inRules = [...rules.matchAll(/ATTR\{idVendor\}=="([0-9a-f]{4})"/g)].map((m) => m[1]);
    const inTable = [...ESC_POS_USB_VENDORS.keys()].map((id) => id.toString(16).padStart(4, '0'));
    assert.deepEqual([...inRules].sort(), [...inTable].sort());
    // Printer-class devices of any vendor: one rule on the interface class.
    assert.match(rules, /ENV\{ID_USB_INTERFACES\}=="\*:0701\*"/);
  });
});
