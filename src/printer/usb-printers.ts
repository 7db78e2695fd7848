/**
 * USB printers as sysfs shows them (issue 41 item 1), for `printers scan`: every device under
 * `sys/bus/usb/devices` with a printer-class interface (07), or a vendor-specific one (0xff) and
 * the vendor ID of an ESC/POS printer maker (usb-vendors.ts), with its strings and serial, whether
 * the kernel's usblp driver holds that interface and as which `/dev/usb/lpN`, and the URLs that
 * reach it: `usb:VID:PID?serial=SN` always, `file:/dev/usb/lpN` while usblp holds it.
 *
 * Only read, never opened: sysfs has everything a listing needs without the service's device
 * permissions, and opening the usbfs node of a printer that CUPS or a running agent uses, or
 * detaching usblp to ask it, would take it from them mid-receipt. `printers identify URL` asks the
 * one the technician picks.
 *
 * Which URL first (docs/decisions.md 245): `file:/dev/usb/lpN` when usblp holds the printer (the
 * kernel driver stays; usb-transport.ts calls it the better path), else `usb:`. A `usb:` URL
 * matches like the transport does (usb-transport.ts `connect`): the ids, and the serial when the
 * URL has one; when it matches more than one device they cannot be told apart (decision 246).
 *
 * `root` is `/` in use; tests point it at the usbfs emulator's tree (test/usbfs/usb-stack.ts).
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import { escPosUsbVendor } from './usb-vendors.js';

export const PRINTER_CLASS = 0x07;
export const VENDOR_SPECIFIC_CLASS = 0xff;

/** One interface of the active configuration, as sysfs shows it. */
export interface SysfsUsbInterface {
  number: number;
  class: number;
  /** The bound driver's name (`usblp`, `usbfs` when a program claimed it), or null. */
  driver: string | null;
  /** usblp's node for this interface, e.g. `/dev/usb/lp0`, when sysfs names one. */
  lp: string | null;
}

export interface SysfsUsbDevice {
  /** The sysfs name: bus and port path, e.g. `1-1.4`. */
  name: string;
  vendorId: number;
  productId: number;
  manufacturer: string | null;
  product: string | null;
  serial: string | null;
  interfaces: SysfsUsbInterface[];
}

export interface UsbPrinter {
  kind: 'usb';
  /** The sysfs name, e.g. `1-1.4` (the port it hangs on). */
  name: string;
  /** Hex, four digits, as lsusb and the URL write them: `04b8`. */
  vendorId: string;
  productId: string;
  manufacturer: string | null;
  product: string | null;
  serial: string | null;
  /** `printer-class`: an interface says printer; `vendor-id`: a vendor-class one of a known maker. */
  reason: 'printer-class' | 'vendor-id';
  /** Who ships printers with this vendor ID (usb-vendors.ts), when known. */
  vendor: string | null;
  /** The interface a transport would use: the printer-class one, else the vendor-specific one. */
  interface: number;
  /** The driver bound to it: `usblp`, `usbfs` (a program claimed it), another, or null. */
  driver: string | null;
  /** `/dev/usb/lpN` while usblp holds it. */
  lp: string | null;
  /** The URL for the config, the recommended of the two below. */
  url: string;
  usbUrl: string;
  fileUrl: string | null;
  /** Devices the `usb:` URL matches now; above 1 they cannot be told apart by it. */
  usbUrlMatches: number;
}

const SYSFS_USB_DEVICES = 'sys/bus/usb/devices';

function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return []; // no such directory: no USB bus, or nothing of that kind
  }
}

/** A sysfs attribute without its newline; null when absent or empty (no string descriptor). */
function attr(dir: string, name: string): string | null {
  try {
    const text = readFileSync(join(dir, name), 'utf8').trim();
    return text === '' ? null : text;
  } catch {
    return null;
  }
}

function hexAttr(dir: string, name: string): number | null {
  const text = attr(dir, name);
  return text !== null && /^[0-9a-fA-F]+$/.test(text) ? Number.parseInt(text, 16) : null;
}

function driverOf(interfaceDir: string): string | null {
  try {
    return basename(readlinkSync(join(interfaceDir, 'driver')));
  } catch {
    return null; // no driver bound
  }
}

/**
 * usblp's class device under its interface: `usbmisc/lpN` (the class usb_register_dev has made
 * since Linux 2.6.23), `usb/lpN` on older kernels.
 */
