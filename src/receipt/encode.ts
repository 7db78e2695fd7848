/**
 * Encoding: layout commands to ESC/POS bytes. The layout has already decided every column, style
 * and character, so what is left is a handful of fixed commands, written here directly:
 *
 *   ESC @, FS ., ESC M 0            initialize, leave CJK mode, font A
 *   ESC & 3 c c 12 d1..d36           define `₱` once per job when it prints (user-defined.ts)
 *   ESC t n                          the profile's code page, before code-page text
 *   ESC % 1 c ESC % 0                a run of `₱`, as the user-defined character on code c
 *   ESC E n, ESC - n, GS B n, GS ! n bold, underline, inverse, character size (style changes)
 *   FS & ... FS .                    CJK runs as GB18030 bytes (escpos-notes "CJK")
 *   ESC a n, GS ( k                  a centred QR code (model 2, module size 6, level M)
 *   ESC a n, GS v 0                  the store's logo, one raster band per image command
 *   ESC d n, GS V m 0                feed, then feed to the cutter and cut
 *   ESC B n t | ESC ( A fn 48        the profile's buzzer (kitchen tickets only, before the cut)
 *
 * The bytes are exactly those ReceiptPrinterEncoder produced for the same layout before
 * (test/receipt/encode.test.ts compares the two over every golden receipt and random layouts):
 * the library spent over half of a receipt's render time cloning code-page tables and composing
 * lines we had already composed (issue 16, decision 155); that comparison runs without user-defined
 * characters, which the library never wrote. Text is never a command: every character has been
 * mapped to a code-page byte >= 0x20, a user-defined code (0x20-0x7E) or a GB18030 pair.
 */
import { type Charset, encodeGb18030 } from './charset.js';
import { type Layout, type LayoutCommand, PLAIN, type Style } from './layout.js';
import { type PrinterProfile, profileColumns } from './profile.js';
import type { BitImage, LineRasterizer, RasterPiece } from './raster-text.js';
import { CANCEL_USER_DEFINED, defineBytes, SELECT_USER_DEFINED } from './user-defined.js';
import { displayWidth } from './width.js';

const ESC = 0x1b;
const GS = 0x1d;
const FS = 0x1c;
const FS_AND = [FS, 0x26]; // FS &: enter Chinese double-byte mode
const FS_DOT = [FS, 0x2e]; // FS .: leave it
const CUT = { partial: [GS, 0x56, 0x42, 0x00], full: [GS, 0x56, 0x41, 0x00] } as const; // GS V m n: feed to the cutter, then cut
const QR_SIZE = 6;
const QR_LEVEL_M = 0x31;

/**
 * The buzzer as the profile says: `ESC B n t` (Chinese clones: n beeps of t x 50 ms), or Epson's
 * `ESC ( A pL pH fn n c t` with fn 48, sound pattern 0x33, c beeps, t x 100 ms. The emulator
 * decodes both (src/emulator/core/commands/paper-movement.ts).
 */
export function buzzerBytes(buzzer: NonNullable<PrinterProfile['buzzer']>): number[] {
  if (buzzer.command === 'ESC B')
    return [ESC, 0x42, buzzer.count, Math.max(1, Math.round(buzzer.durationMs / 50))];
  return [
    ESC,
    0x28,
    0x41,
    4,
    0,
    0x30,
    0x33,
    buzzer.count,
    Math.max(1, Math.round(buzzer.durationMs / 100)),
  ];
}

/** A growing byte buffer: one allocation per doubling, not per command. */
class Bytes {
  private buf = new Uint8Array(4096);
  private length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  push(...bytes: number[]): void {
    this.reserve(bytes.length);
    for (const b of bytes) this.buf[this.length++] = b;
  }

  /** Printable ASCII text, each character its own byte (`Charset.plain`). */
  ascii(text: string): void {
    this.reserve(text.length);
    for (let i = 0; i < text.length; i++) this.buf[this.length++] = text.charCodeAt(i);
  }

  append(bytes: Uint8Array | readonly number[]): void {
    this.reserve(bytes.length);
    this.buf.set(bytes, this.length);
    this.length += bytes.length;
  }

