/**
 * The streaming ESC/POS interpreter: bytes in, virtual paper out.
 *
 * Three stages, as in a printer:
 * 1. Real-time recognition on the raw stream (`DLE EOT`, `DLE ENQ`, `DLE DC4`), see realtime.ts.
 * 2. Framing into commands as data arrives (framer.ts), which works across any chunk split.
 * 3. Execution of the frames in order against the print modes and the paper (executor.ts, with
 *    one handler table per command family in commands/). Execution can be held (`hold(true)`):
 *    the frames then wait in the receive buffer, as they do in a printer that is offline, and run
 *    when released.
 *
 * `write()` never throws: bytes it cannot make sense of become warnings on the current ticket
 * (`{ offset, bytes, message }`) and decoding goes on with the next frame.
 *
 * Real-time commands inside other commands' data: with `realtimeInData` (default true, Epson's
 * behaviour) the raw stream is scanned, so `10 04 01` inside raster data is answered at once AND
 * the bytes stay part of the raster. With it off, only real-time commands at command positions
 * are recognised (a printer with real-time commands disabled inside data, or a clone that parses
 * first). Either way a real-time command is handled when its last byte arrives, before any later
 * data, and never waits for the held buffer.
 */
import { errorMessage } from '../../errors.js';
import { type CodePageTable, EPSON_CODE_PAGES } from './code-pages.js';
import { CommandExecutor } from './executor.js';
import { type Frame, Framer } from './framer.js';
import type { HostQuery } from './host-query.js';
import { type PaperOptions, paperGeometry, type Ticket, type VirtualPaper } from './paper.js';
import {
  matchRealtime,
  type RealtimeCommand,
  type RealtimeHit,
  RealtimeScanner,
} from './realtime.js';

export interface DecoderOptions extends PaperOptions {
  /** `ESC t` number -> code page; Epson's numbering by default. Swap it for a clone's table. */
  codePages?: CodePageTable;
  /** Recognise real-time commands inside other commands' data (Epson). Default true. */
  realtimeInData?: boolean;
  /** Code page after power-on and `ESC @`. Default 0 (PC437). */
  powerOnCodePage?: number;
  /**
   * Start (and return on `ESC @`) in Kanji/Chinese double-byte mode. Many Chinese clones power up
   * in GBK mode (escpos-notes); Epson's single-byte models do not. Default false.
   */
  powerOnMultiByte?: boolean;
}

export interface DecoderHandlers {
  /** A real-time command, as soon as its last byte arrived (even while held). */
  realtime?(cmd: RealtimeCommand): void;
  /** Whether a real-time drawer pulse may run now (a printer in an error state ignores it). */
  pulseAllowed?(): boolean;
  /** An in-order query reached execution. */
  query?(query: HostQuery): void;
  /** A cut ended a ticket. */
  ticket?(ticket: Ticket): void;
}

export class EscPosDecoder {
  readonly paper: VirtualPaper;
  readonly options: Readonly<Required<Omit<DecoderOptions, keyof PaperOptions>>>;

  private readonly handlers: DecoderHandlers;
  private readonly framer = new Framer();
  private readonly scanner = new RealtimeScanner();
  private readonly executor: CommandExecutor;
  /** The receive buffer: frames not yet executed, from `queueHead` on. */
  private queue: Frame[] = [];
  private queueHead = 0;
  private queuedBytes = 0;
  private held = false;
  private draining = false;

  constructor(options: DecoderOptions = {}, handlers: DecoderHandlers = {}) {
    this.options = {
      codePages: options.codePages ?? EPSON_CODE_PAGES,
      realtimeInData: options.realtimeInData ?? true,
      powerOnCodePage: options.powerOnCodePage ?? 0,
      powerOnMultiByte: options.powerOnMultiByte ?? false,
    };
    this.handlers = handlers;
    this.executor = new CommandExecutor(paperGeometry(options), this.options, {
      received: () => this.framer.received,
      ticket: (ticket) => this.notify(() => this.handlers.ticket?.(ticket)),
      query: (query) => this.notify(() => this.handlers.query?.(query)),
    });
    this.paper = this.executor.paper;
  }

