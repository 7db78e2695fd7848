/**
 * The cable between a host and the virtual printer: a `PrinterLink` attaches a `VirtualPrinter` to
 * any Node duplex byte stream (TCP socket, pty, in-process pair), and a `LinkSlot` is the printer's
 * one connector, which takes one link at a time and keeps the link settings across reconnects.
 *
 * Back-pressure: the link delivers no more than the printer's free receive buffer; while the
 * printer is busy (receive buffer full, `write()` returned false) the link stops delivering and
 * pauses the stream, so the host's writes back up exactly as they do against
 * a real printer that stops reading its socket or raises BUSY; it resumes on `busy` false.
 *
 * Slow link (bytes per second, both directions): a pty ignores the baud rate and loopback TCP has
 * no speed at all (dependencies.md), so the link paces delivery itself. Bytes read from the stream
 * wait in the link's queue and reach the printer in slices, each at the moment its last byte
 * would have arrived over a line of that speed (a virtual clock, so timer lateness does not add
 * up). Replies are paced the same way. Without a limit, bytes go through as they arrive.
 *
 * Closing: when the host ends its side gracefully, the bytes it already sent are still delivered
 * (they were on the wire) and then the link closes. A disconnect (`disconnect()`, a pulled cable)
 * or a stream error drops the bytes still queued in the link; whatever already reached the
 * printer stays in its buffer and prints, because the printer lives on.
 */
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import type { VirtualPrinter } from '../core/virtual-printer.js';

/** Slices of a slow link are about this long: short enough to look continuous to a host. */
const SLICE_MS = 20;
/** Bytes the link reads ahead of the printer before pausing the stream (slow link only). */
const READ_AHEAD = 16 * 1024;

export type LinkCloseReason = 'ended' | 'disconnected' | 'error';

export interface PrinterLinkEvents {
  /** Bytes about to be written to the printer, and their offset in the printer's input stream. */
  deliver: [bytes: Uint8Array, offset: number];
  /** The link is gone; the printer is not. */
  close: [reason: LinkCloseReason];
}

export interface LinkOptions {
  /** Bytes per second in each direction; null or 0 for no limit. */
  slowLinkBps?: number | null;
}

/** A FIFO of byte chunks that hands out exact byte counts. */
class ByteQueue {
  private chunks: Uint8Array[] = [];
  length = 0;

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  /** Removes and returns the first `n` bytes (fewer if the queue is shorter). */
  take(n: number): Uint8Array {
    const wanted = Math.min(n, this.length);
    const first = this.chunks[0];
    if (first && first.length === wanted) {
      this.chunks.shift();
      this.length -= wanted;
      return first;
    }
    const out = new Uint8Array(wanted);
    let filled = 0;
    while (filled < wanted) {
      const chunk = this.chunks[0]!;
      const part = Math.min(chunk.length, wanted - filled);
      out.set(chunk.subarray(0, part), filled);
      filled += part;
      if (part === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(part);
    }
    this.length -= wanted;
    return out;
  }

  clear(): void {
    this.chunks = [];
    this.length = 0;
  }
}

/**
 * Paces one direction of a slow link: `schedule(n)` says when `n` more bytes will have arrived.
 * The clock continues from the end of the previous slice when the line was busy, so timer delays
 * do not accumulate; an idle line starts from now.
 */
class Pacer {
  private lineFreeAt = 0;

  constructor(public bps: number) {}

  /** Bytes per slice at this speed. */
  get slice(): number {
    return Math.max(1, Math.round((this.bps * SLICE_MS) / 1000));
  }

  /** Milliseconds from now until `n` bytes sent after the current ones have arrived. */
  schedule(n: number): number {
    const now = performance.now();
    const start = Math.max(now, this.lineFreeAt);
    this.lineFreeAt = start + (n * 1000) / this.bps;
    return Math.max(0, this.lineFreeAt - now);
  }
}

function normaliseBps(bps: number | null | undefined): number | null {
  if (bps === null || bps === undefined || bps === 0) return null;
  if (!Number.isFinite(bps) || bps < 0) throw new RangeError(`slowLinkBps: must be > 0: ${bps}`);
  return bps;
}

export class PrinterLink extends EventEmitter<PrinterLinkEvents> {
  /** Number of `printer.write()` calls made, and bytes delivered: for tests and status. */
  deliveries = 0;
  deliveredBytes = 0;

