/**
 * The virtual paper: what the emulated printer has printed, as tickets (one per cut), each with
 * its text lines (style runs, alignment, columns), codes, images, events and warnings.
 *
 * Layout happens in dots, as in the printer: a font A cell is 12 dots wide, font B 9 (escpos-notes
 * "Paper and columns"), double width doubles the cell, `ESC SP` adds right-side spacing, `GS L` /
 * `GS W` set the margin and the print area, `ESC $` / `HT` move the print position. A finished line
 * is then expressed in columns of its font so it can be compared with a plain-text receipt.
 *
 * Wrap rule (ESC/POS reference, "Print position" / "LF"): when a character does not fit in the
 * rest of the print area the line in the buffer is printed and the character starts the next
 * line; nothing is lost, and the new line keeps the alignment.
 */

export type Alignment = 'left' | 'center' | 'right';
export type FontName = 'A' | 'B';

export interface FontMetrics {
  /** Cell width in dots, spacing excluded. */
  width: number;
  /** Cell height in dots. */
  height: number;
}

export interface PaperGeometry {
  /** Width of the printable line in dots, e.g. 576 for 80 mm at 203 dpi. */
  dotsPerLine: number;
  fontA: FontMetrics;
  fontB: FontMetrics;
}

/** Paper and column options: `columns` font A characters per line (48 on 80 mm, 32 on 58 mm). */
export interface PaperOptions {
  /** Font A columns per line; the line is `columns * 12` dots. Default 48. */
  columns?: number;
  /** Font B columns per line. Default: as many 9-dot cells as fit (64 for 48 columns). */
  columnsFontB?: number;
}

export function paperGeometry(options: PaperOptions = {}): PaperGeometry {
  const columns = options.columns ?? 48;
  const dotsPerLine = columns * 12;
  const fontBWidth = options.columnsFontB ? Math.floor(dotsPerLine / options.columnsFontB) : 9;
  return {
    dotsPerLine,
    fontA: { width: 12, height: 24 },
    fontB: { width: fontBWidth, height: 17 },
  };
}

export interface TextStyle {
  font: FontName;
  /** Emphasized (`ESC E`, `ESC !` bit 3) or double-strike (`ESC G`): both print heavier. */
  bold: boolean;
  /** 0 none, 1 one-dot, 2 two-dot (`ESC -`). */
  underline: 0 | 1 | 2;
  /** Width and height multipliers, 1..8 (`GS !`, `ESC !` bits 4 and 5). */
  width: number;
  height: number;
  /** White on black (`GS B`). */
  reverse: boolean;
  /** Upside-down mode (`ESC {`). */
  upsideDown: boolean;
  /** 90-degree clockwise rotation (`ESC V`). */
  rotated: boolean;
}

export interface TextRun extends TextStyle {
  text: string;
  /** First column of the run on the paper, counted from the left edge (margin and alignment included). */
  column: number;
  /** Columns the run occupies (a 2x-wide character takes two, a CJK character two per width unit). */
  columns: number;
}

export interface PaperLine {
  /** The printed characters, with spaces for horizontal moves (HT, ESC $); no alignment padding. */
  text: string;
  align: Alignment;
  /** Columns of the line's grid: the print area in cells of the line's font. */
  columns: number;
  /** The font whose cell is the column unit: B when every character on the line is font B. */
  font: FontName;
  /** Columns the content occupies, from the line origin to the end of its last character. */
  width: number;
  /** Columns before the content: left margin plus alignment padding, floor((C-w)/2) or C-w. */
  indent: number;
  /** Tallest height multiplier on the line (1 for a blank line). */
  height: number;
  runs: TextRun[];
  /** True when the line ended because the next character did not fit, not by a feed. */
  wrapped: boolean;
  /**
   * Where user-defined characters stand (column as in `TextRun`); absent on a line without any.
   * Their glyphs are the ticket's `userDefined`.
   */
  userDefined?: Array<{ char: string; column: number }>;
}

/**
 * A user-defined character (`ESC &`, printed while `ESC % 1` is on). The emulator cannot know
 * what a downloaded glyph means, so the decoded text shows it as a private-use character standing
 * for its font and code (`userDefinedChar`), and the glyph is kept for a preview to draw and a
 * test to look at.
 */
