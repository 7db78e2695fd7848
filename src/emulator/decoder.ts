/**
 * The streaming ESC/POS interpreter: bytes in, virtual paper out.
 *
 * Three stages, as in a printer:
 * 1. Real-time recognition on the raw stream (`DLE EOT`, `DLE ENQ`, `DLE DC4`), see realtime.ts.
 * 2. Framing into commands as data arrives (framer.ts), which works across any chunk split.
 * 3. Execution of the frames in order against the print modes and the paper. Execution can be
 *    held (`hold(true)`): the frames then wait in the receive buffer, as they do in a printer
 *    that is offline, and run when released.
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
import { BARCODE_SYMBOLOGIES, decodeCode128, SYMBOL_TYPES } from './barcodes.js';
import {
  type CodePageTable,
  decodeGb18030,
  decodeUtf8,
  EPSON_CODE_PAGES,
  gb18030Length,
  INTERNATIONAL_CHARACTER_SETS,
  isGb18030Lead,
  singleByteTable,
  utf8Length,
} from './code-pages.js';
import { commandName, hex } from './command-syntax.js';
import { type Frame, Framer } from './framer.js';
import {
  type Alignment,
  type Glyph,
  type PaperImage,
  type PaperOptions,
  paperGeometry,
  type TextStyle,
  type Ticket,
  VirtualPaper,
} from './paper.js';
import {
  matchRealtime,
  type RealtimeCommand,
  type RealtimeHit,
  RealtimeScanner,
} from './realtime.js';
import { cellsOf } from './text-width.js';

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

/** A query answered in order with the data: it waits behind everything received before it. */
export type HostQuery =
  /** `GS r 1` / `GS r 49` / `ESC v`: paper sensor status. */
  | { kind: 'paper-sensor'; command: string }
  /** `GS r 2` / `GS r 50` / `ESC u 0`: drawer kick-out connector status. */
  | { kind: 'drawer'; command: string }
  /** `GS r 4` / `GS r 52`: ink status (impact models). */
  | { kind: 'ink'; command: string }
  /** `GS ( H fn 48`: process id d1..d4, answered once the data before it is printed. */
  | { kind: 'process-id'; id: Uint8Array }
  /** `GS I n`: printer id / information. */
  | { kind: 'printer-id'; n: number }
  /** `GS a n`: enable (n != 0) or disable automatic status back. */
  | { kind: 'asb'; n: number };

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

interface Modes {
  fontB: boolean;
  emphasized: boolean;
  doubleStrike: boolean;
  underline: 0 | 1 | 2;
  kanjiUnderline: 0 | 1 | 2;
  width: number;
  height: number;
  kanjiWidth: number;
  kanjiHeight: number;
  reverse: boolean;
  upsideDown: boolean;
  rotated: boolean;
  /** Right-side character spacing in dots (`ESC SP`). */
  charSpacing: number;
  /** Kanji left and right spacing in dots (`FS S`). */
  kanjiLeft: number;
  kanjiRight: number;
}

interface State {
  modes: Modes;
  align: Alignment;
  leftMargin: number;
  areaWidth: number;
  lineSpacing: number;
  /** Horizontal tab stops in dots from the margin. */
  tabs: number[];
  codePage: number;
  international: number;
  multiByte: boolean;
  utf8: boolean;
  userDefined: boolean;
  barcode: { height: number; moduleWidth: number; hri: number; hriFont: number };
  /** `GS ( k` settings per symbol type (cn) and function (fn): the parameter bytes. */
  symbolSettings: Map<number, Map<number, Uint8Array>>;
  /** `GS ( L fn 112` graphics waiting for `fn 50`. */
  graphics: Bitmap | undefined;
  /** `ESC =`: printer selected (data processed) or not. */
  enabled: boolean;
  pageMode: boolean;
}

interface Bitmap {
  width: number;
  height: number;
  scaleX: number;
  scaleY: number;
  data: Uint8Array;
}

/** Default line spacing: 1/6 inch class, 30 dots (`ESC 2`). */
const DEFAULT_LINE_SPACING = 30;
/** Default barcode settings (ESC/POS reference: GS h 162, GS w 3, GS H 0, GS f 0). */
const DEFAULT_BARCODE = { height: 162, moduleWidth: 3, hri: 0, hriFont: 0 };

const QR_LEVELS: Record<number, string> = { 48: 'L', 49: 'M', 50: 'Q', 51: 'H' };
const QR_MODELS: Record<number, string> = { 49: 'model 1', 50: 'model 2', 51: 'micro' };

/**
 * Commands whose effect is invisible on the emulated paper (print density, paper sensors,
 * panel buttons, colours, NV settings...): executed silently. Any other command the emulator
 * cannot show leaves a warning.
 */
