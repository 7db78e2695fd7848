/**
 * Raw USB printers without a kernel driver (`usb:VID:PID[?serial=SN]`), through the `usb` package
 * (node-usb 3.x: a Rust/nusb rewrite with a WebUSB-style API). Printers that the kernel's usblp
 * driver handles are better served by `file:/dev/usb/lp0`; this transport is for the rest, and for
 * machines where usblp is missing. When usblp does hold the interface we detach it for as long as
 * we hold the printer and give it back on close, so `/dev/usb/lp0` reappears for other programs.
 *
 * The `usb` package is reached through a small backend (`UsbBackend`: enumeration and unplug
 * notices) and a device interface (`UsbPrinterDevice`), both in usb-device.ts; tests put a fake
 * device behind the same boundary.
 *
 * Why it never blocks the event loop: every call that does I/O (`open`, `claimInterface`,
 * transfers...) runs on the package's own worker threads (tokio `spawn_blocking`, not libuv's pool
 * of four) and returns a promise. The only synchronous reads are the `configuration` and
 * `serialNumber` getters, which come from sysfs on Linux; we read them once, after `open()`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentError, errorMessage } from '../errors.js';
import { BaseTransport } from './transport.js';
import {
  createUsbPackageBackend,
  type UsbBackend,
  type UsbConfigurationInfo,
  type UsbEndpointInfo,
  type UsbInterfaceInfo,
  type UsbPrinterDevice,
} from './usb-device.js';

export interface UsbTransportOptions {
  /** Defaults to the `usb` package. */
  backend?: UsbBackend;
  /** Bytes per bulk OUT transfer, rounded down to whole packets (at least one). Default 4096. */
  chunkSize?: number;
}

export interface UsbAddress {
  vendorId: number;
  productId: number;
  serialNumber: string | null;
}

const PRINTER_CLASS = 7;
const DEFAULT_CHUNK = 4096;
/**
 * A transfer's own timeout ends this much before the write's deadline, so the transport's error
 * (which knows the bytes in flight) wins the race with BaseTransport's overall timer.
 */
const DEADLINE_GUARD_MS = 15;
/**
 * Bulk IN polling: a transfer waits for the printer for this long, growing while it is silent.
 * Waiting costs nothing on the bus (the printer NAKs), but each timeout cancels a transfer, and a
 * cancelled transfer cannot be interrupted earlier: `close()` waits for it, so the ceiling bounds
 * how long closing takes.
 */
const IN_WAIT_MIN_MS = 50;
const IN_WAIT_MAX_MS = 250;
/** Pause after an empty reply or an IN error, so a device answering at once cannot spin us. */
const IN_PAUSE_MIN_MS = 10;
const IN_PAUSE_MAX_MS = 200;
/** Consecutive IN failures (other than timeouts) before the link is declared lost. */
const IN_MAX_FAILURES = 5;
/** Bytes asked for per IN transfer; rounded up to whole packets, or the device may overflow it. */
const IN_LENGTH = 512;

type Failure = 'timeout' | 'stall' | 'gone' | 'other';

/**
 * usb 3.x reports nusb's TransferError by name (`Cancelled` is its timeout); the libusb names
 * cover usb 2.x and other libusb-style wrappers. `Fault` counts as gone: host controllers report an
 * unplug as a protocol error before the disconnect arrives, and reopening recovers any real fault.
 */
function classify(error: unknown): Failure {
  const text = errorMessage(error);
  if (/cancel+ed|timed? ?out|LIBUSB_ERROR_TIMEOUT/i.test(text)) return 'timeout';
  if (/stall|LIBUSB_ERROR_PIPE/i.test(text)) return 'stall';
  if (
    /disconnected|no such device|NO_DEVICE|ENODEV|os error 19|\bfault\b|LIBUSB_ERROR_IO/i.test(text)
  )
    return 'gone';
  return 'other';
}

function hex4(n: number): string {
  return n.toString(16).padStart(4, '0');
}

function noop(): void {}

interface Session {
  readonly device: UsbPrinterDevice;
  readonly interfaceNumber: number;
  readonly out: UsbEndpointInfo;
  readonly in: UsbEndpointInfo | null;
  readonly detachedDriver: boolean;
  readonly chunkSize: number;
  /** Set on close or loss: no new transfer starts. */
  ending: boolean;
  /** Wakes the IN loop's pauses when the session ends. */
  readonly stop: AbortController;
  /** Rejects when the device is lost, so a write stuck in a transfer hears about it. */
  readonly lost: Promise<never>;
  loseWith: (error: Error) => void;
  /** The OUT transfer in flight, settled or not: the endpoint takes one at a time. */
  outFlight: Promise<void>;
  poller: Promise<void>;
  unwatch: () => void;
}

