/**
 * Printers attached to this machine that the kernel shows as device files (issue 41 item 1):
 * usblp's `/dev/usb/lp*` and serial ports by their stable `/dev/serial/by-id/` names, each with
 * the URL a config takes. Only listed, never opened: a serial port may be a scanner or a modem.
 * `root` lets a test put a fake tree under a temporary directory; URLs always name the real path.
 */
import { readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

export interface LocalDevice {
  kind: 'usblp' | 'serial';
  /** The path on this machine, e.g. `/dev/usb/lp0`. */
  path: string;
  /** For the config: `file:/dev/usb/lp0`, `serial:/dev/serial/by-id/...`. */
  url: string;
  /** Where a by-id link points (`../../ttyUSB0`), when it is a link. */
  target: string | null;
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return []; // no such directory: nothing of that kind attached
  }
}

function linkTarget(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}

export function listLocalDevices(root = '/'): LocalDevice[] {
  const found: LocalDevice[] = [];
  for (const name of entries(join(root, 'dev/usb'))) {
    if (!/^lp\d+$/.test(name)) continue;
    const path = `/dev/usb/${name}`;
    found.push({ kind: 'usblp', path, url: `file:${path}`, target: null });
  }
  for (const name of entries(join(root, 'dev/serial/by-id'))) {
    if (name.includes('?')) continue; // cannot be said in a URL; never seen in udev's names
    const path = `/dev/serial/by-id/${name}`;
    found.push({
      kind: 'serial',
      path,
      url: `serial:${path}`,
      target: linkTarget(join(root, path)),
    });
  }
  return found;
}
