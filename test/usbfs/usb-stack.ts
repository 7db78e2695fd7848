/**
 * Emulated USB printers for the real `usb` package and the kernel's usblp interface (issue 38):
 * test tooling, never shipped. `UsbStack.start()` builds and starts the supervisor
 * (supervisor.c), which answers the device calls of the processes put under it; this module is
 * its host: it writes the sysfs tree the package enumerates, and plays each device's printer, a
 * `VirtualPrinter` of src/emulator behind the device's endpoints.
 *
 * Two ways to be under it: `stack.attachSelf()` puts this very test process there (the real
 * package in-process, e.g. the transport contract suite), and `stack.command([...argv])` gives the
 * argv of a child (e.g. `printer-agent run`) that runs under it. Both can be used at once.
 *
 * Per device: ids, serial, interface layout (a printer-class interface with bulk OUT and IN, a
 * vendor-class one with bulk OUT only, a composite device, a mass-storage device that is no
 * printer), the kernel's usblp driver bound or not (then `/dev/usb/lpN` exists, with its sysfs
 * entry `usbmisc/lpN` under the interface, and both vanish while a program has detached the
 * driver), plug, unplug and replug (a new device number, udev hotplug events), another program
 * holding the interface (CUPS), a stalled endpoint, a short write, garbage on bulk IN, an unplug
 * during open.
 *
 * What it cannot show: electrical faults, a real host controller's timing, firmware quirks of a
 * given model. That is the Pi checklist's (docs/fault-matrix.md, hardware tests with PRINTER_URL).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { arch, release, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Duplex } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createInProcessLink, LinkSlot, VirtualPrinter } from '../../src/emulator/index.js';
import { buildCTool, compilerSkip } from '../helpers/c-tools.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const SOURCES = ['supervisor.c', 'attach.c', 'seccomp-attach.h'];

// The control protocol: supervisor.c's struct msg_header and message types.
const HEADER = 16;
const H = {
  DEVICE: 1,
  UNPLUG: 2,
  OUT_DONE: 3,
  IN: 4,
  HALT: 5,
  HELD: 6,
  DRIVER: 7,
  LP: 8,
  UEVENT: 9,
  FAULT: 10,
} as const;
const S = { OUT: 101, DISCARD: 102, EVENT: 103, LOG: 104, READY: 105, ATTACHED: 106 } as const;
const EVENTS: Record<number, string> = {
  1: 'open',
  2: 'close',
  3: 'claim',
  4: 'release',
  5: 'detach',
  6: 'attach',
  7: 'clear-halt',
  8: 'reset',
  9: 'set-configuration',
  10: 'lp-open',
  11: 'lp-close',
  12: 'unknown-ioctl',
  13: 'claim-refused',
  14: 'set-interface',
  15: 'open-refused',
  16: 'no-access',
  17: 'hotplug-socket',
};
const ENOENT = 2;

/** Why the emulated USB stack cannot run here, or false when it can. */
export function usbStackSkip(): string | false {
  if (process.platform !== 'linux') return 'the usbfs emulator needs Linux';
  // The supervisor knows aarch64's system calls too, but only x86_64 has been run.
  if (arch() !== 'x64') return `the usbfs emulator runs on x86_64 only (this is ${arch()})`;
  const [major = 0, minor = 0] = release()
    .split('.')
    .map((n) => Number.parseInt(n, 10));
  if (major < 5 || (major === 5 && minor < 14))
    return `the usbfs emulator needs Linux 5.14 or later (seccomp ADDFD_FLAG_SEND); this is ${release()}`;
  let actions = '';
  try {
    actions = readFileSync('/proc/sys/kernel/seccomp/actions_avail', 'utf8');
  } catch {
    // no seccomp
  }
  if (!/\buser_notif\b/.test(actions))
    return 'the usbfs emulator needs seccomp user notification (user_notif in /proc/sys/kernel/seccomp/actions_avail)';
  const noCompiler = compilerSkip();
  return noCompiler ? `the usbfs emulator ${noCompiler}` : false;
}

interface Built {
  supervisor: string;
  attach: string;
}

/** The supervisor and the attach module (test/helpers/c-tools.ts). */
function build(): Built {
  const { supervisor, 'attach.node': attach } = buildCTool({
    name: 'usbfs',
    sources: SOURCES.map((file) => join(HERE, file)),
    outputs: {
      supervisor: ['-O2', '-Wall', '-o', '{out}', join(HERE, 'supervisor.c')],
      'attach.node': ['-O2', '-Wall', '-shared', '-fPIC', '-o', '{out}', join(HERE, 'attach.c')],
    },
  });
  return { supervisor: supervisor!, attach: attach! };
}