const SILENT = new Set([
  'ESC <',
  'ESC ?',
  'ESC U',
  'ESC c',
  'ESC r',
  'FS 2',
  'FS ?',
  'FS C',
  'FS g',
  'GS C',
  'GS E',
  'GS P',
  'GS b',
  'GS g',
  'GS j',
  'GS z',
  'GS ( C',
  'GS ( E',
  'GS ( K',
  'GS ( M',
  'GS ( N',
  'GS ( P',
  'GS ( Q',
  'GS ( z',
  'ESC ( Y',
  'FS ( A',
  'FS ( E',
  'FS ( L',
  'FS ( e',
]);

interface MultiBytePending {
  bytes: number[];
  offset: number;
}

export class EscPosDecoder {
  readonly paper: VirtualPaper;
  readonly options: Readonly<Required<Omit<DecoderOptions, keyof PaperOptions>>>;

  private readonly handlers: DecoderHandlers;
  private readonly framer = new Framer();
  private readonly scanner = new RealtimeScanner();
  private state: State;
  /** The receive buffer: frames not yet executed, from `queueHead` on. */
  private queue: Frame[] = [];
  private queueHead = 0;
  private queuedBytes = 0;
  private held = false;
  private draining = false;
  /** Frame being executed: warnings raised by the paper are attributed to it. */
  private executing: Frame | undefined;
  private multiByte: MultiBytePending | undefined;
  private macro: Frame[] = [];
  private macroRecording = false;
  /** `GS ( D` can disable the `DLE DC4 fn 1` pulse (ESC/POS reference). */
  private realtimePulseEnabled = true;
  private downloaded: Bitmap | undefined;
  private nvImages: Bitmap[] = [];

