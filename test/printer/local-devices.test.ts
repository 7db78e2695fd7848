/**
 * Local printer device files for `printers scan` (issue 41 item 1), listed from a fake dev/ tree
 * made under a temporary directory: usblp's lp* and the serial by-id links, each with the URL the
 * config takes (parsed by the real parser), other entries ignored, a missing dev/ no error. One
 * by-id link points at a real pty (socat's), as udev's point at a real tty: listed with its
 * target and shown as the scan's serial line.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { skipWithoutSocat } from '../../harness/waiting.js';
import { describeScan } from '../../src/cli/scan-printers.js';
import { startPtyPair } from '../../src/emulator/index.js';
import { listLocalDevices } from '../../src/printer/local-devices.js';
import { parsePrinterUrl } from '../../src/printer/printer-url.js';
import { FAKE_BY_ID, fakeDevTree } from '../helpers/dev-tree.js';

describe('listLocalDevices', () => {
  it('lists /dev/usb/lp* and /dev/serial/by-id/* with the URLs the config takes', () => {
    const root = fakeDevTree();
    try {
      const found = listLocalDevices(root);
      assert.deepEqual(found, [
        { kind: 'usblp', path: '/dev/usb/lp0', url: 'file:/dev/usb/lp0', target: null },
        { kind: 'usblp', path: '/dev/usb/lp1', url: 'file:/dev/usb/lp1', target: null },
        {
          kind: 'serial',
          path: '/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0',
          url: 'serial:/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0',
          target: '../../ttyUSB0',
        },
      ]);
      assert.deepEqual(parsePrinterUrl(found[0]!.url), { kind: 'file', path: '/dev/usb/lp0' });
      assert.deepEqual(parsePrinterUrl(found[2]!.url), {
        kind: 'serial',
        path: found[2]!.path,
        baudRate: 115200,
        flowControl: 'none',
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('a machine without dev/usb or dev/serial lists nothing, without an error', () => {
    const root = mkdtempSync(join(tmpdir(), 'pa-scan-empty-'));
    try {
      assert.deepEqual(listLocalDevices(root), []);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('a by-id link to a real pty', { skip: skipWithoutSocat() }, () => {
  it('is listed as a serial port with the pty as its target, and the scan shows its line', async () => {
    const ptys = mkdtempSync(join(tmpdir(), 'pa-scan-pty-'));
    const pair = await startPtyPair({ dir: ptys });
    const pts = readlinkSync(pair.hostPath);
    const root = fakeDevTree({ byIdTarget: pts });
    try {
      assert.match(pts, /^\/dev\/pts\/\d+$/);
      const path = `/dev/serial/by-id/${FAKE_BY_ID}`;
      // The link in the fake tree reaches a live terminal, as udev's reach /dev/ttyUSB0.
      assert.ok(statSync(join(root, path)).isCharacterDevice());
      const serial = listLocalDevices(root).filter((d) => d.kind === 'serial');
      assert.deepEqual(serial, [{ kind: 'serial', path, url: `serial:${path}`, target: pts }]);
      assert.equal(parsePrinterUrl(serial[0]!.url).kind, 'serial');
      const lines = describeScan({ network: null, usb: [], local: serial }).split('\n');
      assert.equal(
        lines[1],
        `serial:${path}  serial port (${pts}); add ?baudRate= to the printer's rate (default 115200)`,
      );
    } finally {
      await pair.stop();
      rmSync(root, { recursive: true, force: true });
      rmSync(ptys, { recursive: true, force: true });
    }
  });
});