export interface PaperUserDefined {
  /** What the decoded text shows: U+E000 + code in font A, U+E100 + code in font B. */
  char: string;
  /** The code it replaces (0x20-0x7E). */
  code: number;
  font: FontName;
  /** Dot columns as defined (the rest of the cell prints white) and dot rows. */
  width: number;
  height: number;
  /** Rows top to bottom, ceil(width / 8) bytes each, most significant bit leftmost, 1 = black. */
  data: Uint8Array;
}

/** The private-use character the decoded text shows for user-defined `code` of `font`. */
export function userDefinedChar(code: number, font: FontName): string {
  return String.fromCharCode((font === 'A' ? 0xe000 : 0xe100) + code);
}

interface Positioned {
  /** Number of lines the ticket had when the item was printed: it comes before that line. */
  atLine: number;
  /** Print order within the ticket, shared by codes, images and events. */
  seq: number;
}

export interface PaperCode extends Positioned {
  kind: 'barcode' | '2d';
  /** `QR`, `PDF417`, `CODE128`, `EAN13`, ... */
  symbology: string;
  /** Human-readable content (CODE128 code-set prefixes decoded; 2-D data as UTF-8 or Latin-1). */
  content: string;
  /** The data bytes as sent. */
  data: Uint8Array;
  align: Alignment;
  /** Symbol settings in force: QR model/size/level; barcode height/module width/HRI. */
  options: Record<string, number | string>;
}

export interface PaperImage extends Positioned {
  /** The command that printed it: `GS v 0`, `ESC *`, `GS ( L`, `GS 8 L`. */
  source: string;
  /** Width and height in data dots. */
  width: number;
  height: number;
  /** How many printer dots one data dot takes (double-width raster, single-density ESC *). */
  scaleX: number;
  scaleY: number;
  /** Rows top to bottom, ceil(width / 8) bytes each, most significant bit leftmost, 1 = black. */
  data: Uint8Array;
  align: Alignment;
}

export type PaperEvent = Positioned &
  (
    | { type: 'drawer'; pin: 2 | 5; onMs: number; offMs: number; realtime: boolean }
    | { type: 'buzzer'; command: string; count: number; onMs: number; offMs: number }
    | { type: 'cut'; cut: 'full' | 'partial'; command: string; feedDots?: number }
    | { type: 'feed'; command: string; lines?: number; dots?: number }
  );

export type PaperEventInput = PaperEvent extends infer E
  ? E extends PaperEvent
    ? Omit<E, 'atLine' | 'seq'>
    : never
  : never;

export interface DecodeWarning {
  /** Stream offset of the first byte concerned. */
  offset: number;
  /** The bytes concerned, as hex (`1B 99`). */
  bytes: string;
  message: string;
}

export interface Ticket {
  /** 0-based count of tickets on this paper. */
  index: number;
  lines: PaperLine[];
  codes: PaperCode[];
  images: PaperImage[];
  events: PaperEvent[];
  warnings: DecodeWarning[];
  /** The user-defined characters printed on the ticket, each as defined when first printed. */
  userDefined: PaperUserDefined[];
  /** True once a cut ended the ticket. */
  cut: boolean;
  /**
   * The ticket's bytes in the received stream: from the end of the previous cut command to the
   * end of its own (null while open), so an endpoint can save each ticket's raw bytes.
   */
  byteStart: number;
  byteEnd: number | null;
}

/** The settings a line takes when it opens; the decoder only changes them at a line start. */
export interface LineSettings {
  align: Alignment;
  /** Left margin in dots (`GS L`). */
  leftMargin: number;
  /** Print area width in dots from the margin (`GS W`). */
  areaWidth: number;
}

export interface Glyph {
  char: string;
  /** Width in dots including character spacing. */
  width: number;
  style: TextStyle;
  /** The glyph of a user-defined character (`char` is then its private-use stand-in). */
  userDefined?: PaperUserDefined;
}

interface PlacedGlyph extends Glyph {
  x: number;
}