  constructor(options: DecoderOptions = {}, handlers: DecoderHandlers = {}) {
    this.options = {
      codePages: options.codePages ?? EPSON_CODE_PAGES,
      realtimeInData: options.realtimeInData ?? true,
      powerOnCodePage: options.powerOnCodePage ?? 0,
      powerOnMultiByte: options.powerOnMultiByte ?? false,
    };
    this.handlers = handlers;
    this.paper = new VirtualPaper(paperGeometry(options), (message) => {
      const f = this.executing;
      this.paper.warn({ offset: f?.offset ?? -1, bytes: f ? hex(f.bytes) : '', message });
    });
    this.state = this.powerOnState();
    this.syncPaper();
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
        message: `internal error: ${err instanceof Error ? err.message : String(err)}`,
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
    this.multiByte = undefined;
    this.paper.clearLine();
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
      if (this.realtimePulseEnabled && (this.handlers.pulseAllowed?.() ?? true)) {
        this.recordPulse(cmd);
      }
    } else if (cmd.kind === 'clear-buffers') {
      this.clearBuffers();
    }
    this.notify(() => this.handlers.realtime?.(cmd));
  }

  private query(q: HostQuery): void {
    this.notify(() => this.handlers.query?.(q));
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
        this.run(frame);
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

  private run(frame: Frame): void {
    const outer = this.executing;
    this.executing = frame;
    try {
      this.execute(frame);
    } catch (err) {
      this.warn(frame, `internal error: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      this.executing = outer;
    }
  }

  private warn(frame: Frame, message: string, offset = frame.offset, bytes = frame.bytes): void {
    this.paper.warn({ offset, bytes: hex(bytes), message });
  }

  // ---------------------------------------------------------------------------------------
  // Execution

  private execute(frame: Frame): void {
    const name = frame.kind === 'command' ? frame.spec.name : '';
    if (this.macroRecording && name !== 'GS :') {
      this.macro.push(frame);
      return;
    }
    if (!this.state.enabled && name !== 'ESC =') return; // ESC = 0: the printer ignores data.
    if (frame.kind !== 'text') this.flushMultiByte();
    switch (frame.kind) {
      case 'text':
        this.text(frame);
        return;
      case 'control':
        this.control(frame);
        return;
      case 'unknown':
        this.warn(frame, `unknown command ${commandName(frame.bytes)}: skipped`);
        return;
      case 'command':
        this.command(frame, name);
        return;
    }
  }

  private control(frame: Frame): void {
    const b = frame.bytes[0]!;
    switch (b) {
      case 0x0a: // LF: print the buffer and feed one line.
        this.paper.lineFeed(this.state.lineSpacing);
        return;
      case 0x0d: // CR: ignored with auto line feed disabled (the default on Epson).
      case 0x00: // NUL: no operation.
        return;
      case 0x09: // HT
        this.paper.tab(this.state.tabs);
        return;
      case 0x0c: // FF: prints in page mode, ignored in standard mode.
        if (this.state.pageMode) {
          this.state.pageMode = false;
          this.paper.flushLine();
        }
        return;
      case 0x18: // CAN: page mode only.
        return;
      default:
        this.warn(frame, `control byte ${hex([b])} has no meaning in ESC/POS: ignored`);
    }
  }

  // Text ------------------------------------------------------------------------------------

  private text(frame: Frame): void {
    const { bytes } = frame;
    for (let i = 0; i < bytes.length; i++) this.textByte(bytes[i]!, frame.offset + i);
  }

  private textByte(b: number, offset: number): void {
    const st = this.state;
    const mb = this.multiByte;
    if (mb) {
      mb.bytes.push(b);
      if (st.utf8) {
        const need = utf8Length(mb.bytes[0]!);
        if (b < 0x80 || b > 0xbf) {
          mb.bytes.pop();
          this.flushMultiByte();
          this.textByte(b, offset);
          return;
        }
        if (mb.bytes.length < need) return;
        const char = decodeUtf8(Uint8Array.from(mb.bytes));
        this.multiByte = undefined;
        this.glyph(char, cellsOf(char) === 2);
        return;
      }
      const len = gb18030Length(mb.bytes[0]!, mb.bytes[1]!);
      if (len === 0) {
        mb.bytes.pop();
        this.flushMultiByte();
        this.textByte(b, offset);
        return;
      }
      if (mb.bytes.length < len) return;
      const char = decodeGb18030(Uint8Array.from(mb.bytes));
      this.multiByte = undefined;
      if (char.includes('\uFFFD')) {
        this.paper.warn({
          offset: mb.offset,
          bytes: hex(mb.bytes),
          message: 'not a GB18030 character',
        });
      }
      this.glyph(char, true);
      return;
    }
    if (st.utf8 && b >= 0x80) {
      if (utf8Length(b) === 0) {
        this.paper.warn({ offset, bytes: hex([b]), message: 'not a UTF-8 lead byte' });
        this.glyph('\uFFFD', false);
        return;
      }
      this.multiByte = { bytes: [b], offset };
      return;
    }
    if (st.multiByte && !st.utf8 && isGb18030Lead(b)) {
      this.multiByte = { bytes: [b], offset };
      return;
    }
    this.glyph(this.singleByteChar(b), false);
  }

  /** An incomplete multi-byte character interrupted by a command prints as a replacement glyph. */
  private flushMultiByte(): void {
    const mb = this.multiByte;
    if (!mb) return;
    this.multiByte = undefined;
    this.paper.warn({
      offset: mb.offset,
      bytes: hex(mb.bytes),
      message: 'incomplete double-byte character',
    });
    this.glyph('\uFFFD', !this.state.utf8);
  }

  private singleByteChar(b: number): string {
    const st = this.state;
    if (b < 0x80) {
      const intl = INTERNATIONAL_CHARACTER_SETS[st.international];
      const ascii = String.fromCharCode(b === 0x7f ? 0x20 : b);
      return intl?.map[ascii] ?? ascii;
    }
    const page = this.options.codePages[st.codePage] ?? EPSON_CODE_PAGES[0]!;
    return singleByteTable(page.encoding)[b]!;
  }

  private glyph(char: string, wide: boolean): void {
    const m = this.state.modes;
    const font = m.fontB ? this.paper.geometry.fontB : this.paper.geometry.fontA;
    const style: TextStyle = {
      font: m.fontB ? 'B' : 'A',
      bold: m.emphasized || m.doubleStrike,
      underline: wide ? m.kanjiUnderline : m.underline,
      width: wide ? m.kanjiWidth : m.width,
      height: wide ? m.kanjiHeight : m.height,
      reverse: m.reverse,
      upsideDown: m.upsideDown,
      rotated: m.rotated,
    };
    const width = wide
      ? (font.width * 2 + m.kanjiLeft + m.kanjiRight) * m.kanjiWidth
      : (font.width + m.charSpacing) * m.width;
    const glyph: Glyph = { char, width, style };
    this.paper.put(glyph);
  }

  // Commands --------------------------------------------------------------------------------

  private command(frame: Frame, name: string) {
    const b = frame.bytes;
    const st = this.state;
    const m = st.modes;
    const n = b[2] ?? 0;
    switch (name) {
      // Print modes.
      case 'ESC !': // bit0 font B, bit3 emphasized, bit4 double height, bit5 double width, bit7 underline
        m.fontB = (n & 0x01) !== 0;
        m.emphasized = (n & 0x08) !== 0;
        m.height = n & 0x10 ? 2 : 1;
        m.width = n & 0x20 ? 2 : 1;
        m.underline = n & 0x80 ? 1 : 0;
        return;
      case 'ESC E':
        m.emphasized = (n & 1) !== 0;
        return;
      case 'ESC G':
        m.doubleStrike = (n & 1) !== 0;
        return;
      case 'ESC -':
        if (![0, 1, 2, 48, 49, 50].includes(n)) return this.warn(frame, 'ESC - n out of range');
        m.underline = (n % 48) as 0 | 1 | 2;
        return;
      case 'GS B':
        m.reverse = (n & 1) !== 0;
        return;
      case 'ESC M':
        if (n === 0 || n === 48) m.fontB = false;
        else if (n === 1 || n === 49) m.fontB = true;
        else this.warn(frame, `font ${n} not available: ignored`);
        return;
      case 'GS !': {
        const w = (n >> 4) + 1;
        const h = (n & 0x0f) + 1;
        if (w > 8 || h > 8) return this.warn(frame, 'GS ! size out of range 1-8: ignored');
        m.width = w;
        m.height = h;
        m.kanjiWidth = w;
        m.kanjiHeight = h;
        return;
      }
      case 'ESC {':
        m.upsideDown = (n & 1) !== 0;
        return;
      case 'ESC V':
        m.rotated = n === 1 || n === 2 || n === 49 || n === 50;
        return;
      case 'ESC SP':
        m.charSpacing = n;
        return;
      case 'ESC a':
        return this.atLineStart(frame, () => {
          const align = ({ 0: 'left', 1: 'center', 2: 'right' } as const)[n % 48];
          if (n > 50 || (n > 2 && n < 48) || !align)
            return this.warn(frame, 'ESC a n out of range');
          st.align = align;
          this.syncPaper();
        });
      case 'GS L':
        return this.atLineStart(frame, () => {
          st.leftMargin = Math.min(u16(b, 2), this.paper.geometry.dotsPerLine - 12);
          st.areaWidth = Math.min(st.areaWidth, this.paper.geometry.dotsPerLine - st.leftMargin);
          this.syncPaper();
        });
      case 'GS W':
        return this.atLineStart(frame, () => {
          const max = this.paper.geometry.dotsPerLine - st.leftMargin;
          st.areaWidth = Math.max(12, Math.min(u16(b, 2), max));
          this.syncPaper();
        });
      case 'ESC $':
        if (!this.paper.setPosition(u16(b, 2)))
          this.warn(frame, 'ESC $ beyond the print area: ignored');
        return;
      case 'ESC \\': {
        const d = u16(b, 2);
        if (!this.paper.moveBy(d >= 0x8000 ? d - 0x10000 : d)) {
          this.warn(frame, 'ESC \\ outside the print area: ignored');
        }
        return;
      }
      case 'ESC D': {
        const cell = (this.currentFont().width + m.charSpacing) * m.width;
        const stops: number[] = [];
        for (let i = 2; i < b.length && b[i] !== 0; i++) stops.push(b[i]! * cell);
        st.tabs = stops;
        return;
      }
      case 'ESC 2':
        st.lineSpacing = DEFAULT_LINE_SPACING;
        this.syncPaper();
        return;
      case 'ESC 3':
        st.lineSpacing = n;
        this.syncPaper();
        return;

      // Character tables.
      case 'ESC t':
        if (!this.options.codePages[n]) {
          return this.warn(frame, `code page ${n} is not in the printer's table: ignored`);
        }
        st.codePage = n;
        return;
      case 'ESC R':
        if (!INTERNATIONAL_CHARACTER_SETS[n]) {
          this.warn(frame, `international character set ${n} not emulated: ASCII kept`);
        }
        st.international = n;
        return;
      case 'FS &': // Kanji / Chinese double-byte mode on.
        st.multiByte = true;
        return;
      case 'FS .': // ... and off.
        st.multiByte = false;
        return;
      case 'FS !': // Kanji print mode: bit2 double width, bit3 double height, bit7 underline.
        m.kanjiWidth = n & 0x04 ? 2 : 1;
        m.kanjiHeight = n & 0x08 ? 2 : 1;
        m.kanjiUnderline = n & 0x80 ? 1 : 0;
        return;
      case 'FS -':
        m.kanjiUnderline = (n % 48 <= 2 ? n % 48 : 0) as 0 | 1 | 2;
        return;
      case 'FS S':
        m.kanjiLeft = b[2]!;
        m.kanjiRight = b[3]!;
        return;
      case 'FS W':
        m.kanjiWidth = n & 1 ? 2 : 1;
        m.kanjiHeight = n & 1 ? 2 : 1;
        return;
      case 'ESC %':
        st.userDefined = (n & 1) !== 0;
        if (st.userDefined) {
          this.warn(frame, 'user-defined characters are shown as the character codes they replace');
        }
        return;
      case 'ESC &':
        return;

      // Paper movement.
      case 'ESC d': {
        const had = this.paper.flushLine();
        this.paper.blankLines(Math.max(0, n - (had ? 1 : 0)), n * st.lineSpacing);
        this.paper.addEvent({ type: 'feed', command: name, lines: n });
        return;
      }
      case 'ESC J': {
        const had = this.paper.flushLine();
        const lines = Math.round(n / Math.max(1, st.lineSpacing));
        this.paper.blankLines(Math.max(0, lines - (had ? 1 : 0)), n);
        this.paper.addEvent({ type: 'feed', command: name, dots: n });
        return;
      }
      case 'ESC e':
        this.paper.flushLine();
        this.paper.addEvent({ type: 'feed', command: name, lines: -n });
        return;
      case 'ESC K':
        this.paper.flushLine();
        this.paper.addEvent({ type: 'feed', command: name, dots: -n });
        return;

      // Cuts: enabled only at the beginning of a line in standard mode (ESC/POS reference).
      case 'GS V':
        return this.atLineStart(frame, () => {
          const partial = [1, 49, 66, 98, 104].includes(n);
          if (![0, 1, 48, 49, 65, 66, 97, 98, 103, 104].includes(n)) {
            return this.warn(frame, `GS V ${n}: unknown cut mode, ignored`);
          }
          const feed = b.length > 3 ? { feedDots: b[3]! } : {};
          this.cut({ type: 'cut', cut: partial ? 'partial' : 'full', command: name, ...feed });
        });
      case 'ESC i':
      case 'ESC m':
        return this.atLineStart(frame, () =>
          this.cut({ type: 'cut', cut: 'partial', command: name }),
        );

      // Drawer and buzzer.
      case 'ESC p': {
        const pin = n === 0 || n === 48 ? 2 : n === 1 || n === 49 ? 5 : undefined;
        if (!pin) return this.warn(frame, `ESC p: no drawer connector pin for m=${n}`);
        this.paper.addEvent({
          type: 'drawer',
          pin,
          onMs: b[3]! * 2,
          offMs: b[4]! * 2,
          realtime: false,
        });
        return;
      }
      case 'ESC B': // Chinese clones: n beeps of t x 50 ms.
        this.paper.addEvent({
          type: 'buzzer',
          command: name,
          count: n,
          onMs: b[3]! * 50,
          offMs: b[3]! * 50,
        });
        return;

      // Codes and images.
      case 'GS H':
        st.barcode.hri = n % 48;
        return;
      case 'GS f':
        st.barcode.hriFont = n % 48;
        return;
      case 'GS h':
        st.barcode.height = n;
        return;
      case 'GS w':
        st.barcode.moduleWidth = n;
        return;
      case 'GS k':
        return this.barcode(frame);
      case 'GS v':
        if (b[2] !== 0x30) return this.warn(frame, `unknown command ${commandName(b)}: skipped`);
        return this.raster(frame);
      case 'ESC *':
        return this.bitImage(frame);
      case 'GS *': {
        // Downloaded bit image: x*8 dots wide, y*8 dots high, column format.
        const x = b[2]!;
        const y = b[3]!;
        this.downloaded = columnsToBitmap(b.subarray(4), x * 8, y, 1, 1);
        return;
      }
      case 'GS /':
        return this.atLineStart(frame, () => {
          if (!this.downloaded) return this.warn(frame, 'GS /: no downloaded bit image defined');
          const s = n % 48;
          this.image('GS /', { ...this.downloaded, scaleX: s & 1 ? 2 : 1, scaleY: s & 2 ? 2 : 1 });
        });
      case 'FS q': {
        // NV bit images, each x*8 dots wide and y*8 high, column format.
        this.nvImages = [];
        let at = 3;
        for (let i = 0; i < b[2]!; i++) {
          const x = u16(b, at);
          const y = u16(b, at + 2);
          const k = x * y * 8;
          this.nvImages.push(columnsToBitmap(b.subarray(at + 4, at + 4 + k), x * 8, y, 1, 1));
          at += 4 + k;
        }
        return;
      }
      case 'FS p':
        return this.atLineStart(frame, () => {
          const img = this.nvImages[n - 1];
          if (!img) return this.warn(frame, `FS p: NV bit image ${n} not defined in this session`);
          const s = b[3]! % 48;
          this.image('FS p', { ...img, scaleX: s & 1 ? 2 : 1, scaleY: s & 2 ? 2 : 1 });
        });

      // Length-prefixed families.
      case 'GS (':
      case 'ESC (':
      case 'FS (':
        return this.extended(frame, `${name} ${String.fromCharCode(n)}`);
      case 'GS 8':
        if (n !== 0x4c) return this.warn(frame, `unknown command ${commandName(b)}: skipped`);
        return this.graphics(frame, 'GS 8 L', 7);

      // Queries answered in order.
      case 'GS r': {
        const kind = ({ 1: 'paper-sensor', 2: 'drawer', 4: 'ink' } as const)[n % 48];
        if (!kind) return this.warn(frame, `GS r ${n}: unknown status type`);
        this.query({ kind, command: `GS r ${n}` });
        return;
      }
      case 'ESC v':
        this.query({ kind: 'paper-sensor', command: name });
        return;
      case 'ESC u':
        this.query({ kind: 'drawer', command: name });
        return;
      case 'GS I':
        this.query({ kind: 'printer-id', n });
        return;
      case 'GS a':
        this.query({ kind: 'asb', n });
        return;

      // Printer control.
      case 'ESC @':
        return this.initialize(frame);
      case 'ESC =':
        st.enabled = (n & 1) !== 0;
        return;
      case 'GS :':
        if (this.macroRecording) {
          this.macroRecording = false;
        } else {
          this.macro = [];
          this.macroRecording = true;
        }
        return;
      case 'GS ^': {
        if (b[4] === 1) this.warn(frame, 'GS ^: waiting for the FEED button is not emulated');
        const frames = this.macro;
        for (let r = 0; r < b[2]!; r++) for (const f of frames) this.run(f);
        return;
      }
      case 'ESC L':
        st.pageMode = true;
        this.warn(frame, 'page mode is not emulated: data is laid out as in standard mode');
        return;
      case 'ESC S':
        st.pageMode = false;
        return;
      case 'ESC FF':
      case 'ESC T':
      case 'ESC W':
      case 'GS $':
      case 'GS \\':
        if (!st.pageMode) return; // page-mode commands, ignored in standard mode
        return this.warn(frame, `${name}: page mode is not emulated`);
      case 'DLE EOT':
      case 'DLE ENQ':
      case 'DLE DC4':
        // Only reached with realtimeInData off and an invalid parameter: the printer ignores it.
        return this.warn(frame, `${name} with invalid parameters: ignored`);
      default:
        if (SILENT.has(name)) return;
        this.warn(frame, `${name} is not emulated: skipped`);
    }
  }

  /** Commands enabled only at the beginning of a line: elsewhere the printer ignores them. */
  private atLineStart(frame: Frame, run: () => void): void {
    if (!this.paper.atLineStart) {
      const name = frame.kind === 'command' ? frame.spec.name : '';
      this.warn(frame, `${name} is only processed at the beginning of a line (Epson): ignored`);
      return;
    }
    run();
  }

  private cut(event: {
    type: 'cut';
    cut: 'full' | 'partial';
    command: string;
    feedDots?: number;
  }): void {
    const f = this.executing;
    const ticket = this.paper.cut(event, f ? f.offset + f.bytes.length : this.framer.received);
    this.notify(() => this.handlers.ticket?.(ticket));
  }

  private initialize(frame: Frame): void {
    // ESC @ clears the print buffer and restores the power-on modes; the receive buffer, macros
    // and NV data are kept (ESC/POS reference, "ESC @").
    const lost = this.paper.clearLine();
    if (lost > 0)
      this.warn(frame, `ESC @ discarded ${lost} unprinted character(s) of the line buffer`);
    this.multiByte = undefined;
    this.state = this.powerOnState();
    this.syncPaper();
  }

  private powerOnState(): State {
    return {
      modes: {
        fontB: false,
        emphasized: false,
        doubleStrike: false,
        underline: 0,
        kanjiUnderline: 0,
        width: 1,
        height: 1,
        kanjiWidth: 1,
        kanjiHeight: 1,
        reverse: false,
        upsideDown: false,
        rotated: false,
        charSpacing: 0,
        kanjiLeft: 0,
        kanjiRight: 0,
      },
      align: 'left',
      leftMargin: 0,
      areaWidth: this.paper.geometry.dotsPerLine,
      lineSpacing: DEFAULT_LINE_SPACING,
      // Default tab stops every 8 font A characters (ESC/POS reference, "ESC D").
      tabs: Array.from({ length: 32 }, (_, i) => (i + 1) * 8 * this.paper.geometry.fontA.width),
      codePage: this.options.powerOnCodePage,
      international: 0,
      multiByte: this.options.powerOnMultiByte,
      utf8: false,
      userDefined: false,
      barcode: { ...DEFAULT_BARCODE },
      symbolSettings: new Map(),
      graphics: undefined,
      enabled: true,
      pageMode: false,
    };
  }

  private syncPaper(): void {
    const st = this.state;
    this.paper.settings = { align: st.align, leftMargin: st.leftMargin, areaWidth: st.areaWidth };
    this.paper.lineSpacing = st.lineSpacing;
  }

  private currentFont() {
    return this.state.modes.fontB ? this.paper.geometry.fontB : this.paper.geometry.fontA;
  }

  // Barcodes, 2-D codes, images ----------------------------------------------------------------

  private barcode(frame: Frame) {
    const b = frame.bytes;
    const m = b[2]!;
    const formB = m >= 65;
    let data: Uint8Array;
    if (formB) {
      data = b.subarray(4);
    } else {
      const nul = b[b.length - 1] === 0;
      data = b.subarray(3, nul ? b.length - 1 : b.length);
      if (!nul)
        this.warn(frame, 'GS k form A data not ended by NUL: ended at the first control byte');
    }
    const symbology = BARCODE_SYMBOLOGIES[m];
    if (!symbology) return this.warn(frame, `GS k: unknown barcode system m=${m}: skipped`);
    if (!this.paper.atLineStart) {
      return this.warn(frame, 'GS k is only processed with an empty print buffer (Epson): ignored');
    }
    let content = latin1(data);
    if (m === 73) {
      const decoded = decodeCode128(data);
      content = decoded.text;
      if (decoded.problem) this.warn(frame, decoded.problem);
    }
    const { height, moduleWidth, hri, hriFont } = this.state.barcode;
    this.paper.addCode(
      {
        kind: 'barcode',
        symbology,
        content,
        data: Uint8Array.from(data),
        options: { height, moduleWidth, hri, hriFont },
      },
      height,
    );
  }

  private raster(frame: Frame) {
    // GS v 0 m xL xH yL yH d1..dk: x bytes wide, y dots high; m bit0 double width, bit1 double height.
    const b = frame.bytes;
    if (!this.paper.atLineStart) {
      return this.warn(
        frame,
        'GS v 0 is only processed with an empty print buffer (Epson): ignored',
      );
    }
    const mode = b[3]! % 48;
    const x = u16(b, 4);
    const y = u16(b, 6);
    this.image('GS v 0', {
      width: x * 8,
      height: y,
      scaleX: mode & 1 ? 2 : 1,
      scaleY: mode & 2 ? 2 : 1,
      data: b.slice(8),
    });
  }

  private image(source: string, bmp: Bitmap): PaperImage {
    if (bmp.width * bmp.scaleX > this.state.areaWidth) {
      this.paper.warn({
        offset: this.executing?.offset ?? -1,
        bytes: this.executing ? hex(this.executing.bytes.subarray(0, 8)) : '',
        message: `${source} image is wider than the print area: the excess is not printed`,
      });
    }
    return this.paper.addImage({ source, ...bmp });
  }

  private bitImage(frame: Frame) {
    // ESC * m nL nH d1..dk: column format; m 0/1 8-dot (single/double density), 32/33 24-dot.
    const b = frame.bytes;
    const m = b[2]!;
    if (![0, 1, 32, 33].includes(m)) return this.warn(frame, `ESC *: unknown mode ${m}: skipped`);
    const n = u16(b, 3);
    const bytesPerColumn = m >= 32 ? 3 : 1;
    const bmp = columnsToBitmap(
      b.subarray(5),
      n,
      bytesPerColumn,
      m === 0 || m === 32 ? 2 : 1,
      m < 32 ? 3 : 1,
    );
    this.paper.putBand({ source: 'ESC *', ...bmp });
  }

  private extended(frame: Frame, name: string) {
    const b = frame.bytes;
    switch (name) {
      case 'GS ( k':
        return this.symbol(frame);
      case 'GS ( L':
        return this.graphics(frame, name, 5);
      case 'GS ( H':
        // fn 48: GS ( H 06 00 30 30 d1 d2 d3 d4 -> reply 37 22 d1..d4 00 once printed.
        if (b[5] === 0x30 && b.length >= 11) {
          this.query({ kind: 'process-id', id: b.slice(7, 11) });
        }
        return;
      case 'GS ( D': {
        // Enable/disable real-time commands: m = 20, then pairs [a b]; a = 1 is DLE DC4 fn 1.
        for (let i = 6; i + 1 < b.length; i += 2) {
          if (b[i] === 1) this.realtimePulseEnabled = b[i + 1] === 1;
        }
        return;
      }
      case 'ESC ( A':
        return this.beeper(frame);
      case 'FS ( C':
        // fn 48: select the character encoding system, m = 1 one-byte, m = 2 UTF-8.
        if (b[5] === 0x30) {
          const m = b[6]! % 48;
          this.state.utf8 = m === 2;
        }
        return;
      default:
        if (SILENT.has(name)) return;
        this.warn(frame, `${name} is not emulated: skipped by its length`);
    }
  }

  private beeper(frame: Frame): void {
    const b = frame.bytes;
    const fn = b[5];
    if (fn === 0x30 && b.length >= 9) {
      // fn 48: n (sound), c (count), t (cycle, t x 100 ms).
      this.paper.addEvent({
        type: 'buzzer',
        command: 'ESC ( A',
        count: b[7]!,
        onMs: b[8]! * 100,
        offMs: 0,
      });
    } else if (fn === 0x61 && b.length >= 10) {
      // fn 97 (TM-U230): n, c times (t1 x 100 ms on, t2 x 100 ms off).
      this.paper.addEvent({
        type: 'buzzer',
        command: 'ESC ( A',
        count: b[7]!,
        onMs: b[8]! * 100,
        offMs: b[9]! * 100,
      });
    }
    // fn 98 / 99 configure automatic beeping on printer events: nothing to print.
  }

  /** `GS ( k pL pH cn fn ...`: 2-D symbols; settings, store (fn 80), print (fn 81). */
  private symbol(frame: Frame) {
    const b = frame.bytes;
    const cn = b[5];
    const fn = b[6];
    if (cn === undefined || fn === undefined) return this.warn(frame, 'GS ( k without cn and fn');
    const type = SYMBOL_TYPES[cn];
    if (!type) return this.warn(frame, `GS ( k: unknown symbol type cn=${cn}: skipped`);
    const settings = this.symbolSettings(cn);
    if (fn === 80) {
      settings.set(80, b.slice(8)); // m = 48, then the data
      return;
    }
    if (fn === 81) {
      if (!this.paper.atLineStart) {
        return this.warn(
          frame,
          `${type} print is only processed with an empty print buffer: ignored`,
        );
      }
      const data = settings.get(80);
      if (!data) return this.warn(frame, `${type} print with no stored data: ignored`);
      const options = cn === 49 ? qrOptions(settings) : rawOptions(settings);
      const size = cn === 49 ? Number(options.size) : 3;
      this.paper.addCode(
        { kind: '2d', symbology: type, content: symbolText(data), data, options },
        size * 25,
      );
      return;
    }
    if (fn === 82) return this.warn(frame, `${type} size information reply is not emulated`);
    settings.set(fn, b.slice(7));
  }

  private symbolSettings(cn: number): Map<number, Uint8Array> {
    let s = this.state.symbolSettings.get(cn);
    if (!s) {
      s = new Map();
      this.state.symbolSettings.set(cn, s);
    }
    return s;
  }

  /** `GS ( L` / `GS 8 L`: m fn at `at`, `at + 1`. Stores (fn 112) and prints (fn 50) graphics. */
  private graphics(frame: Frame, name: string, at: number) {
    const b = frame.bytes;
    const fn = b[at + 1];
    if (fn === 112 || fn === 113) {
      // a bx by c xL xH yL yH d1..dk; raster (112) or column (113) format.
      const p = at + 2;
      const bx = b[p + 1]!;
      const by = b[p + 2]!;
      const x = u16(b, p + 4);
      const y = u16(b, p + 6);
      const data = b.subarray(p + 8);
      this.state.graphics =
        fn === 112
          ? {
              width: x,
              height: y,
              scaleX: bx,
              scaleY: by,
              data: data.slice(0, Math.ceil(x / 8) * y),
            }
          : columnsToBitmap(data, x, Math.ceil(y / 8), bx, by);
      return;
    }
    if (fn === 50 || fn === 2) {
      return this.atLineStart(frame, () => {
        const g = this.state.graphics;
        if (!g) return this.warn(frame, `${name} fn 50: no graphics stored`);
        this.state.graphics = undefined;
        this.image(name, g);
      });
    }
    this.warn(frame, `${name} fn ${fn} is not emulated: skipped by its length`);
  }
}

