/**
 * A fake USB printer and bus at the `usb` package's API boundary (there is no USB bus on the build
 * machines). It enforces the rules a real device enforces (usb 3.1 on Linux), the way serialport's
 * MockBinding does: see test/printer/usb-transport.test.ts for the list. `attachEmulator` puts
 * the emulator on the far side, for the transport contract suite.
 */
import { EventEmitter } from 'node:events';
import type { VirtualPrinter } from '../../src/emulator/index.js';
import type {
  UsbBackend,
  UsbConfigurationInfo,
  UsbEndpointInfo,
  UsbInterfaceInfo,
  UsbPrinterDevice,
} from '../../src/printer/usb-device.js';

export const VID = 0x04b8;
export const PID = 0x0202;

export interface FakeOptions {
  vendorId?: number;
  productId?: number;
  serialNumber?: string | null;
  /** Configuration value active at plug time; 0 = unconfigured. */
  activeConfiguration?: number;
  interfaces?: UsbInterfaceInfo[];
  /** Interfaces the kernel driver binds to whenever the configuration is set. */
  kernelDriverOn?: number[];
  /** Bytes the paused printer buffers before it NAKs. */
  bufferSize?: number;
}

export const bulk = (
  endpointNumber: number,
  direction: 'in' | 'out',
  packetSize = 64,
): UsbEndpointInfo => ({
  endpointNumber,
  direction,
  type: 'bulk',
  packetSize,
});

export const printerInterface = (
  interfaceNumber = 0,
  endpoints: UsbEndpointInfo[] = [bulk(1, 'out'), bulk(2, 'in')],
): UsbInterfaceInfo => ({ interfaceNumber, alternate: { interfaceClass: 7, endpoints } });