  private readonly inbound = new ByteQueue();
  private readonly outbound = new ByteQueue();
  private inPacer: Pacer | undefined;
  private outPacer: Pacer | undefined;
  private inTimer: NodeJS.Timeout | undefined;
  private outTimer: NodeJS.Timeout | undefined;
  private inputEnded = false;
  private closeReason: LinkCloseReason | undefined;

  constructor(
    readonly printer: VirtualPrinter,
    readonly stream: Duplex,
    options: LinkOptions = {},
  ) {
    super();
    this.setSlowLink(options.slowLinkBps ?? null);
    stream.on('data', this.onData);
    stream.on('end', this.onEnd);
    stream.on('error', this.onError);
    stream.on('close', this.onStreamClose);
    printer.on('reply', this.onReply);
    printer.on('busy', this.onBusy);
    if (stream.destroyed) queueMicrotask(() => this.onStreamClose());
  }

  get closed(): boolean {
    return this.closeReason !== undefined;
  }

  /** Bytes read from the host that have not reached the printer yet. */
  get queuedBytes(): number {
    return this.inbound.length;
  }

  get slowLinkBps(): number | null {
    return this.inPacer?.bps ?? null;
  }

  /** Changes the speed at run time; null (or 0) removes the limit. */
  setSlowLink(bps: number | null): void {
    const value = normaliseBps(bps);
    if (value === null) {
      this.inPacer = undefined;
      this.outPacer = undefined;
    } else if (this.inPacer && this.outPacer) {
      this.inPacer.bps = value;
      this.outPacer.bps = value;
    } else {
      this.inPacer = new Pacer(value);
      this.outPacer = new Pacer(value);
    }
    // A slice already on its way keeps its timing; the queues continue at the new speed.
    if (!this.inTimer) this.pumpIn();
    if (!this.outTimer) this.pumpOut();
  }

  /** Pulls the cable: the stream is destroyed, queued bytes are lost, the printer lives on. */
  disconnect(): void {
    this.finish('disconnected');
  }

  // Host -> printer ---------------------------------------------------------------------------

  private readonly onData = (chunk: Buffer | string): void => {
    this.inbound.push(typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk);
    if (!this.inTimer) this.pumpIn();
    this.updateFlow();
  };

  private readonly onEnd = (): void => {
    this.inputEnded = true;
    if (!this.inTimer) this.pumpIn();
  };

  private readonly onBusy = (busy: boolean): void => {
    if (!busy && !this.inTimer) this.pumpIn();
    this.updateFlow();
  };

  /** Delivers what may be delivered now, and arranges for the rest. */
  private pumpIn(): void {
    if (this.closed) return;
    if (this.inPacer) {
      if (this.inbound.length > 0 && !this.printer.busy && !this.inTimer) {
        const n = Math.min(this.inPacer.slice, this.inbound.length);
        this.inTimer = setTimeout(() => {
          this.inTimer = undefined;
          // The printer cannot turn busy without receiving data, so the slice is still welcome.
          this.deliver(this.inbound.take(n));
          this.pumpIn();
        }, this.inPacer.schedule(n));
      }
    } else {
      // Never more than the printer's free receive buffer: a real printer stops taking bytes
      // when it is full, whatever size the stream's reads come in (a loaded machine's pty reads
      // return many kilobytes at once); the rest waits here, with the stream paused.
      while (this.inbound.length > 0 && !this.printer.busy && !this.closed) {
        const room = this.printer.bufferSize - this.printer.bufferedBytes;
        this.deliver(this.inbound.take(Math.max(1, Math.min(room, this.inbound.length))));
      }
    }
    this.updateFlow();
    if (this.inputEnded && this.inbound.length === 0 && !this.inTimer) {
      // Everything the host sent has arrived: the host is gone, so is the link.
      this.finish('ended');
    }
  }

  private deliver(bytes: Uint8Array): void {
    if (this.closed || bytes.length === 0) return;
    this.deliveries++;
    this.deliveredBytes += bytes.length;
    // Before the write: a ticket completed by these bytes is reported from inside write(), and
    // a recorder of raw bytes must already have them.
    this.emit('deliver', bytes, this.printer.decoder.received);
    this.printer.write(bytes);
  }

  /** Pauses the stream while the printer is busy or the link holds enough already. */
  private updateFlow(): void {
    if (this.closed || this.stream.destroyed) return;
    const hold = this.printer.busy || this.inbound.length >= READ_AHEAD;
    if (hold && !this.stream.isPaused()) this.stream.pause();
    else if (!hold && this.stream.isPaused()) this.stream.resume();
  }

  // Printer -> host ---------------------------------------------------------------------------