  result(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

/** Style changes in the order ReceiptPrinterEncoder wrote them. */
function applyStyle(out: Bytes, from: Style, to: Style): void {
  if (from.bold !== to.bold) out.push(ESC, 0x45, to.bold ? 1 : 0);
  if (from.underline !== to.underline) out.push(ESC, 0x2d, to.underline ? 1 : 0);
  if (from.invert !== to.invert) out.push(GS, 0x42, to.invert ? 1 : 0);
  if (from.width !== to.width || from.height !== to.height)
    out.push(GS, 0x21, ((to.width - 1) << 4) | (to.height - 1));
}

/** QR data as ISO 8859-1, `?` for anything beyond it (what printers' QR commands take). */
function latin1(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    bytes[i] = unit <= 0xff ? unit : 0x3f;
  }
  return bytes;
}

function qrCode(out: Bytes, data: string): void {
  const bytes = latin1(data);
  const length = bytes.length + 3;
  out.push(ESC, 0x61, 1); // centred
  out.push(GS, 0x28, 0x6b, 4, 0, 0x31, 0x41, 0x32, 0); // model 2
  out.push(GS, 0x28, 0x6b, 3, 0, 0x31, 0x43, QR_SIZE); // module size
  out.push(GS, 0x28, 0x6b, 3, 0, 0x31, 0x45, QR_LEVEL_M); // error correction level M
  out.push(GS, 0x28, 0x6b, length & 0xff, (length >> 8) & 0xff, 0x31, 0x50, 0x30); // store
  out.append(bytes);
  out.push(GS, 0x28, 0x6b, 3, 0, 0x31, 0x51, 0x30); // print
  out.push(0x0a);
  out.push(ESC, 0x61, 0); // left again
}

const JUSTIFY = { left: 0, center: 1, right: 2 } as const;

/**
 * `GS v 0 m xL xH yL yH d1..dk` (m 0: normal density): x bytes per row, y rows, MSB leftmost,
 * 1 = black. Placed with `ESC a` like the QR code (the image is not text: the text twin shows it
 * as one line whatever its position), and left justification is restored right after, so no
 * line after it depends on it.
 */
function rasterImage(out: Bytes, image: Extract<LayoutCommand, { kind: 'image' }>): void {
  const x = image.width / 8;
  if (image.align !== 'left') out.push(ESC, 0x61, JUSTIFY[image.align]);
  out.push(GS, 0x76, 0x30, 0, x & 0xff, (x >> 8) & 0xff, image.height & 0xff, image.height >> 8);
  out.append(image.data);
  if (image.align !== 'left') out.push(ESC, 0x61, 0);
}

/** Whether any line of the layout prints `ch`. */
function prints(layout: Layout, ch: string): boolean {
  return layout.commands.some(
    (c) => c.kind === 'line' && c.segments.some((s) => s.text.includes(ch)),
  );
}

/** How a character is sent: from the code page, through the CJK font, or as a user-defined one. */
type RunKind = 'codepage' | 'cjk' | 'udc';

/**
 * A line as pieces for the rasterizer: each segment split at its runs of two or more spaces (the
 * gaps the layout pads with), each piece over the columns the layout gave it.
 */
function rasterPieces(segments: Layout['commands'][number] & { kind: 'line' }): RasterPiece[] {
  const pieces: RasterPiece[] = [];
  let column = 0;
  for (const segment of segments.segments) {
    const { style } = segment;
    for (const part of segment.text.split(/( {2,})/)) {
      const columns = displayWidth(part) * style.width;
      if (part.trim() !== '' || style.invert || style.underline)
        pieces.push({
          text: part,
          column,
          columns,
          bold: style.bold,
          invert: style.invert,
          underline: style.underline,
          height: style.height,
        });
      column += columns;
    }
  }
  return pieces;
}

/** Raster images of layout lines, by line command (`rasterLines`). */
export type RasterImages = ReadonlyMap<LayoutCommand, BitImage>;

/** The lines holding a character the printer cannot print from its fonts (issue 18). */
function linesToDraw(layout: Layout, charset: Charset): Array<LayoutCommand & { kind: 'line' }> {
  return layout.commands.filter(
    (c): c is LayoutCommand & { kind: 'line' } =>
      c.kind === 'line' &&
      c.segments.some((s) => !charset.plain(s.text) && [...s.text].some((ch) => charset.drawn(ch))),
  );
}

/** The lines to draw, drawn in one render (previews, the CLI: nothing else waits for them). */
function rasterLines(
  layout: Layout,
  profile: PrinterProfile,
  charset: Charset,
  rasterizer: LineRasterizer,
): RasterImages {
  const lines = linesToDraw(layout, charset);
  if (lines.length === 0) return new Map();
  const images = rasterizer.rasterize(lines.map(rasterPieces), {
    dotsPerLine: profile.dotsPerLine,
    columns: profileColumns(profile),
  });
  return new Map(lines.map((line, i) => [line, images[i]!]));
}

/**
 * The lines to draw, one render per line and a turn of the event loop between them: a receipt of
 * fifty CJK lines takes resvg seconds on a Pi, which must not hold the broker link (keepalive,
 * acknowledgements) or the other printers' loops meanwhile. What the agent prints with.
 */
export async function rasterLinesInTurns(
  layout: Layout,
  profile: PrinterProfile,
  charset: Charset,
  rasterizer: LineRasterizer,
): Promise<RasterImages> {
  const images = new Map<LayoutCommand, BitImage>();
  const geometry = { dotsPerLine: profile.dotsPerLine, columns: profileColumns(profile) };
  for (const line of linesToDraw(layout, charset)) {
    await new Promise((resolve) => setImmediate(resolve));
    images.set(line, rasterizer.rasterize([rasterPieces(line)], geometry)[0]!);
  }
  return images;
}

/**
 * ESC/POS bytes of a layout. `raster`: the images of its lines to draw (`rasterLinesInTurns`), or
 * a rasterizer that draws them now; null: none is drawn (the charset then kept none to draw).
 */
export function encodeLayout(
  layout: Layout,
  profile: PrinterProfile,
  charset: Charset,
  raster: LineRasterizer | RasterImages | null = null,
): Uint8Array {
  const drawn =
    raster === null
      ? new Map()
      : raster instanceof Map
        ? raster
        : rasterLines(layout, profile, charset, raster as LineRasterizer);
  const out = new Bytes();
  out.push(ESC, 0x40, ...FS_DOT, ESC, 0x4d, 0);
  // User-defined characters right after ESC @, which clears them: each job (so every copy and
  // every reprint) carries the definitions it prints with, in font A, selected just above.
  for (const udc of charset.userDefined.values()) {
    if (prints(layout, udc.char)) out.append(defineBytes(udc));
  }
  // `ESC t n` goes before the first code-page text, and again before the first after raw bytes
  // (a CJK run, a feed, a cut): what ReceiptPrinterEncoder did, and it costs three bytes where
  // a clone might have left its code page after `FS .`.
  const selectCodepage = [ESC, 0x74, profile.codepageNumbers[profile.codepage]!];
  let codepageSelected = false;
  for (const command of layout.commands) {
    switch (command.kind) {
      case 'line': {
        const image = drawn.get(command);
        if (image) {
          // The picture of the whole line, as wide as the print area: it feeds its own height.
          rasterImage(out, { kind: 'image', align: 'left', ...image });
          break;
        }
        let style = PLAIN;
        for (const segment of command.segments) {
          if (segment.text === '') continue;
          applyStyle(out, style, segment.style);
          style = segment.style;
          // Runs printed from the code page, through the CJK font, or as user-defined characters.
          let run = '';
          let kind: RunKind = 'codepage';
          const flush = () => {
            if (run === '') return;
            if (kind === 'cjk') {
              out.append([...FS_AND, ...encodeGb18030(run), ...FS_DOT]);
              codepageSelected = false;
            } else if (kind === 'udc') {
              // Selected only for the run: every other byte prints from the resident font, and
              // the codes are ASCII, the same in every code page, so `ESC t` does not matter.
              out.append(SELECT_USER_DEFINED);
              for (const ch of run) out.push(charset.userDefined.get(ch)!.code);
              out.append(CANCEL_USER_DEFINED);
            } else {
              if (!codepageSelected) out.append(selectCodepage);
              codepageSelected = true;
              if (charset.plain(run)) out.ascii(run);
              else out.append(charset.encode(run));
            }
            run = '';
          };
          // Plain text is one code-page run: no look at each character.
          if (charset.plain(segment.text)) {
            kind = 'codepage';
            run = segment.text;
          } else
            for (const ch of segment.text) {
              const next: RunKind = charset.userDefined.has(ch)
                ? 'udc'
                : charset.isCjk(ch) && !charset.inCodepage(ch)
                  ? 'cjk'
                  : 'codepage';
              if (next !== kind) flush();
              kind = next;
              run += ch;
            }
          flush();
        }
        // Each line ends in plain style, so any line can be read (or reprinted) on its own.
        applyStyle(out, style, PLAIN);
        out.push(0x0a);
        break;
      }
      case 'qr':
        qrCode(out, command.data);
        break;
      case 'image':
        rasterImage(out, command);
        break;
      case 'feed':
        out.push(ESC, 0x64, command.lines); // ESC d n
        codepageSelected = false;
        break;
      case 'cut':
        out.append(CUT[command.type]);
        codepageSelected = false;
        break;
      case 'buzzer':
        // A layout asks for it only when its profile has a buzzer; any other printer stays quiet.
        if (profile.buzzer) out.append(buzzerBytes(profile.buzzer));
        break;
    }
  }
  return out.result();
}