function u16(b: Uint8Array, i: number): number {
  return (b[i] ?? 0) + 256 * (b[i + 1] ?? 0);
}

function latin1(data: Uint8Array): string {
  return String.fromCharCode(...data);
}

/** 2-D symbol data as text: UTF-8 when it is valid UTF-8, Latin-1 otherwise. */
function symbolText(data: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    return latin1(data);
  }
}

function qrOptions(settings: Map<number, Uint8Array>): Record<string, number | string> {
  const model = settings.get(65)?.[0] ?? 50;
  const size = settings.get(67)?.[0] ?? 3;
  const level = settings.get(69)?.[0] ?? 48;
  return {
    model: QR_MODELS[model] ?? String(model),
    size,
    level: QR_LEVELS[level] ?? String(level),
  };
}

function rawOptions(settings: Map<number, Uint8Array>): Record<string, number | string> {
  const out: Record<string, number | string> = {};
  for (const [fn, params] of settings) if (fn !== 80) out[`fn${fn}`] = hex(params);
  return out;
}

/**
 * Converts column-format image data (ESC *, GS *, FS q: each column `bytesPerColumn` bytes,
 * most significant bit on top) to packed rows.
 */
function columnsToBitmap(
  data: Uint8Array,
  columns: number,
  bytesPerColumn: number,
  scaleX: number,
  scaleY: number,
): Bitmap {
  const height = bytesPerColumn * 8;
  const stride = Math.ceil(columns / 8);
  const out = new Uint8Array(stride * height);
  for (let x = 0; x < columns; x++) {
    for (let k = 0; k < bytesPerColumn; k++) {
      const byte = data[x * bytesPerColumn + k] ?? 0;
      for (let bit = 0; bit < 8; bit++) {
        if (!(byte & (0x80 >> bit))) continue;
        const y = k * 8 + bit;
        const i = y * stride + (x >> 3);
        out[i] = out[i]! | (0x80 >> (x & 7));
      }
    }
  }
  return { width: columns, height, scaleX, scaleY, data: out };
}