function lpOf(interfaceDir: string): string | null {
  for (const cls of ['usbmisc', 'usb']) {
    const lp = entries(join(interfaceDir, cls)).find((n) => /^lp\d+$/.test(n));
    if (lp) return `/dev/usb/${lp}`;
  }
  return null;
}

const byName = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });

/** Every USB device sysfs lists under `root`, with its interfaces; root hubs included. */
export function readSysfsUsbDevices(root = '/'): SysfsUsbDevice[] {
  const base = join(root, SYSFS_USB_DEVICES);
  const devices: SysfsUsbDevice[] = [];
  // `1-1:1.0` entries are interfaces, listed again inside their device's directory.
  for (const name of entries(base)
    .filter((n) => !n.includes(':'))
    .sort(byName)) {
    const dir = join(base, name);
    const vendorId = hexAttr(dir, 'idVendor');
    const productId = hexAttr(dir, 'idProduct');
    if (vendorId === null || productId === null) continue;
    const interfaces: SysfsUsbInterface[] = [];
    // Interfaces of the active configuration: `NAME:CONFIG.NUMBER`.
    for (const child of entries(dir).sort(byName)) {
      const m = /^(.+):\d+\.(\d+)$/.exec(child);
      if (!m || m[1] !== name) continue;
      const idir = join(dir, child);
      const cls = hexAttr(idir, 'bInterfaceClass');
      if (cls === null) continue;
      interfaces.push({
        number: hexAttr(idir, 'bInterfaceNumber') ?? Number(m[2]),
        class: cls,
        driver: driverOf(idir),
        lp: lpOf(idir),
      });
    }
    devices.push({
      name,
      vendorId,
      productId,
      manufacturer: attr(dir, 'manufacturer'),
      product: attr(dir, 'product'),
      serial: attr(dir, 'serial'),
      interfaces,
    });
  }
  return devices;
}

const hex4 = (n: number) => n.toString(16).padStart(4, '0');

/** The `usb:` URL, spelled as printer-url.ts parses it and usb-transport.ts describes it. */
export function usbPrinterUrl(vendorId: number, productId: number, serial: string | null): string {
  const query = serial === null ? '' : `?${new URLSearchParams({ serial })}`;
  return `usb:${hex4(vendorId)}:${hex4(productId)}${query}`;
}

/** The devices among `devices` that a `usb:` URL with these ids and serial would match. */
function matching(
  devices: readonly SysfsUsbDevice[],
  vendorId: number,
  productId: number,
  serial: string | null,
): number {
  return devices.filter(
    (d) =>
      d.vendorId === vendorId &&
      d.productId === productId &&
      (serial === null || d.serial === serial),
  ).length;
}

/** The printers among the devices sysfs lists, with the URLs that reach them. Pure. */
export function usbPrintersAmong(devices: readonly SysfsUsbDevice[]): UsbPrinter[] {
  const printers: UsbPrinter[] = [];
  for (const d of devices) {
    const vendor = escPosUsbVendor(d.vendorId);
    let reason: UsbPrinter['reason'] = 'printer-class';
    let iface = d.interfaces.find((i) => i.class === PRINTER_CLASS);
    if (!iface && vendor) {
      // A known maker's ID alone is not enough: Epson's scanners and a chip maker's debug
      // probes share it; a HID or storage interface says what the device is.
      iface = d.interfaces.find((i) => i.class === VENDOR_SPECIFIC_CLASS);
      reason = 'vendor-id';
    }
    if (!iface) continue;
    const lp = iface.driver === 'usblp' ? iface.lp : null;
    const usbUrl = usbPrinterUrl(d.vendorId, d.productId, d.serial);
    const fileUrl = lp === null ? null : `file:${lp}`;
    printers.push({
      kind: 'usb',
      name: d.name,
      vendorId: hex4(d.vendorId),
      productId: hex4(d.productId),
      manufacturer: d.manufacturer,
      product: d.product,
      serial: d.serial,
      reason,
      vendor: vendor?.name ?? null,
      interface: iface.number,
      driver: iface.driver,
      lp,
      url: fileUrl ?? usbUrl,
      usbUrl,
      fileUrl,
      usbUrlMatches: matching(devices, d.vendorId, d.productId, d.serial),
    });
  }
  return printers;
}

export function listUsbPrinters(root = '/'): UsbPrinter[] {
  return usbPrintersAmong(readSysfsUsbDevices(root));
}