interface Band {
  x: number;
  image: Omit<PaperImage, 'atLine' | 'seq' | 'align'>;
}

interface OpenLine {
  settings: LineSettings;
  glyphs: PlacedGlyph[];
  bands: Band[];
}

export class VirtualPaper {
  readonly geometry: PaperGeometry;
  /** Tickets ended by a cut, oldest first. */
  readonly tickets: Ticket[] = [];
  /** The ticket being printed; data before any cut stays here and can be read at any time. */
  current: Ticket;
  /** Settings for the next line to open. */
  settings: LineSettings;
  /** Dots of paper fed so far (lines, images, feeds): the hook for a slow-print endpoint. */
  printedDots = 0;
  /** Line spacing in dots (`ESC 2` / `ESC 3`), fed by a line that wraps. */
  lineSpacing = 30;

  private line: OpenLine | undefined;
  private x = 0;
  private seq = 0;
  private lastBandImage: PaperImage | undefined;

  /** Reports a problem found while laying out; the decoder adds the offending bytes. */
  private readonly onWarning: (message: string) => void;

  constructor(geometry: PaperGeometry, onWarning?: (message: string) => void) {
    this.geometry = geometry;
    this.onWarning = onWarning ?? ((message) => this.warn({ offset: -1, bytes: '', message }));
    this.current = emptyTicket(0);
    this.settings = { align: 'left', leftMargin: 0, areaWidth: geometry.dotsPerLine };
  }

  /** True when the print buffer is empty: nothing placed on the line yet. */
  get atLineStart(): boolean {
    return !this.line || (this.line.glyphs.length === 0 && this.line.bands.length === 0);
  }

  /** Print position in dots from the line origin (the left margin). */
  get position(): number {
    return this.x;
  }

  private get area(): number {
    return (this.line?.settings ?? this.settings).areaWidth;
  }

  /** `ESC $`: absolute position from the margin; ignored beyond the print area (Epson). */
  setPosition(dots: number): boolean {
    if (dots > this.area) return false;
    this.x = dots;
    return true;
  }

  /** `ESC \`: relative move; ignored when it would leave the print area. */
  moveBy(dots: number): boolean {
    const target = this.x + dots;
    if (target < 0) return false;
    return this.setPosition(target);
  }

  /**
   * `HT`: to the next tab stop. No stop to the right: ignored. A stop past the print area puts
   * the position at the end of the area, so the next character wraps (ESC/POS reference, "HT").
   */
  tab(stops: readonly number[]): void {
    const next = stops.find((s) => s > this.x);
    if (next === undefined) return;
    this.x = Math.min(next, this.area);
  }

  /** Places one character at the print position, wrapping first if it does not fit. */
  put(glyph: Glyph): void {
    const line = this.openLine();
    if (this.x + glyph.width > line.settings.areaWidth) {
      if (line.glyphs.length > 0 || line.bands.length > 0) {
        this.finishLine(true);
        this.openLine();
      } else {
        this.x = 0;
      }
    }
    this.line!.glyphs.push({ ...glyph, x: this.x });
    this.x += glyph.width;
    if (glyph.userDefined) this.noteUserDefined(glyph.userDefined);
  }

  /** Keeps a printed user-defined glyph with the ticket, once per character. */
  private noteUserDefined(udc: PaperUserDefined): void {
    const known = this.current.userDefined.find((u) => u.char === udc.char);
    if (!known) {
      this.current.userDefined.push(udc);
    } else if (
      known !== udc &&
      (known.width !== udc.width ||
        known.height !== udc.height ||
        !known.data.every((b, i) => b === udc.data[i]))
    ) {
      this.onWarning(
        `user-defined character ${udc.code} of font ${udc.font} redefined and printed again on ` +
          'this ticket: the ticket keeps its first glyph',
      );
    }
  }

  /** `ESC *`: a bit-image band placed in the line like a (wide) character. */
  putBand(image: Band['image']): void {
    const line = this.openLine();
    const width = image.width * image.scaleX;
    line.bands.push({ x: this.x, image });
    this.x = Math.min(this.x + width, line.settings.areaWidth);
  }