interface PendingOut {
  iface: number;
  data: Uint8Array;
  taken: number;
  resolve: (n: number) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

interface PendingIn {
  iface: number;
  length: number;
  resolve: (b: Uint8Array) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class FakeUsbPrinter implements UsbPrinterDevice {
  readonly vendorId: number;
  readonly productId: number;
  /** `stalled` (bytes taken so far): a transfer is waiting for room in the paused printer. */
  readonly events = new EventEmitter();
  /** Every call, in order, e.g. `claimInterface(0)`. */
  readonly calls: string[] = [];
  /** Bytes that reached the printer, in order. */
  readonly received: number[] = [];
  /** Sizes of the completed OUT transfers. */
  readonly transfers: number[] = [];
  /** Answers the bytes of each completed OUT transfer (a printer's status responder). */
  respond: ((bytes: Uint8Array) => Uint8Array | null) | null = null;
  /** Another program holds these interfaces. */
  readonly heldByOthers = new Set<number>();

  private readonly serial: string | null;
  private readonly config: UsbConfigurationInfo;
  private readonly kernelDriverOn: number[];
  private readonly bufferSize: number;
  private active: number;
  private opened = false;
  private gone = false;
  private paused = false;
  private buffered = 0;
  private stalled = false;
  private readonly bound = new Set<number>();
  /** Claimed interfaces. usb 3.1 keeps them across close() until releaseInterface(). */
  private readonly claimed = new Set<number>();
  private out: PendingOut | null = null;
  private in: PendingIn | null = null;
  private readonly replies: number[] = [];

  constructor(options: FakeOptions = {}) {
    this.vendorId = options.vendorId ?? VID;
    this.productId = options.productId ?? PID;
    this.serial = options.serialNumber ?? null;
    this.config = { configurationValue: 1, interfaces: options.interfaces ?? [printerInterface()] };
    this.kernelDriverOn = options.kernelDriverOn ?? [0];
    this.bufferSize = options.bufferSize ?? 64 * 1024;
    this.active = options.activeConfiguration ?? 1;
    if (this.active !== 0) for (const n of this.kernelDriverOn) this.bound.add(n);
  }

  // --- the usb 3.1 UsbDevice members -------------------------------------------------------

  get serialNumber(): string | null {
    return this.serial;
  }

  get configuration(): UsbConfigurationInfo | null {
    this.mustBeOpenForGetter('configuration');
    if (this.active === 0) throw new Error('configuration error: device is not configured');
    return this.config;
  }

  get configurations(): UsbConfigurationInfo[] {
    this.mustBeOpenForGetter('configurations');
    return [this.config];
  }

  async open(): Promise<void> {
    this.calls.push('open');
    if (this.gone) throw new Error('open error: device disconnected');
    this.opened = true;
  }

  async close(): Promise<void> {
    this.calls.push('close');
    // usb 3.1 keeps claimed interfaces (and the file descriptor) alive after close(): the next
    // open() cannot claim them until they are released.
    this.opened = false;
  }

  async selectConfiguration(value: number): Promise<void> {
    this.calls.push(`selectConfiguration(${value})`);
    this.check('selectConfiguration');
    if (value !== this.config.configurationValue)
      throw new Error('selectConfiguration error: invalid configuration');
    if (value === this.active) return;
    if (this.claimed.size > 0 || this.bound.size > 0)
      throw new Error('selectConfiguration error: device is busy');
    this.active = value;
    // The kernel probes drivers for the new interfaces: usblp binds at once.
    for (const n of this.kernelDriverOn) this.bound.add(n);
  }

  async detachKernelDriver(n: number): Promise<void> {
    this.calls.push(`detachKernelDriver(${n})`);
    this.check('detachKernelDriver');
    if (!this.bound.has(n)) throw new Error('detachKernelDriver error: no kernel driver attached');
    this.bound.delete(n);
  }

  async attachKernelDriver(n: number): Promise<void> {
    this.calls.push(`attachKernelDriver(${n})`);
    this.check('attachKernelDriver');
    if (this.bound.has(n))
      throw new Error('attachKernelDriver error: kernel driver already attached');
    if (this.isHeld(n)) throw new Error('attachKernelDriver error: interface is busy');
    this.bound.add(n);
  }

  async claimInterface(n: number): Promise<void> {
    this.calls.push(`claimInterface(${n})`);
    this.check('claimInterface');
    if (!this.interface(n)) throw new Error('claimInterface error: interface not found');
    if (this.bound.has(n) || this.isHeld(n) || this.heldByOthers.has(n))
      throw new Error('claimInterface error: interface is busy');
    this.claimed.add(n);
  }

  async releaseInterface(n: number): Promise<void> {
    this.calls.push(`releaseInterface(${n})`);
    if (!this.opened) throw new Error('releaseInterface error: invalid state');
    if (!this.claimed.has(n)) throw new Error('releaseInterface error: not claimed');
    this.claimed.delete(n);
  }

  async clearHalt(direction: 'in' | 'out', endpointNumber: number): Promise<void> {
    this.calls.push(`clearHalt(${direction}, ${endpointNumber})`);
    this.endpoint(direction, endpointNumber, 'clearHalt');
    if (direction === 'out') this.stalled = false;
  }

  nativeTransferOut(endpointNumber: number, timeout: number, data: Uint8Array): Promise<number> {
    let iface: number;
    try {
      iface = this.endpoint('out', endpointNumber, 'transferOut');
      if (this.out) throw new Error('transferOut error: endpoint not found'); // endpoint in use
      if (this.stalled) throw new Error('transferOut error: Stall');
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      const pending: PendingOut = {
        iface,
        data: Uint8Array.from(data), // the real package copies too
        taken: 0,
        resolve,
        reject,
        timer: setTimeout(() => {
          // Cancelled by its timeout: whatever went in stays in, and nobody is told how much.
          this.out = null;
          reject(new Error('transferOut error: Cancelled'));
        }, timeout),
      };
      this.out = pending;
      this.pump();
    });
  }