  /** Feeds bytes from the host. Never throws. */
  write(chunk: Uint8Array): void {
    try {
      this.receive(chunk);
    } catch (err) {
      // Not reachable by any input we know of; keeps the promise that write() never throws.
      this.paper.warn({
        offset: this.framer.received,
        bytes: '',
        message: `internal error: ${errorMessage(err)}`,
      });
    }
  }

  private receive(chunk: Uint8Array): void {
    const base = this.framer.received;
    const hits = this.options.realtimeInData ? this.scanner.scan(chunk, base) : [];
    const frames: Frame[] = [];
    this.framer.push(chunk, (f) => frames.push(f));
    // Real-time commands run when their last byte arrives; a frame that ends on the same byte is
    // that very command at a command position, already handled.
    let h = 0;
    for (const frame of frames) {
      const end = frame.offset + frame.bytes.length;
      while (h < hits.length && hits[h]!.end <= end) this.realtime(hits[h++]!);
      this.accept(frame);
    }
    while (h < hits.length) this.realtime(hits[h++]!);
  }

  /** Holds (true) or releases (false) execution; released frames run at once, in order. */
  hold(on: boolean): void {
    this.held = on;
    if (!on) this.drain();
  }

  get isHeld(): boolean {
    return this.held;
  }

  /**
   * Bytes in the receive buffer: complete commands waiting for execution, plus, while held, the
   * incomplete command being received (while running, a printer consumes data as it comes).
   */
  get bufferedBytes(): number {
    return this.queuedBytes + (this.held ? this.framer.pendingBytes : 0);
  }

  /** Total bytes received. */
  get received(): number {
    return this.framer.received;
  }

  /** Drops the receive buffer (complete commands not yet executed) and the unprinted line. */
  clearBuffers(): void {
    this.queue = [];
    this.queueHead = 0;
    this.queuedBytes = 0;
    this.executor.clearLine();
  }

  private recordPulse(cmd: Extract<RealtimeCommand, { kind: 'pulse' }>): void {
    this.paper.addEvent({
      type: 'drawer',
      pin: cmd.pin,
      onMs: cmd.onMs,
      offMs: cmd.offMs,
      realtime: true,
    });
  }

  private realtime(hit: RealtimeHit): void {
    const { cmd } = hit;
    if (cmd.kind === 'pulse') {
      if (this.executor.kept.realtimePulseEnabled && (this.handlers.pulseAllowed?.() ?? true)) {
        this.recordPulse(cmd);
      }
    } else if (cmd.kind === 'clear-buffers') {
      this.clearBuffers();
    }
    this.notify(() => this.handlers.realtime?.(cmd));
  }

  /**
   * Calls a handler. Its exceptions are the caller's bugs, not bad input: they must neither stop
   * decoding nor vanish into a warning, so they are rethrown outside write().
   */
  private notify(call: () => void): void {
    try {
      call();
    } catch (err) {
      queueMicrotask(() => {
        throw err;
      });
    }
  }

  private accept(frame: Frame): void {
    if (frame.kind === 'command' && frame.spec.realtime) {
      if (this.options.realtimeInData) return;
      const m = matchRealtime(frame.bytes);
      if (m.status === 'complete') {
        this.realtime({
          cmd: m.cmd,
          offset: frame.offset,
          end: frame.offset + frame.bytes.length,
        });
      } else {
        this.enqueue(frame); // executed in order only to leave its warning
      }
      return;
    }
    this.enqueue(frame);
  }

  private enqueue(frame: Frame): void {
    this.queue.push(frame);
    this.queuedBytes += frame.bytes.length;
    this.drain();
  }

  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    try {
      while (!this.held && this.queueHead < this.queue.length) {
        const frame = this.queue[this.queueHead++]!;
        this.queuedBytes -= frame.bytes.length;
        this.executor.run(frame);
      }
    } finally {
      this.draining = false;
      if (this.queueHead === this.queue.length) {
        this.queue = [];
        this.queueHead = 0;
      } else if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.queueHead);
        this.queueHead = 0;
      }
    }
  }
}