  /** `LF`: prints the buffer and feeds one line; on an empty buffer, a blank line. */
  lineFeed(feedDots: number): void {
    this.finishLine(false);
    this.printedDots += feedDots;
  }

  /** Prints the buffer if it holds anything (`ESC J`, `ESC d`, cuts); true if it did. */
  flushLine(): boolean {
    if (this.atLineStart) {
      this.line = undefined;
      this.x = 0;
      return false;
    }
    this.finishLine(false);
    return true;
  }

  /** Blank lines fed by `ESC d` / `ESC J`. */
  blankLines(n: number, feedDots: number): void {
    for (let i = 0; i < n; i++) this.finishLine(false);
    this.printedDots += feedDots;
  }

  /** Drops the unprinted line (`ESC @`, buffer clear); returns how many characters were lost. */
  clearLine(): number {
    const lost = this.line ? this.line.glyphs.length + this.line.bands.length : 0;
    this.line = undefined;
    this.x = 0;
    return lost;
  }

  /** The line in the print buffer, as it would print now (not yet on the paper). */
  pendingLine(): PaperLine | undefined {
    return this.line && !this.atLineStart ? this.layout(this.line, false) : undefined;
  }

  addCode(code: Omit<PaperCode, 'atLine' | 'seq' | 'align'>, heightDots: number): PaperCode {
    const item = { ...code, align: this.settings.align, ...this.place() };
    this.current.codes.push(item);
    this.printedDots += heightDots;
    return item;
  }

  addImage(image: Omit<PaperImage, 'atLine' | 'seq' | 'align'>): PaperImage {
    const item = { ...image, align: this.settings.align, ...this.place() };
    this.current.images.push(item);
    this.printedDots += image.height * image.scaleY;
    return item;
  }

  addEvent(event: PaperEventInput): PaperEvent {
    const item = { ...event, ...this.place() } as PaperEvent;
    this.current.events.push(item);
    return item;
  }

  warn(warning: DecodeWarning): void {
    this.current.warnings.push(warning);
  }

  /** Ends the current ticket with a cut event and opens the next; returns the finished ticket. */
  cut(
    event: Omit<Extract<PaperEvent, { type: 'cut' }>, 'atLine' | 'seq'>,
    byteEnd: number,
  ): Ticket {
    this.flushLine();
    this.addEvent(event);
    const done = this.current;
    done.cut = true;
    done.byteEnd = byteEnd;
    this.tickets.push(done);
    this.current = emptyTicket(done.index + 1, byteEnd);
    this.lastBandImage = undefined;
    return done;
  }

  private place(): Positioned {
    this.lastBandImage = undefined;
    return { atLine: this.current.lines.length, seq: this.seq++ };
  }

  private openLine(): OpenLine {
    this.line ??= { settings: { ...this.settings }, glyphs: [], bands: [] };
    return this.line;
  }

  private finishLine(wrapped: boolean): void {
    const line = this.line ?? { settings: { ...this.settings }, glyphs: [], bands: [] };
    this.line = undefined;
    this.x = 0;
    if (wrapped) this.printedDots += this.lineSpacing;
    if (line.bands.length > 0) {
      if (line.glyphs.length > 0) {
        this.pushLine(this.layout(line, wrapped));
        this.onWarning(
          'ESC * bit image shares a line with text; the image is listed after the text',
        );
      }
      this.pushBands(line);
      return;
    }
    this.pushLine(this.layout(line, wrapped));
  }

  private pushLine(line: PaperLine): void {
    this.current.lines.push(line);
    this.lastBandImage = undefined;
  }