// ---- devices ---------------------------------------------------------------------------------

export type InterfaceLayout =
  /** One printer-class interface (7/1/2) with bulk OUT 0x01 and bulk IN 0x82: most printers. */
  | 'printer'
  /** One vendor-class interface (0xff) with bulk OUT 0x01 only: no status replies. */
  | 'vendor'
  /** Interface 0 vendor-class with an interrupt IN; interface 1 the printer (OUT 0x02, IN 0x81). */
  | 'composite'
  /**
   * No printer: one mass-storage interface (8/6/0x50, bulk OUT 0x01 and IN 0x82), for what
   * `printers scan` must leave out. Its endpoints still reach the device's `VirtualPrinter`.
   */
  | 'storage';

/** usblp binds to printer-class interfaces only: never to a vendor-class or storage device. */
function usblpBinds(layout: InterfaceLayout): boolean {
  return layout === 'printer' || layout === 'composite';
}

export interface UsbPrinterSpec {
  vendorId?: number;
  productId?: number;
  /** null: the device has no serial number. */
  serial?: string | null;
  manufacturer?: string;
  product?: string;
  layout?: InterfaceLayout;
  /** The kernel's usblp driver is bound to the printer interface at plug (it then has /dev/usb/lpN). */
  kernelDriver?: boolean;
  /** The printer behind the endpoints; a new 48-column one by default. */
  printer?: VirtualPrinter;
}

interface Endpoints {
  printerInterface: number;
  out: number;
  in: number | null;
}

function layoutOf(layout: InterfaceLayout): Endpoints {
  if (layout === 'vendor') return { printerInterface: 0, out: 0x01, in: null };
  if (layout === 'composite') return { printerInterface: 1, out: 0x02, in: 0x81 };
  return { printerInterface: 0, out: 0x01, in: 0x82 };
}

const PACKET = 64;

/** Device descriptor, then the one configuration with its interfaces and endpoints. */
function descriptors(
  spec: Required<Pick<UsbPrinterSpec, 'vendorId' | 'productId' | 'layout'>> & {
    hasSerial: boolean;
  },
): {
  bytes: Buffer;
  interfaces: Array<{
    number: number;
    class: number;
    subclass: number;
    protocol: number;
    endpoints: number;
  }>;
} {
  const u16 = (n: number) => [n & 0xff, n >> 8];
  const endpoint = (address: number, type: number) => [
    7,
    5,
    address,
    type,
    ...u16(PACKET),
    type === 3 ? 10 : 0,
  ];
  const iface = (number: number, cls: number, sub: number, proto: number, eps: number[][]) => [
    9,
    4,
    number,
    0,
    eps.length,
    cls,
    sub,
    proto,
    0,
    ...eps.flat(),
  ];
  const interfaces: number[][] = [];
  const info: Array<{
    number: number;
    class: number;
    subclass: number;
    protocol: number;
    endpoints: number;
  }> = [];
  const add = (number: number, cls: number, sub: number, proto: number, eps: number[][]) => {
    interfaces.push(iface(number, cls, sub, proto, eps));
    info.push({ number, class: cls, subclass: sub, protocol: proto, endpoints: eps.length });
  };
  if (spec.layout === 'printer') add(0, 7, 1, 2, [endpoint(0x01, 2), endpoint(0x82, 2)]);
  else if (spec.layout === 'vendor') add(0, 0xff, 0, 0, [endpoint(0x01, 2)]);
  else if (spec.layout === 'storage') add(0, 8, 6, 0x50, [endpoint(0x01, 2), endpoint(0x82, 2)]);
  else {
    add(0, 0xff, 0, 0, [endpoint(0x83, 3)]);
    add(1, 7, 1, 2, [endpoint(0x02, 2), endpoint(0x81, 2)]);
  }
  const body = interfaces.flat();
  const config = [9, 2, ...u16(9 + body.length), interfaces.length, 1, 0, 0xc0, 50, ...body];
  const device = [
    18,
    1,
    ...u16(0x0200),
    0,
    0,
    0,
    PACKET,
    ...u16(spec.vendorId),
    ...u16(spec.productId),
    ...u16(0x0100),
    1, // iManufacturer
    2, // iProduct
    spec.hasSerial ? 3 : 0, // iSerialNumber: 0 is "none", as on printers without one
    1,
  ];
  return { bytes: Buffer.from([...device, ...config]), interfaces: info };
}