export class UsbTransport extends BaseTransport {
  private readonly address: string;
  private note = '';
  private readonly backend: UsbBackend;
  private readonly chunkSize: number;
  private session: Session | null = null;
  private opening: Promise<void> | null = null;
  /** Teardown of the last session, which open() waits for: until it ends the claim is held. */
  private teardown: Promise<void> = Promise.resolve();

  constructor(
    private readonly target: UsbAddress,
    options: UsbTransportOptions = {},
  ) {
    super();
    const serial =
      target.serialNumber === null
        ? ''
        : `?${new URLSearchParams({ serial: target.serialNumber })}`;
    this.address = `usb:${hex4(target.vendorId)}:${hex4(target.productId)}${serial}`;
    this.backend = options.backend ?? createUsbPackageBackend();
    this.chunkSize = options.chunkSize ?? DEFAULT_CHUNK;
  }

  /** The address, plus a note when it matched several devices and the first was taken. */
  get description(): string {
    return this.address + this.note;
  }

  get isOpen(): boolean {
    return this.session !== null && !this.session.ending;
  }

  async open(): Promise<void> {
    if (this.isOpen) return;
    this.opening ??= this.connect().finally(() => {
      this.opening = null;
    });
    return this.opening;
  }

  private unreachable(why: string, cause?: unknown): AgentError {
    const hint = /permission|access denied|EACCES|os error 13/i.test(errorMessage(cause))
      ? ' (is there a udev rule giving this service access to the printer?)'
      : '';
    return new AgentError('PRINTER_UNREACHABLE', `${this.description}: ${why}${hint}`, {
      cause,
    });
  }

  private async connect(): Promise<void> {
    await this.teardown;
    const { vendorId, productId, serialNumber } = this.target;
    let devices: UsbPrinterDevice[];
    try {
      devices = await this.backend.findDevices(vendorId, productId);
    } catch (cause) {
      throw this.unreachable(`cannot list USB devices: ${errorMessage(cause)}`, cause);
    }
    const candidates =
      serialNumber === null ? devices : devices.filter((d) => serialOf(d) === serialNumber);
    this.note = '';
    if (candidates.length === 0) {
      throw this.unreachable(
        devices.length === 0
          ? 'no such USB device is connected'
          : `${devices.length} device(s) with these ids, none with this serial number`,
      );
    }
    const device = candidates[0]!;
    if (candidates.length > 1) {
      // Which one is "first" depends on enumeration order: tell the operator how to pin it.
      const serial = serialOf(device);
      this.note = ` (first of ${candidates.length} matching devices${serial ? `, serial=${serial}` : ''})`;
    }

    try {
      await device.open();
    } catch (cause) {
      throw this.unreachable(`cannot open the device: ${errorMessage(cause)}`, cause);
    }
    let detached: number | null = null;
    let claimed: number | null = null;
    try {
      const config = await this.configure(device);
      const iface = pickInterface(config);
      if (!iface) throw this.unreachable('no interface with a bulk OUT endpoint');
      const number = iface.interfaceNumber;
      // WebUSB cannot ask whether a kernel driver is bound, so try to detach and accept "none".
      let detachError: unknown;
      try {
        await device.detachKernelDriver(number);
        detached = number;
      } catch (error) {
        if (
          !/no kernel driver|not attached|ENODATA|no data available|os error 61|unsupported|not supported/i.test(
            errorMessage(error),
          )
        )
          detachError = error;
      }
      try {
        await device.claimInterface(number);
      } catch (cause) {
        const detach =
          detachError === undefined
            ? ''
            : `; detaching its kernel driver failed: ${errorMessage(detachError)}`;
        // EBUSY: usbfs gives an interface to one program; say who the usual suspects are.
        const busy = /\bbusy\b|EBUSY|errno 16\b|os error 16\b/i.test(errorMessage(cause))
          ? ' (another program has claimed it: a CUPS queue for this printer, or a second printer-agent)'
          : '';
        throw this.unreachable(
          `cannot claim interface ${number}: ${errorMessage(cause)}${busy}${detach}`,
          cause,
        );
      }
      claimed = number;
      const endpoints = iface.alternate.endpoints;
      const out = endpoints.find((e) => e.direction === 'out' && e.type === 'bulk')!;
      const input = endpoints.find((e) => e.direction === 'in' && e.type === 'bulk') ?? null;
      this.start(device, number, out, input, detached !== null);
    } catch (error) {
      // Leave the device as we found it: unclaimed, with its kernel driver, closed.
      if (claimed !== null) await device.releaseInterface(claimed).catch(noop);
      if (detached !== null) await device.attachKernelDriver(detached).catch(noop);
      await device.close().catch(noop);
      if (error instanceof AgentError) throw error;
      throw this.unreachable(errorMessage(error), error);
    }
  }