  private readonly onReply = (bytes: Uint8Array): void => {
    if (this.closed) return;
    this.outbound.push(Uint8Array.from(bytes));
    if (!this.outTimer) this.pumpOut();
  };

  private pumpOut(): void {
    if (this.closed) return;
    if (this.outPacer) {
      if (this.outbound.length > 0 && !this.outTimer) {
        const n = Math.min(this.outPacer.slice, this.outbound.length);
        this.outTimer = setTimeout(() => {
          this.outTimer = undefined;
          this.send(this.outbound.take(n));
          this.pumpOut();
        }, this.outPacer.schedule(n));
      }
    } else if (this.outbound.length > 0) {
      this.send(this.outbound.take(this.outbound.length));
    }
  }

  private send(bytes: Uint8Array): void {
    // Replies to a host that has gone are lost, as on a real line.
    if (this.closed || !this.stream.writable) return;
    this.stream.write(bytes);
  }

  // Closing -------------------------------------------------------------------------------------

  private readonly onError = (): void => {
    this.finish('error');
  };

  private readonly onStreamClose = (): void => {
    // A graceful end keeps delivering what was already sent; anything else is a lost line.
    if (this.inputEnded) {
      if (!this.inTimer) this.pumpIn();
    } else {
      this.finish('disconnected');
    }
  };

  private finish(reason: LinkCloseReason): void {
    if (this.closeReason !== undefined) return;
    this.closeReason = reason;
    clearTimeout(this.inTimer);
    clearTimeout(this.outTimer);
    this.inTimer = undefined;
    this.outTimer = undefined;
    const lastReplies = this.outbound.take(this.outbound.length);
    this.inbound.clear();
    this.outbound.clear();
    this.printer.off('reply', this.onReply);
    this.printer.off('busy', this.onBusy);
    this.stream.off('data', this.onData);
    this.stream.off('end', this.onEnd);
    this.stream.off('close', this.onStreamClose);
    // The error listener stays: a closing socket can still report ECONNRESET once.
    if (reason === 'ended' && this.stream.writable) {
      // The host only closed its sending side (it may still be reading, e.g. `socket.end(job)`
      // and then wait for the GS r 1 answer): let the last replies reach it, then close ours.
      if (lastReplies.length > 0) this.stream.write(lastReplies);
      this.stream.end();
      setTimeout(() => this.stream.destroy(), 2000).unref();
    } else if (!this.stream.destroyed) {
      this.stream.destroy();
    }
    this.emit('close', reason);
  }
}

export interface LinkSlotEvents {
  /** A host connected. */
  link: [link: PrinterLink];
  /** Bytes delivered to the printer by any link (see `PrinterLinkEvents.deliver`). */
  deliver: [bytes: Uint8Array, offset: number];
  /** The current link closed. */
  unlink: [link: PrinterLink, reason: LinkCloseReason];
}

/**
 * The printer's connector: one link at a time, like a real printer's single port (a second TCP
 * connection is turned away by the endpoint when `attach()` says no). Settings made here (slow
 * link) apply to the current link and to every later one.
 */
export class LinkSlot extends EventEmitter<LinkSlotEvents> {
  private current: PrinterLink | undefined;
  private bps: number | null;
  private closedForGood = false;

  constructor(
    readonly printer: VirtualPrinter,
    options: LinkOptions = {},
  ) {
    super();
    this.bps = normaliseBps(options.slowLinkBps);
  }

  get link(): PrinterLink | undefined {
    return this.current;
  }

  get connected(): boolean {
    return this.current !== undefined;
  }

  get slowLinkBps(): number | null {
    return this.bps;
  }

  setSlowLink(bps: number | null): void {
    this.bps = normaliseBps(bps);
    this.current?.setSlowLink(this.bps);
  }

  /** Connects `stream` to the printer, or returns undefined when a link is already in place. */
  attach(stream: Duplex): PrinterLink | undefined {
    if (this.current || this.closedForGood) return undefined;
    const link = new PrinterLink(this.printer, stream, { slowLinkBps: this.bps });
    this.current = link;
    link.on('deliver', (bytes, offset) => this.emit('deliver', bytes, offset));
    link.once('close', (reason) => {
      if (this.current === link) this.current = undefined;
      this.emit('unlink', link, reason);
    });
    this.emit('link', link);
    return link;
  }

  /** Drops the current link, if any. Returns whether there was one. */
  disconnect(): boolean {
    const link = this.current;
    if (!link) return false;
    link.disconnect();
    return true;
  }

  /** Drops the current link and accepts no more. */
  close(): void {
    this.closedForGood = true;
    this.disconnect();
  }
}