const hex4 = (n: number) => n.toString(16).padStart(4, '0');
const hex2 = (n: number) => n.toString(16).padStart(2, '0');

export interface DeviceEvent {
  /** `open`, `close`, `claim`, `release`, `detach`, `attach`, `clear-halt`, `claim-refused`... */
  type: string;
  arg: number;
}

/** One OUT transfer the host is playing. */
interface OutTransfer {
  seq: number;
  bytes: Uint8Array;
  taken: number;
  cancelled: boolean;
}

export class EmulatedUsbPrinter extends EventEmitter<{ event: [DeviceEvent]; out: [Uint8Array] }> {
  readonly printer: VirtualPrinter;
  readonly slot: LinkSlot;
  readonly vendorId: number;
  readonly productId: number;
  readonly serial: string | null;
  readonly layout: InterfaceLayout;
  readonly endpoints: Endpoints;
  /** What the supervisor reported, in order: `open`, `claim(0)`, `detach(0)`... */
  readonly calls: string[] = [];
  /** The sysfs name, e.g. `1-1`. */
  readonly name: string;
  busnum = 1;
  devnum = 0;
  /** usblp is bound to the printer interface now. */
  driverBound = false;
  /** The usblp node's minor while it exists (lp0, lp1...). */
  readonly lpMinor: number | null;
  private link: (Duplex & { link: unknown }) | null = null;
  /** Resolves when the current link is torn down (a pending write's callback may never come). */
  private linkClosed: Promise<void> = Promise.resolve();
  private outQueue: OutTransfer[] = [];
  private outBusy = false;
  private shortNext: number | null = null;
  private readonly bytes: Buffer;
  private readonly interfaceInfo: ReturnType<typeof descriptors>['interfaces'];
  private plugged = false;

  constructor(
    private readonly stack: UsbStack,
    readonly index: number,
    spec: UsbPrinterSpec,
    lpMinor: number | null,
  ) {
    super();
    this.vendorId = spec.vendorId ?? 0x04b8;
    this.productId = spec.productId ?? 0x0202;
    this.serial =
      spec.serial === undefined ? `EMU${String(index + 1).padStart(4, '0')}` : spec.serial;
    this.layout = spec.layout ?? 'printer';
    this.endpoints = layoutOf(this.layout);
    this.printer = spec.printer ?? new VirtualPrinter({ columns: 48, columnsFontB: 64 });
    this.slot = new LinkSlot(this.printer);
    this.name = `1-${index + 1}`;
    this.lpMinor = lpMinor;
    this.driverBound = (spec.kernelDriver ?? false) && usblpBinds(this.layout);
    const d = descriptors({
      vendorId: this.vendorId,
      productId: this.productId,
      layout: this.layout,
      hasSerial: this.serial !== null,
    });
    this.bytes = d.bytes;
    this.interfaceInfo = d.interfaces;
    this.spec = spec;
  }

  private readonly spec: UsbPrinterSpec;

  /** The config URL of the `usb:` transport for this device. */
  get url(): string {
    const serial = this.serial === null ? '' : `?serial=${encodeURIComponent(this.serial)}`;
    return `usb:${hex4(this.vendorId)}:${hex4(this.productId)}${serial}`;
  }

  /** `/dev/usb/lpN` of this device (it exists while usblp is bound). */
  get lpPath(): string {
    return `/dev/usb/lp${this.lpMinor ?? 0}`;
  }

  get isPlugged(): boolean {
    return this.plugged;
  }

