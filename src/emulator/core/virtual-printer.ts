/**
 * The virtual printer: decoder + printer state + status responder, with faults switchable at run
 * time. Pure logic: bytes in through `write()`, bytes out through the `reply` event; endpoints
 * (in-process stream, TCP, serial pty, device file) are built on top of it.
 *
 * Behaviour while offline (paper out, cover open, forced offline, autocutter error, FEED button):
 * the printer keeps receiving into its buffer and prints nothing; in-order queries (`GS r`,
 * `GS ( H`, `GS I`) wait in the buffer with the data, so they are not answered; real-time
 * commands (`DLE EOT`, `DLE ENQ`, `DLE DC4`) are answered at once. When the fault clears, the
 * buffer runs: the held data prints and the queued queries are answered in order
 * (escpos-notes "Status").
 *
 * Receive buffer and busy: `bufferSize` bytes (default 4096). When held data fills it, `write()`
 * returns false and a `busy` event fires with true, like a printer raising BUSY (DTR/DSR) or a
 * TCP peer that stops reading; `busy` false fires once the buffer drains below the limit. The data
 * is never dropped here: honouring back-pressure (pausing the socket or the pty) is the
 * endpoint's job, exactly as `stream.write()` returning false.
 *
 * Timing hooks for endpoints, deliberately not in this core: a slow link (bytes per second) is
 * the endpoint calling `write()` at that pace; slow printing is the endpoint calling
 * `pausePrinting(true)` while `paper.printedDots` advances faster than its mm/s allows;
 * a disconnect is the endpoint dropping the connection (the printer and its buffer live on).
 */
import { type DecoderOptions, EscPosDecoder } from './decoder.js';
import type { HostQuery } from './host-query.js';
import type { Ticket, VirtualPaper } from './paper.js';
import type { RealtimeCommand } from './realtime.js';
import {
  asbChanged,
  asbStatus,
  DEFAULT_IDENTITY,
  isOffline,
  NORMAL_STATE,
  type PrinterIdentity,
  type PrinterState,
  respondToQuery,
  respondToRealtime,
} from './status.js';

export const FAULTS = [
  'paper-near-end',
  'paper-out',
  'cover-open',
  'offline',
  'autocutter-error',
  'unrecoverable-error',
  'feed-button',
  'mute',
  'drawer-pin-high',
] as const;
export type FaultName = (typeof FAULTS)[number];

/** The `PrinterState` field each fault switches. */
export const FAULT_FIELDS: Readonly<Record<FaultName, keyof PrinterState>> = {
  'paper-near-end': 'paperNearEnd',
  'paper-out': 'paperOut',
  'cover-open': 'coverOpen',
  offline: 'offline',
  'autocutter-error': 'autocutterError',
  'unrecoverable-error': 'unrecoverableError',
  'feed-button': 'feedButton',
  mute: 'mute',
  'drawer-pin-high': 'drawerPinHigh',
};

export interface VirtualPrinterOptions extends DecoderOptions {
  /** Receive buffer size in bytes. Default 4096 (escpos-notes "Parsing"). */
  bufferSize?: number;
  /** What `GS I` reports; fields not given keep the defaults. */
  identity?: Partial<PrinterIdentity>;
  /** Faults present at power-on. */
  state?: Partial<PrinterState>;
}

export interface VirtualPrinterEvents {
  /** Bytes the printer sends to the host. */
  reply: (bytes: Uint8Array) => void;
  /** A cut ended a ticket. */
  ticket: (ticket: Ticket) => void;
  /** The printer state changed (setFault or a recovery command). */
  status: (state: Readonly<PrinterState>, previous: Readonly<PrinterState>) => void;
  /** The receive buffer became full (true) or has room again (false). */
  busy: (busy: boolean) => void;
}

type Listeners = { [K in keyof VirtualPrinterEvents]: Array<VirtualPrinterEvents[K]> };

export class VirtualPrinter {
  readonly decoder: EscPosDecoder;
  readonly bufferSize: number;
  readonly identity: PrinterIdentity;

  private current: PrinterState;
  private asb = 0;
  private printingPaused = false;
  private isBusy = false;
  private readonly listeners: Listeners = { reply: [], ticket: [], status: [], busy: [] };

