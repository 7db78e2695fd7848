/**
 * `printer-agent printers scan` on USB (issue 41 item 1), against the usbfs emulator
 * (test/usbfs/usb-stack.ts): two identical printers told apart by serial, one usblp holds (its
 * lp node, both URL forms), a composite device with the printer on interface 1, two vendor-class
 * clones of a known ESC/POS vendor without serial (cannot be told apart), and two mass-storage
 * devices that must not be listed (one with Epson's ID).
 *
 * Two ways: the CLI in this process with `--root` at the emulator's own tree (the text, line by
 * line), and once end to end: the bundled CLI as a child process under the supervisor, reading
 * the real paths `/sys/bus/usb/devices` and `/dev/usb` (root `/`), whose JSON must name the same
 * printers; then `printers identify` with the `usb:` URL the scan printed for the second twin
 * reaches that twin, through the real `usb` package, and not the first.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { cliEntry } from '../../harness/child-entry.js';
import type { ScanReport } from '../../src/cli/scan-printers.js';
import { VirtualPrinter } from '../../src/emulator/index.js';
import { listUsbPrinters } from '../../src/printer/usb-printers.js';
import { ROOT, runCliInProcess } from '../helpers/cli.js';
import { type EmulatedUsbPrinter, UsbStack, usbStackSkip } from '../usbfs/usb-stack.js';

/** `printer-agent ARGS` as a child under the supervisor; this process stays the devices' host. */
function runUnder(
  stack: UsbStack,
  args: string[],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const [command, ...argv] = stack.command([process.execPath, ...cliEntry(), ...args]);
  const child = spawn(command!, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    stdout += s;
  });
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

const USB_LINES = [
  "usb:04b8:0e15?serial=TWIN-A  USB printer EPSON TM-T20II (04b8:0e15, serial TWIN-A); no kernel driver; ask it: printer-agent printers identify 'usb:04b8:0e15?serial=TWIN-A'",
  "usb:04b8:0e15?serial=TWIN-B  USB printer EPSON TM-T20II (04b8:0e15, serial TWIN-B); no kernel driver; ask it: printer-agent printers identify 'usb:04b8:0e15?serial=TWIN-B'",
  'file:/dev/usb/lp0  USB printer EPSON TM-T88V (04b8:0202, serial KITCHEN-1); usblp holds it; or usb:04b8:0202?serial=KITCHEN-1 (usblp detached while the agent holds it); ask it: printer-agent printers identify file:/dev/usb/lp0',
  'usb:0416:5011  USB device Xprinter POS-58 (0416:5011, no serial), vendor-specific interface and the vendor ID of Winbond chip (Xprinter, Zjiang and other clones): maybe an ESC/POS printer; no kernel driver; 2 devices answer to usb:0416:5011 (same ids, no serial): it cannot tell them apart; connect one at a time; ask it: printer-agent printers identify usb:0416:5011',
  'usb:0416:5011  USB device Xprinter POS-58 (0416:5011, no serial), vendor-specific interface and the vendor ID of Winbond chip (Xprinter, Zjiang and other clones): maybe an ESC/POS printer; no kernel driver; 2 devices answer to usb:0416:5011 (same ids, no serial): it cannot tell them apart; connect one at a time; ask it: printer-agent printers identify usb:0416:5011',
  'file:/dev/usb/lp1  USB printer WCH POS80 composite (1a86:7584, no serial); usblp holds it; or usb:1a86:7584 (usblp detached while the agent holds it); ask it: printer-agent printers identify file:/dev/usb/lp1',
];

describe('printers scan lists USB printers from sysfs (usbfs emulator)', {
  skip: usbStackSkip(),
}, () => {
  let stack: UsbStack;
  let twins: EmulatedUsbPrinter[];
  before(async () => {
    stack = await UsbStack.start();
    const clone = {
      vendorId: 0x0416,
      productId: 0x5011,
      serial: null,
      manufacturer: 'Xprinter',
      product: 'POS-58',
      layout: 'vendor',
    } as const;
    twins = ['TWIN-A', 'TWIN-B'].map((serial) =>
      stack.plug({
        productId: 0x0e15,
        serial,
        product: 'TM-T20II',
        // Each twin says its serial when asked (GS I 68): which one answered is then known.
        printer: new VirtualPrinter({ columns: 48, identity: { model: 'TM-T20II', serial } }),
      }),
    );
    stack.plug({ serial: 'KITCHEN-1', product: 'TM-T88V', kernelDriver: true });
    stack.plug(clone);
    stack.plug(clone);
    stack.plug({
      vendorId: 0x1a86,
      productId: 0x7584,
      serial: null,
      manufacturer: 'WCH',
      product: 'POS80 composite',
      layout: 'composite',
      kernelDriver: true,
    });
    stack.plug({
      vendorId: 0x0781,
      productId: 0x5567,
      serial: '4C530001',
      manufacturer: 'SanDisk',
      product: 'Cruzer Blade',
      layout: 'storage',
    });
    stack.plug({ productId: 0x0851, serial: null, product: 'Storage', layout: 'storage' });
  });
  after(async () => {
    await stack?.close();
  });

  it('in this process (--root at the emulator’s tree): one line per printer, URL first, with the identify hint', async () => {
    const r = await runCliInProcess(['printers', 'scan', '--root', stack.root]);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.equal(lines[0], 'network: not probed (name a subnet: --network 192.168.1.0/24)');
    // The usblp nodes lp0 and lp1 have their USB lines: no second line each.
    assert.deepEqual(lines.slice(1), USB_LINES);
    assert.doesNotMatch(r.stdout, /SanDisk|Storage|0781/);
  });

  it('end to end under the supervisor: the CLI child reads /sys/bus/usb and /dev/usb; the usb: URL it prints reaches that printer', async () => {
    const scan = await runUnder(stack, ['printers', 'scan', '--json']);
    assert.equal(scan.status, 0, scan.stderr + stack.log.join('\n'));
    const report = JSON.parse(scan.stdout) as ScanReport;
    // The same facts as read straight from the tree in this process.
    assert.deepEqual(report.usb, listUsbPrinters(stack.root));
    assert.deepEqual(
      report.usb.map((p) => p.url),
      USB_LINES.map((l) => l.split('  ')[0]),
    );
    assert.deepEqual(
      report.local.filter((d) => d.kind === 'usblp').map((d) => d.url),
      ['file:/dev/usb/lp0', 'file:/dev/usb/lp1'],
      'the supervisor shows usblp’s nodes under /dev/usb',
    );

    const url = report.usb[1]!.usbUrl;
    assert.equal(url, 'usb:04b8:0e15?serial=TWIN-B');
    const asked = await runUnder(stack, ['printers', 'identify', url, '--json']);
    assert.equal(asked.status, 0, asked.stderr + stack.log.join('\n'));
    const answers = (JSON.parse(asked.stdout) as { answers: { serial: string | null } }).answers;
    assert.equal(answers.serial, 'TWIN-B');
    assert.ok(twins[1]!.calls.includes('claim(0)'), twins[1]!.calls.join(' '));
    assert.ok(!twins[0]!.calls.includes('open'), twins[0]!.calls.join(' '));
  });
});