  /** Plugs the device in (again): a new device number, a udev `add` event. */
  plug(): void {
    if (this.plugged) return;
    this.devnum = this.stack.nextDevnum();
    this.driverBound = (this.spec.kernelDriver ?? false) && usblpBinds(this.layout);
    this.writeSysfs();
    const host = createInProcessLink(this.slot);
    host.on('error', () => {});
    host.on('data', (reply: Buffer) => {
      // A device without a bulk IN endpoint cannot answer: the replies go nowhere.
      if (this.endpoints.in !== null)
        this.stack.send(H.IN, this.index, this.endpoints.in, 0, reply);
    });
    this.link = host;
    this.linkClosed = new Promise<void>((resolve) => host.once('close', () => resolve()));
    this.plugged = true;
    this.stack.send(H.DEVICE, this.index, (this.busnum << 16) | this.devnum, 0, this.bytes);
    this.stack.send(
      H.DRIVER,
      this.index,
      this.endpoints.printerInterface,
      this.driverBound ? 1 : 0,
    );
    if (this.lpMinor !== null) {
      const { out, in: input, printerInterface } = this.endpoints;
      this.stack.send(
        H.LP,
        this.index,
        this.lpMinor,
        out | ((input ?? 0) << 8) | (printerInterface << 16),
      );
    }
    this.syncLp();
    this.stack.uevent('add', this);
  }

  /** Pulls the cable: transfers in flight end as Disconnected, the node goes, a `remove` event. */
  unplug(): void {
    if (!this.plugged) return;
    this.plugged = false;
    this.stack.send(H.UNPLUG, this.index, 0, 0);
    this.outQueue = [];
    this.link?.destroy();
    this.link = null;
    this.slot.disconnect();
    rmSync(join(this.stack.root, 'sys/bus/usb/devices', this.name), {
      recursive: true,
      force: true,
    });
    rmSync(this.devNode(), { force: true });
    this.stack.uevent('remove', this);
  }

  /** Unplug, then plug again: the device comes back with a new device number. */
  replug(): void {
    this.unplug();
    this.plug();
  }

  /** Another program (CUPS) has claimed the printer interface, or let it go. */
  holdInterface(held: boolean): void {
    this.stack.send(H.HELD, this.index, this.endpoints.printerInterface, held ? 1 : 0);
  }

  /** The endpoint stalls (EPIPE) until the host clears the halt: `out` or `in`. */
  stall(direction: 'out' | 'in'): void {
    const ep = direction === 'out' ? this.endpoints.out : this.endpoints.in;
    if (ep !== null) this.stack.send(H.HALT, this.index, ep, 0);
  }

  /** The next OUT transfer completes having taken only `bytes` of its data (a short write). */
  shortNextWrite(bytes: number): void {
    this.shortNext = bytes;
  }

  /** Sends bytes on the bulk IN endpoint as if the printer had (garbage, a zero-length packet). */
  sendIn(bytes: Uint8Array): void {
    if (this.endpoints.in !== null) this.stack.send(H.IN, this.index, this.endpoints.in, 0, bytes);
  }

  /** The device disappears at the next open of its node (after it was listed). */
  unplugOnNextOpen(): void {
    this.stack.send(H.FAULT, this.index, 1, 0);
  }