  /** The active configuration, selecting configuration 1 (or the first) when there is none. */
  private async configure(device: UsbPrinterDevice): Promise<UsbConfigurationInfo> {
    const active = safeConfiguration(device);
    if (active) return active;
    const values = device.configurations.map((c) => c.configurationValue);
    const value = values.includes(1) ? 1 : values[0];
    if (value === undefined) throw this.unreachable('the device has no configuration');
    try {
      await device.selectConfiguration(value);
    } catch (cause) {
      throw this.unreachable(`cannot select configuration ${value}: ${errorMessage(cause)}`, cause);
    }
    const config = safeConfiguration(device);
    if (!config) throw this.unreachable(`configuration ${value} did not become active`);
    return config;
  }

  private start(
    device: UsbPrinterDevice,
    interfaceNumber: number,
    out: UsbEndpointInfo,
    input: UsbEndpointInfo | null,
    detachedDriver: boolean,
  ): void {
    const packet = Math.max(1, out.packetSize);
    let loseWith: (error: Error) => void = noop;
    const lost = new Promise<never>((_, reject) => {
      loseWith = reject;
    });
    lost.catch(noop);
    const session: Session = {
      device,
      interfaceNumber,
      out,
      in: input,
      detachedDriver,
      // Whole packets: a short packet in the middle would end the transfer early on some devices.
      chunkSize: Math.max(packet, Math.floor(this.chunkSize / packet) * packet),
      ending: false,
      stop: new AbortController(),
      lost,
      loseWith,
      outFlight: Promise.resolve(),
      poller: Promise.resolve(),
      unwatch: noop,
    };
    this.session = session;
    // A bug in the loop must not leave an unhandled rejection: treat it as a lost link.
    session.poller = this.poll(session).catch((error) => this.lose(session, error));
    try {
      session.unwatch =
        this.backend.watchDetach?.(device, () =>
          this.lose(session, new Error('the device was unplugged (detach event)')),
        ) ?? noop;
    } catch {
      // Hotplug notices are a shortcut: without them the next transfer notices the unplug.
    }
  }

  /**
   * Reads what the printer sends back (status replies, automatic status) for as long as the
   * session lives. One IN transfer is always pending (the endpoint takes one at a time), so a reply
   * is picked up as soon as it is sent; until then the printer NAKs and nothing is lost.
   */
  private async poll(session: Session): Promise<void> {
    const input = session.in;
    if (!input) return;
    const packet = Math.max(1, input.packetSize);
    const length = Math.ceil(IN_LENGTH / packet) * packet;
    let wait = IN_WAIT_MIN_MS;
    let pause = IN_PAUSE_MIN_MS;
    let failures = 0;
    while (!session.ending) {
      let failure: Failure | null = null;
      let error: unknown;
      try {
        const bytes = await session.device.nativeTransferIn(input.endpointNumber, wait, length);
        failures = 0;
        if (bytes && bytes.length > 0) {
          if (!session.ending) this.receive(bytes);
          wait = IN_WAIT_MIN_MS;
          pause = IN_PAUSE_MIN_MS;
          continue;
        }
        // An empty reply (zero-length packet) comes back at once; without a pause the loop
        // would spin.
      } catch (e) {
        if (session.ending) break;
        error = e;
        failure = classify(e);
      }
      if (failure === 'timeout') {
        // Silence (the endpoint works, the printer NAKs): wait longer next time, so there are
        // fewer transfers to cancel.
        failures = 0;
        wait = Math.min(wait * 2, IN_WAIT_MAX_MS);
        continue;
      }
      if (failure === 'gone') {
        this.lose(session, error);
        break;
      }
      if (failure !== null) {
        failures += 1;
        if (failures >= IN_MAX_FAILURES) {
          this.lose(session, error);
          break;
        }
        if (failure === 'stall')
          await session.device.clearHalt('in', input.endpointNumber).catch(noop);
      }
      try {
        await sleep(pause, undefined, { signal: session.stop.signal });
      } catch {
        break; // aborted: the session ended
      }
      pause = Math.min(pause * 2, IN_PAUSE_MAX_MS);
    }
  }