  nativeTransferIn(endpointNumber: number, timeout: number, length: number): Promise<Uint8Array> {
    let iface: number;
    try {
      iface = this.endpoint('in', endpointNumber, 'transferIn');
      if (this.in) throw new Error('transferIn error: endpoint not found'); // endpoint in use
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      this.in = {
        iface,
        length,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.in = null;
          reject(new Error('transferIn error: Cancelled'));
        }, timeout),
      };
      this.deliver();
    });
  }

  // --- the test's side of the printer ------------------------------------------------------

  /** Stop printing: bytes pile up in the buffer until it is full, then transfers stall. */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.buffered = 0;
    this.pump();
  }

  /** The printer halts its OUT endpoint until the host clears it. */
  stallOut(): void {
    this.stalled = true;
  }

  /** Bytes the printer sends back on its IN endpoint. */
  reply(bytes: Iterable<number>): void {
    this.replies.push(...bytes);
    this.deliver();
  }

  driverBound(n: number): boolean {
    return this.bound.has(n);
  }

  isClaimed(n: number): boolean {
    return this.isHeld(n);
  }

  get isOpened(): boolean {
    return this.opened;
  }

  get transferPending(): { out: boolean; in: boolean } {
    return { out: this.out !== null, in: this.in !== null };
  }

  /** Called by the bus: the cable is pulled. */
  unplugged(): void {
    this.gone = true;
    const out = this.out;
    const input = this.in;
    this.out = null;
    this.in = null;
    if (out) {
      clearTimeout(out.timer);
      out.reject(new Error('transferOut error: Disconnected'));
    }
    if (input) {
      clearTimeout(input.timer);
      input.reject(new Error('transferIn error: Disconnected'));
    }
  }

  // --- rules -----------------------------------------------------------------------------------

  private mustBeOpenForGetter(name: string): void {
    if (!this.opened)
      throw new Error(
        `fake: ${name} read on a closed device (usb 3.x would open it synchronously)`,
      );
  }

  private check(op: string): void {
    if (this.gone) throw new Error(`${op} error: device disconnected`);
    if (!this.opened) throw new Error(`${op} error: invalid state`);
  }

  private interface(n: number): UsbInterfaceInfo | undefined {
    return this.active === 0
      ? undefined
      : this.config.interfaces.find((i) => i.interfaceNumber === n);
  }

  /** Claimed, or released while a transfer on it is still in flight (the transfer holds it). */
  private isHeld(n: number): boolean {
    return this.claimed.has(n) || this.out?.iface === n || this.in?.iface === n;
  }

  /** The claimed interface owning the endpoint; the real package's error otherwise. */
  private endpoint(direction: 'in' | 'out', endpointNumber: number, op: string): number {
    if (this.gone) {
      const name = op === 'clearHalt' ? 'device disconnected' : 'Disconnected';
      throw new Error(`${op} error: ${name}`);
    }
    const owner = [...this.claimed].find((n) =>
      this.interface(n)?.alternate.endpoints.some(
        (e) => e.direction === direction && e.endpointNumber === endpointNumber,
      ),
    );
    if (!this.opened || owner === undefined) throw new Error(`${op} error: endpoint not found`);
    return owner;
  }

  private pump(): void {
    const pending = this.out;
    if (!pending) return;
    const space = this.paused ? this.bufferSize - this.buffered : Number.POSITIVE_INFINITY;
    const take = Math.min(space, pending.data.length - pending.taken);
    if (take > 0) {
      // A loop, not push(...): a 100 KB raster would overflow the argument limit.
      for (const b of pending.data.subarray(pending.taken, pending.taken + take))
        this.received.push(b);
      pending.taken += take;
      if (this.paused) this.buffered += take;
    }
    if (pending.taken < pending.data.length) {
      this.events.emit('stalled', pending.taken);
      return;
    }
    clearTimeout(pending.timer);
    this.out = null;
    this.transfers.push(pending.data.length);
    pending.resolve(pending.data.length);
    const answer = this.respond?.(pending.data);
    if (answer) this.reply(answer);
  }

  private deliver(): void {
    const pending = this.in;
    if (!pending || this.replies.length === 0) return;
    clearTimeout(pending.timer);
    this.in = null;
    pending.resolve(Uint8Array.from(this.replies.splice(0, pending.length)));
  }
}

/** The backend: a bus the test plugs fake printers into and pulls them out of. */
export class FakeUsbBus implements UsbBackend {
  readonly devices: FakeUsbPrinter[] = [];
  enumerationError: Error | null = null;
  private readonly watchers = new Map<UsbPrinterDevice, Set<() => void>>();

  plug(device: FakeUsbPrinter): FakeUsbPrinter {
    this.devices.push(device);
    return device;
  }

  unplug(device: FakeUsbPrinter): void {
    this.devices.splice(this.devices.indexOf(device), 1);
    device.unplugged();
    for (const listener of this.watchers.get(device) ?? []) listener();
  }

  get watcherCount(): number {
    let count = 0;
    for (const set of this.watchers.values()) count += set.size;
    return count;
  }

  async findDevices(vendorId: number, productId: number): Promise<UsbPrinterDevice[]> {
    if (this.enumerationError) throw this.enumerationError;
    return this.devices.filter((d) => d.vendorId === vendorId && d.productId === productId);
  }

  watchDetach(device: UsbPrinterDevice, onDetach: () => void): () => void {
    const set = this.watchers.get(device) ?? new Set();
    set.add(onDetach);
    this.watchers.set(device, set);
    return () => set.delete(onDetach);
  }
}

/**
 * Wires a fake USB printer to the emulator: every completed OUT transfer goes to the emulator,
 * everything the emulator answers comes back on the IN endpoint.
 */
export function attachEmulator(device: FakeUsbPrinter, emulator: VirtualPrinter): void {
  device.respond = (bytes) => {
    emulator.write(bytes);
    return null;
  };
  emulator.on('reply', (bytes: Uint8Array) => device.reply(bytes));
}