  /** Waits for the supervisor to report `type` (with `arg`, when given) from now on. */
  waitFor(type: string, arg?: number, timeoutMs = 10_000): Promise<DeviceEvent> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('event', listener);
        reject(
          new Error(
            `${this.name}: no ${type}${arg === undefined ? '' : `(${arg})`} in ${timeoutMs} ms; calls: ${this.calls.join(' ')}`,
          ),
        );
      }, timeoutMs);
      const listener = (e: DeviceEvent) => {
        if (e.type !== type || (arg !== undefined && e.arg !== arg)) return;
        clearTimeout(timer);
        this.off('event', listener);
        resolve(e);
      };
      this.on('event', listener);
    });
  }

  // ---- the supervisor's side --------------------------------------------------------------

  onEvent(type: string, arg: number): void {
    this.calls.push(
      type === 'open' || type === 'close' || type === 'lp-open' || type === 'lp-close'
        ? type
        : `${type}(${arg})`,
    );
    if (type === 'detach' && arg === this.endpoints.printerInterface) {
      this.driverBound = false;
      this.syncLp();
    }
    if (type === 'attach' && arg === this.endpoints.printerInterface) {
      this.driverBound = true;
      this.syncLp();
    }
    // `unplugOnNextOpen` fired: the device is gone from sysfs too, as after a real unplug.
    if (type === 'open-refused') this.unplug();
    this.emit('event', { type, arg });
  }

  onOut(seq: number, bytes: Uint8Array): void {
    this.emit('out', bytes);
    this.outQueue.push({ seq, bytes, taken: 0, cancelled: false });
    void this.pumpOut();
  }

  onDiscard(seq: number): void {
    const t = this.outQueue.find((o) => o.seq === seq);
    if (!t) return; // already completed
    t.cancelled = true;
    if (this.outQueue[0] !== t) {
      // Not started: nothing of it reached the printer.
      this.outQueue.splice(this.outQueue.indexOf(t), 1);
      this.stack.send(H.OUT_DONE, this.index, seq, -ENOENT, u32(0));
    }
  }

  /** Bulk OUT, in order: each transfer's bytes go to the printer's link as it takes them. */
  private async pumpOut(): Promise<void> {
    if (this.outBusy) return;
    this.outBusy = true;
    try {
      while (this.outQueue.length > 0) {
        const t = this.outQueue[0]!;
        const link = this.link;
        let limit = t.bytes.length;
        if (this.shortNext !== null) {
          limit = Math.min(limit, this.shortNext);
          this.shortNext = null;
        }
        // 512 bytes at a time (8 packets): a transfer cut short by its timeout has delivered a
        // whole number of these, which is what it reports taken.
        while (link && t.taken < limit && !t.cancelled && this.link === link) {
          const piece = t.bytes.subarray(t.taken, Math.min(limit, t.taken + 512));
          const ok = await Promise.race([
            new Promise<boolean>((resolve) => {
              link.write(piece, (error) => resolve(!error));
            }),
            this.linkClosed.then(() => false),
          ]);
          if (!ok) break;
          t.taken += piece.length;
        }
        if (this.outQueue[0] !== t) continue; // unplugged meanwhile: the queue was emptied
        this.outQueue.shift();
        if (this.link !== link || !link) continue; // unplugged: the supervisor ended it
        this.stack.send(H.OUT_DONE, this.index, t.seq, t.cancelled ? -ENOENT : 0, u32(t.taken));
      }
    } finally {
      this.outBusy = false;
    }
  }

  // ---- sysfs -------------------------------------------------------------------------------

  private devNode(): string {
    return join(
      this.stack.root,
      'dev/bus/usb',
      String(this.busnum).padStart(3, '0'),
      String(this.devnum).padStart(3, '0'),
    );
  }

  private writeSysfs(): void {
    const dir = join(this.stack.root, 'sys/bus/usb/devices', this.name);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const attrs: Record<string, string> = {
      busnum: String(this.busnum),
      devnum: String(this.devnum),
      devpath: String(this.index + 1),
      idVendor: hex4(this.vendorId),
      idProduct: hex4(this.productId),
      bcdDevice: '0100',
      version: ' 2.00',
      bDeviceClass: '00',
      bDeviceSubClass: '00',
      bDeviceProtocol: '00',
      bMaxPacketSize0: String(PACKET),
      speed: '12',
      manufacturer: this.spec.manufacturer ?? 'EPSON',
      product: this.spec.product ?? 'TM-T20 (emulated)',
      bConfigurationValue: '1',
      bNumConfigurations: '1',
      bNumInterfaces: ` ${this.interfaceInfo.length}`,
      uevent: `MAJOR=189\nMINOR=${this.devnum - 1}\nDEVNAME=bus/usb/001/${String(this.devnum).padStart(3, '0')}\nDEVTYPE=usb_device\nPRODUCT=${this.vendorId.toString(16)}/${this.productId.toString(16)}/100\nBUSNUM=001\nDEVNUM=${String(this.devnum).padStart(3, '0')}`,
    };
    if (this.serial !== null) attrs.serial = this.serial;
    for (const [name, value] of Object.entries(attrs)) writeFileSync(join(dir, name), `${value}\n`);
    writeFileSync(join(dir, 'descriptors'), this.bytes);
    for (const i of this.interfaceInfo) {
      const idir = join(dir, `${this.name}:1.${i.number}`);
      mkdirSync(idir);
      const iattrs: Record<string, string> = {
        bInterfaceNumber: hex2(i.number),
        bAlternateSetting: ' 0',
        bInterfaceClass: hex2(i.class),
        bInterfaceSubClass: hex2(i.subclass),
        bInterfaceProtocol: hex2(i.protocol),
        bNumEndpoints: hex2(i.endpoints),
      };
      for (const [name, value] of Object.entries(iattrs))
        writeFileSync(join(idir, name), `${value}\n`);
    }
    const node = this.devNode();
    mkdirSync(dirname(node), { recursive: true });
    writeFileSync(node, '');
  }

  /**
   * The interface's `driver` link and usblp's class device `usbmisc/lpN` under it (as the kernel's
   * usb_register_dev makes it) follow whether usblp is bound (the supervisor keeps the
   * /dev/usb/lpN node in step itself, inside the call that binds or unbinds).
   */
  private syncLp(): void {
    const idir = join(
      this.stack.root,
      'sys/bus/usb/devices',
      this.name,
      `${this.name}:1.${this.endpoints.printerInterface}`,
    );
    const link = join(idir, 'driver');
    const usbmisc = join(idir, 'usbmisc');
    rmSync(link, { force: true });
    rmSync(usbmisc, { recursive: true, force: true });
    if (this.plugged && this.driverBound && existsSync(idir)) {
      symlinkSync('../../../../../bus/usb/drivers/usblp', link);
      if (this.lpMinor !== null) {
        const lp = join(usbmisc, `lp${this.lpMinor}`);
        mkdirSync(lp, { recursive: true });
        writeFileSync(join(lp, 'dev'), `180:${this.lpMinor}\n`);
        writeFileSync(
          join(lp, 'uevent'),
          `MAJOR=180\nMINOR=${this.lpMinor}\nDEVNAME=usb/lp${this.lpMinor}\n`,
        );
      }
    }
  }
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
}