  /**
   * ESC * prints a logo as bands of 8 or 24 dots, one line each; consecutive bands of the same
   * width and density are stacked into one image, the way they come out on paper.
   */
  private pushBands(line: OpenLine): void {
    const first = line.bands[0]!.image;
    const width = Math.max(...line.bands.map((b) => Math.ceil(b.x / first.scaleX) + b.image.width));
    const height = Math.max(...line.bands.map((b) => b.image.height));
    const stride = Math.ceil(width / 8);
    const data = new Uint8Array(stride * height);
    for (const band of line.bands) {
      const x0 = Math.ceil(band.x / first.scaleX);
      blit(data, stride, band.image.data, band.image.width, band.image.height, x0);
    }
    const prev = this.lastBandImage;
    if (
      prev &&
      prev.width === width &&
      prev.scaleX === first.scaleX &&
      prev.scaleY === first.scaleY &&
      prev.atLine === this.current.lines.length
    ) {
      const merged = new Uint8Array(prev.data.length + data.length);
      merged.set(prev.data);
      merged.set(data, prev.data.length);
      prev.data = merged;
      prev.height += height;
      this.printedDots += height * first.scaleY;
      return;
    }
    const item = this.addImage({
      source: 'ESC *',
      width,
      height,
      scaleX: first.scaleX,
      scaleY: first.scaleY,
      data,
    });
    item.align = line.settings.align;
    this.lastBandImage = item;
  }

  /** Expresses a line in columns of its font (see PaperLine). */
  private layout(line: OpenLine, wrapped: boolean): PaperLine {
    const { settings, glyphs } = line;
    const font: FontName =
      glyphs.length > 0 && glyphs.every((g) => g.style.font === 'B') ? 'B' : 'A';
    const unit = font === 'B' ? this.geometry.fontB.width : this.geometry.fontA.width;
    const columns = Math.floor(settings.areaWidth / unit);
    const margin = Math.round(settings.leftMargin / unit);
    const cells = glyphs.map((g) => ({
      g,
      col: Math.round(g.x / unit),
      cols: Math.max(1, Math.round(g.width / unit)),
    }));
    const width = cells.reduce((w, c) => Math.max(w, c.col + c.cols), 0);
    const pad =
      settings.align === 'center'
        ? Math.floor((columns - width) / 2)
        : settings.align === 'right'
          ? columns - width
          : 0;
    const indent = margin + Math.max(0, pad);

    const runs: TextRun[] = [];
    let text = '';
    let cursor = 0;
    for (const { g, col, cols } of cells) {
      const last = runs[runs.length - 1];
      if (last && col === last.column - indent + last.columns && sameStyle(last, g.style)) {
        last.text += g.char;
        last.columns += cols;
      } else {
        runs.push({ ...g.style, text: g.char, column: indent + col, columns: cols });
      }
      if (col > cursor) text += ' '.repeat(col - cursor);
      text += g.char;
      cursor = Math.max(cursor, col + cols);
    }
    const height = glyphs.reduce((h, g) => Math.max(h, g.style.height), 1);
    const out: PaperLine = {
      text,
      align: settings.align,
      columns,
      font,
      width,
      indent,
      height,
      runs,
      wrapped,
    };
    const userDefined = cells
      .filter((c) => c.g.userDefined)
      .map((c) => ({ char: c.g.char, column: indent + c.col }));
    if (userDefined.length > 0) out.userDefined = userDefined;
    return out;
  }
}

function emptyTicket(index: number, byteStart = 0): Ticket {
  return {
    index,
    lines: [],
    codes: [],
    images: [],
    events: [],
    warnings: [],
    userDefined: [],
    cut: false,
    byteStart,
    byteEnd: null,
  };
}

function sameStyle(a: TextStyle, b: TextStyle): boolean {
  return (
    a.font === b.font &&
    a.bold === b.bold &&
    a.underline === b.underline &&
    a.width === b.width &&
    a.height === b.height &&
    a.reverse === b.reverse &&
    a.upsideDown === b.upsideDown &&
    a.rotated === b.rotated
  );
}

/** Copies a packed bitmap into a wider one at column `x0`. */
function blit(
  dst: Uint8Array,
  dstStride: number,
  src: Uint8Array,
  width: number,
  height: number,
  x0: number,
): void {
  const srcStride = Math.ceil(width / 8);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const bit = (src[y * srcStride + (x >> 3)]! >> (7 - (x & 7))) & 1;
      if (!bit) continue;
      const dx = x0 + x;
      const i = y * dstStride + (dx >> 3);
      dst[i] = dst[i]! | (0x80 >> (dx & 7));
    }
  }
}