  protected async writeAll(
    data: Uint8Array,
    deadline: number,
    progress: (sent: number) => void,
  ): Promise<void> {
    const session = this.session;
    if (!session || session.ending) throw this.notOpen();
    // A transfer left over from a write that BaseTransport already timed out may still be
    // finishing; the endpoint takes one transfer at a time.
    await session.outFlight;
    let sent = 0;
    const facts = (inFlight: number) => ({
      sentBytes: sent,
      totalBytes: data.length,
      // Bytes of the interrupted transfer: some may have reached the printer, the API does not
      // say how many. They are never sent again here.
      unconfirmedBytes: inFlight,
    });
    while (sent < data.length) {
      if (session.ending || this.session !== session) {
        throw new AgentError(
          'PRINTER_DISCONNECTED',
          `${this.description}: the link closed after ${sent} of ${data.length} bytes`,
          { details: facts(0) },
        );
      }
      const left = Math.floor(deadline - performance.now());
      if (left < 1) {
        throw new AgentError(
          'TRANSPORT_TIMEOUT',
          `${this.description}: ${sent} of ${data.length} bytes taken before the deadline`,
          { details: facts(0) },
        );
      }
      const chunk = data.subarray(sent, sent + session.chunkSize);
      // The transfer gets all the time left, never a slice of it: a transfer cut short by its
      // timeout may have sent part of the chunk, and retrying it would print those bytes twice.
      const timeout = Math.max(1, left - DEADLINE_GUARD_MS);
      const { device, out } = session;
      // Through then(): a synchronous throw (argument conversion) becomes a rejection like others.
      const transfer = Promise.resolve().then(() =>
        device.nativeTransferOut(out.endpointNumber, timeout, chunk),
      );
      session.outFlight = transfer.then(noop, noop);
      let written: number;
      try {
        written = await Promise.race([transfer, session.lost]);
      } catch (error) {
        const failure = session.ending ? 'gone' : classify(error);
        if (failure === 'timeout' || failure === 'stall') {
          if (failure === 'stall') {
            // The printer halted the pipe; clear it so the next write can go through.
            await session.device.clearHalt('out', session.out.endpointNumber).catch(noop);
          }
          throw new AgentError(
            'TRANSPORT_TIMEOUT',
            `${this.description}: ${sent} of ${data.length} bytes taken, then the printer ${
              failure === 'stall' ? 'stalled the endpoint' : 'stopped taking data'
            }; up to ${chunk.length} more may have reached it (${errorMessage(error)})`,
            { cause: error, details: facts(chunk.length) },
          );
        }
        this.lose(session, error);
        throw new AgentError(
          'PRINTER_DISCONNECTED',
          `${this.description}: the link dropped after ${sent} of ${data.length} bytes (${errorMessage(error)})`,
          { cause: error, details: facts(chunk.length) },
        );
      }
      sent += written;
      progress(sent);
    }
  }

  /** The device went away (or failed) by itself: tear down in the background, tell the owner. */
  private lose(session: Session, error: unknown): void {
    if (session.ending || this.session !== session) return;
    const reason = new AgentError(
      'PRINTER_DISCONNECTED',
      `${this.description}: the link dropped (${errorMessage(error)})`,
      { cause: error },
    );
    session.loseWith(reason);
    this.end(session);
    this.dropped(reason);
  }

  private end(session: Session): Promise<void> {
    session.ending = true;
    if (this.session === session) this.session = null;
    session.stop.abort();
    session.unwatch();
    this.teardown = this.release(session).catch(noop);
    return this.teardown;
  }

  /**
   * Gives the printer back: waits for the transfers in flight (they hold the interface until they
   * end, and cannot be cancelled through the API), releases the interface, re-attaches the kernel
   * driver if we detached it, closes. Errors are ignored: an unplugged device fails them all.
   */
  private async release(session: Session): Promise<void> {
    const { device, interfaceNumber } = session;
    await Promise.allSettled([session.poller, session.outFlight]);
    await device.releaseInterface(interfaceNumber).catch(noop);
    if (session.detachedDriver) await device.attachKernelDriver(interfaceNumber).catch(noop);
    await device.close().catch(noop);
  }

  async close(): Promise<void> {
    await this.opening?.catch(noop);
    const session = this.session;
    if (session) await this.end(session);
    else await this.teardown;
  }
}

function serialOf(device: UsbPrinterDevice): string | null {
  try {
    return device.serialNumber;
  } catch {
    return null;
  }
}

/** usb 3.x throws instead of returning null when the device is not configured. */
function safeConfiguration(device: UsbPrinterDevice): UsbConfigurationInfo | null {
  try {
    return device.configuration ?? null;
  } catch {
    return null;
  }
}

/** The printer-class interface (7), else the first one with a bulk OUT endpoint. */
function pickInterface(config: UsbConfigurationInfo): UsbInterfaceInfo | undefined {
  const hasBulkOut = (i: UsbInterfaceInfo) =>
    i.alternate.endpoints.some((e) => e.direction === 'out' && e.type === 'bulk');
  return (
    config.interfaces.find((i) => i.alternate.interfaceClass === PRINTER_CLASS && hasBulkOut(i)) ??
    config.interfaces.find(hasBulkOut)
  );
}