// ---- the stack -------------------------------------------------------------------------------

export class UsbStack {
  readonly root: string;
  readonly name: string;
  readonly devices: EmulatedUsbPrinter[] = [];
  /** The supervisor's diagnostics (S_LOG), for a failing test's message. */
  readonly log: string[] = [];
  /**
   * Udev hotplug sockets opened so far (the package's watcher opens one when the first
   * connect/disconnect listener comes): events sent before it exists are not seen, as on a Pi.
   */
  hotplugSockets = 0;
  private devnum = 1;
  private nextLpMinor = 0;
  private readonly child: ChildProcess;
  private readonly control: Socket;
  private buffer: Buffer = Buffer.alloc(0);
  private attachedSelf = false;
  private readonly binaries: Built;
  /** Resolves when the supervisor says it is ready; rejects when it exits first. */
  private readonly ready: Promise<void>;

  private constructor(binaries: Built, root: string) {
    this.binaries = binaries;
    this.root = root;
    this.name = `printer-agent-usbfs-${process.pid}-${randomBytes(6).toString('hex')}`;
    for (const dir of [
      'sys/bus/usb/devices',
      'sys/bus/usb/drivers/usblp',
      'dev/bus/usb/001',
      'dev/usb',
    ])
      mkdirSync(join(root, dir), { recursive: true });
    this.child = spawn(
      binaries.supervisor,
      ['--listen', this.name, '--root', root, '--control-fd', '3'],
      { stdio: ['ignore', 'inherit', 'inherit', 'pipe'] },
    );
    this.control = this.child.stdio[3] as Socket;
    this.control.on('data', (chunk: Buffer) => this.onData(chunk));
    this.control.on('error', () => {});
    this.ready = new Promise<void>((resolve, reject) => {
      this.onReady = resolve;
      this.child.once('exit', (code, signal) =>
        reject(new Error(`the usbfs supervisor exited (${signal ?? code}) before it was ready`)),
      );
      this.child.once('error', reject);
    });
  }

  private onReady: () => void = () => {};

  /** Builds (once per source state) and starts a supervisor with no device plugged. */
  static async start(): Promise<UsbStack> {
    const binaries = build();
    const stack = new UsbStack(binaries, mkdtempSync(join(tmpdir(), 'pa-usbfs-')));
    await stack.ready;
    // From now on neither keeps this process alive: a test process ends when its tests do, and
    // the supervisor then ends with it (its control socket closes, its listeners hang up).
    stack.control.unref();
    stack.child.unref();
    return stack;
  }

  private static own: Promise<UsbStack> | undefined;

  /**
   * This process's stack, started and attached on first use (`attachSelf`): the `usb` package in
   * this process sees its devices. One per process: the kernel allows one seccomp listener in a
   * process's filters, so every suite of a test file shares it, each plugging its own devices.
   */
  static forThisProcess(): Promise<UsbStack> {
    UsbStack.own ??= UsbStack.start().then((stack) => {
      stack.attachSelf();
      return stack;
    });
    return UsbStack.own;
  }

