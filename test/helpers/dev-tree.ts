/**
 * A fake dev/ tree under a temporary directory for `printers scan`'s local listing (issue 41):
 * two usblp files, entries that are no printer, and one serial by-id link. No device nodes: a
 * listing needs only the names. The by-id link points at `../../ttyUSB0` (a plain file), or at
 * `byIdTarget`, e.g. a real pty's `/dev/pts/N`. The caller removes the directory.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const FAKE_BY_ID = 'usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0';

export function fakeDevTree(options: { byIdTarget?: string } = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'pa-scan-dev-'));
  mkdirSync(join(root, 'dev/usb'), { recursive: true });
  mkdirSync(join(root, 'dev/serial/by-id'), { recursive: true });
  for (const name of ['lp1', 'lp0', 'hiddev0', 'lpx'])
    writeFileSync(join(root, 'dev/usb', name), '');
  writeFileSync(join(root, 'dev/ttyUSB0'), '');
  symlinkSync(options.byIdTarget ?? '../../ttyUSB0', join(root, 'dev/serial/by-id', FAKE_BY_ID));
  return root;
}