  constructor(options: VirtualPrinterOptions = {}) {
    this.bufferSize = options.bufferSize ?? 4096;
    this.identity = { ...DEFAULT_IDENTITY, ...options.identity };
    this.current = { ...NORMAL_STATE, ...options.state };
    this.decoder = new EscPosDecoder(options, {
      realtime: (cmd) => this.onRealtime(cmd),
      pulseAllowed: () => !this.current.autocutterError && !this.current.unrecoverableError,
      query: (q) => this.onQuery(q),
      ticket: (t) => this.emit('ticket', t),
    });
    this.updateHold();
  }

  on<K extends keyof VirtualPrinterEvents>(event: K, listener: VirtualPrinterEvents[K]): this {
    this.listeners[event].push(listener);
    return this;
  }

  off<K extends keyof VirtualPrinterEvents>(event: K, listener: VirtualPrinterEvents[K]): this {
    const list = this.listeners[event] as Array<VirtualPrinterEvents[K]>;
    const i = list.indexOf(listener);
    if (i >= 0) list.splice(i, 1);
    return this;
  }

  get paper(): VirtualPaper {
    return this.decoder.paper;
  }

  get state(): Readonly<PrinterState> {
    return { ...this.current };
  }

  /** All tickets: the cut ones, then the open one if anything was printed on it. */
  tickets(): Ticket[] {
    const open = this.paper.current;
    const used =
      open.lines.length + open.codes.length + open.images.length + open.events.length > 0 ||
      open.warnings.length > 0;
    return used ? [...this.paper.tickets, open] : [...this.paper.tickets];
  }

  get bufferedBytes(): number {
    return this.decoder.bufferedBytes;
  }

  get busy(): boolean {
    return this.isBusy;
  }

  /**
   * Receives bytes from the host. Returns false when the receive buffer is full (back-pressure,
   * see the module comment); the bytes are kept all the same.
   */
  write(bytes: Uint8Array): boolean {
    this.decoder.write(bytes);
    this.updateBusy();
    return !this.isBusy;
  }

  /** Switches a fault (or behaviour) on or off. */
  setFault(name: FaultName, on: boolean): void {
    const field = FAULT_FIELDS[name];
    if (this.current[field] === on) return;
    this.changeState({ ...this.current, [field]: on });
  }

  /**
   * Holds printing without going offline: the hook for a slow-print endpoint, which pauses while
   * the paper it "printed" (`paper.printedDots`) is ahead of its print speed.
   */
  pausePrinting(on: boolean): void {
    this.printingPaused = on;
    this.updateHold();
  }

  private changeState(next: PrinterState): void {
    const previous = this.current;
    this.current = next;
    this.emit('status', { ...next }, { ...previous });
    if (this.asb !== 0 && asbChanged(previous, next, this.asb)) this.reply(asbStatus(next));
    this.updateHold();
  }

  private updateHold(): void {
    this.decoder.hold(this.printingPaused || isOffline(this.current));
    this.updateBusy();
  }

  private updateBusy(): void {
    const busy = this.decoder.bufferedBytes >= this.bufferSize;
    if (busy === this.isBusy) return;
    this.isBusy = busy;
    this.emit('busy', busy);
  }

  private onRealtime(cmd: RealtimeCommand): void {
    const reply = respondToRealtime(cmd, this.current);
    if (reply) this.reply(reply);
    if (cmd.kind === 'recover' && this.current.autocutterError) {
      // DLE ENQ 1 recovers and goes on with the buffered data; DLE ENQ 2 clears the buffers
      // first. Either is ignored unless a recoverable error is present (ESC/POS reference).
      if (cmd.n === 2) this.decoder.clearBuffers();
      this.changeState({ ...this.current, autocutterError: false });
    }
  }

  private onQuery(q: HostQuery): void {
    if (q.kind === 'asb') {
      this.asb = q.n & 0x0f;
    }
    const reply = respondToQuery(q, this.current, this.identity);
    if (reply) this.reply(reply);
  }

  private reply(bytes: Uint8Array): void {
    if (this.current.mute) return;
    this.emit('reply', bytes);
  }

  private emit<K extends keyof VirtualPrinterEvents>(
    event: K,
    ...args: Parameters<VirtualPrinterEvents[K]>
  ): void {
    for (const listener of [...this.listeners[event]]) {
      (listener as (...a: Parameters<VirtualPrinterEvents[K]>) => void)(...args);
    }
  }
}