  /**
   * Puts this process under the supervisor: from now on, the `usb` package and `fs` here see the
   * emulated devices. It cannot be undone; the supervisor then lives as long as this process.
   */
  attachSelf(): void {
    if (this.attachedSelf) return;
    const require = createRequire(import.meta.url);
    const addon = require(this.binaries.attach) as { attach(name: string): void };
    addon.attach(this.name);
    this.attachedSelf = true;
  }

  /** argv that runs `command` under the supervisor: spawn(argv[0], argv.slice(1)). */
  command(command: readonly string[]): string[] {
    return [this.binaries.supervisor, '--run', this.name, '--', ...command];
  }

  /** Plugs in a new device; it is plugged at once unless `plugged: false`. */
  plug(spec: UsbPrinterSpec = {}, options: { plugged?: boolean } = {}): EmulatedUsbPrinter {
    const hasLp = (spec.kernelDriver ?? false) && usblpBinds(spec.layout ?? 'printer');
    const device = new EmulatedUsbPrinter(
      this,
      this.devices.length,
      spec,
      hasLp ? this.nextLpMinor++ : null,
    );
    this.devices.push(device);
    if (options.plugged !== false) device.plug();
    return device;
  }

  nextDevnum(): number {
    this.devnum += 1;
    return this.devnum;
  }

  /**
   * Stops talking to the supervisor. When this process is attached the supervisor serves it
   * until it exits (killing it would fail every open of this process with ENOSYS); otherwise it
   * exits once its supervised children have.
   */
  async close(): Promise<void> {
    for (const device of this.devices) device.slot.close();
    this.control.end();
    if (!this.attachedSelf) {
      // It exits once its supervised processes have; one left behind (a test that failed before
      // it stopped its child) must not hold the test process: SIGKILL after a grace period.
      this.child.ref();
      await new Promise<void>((resolve) => {
        if (this.child.exitCode !== null || this.child.signalCode !== null) resolve();
        else {
          const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
          this.child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
        }
      });
      rmSync(this.root, { recursive: true, force: true });
    }
  }

  send(
    type: number,
    dev: number,
    a: number,
    b: number,
    payload: Uint8Array = Buffer.alloc(0),
  ): void {
    const header = Buffer.alloc(HEADER);
    header.writeUInt32LE(HEADER + payload.length, 0);
    header.writeUInt16LE(type, 4);
    header.writeUInt16LE(dev, 6);
    header.writeUInt32LE(a >>> 0, 8);
    header.writeInt32LE(b, 12);
    this.control.write(Buffer.concat([header, payload]));
  }

  uevent(action: 'add' | 'remove', device: EmulatedUsbPrinter): void {
    const props = [
      `ACTION=${action}`,
      `DEVPATH=/bus/usb/devices/${device.name}`,
      'SUBSYSTEM=usb',
      'DEVTYPE=usb_device',
      `BUSNUM=${String(device.busnum).padStart(3, '0')}`,
      `DEVNUM=${String(device.devnum).padStart(3, '0')}`,
      `PRODUCT=${device.vendorId.toString(16)}/${device.productId.toString(16)}/100`,
    ];
    this.send(H.UEVENT, 0, 0, 0, Buffer.from(`${props.join('\0')}\0`));
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    while (this.buffer.length >= HEADER) {
      const len = this.buffer.readUInt32LE(0);
      if (this.buffer.length < len) break;
      const type = this.buffer.readUInt16LE(4);
      const dev = this.buffer.readUInt16LE(6);
      const a = this.buffer.readUInt32LE(8);
      const b = this.buffer.readInt32LE(12);
      const payload = this.buffer.subarray(HEADER, len);
      this.buffer = this.buffer.subarray(len);
      this.onMessage(type, dev, a, b, payload);
    }
  }

  private onMessage(type: number, dev: number, a: number, b: number, payload: Buffer): void {
    const device = this.devices[dev];
    switch (type) {
      case S.READY:
        this.onReady();
        break;
      case S.OUT:
        device?.onOut(a, Uint8Array.prototype.slice.call(payload));
        break;
      case S.DISCARD:
        device?.onDiscard(a);
        break;
      case S.EVENT:
        if (EVENTS[a] === 'no-access') this.log.push(`cannot read the memory of pid ${b}`);
        else if (EVENTS[a] === 'hotplug-socket') this.hotplugSockets += 1;
        else device?.onEvent(EVENTS[a] ?? `event-${a}`, b);
        break;
      case S.LOG:
        this.log.push(payload.toString());
        break;
      default:
        break;
    }
  }
}
