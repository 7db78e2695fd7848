/**
 * A picture of a ticket as the emulator's decoder read it from the exact ESC/POS bytes (issue 17
 * item 2): one renderer for `printer-agent render --format svg|png`, the status page and the demo.
 * What it draws comes only from the decoded paper, so a preview shows what a printer would print,
 * not what the layout meant to send.
 *
 * Geometry in printer dots, one SVG unit per dot: font A cells 12 x 24, font B from the paper's
 * geometry, a line 6 dots taller than its tallest cell (ESC/POS's default 30-dot line spacing for
 * font A), codes and images at their dot sizes. Text is drawn in a monospaced font stretched to
 * its exact columns (`textLength`), so columns line up as on paper whatever font the viewer has;
 * bold, underline, double width and height and white-on-black are drawn; upside-down and rotated
 * text are drawn upright. A user-defined character is drawn dot for dot from the glyph the job
 * downloaded (`ESC &`), scaled with its run. QR codes and barcodes are drawn as real symbols,
 * module by module, from the decoded content with bwip-js (pure JavaScript): a phone can scan the
 * preview. Raster images are drawn dot for dot. A cut is a dashed line.
 */
import bwipjs from 'bwip-js';
import type {
  PaperCode,
  PaperImage,
  PaperLine,
  PaperUserDefined,
  TextRun,
  Ticket,
} from '../core/paper.js';
import { type PaperGeometry, paperGeometry } from '../core/paper.js';
import { printOrder } from '../core/render.js';
import { VirtualPrinter } from '../core/virtual-printer.js';

/** Paper margin around the printable width, in dots. */
const MARGIN = 16;
const LINE_GAP = 6;
const FONT_FAMILY = "'DejaVu Sans Mono', 'Noto Sans Mono CJK SC', monospace";

export interface PreviewOptions {
  /** Font A columns of the paper (48 for 80 mm, 32 for 58 mm). Default 48. */
  columns?: number;
}

const escapeXml = (s: string) =>
  s.replace(
    // Control characters are not allowed in XML 1.0 text: replaced, like the decoder's unknown bytes.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: these are what is replaced
    /[<>&"'\u0000-\u0008\u000b\u000c\u000e-\u001f]/g,
    (c) =>
      ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] ?? '\uFFFD',
  );

/** bwip-js's names for the symbologies the decoder reports. */
const BWIP_IDS: Record<string, string> = {
  QR: 'qrcode',
  PDF417: 'pdf417',
  CODE128: 'code128',
  CODE39: 'code39',
  CODE93: 'code93',
  EAN13: 'ean13',
  EAN8: 'ean8',
  'UPC-A': 'upca',
  'UPC-E': 'upce',
  ITF: 'interleaved2of5',
  CODABAR: 'rationalizedCodabar',
};

interface Drawn {
  svg: string;
  height: number;
}

/** User-defined glyphs of a ticket by the character that stands for them. */
type Glyphs = ReadonlyMap<string, PaperUserDefined>;

/** A user-defined glyph in its cell, dot for dot, each dot `run.width` x `run.height`. */
function userDefinedSvg(udc: PaperUserDefined, run: TextRun, x0: number, y0: number): string {
  const stride = Math.ceil(udc.width / 8);
  const black = (r: number, c: number) => (udc.data[r * stride + (c >> 3)]! >> (7 - (c & 7))) & 1;
  // Emphasized printing strikes each dot twice, one dot apart.
  const extra = run.bold ? 1 : 0;
  let d = '';
  for (let r = 0; r < udc.height; r++)
    for (let c = 0; c < udc.width; ) {
      if (!black(r, c)) {
        c++;
        continue;
      }
      let end = c;
      while (end < udc.width && black(r, end)) end++;
      const w = (end - c) * run.width + extra;
      d += `M${x0 + c * run.width} ${y0 + r * run.height}h${w}v${run.height}h${-w}z`;
      c = end;
    }
  const fill = run.reverse ? '#fff' : '#000';
  return `<path class="user-defined" data-code="${udc.code}" d="${d}" fill="${fill}"/>`;
}

function lineSvg(line: PaperLine, top: number, g: PaperGeometry, glyphs: Glyphs): Drawn {
  const cell = line.font === 'B' ? g.fontB : g.fontA;
  const height = cell.height * line.height + LINE_GAP;
  const baseline = top + cell.height * line.height;
  let svg = '';
  for (const run of line.runs) {
    const runCell = run.font === 'B' ? g.fontB : g.fontA;
    const x = MARGIN + run.column * cell.width;
    const width = run.columns * cell.width;
    const size = runCell.height * run.height;
    if (run.reverse)
      svg += `<rect x="${x}" y="${baseline - size}" width="${width}" height="${size}" fill="#000"/>`;
    const weight = run.bold ? ' font-weight="bold"' : '';
    const fill = run.reverse ? '#fff' : '#000';
    // Descenders sit inside the cell: the baseline is a fifth of the cell above its bottom.
    // A user-defined character is a blank in the text and its glyph over it.
    const text = line.userDefined
      ? [...run.text].map((c) => (glyphs.has(c) ? ' ' : c)).join('')
      : run.text;
    svg += `<text x="${x}" y="${baseline - size * 0.2}" font-size="${Math.round(size * 83) / 100}" textLength="${width}" lengthAdjust="spacingAndGlyphs" xml:space="preserve"${weight} fill="${fill}">${escapeXml(text)}</text>`;
    for (const u of line.userDefined ?? []) {
      const udc = glyphs.get(u.char);
      if (!udc || u.column < run.column || u.column >= run.column + run.columns) continue;
      svg += userDefinedSvg(udc, run, MARGIN + u.column * cell.width, baseline - size);
    }
    if (run.underline > 0)
      svg += `<rect x="${x}" y="${baseline - run.underline}" width="${width}" height="${run.underline}" fill="${fill}"/>`;
  }
  return { svg, height };
}

function alignedX(width: number, align: PaperCode['align'], g: PaperGeometry): number {
  const free = Math.max(0, g.dotsPerLine - width);
  return MARGIN + (align === 'center' ? Math.floor(free / 2) : align === 'right' ? free : 0);
}

/** Dark modules as one path of unit squares, scaled to `module` dots. */
function matrixSvg(
  pixs: ArrayLike<number>,
  cols: number,
  rows: number,
  x: number,
  y: number,
  module: number,
): string {
  let d = '';
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; ) {
      if (!pixs[r * cols + c]) {
        c++;
        continue;
      }
      let end = c;
      while (end < cols && pixs[r * cols + end]) end++;
      d += `M${x + c * module} ${y + r * module}h${(end - c) * module}v${module}h${-(end - c) * module}z`;
      c = end;
    }
  }
  return `<path d="${d}" fill="#000"/>`;
}

function codeSvg(code: PaperCode, top: number, g: PaperGeometry): Drawn {
  const bcid = BWIP_IDS[code.symbology];
  const label = (text: string, y: number) =>
    `<text x="${MARGIN + g.dotsPerLine / 2}" y="${y}" font-size="20" text-anchor="middle">${escapeXml(text)}</text>`;
  if (!bcid) {
    const y = top + 24;
    return { svg: label(`[${code.symbology}: ${code.content}]`, y), height: 30 };
  }
  try {
    if (code.kind === '2d') {
      const level = String(code.options.level ?? 'L');
      const [symbol] = bwipjs.raw({
        bcid,
        text: code.content,
        ...(code.symbology === 'QR' ? { eclevel: level } : {}),
      }) as Array<{ pixs: number[]; pixx: number; pixy: number }>;
      const module = Number(code.options.size ?? 3) || 3;
      const width = symbol!.pixx * module;
      const height = symbol!.pixy * module;
      const x = alignedX(width, code.align, g);
      return {
        svg: `<g class="code" data-symbology="${code.symbology}" data-content="${escapeXml(code.content)}">${matrixSvg(symbol!.pixs, symbol!.pixx, symbol!.pixy, x, top, module)}</g>`,
        height: height + LINE_GAP,
      };
    }
    const [bars] = bwipjs.raw({ bcid, text: code.content }) as Array<{ sbs: number[] }>;
    const module = Number(code.options.moduleWidth ?? 3) || 3;
    const barHeight = Number(code.options.height ?? 162) || 162;
    const width = bars!.sbs.reduce((sum, w) => sum + w, 0) * module;
    let x = alignedX(width, code.align, g);
    let d = '';
    bars!.sbs.forEach((w, i) => {
      if (i % 2 === 0) d += `M${x} ${top}h${w * module}v${barHeight}h${-w * module}z`;
      x += w * module;
    });
    const hri = Number(code.options.hri ?? 0) !== 0;
    return {
      svg: `<g class="code" data-symbology="${code.symbology}" data-content="${escapeXml(code.content)}"><path d="${d}" fill="#000"/>${hri ? label(code.content, top + barHeight + 22) : ''}</g>`,
      height: barHeight + (hri ? 30 : 0) + LINE_GAP,
    };
  } catch {
    // Content the symbology cannot encode: the printer would print nothing readable either.
    return { svg: label(`[${code.symbology}: ${code.content}]`, top + 24), height: 30 };
  }
}

function imageSvg(image: PaperImage, top: number, g: PaperGeometry): Drawn {
  const width = image.width * image.scaleX;
  const x0 = alignedX(width, image.align, g);
  const bytesPerRow = Math.ceil(image.width / 8);
  const pixs = new Uint8Array(image.width * image.height);
  for (let r = 0; r < image.height; r++)
    for (let c = 0; c < image.width; c++)
      pixs[r * image.width + c] = (image.data[r * bytesPerRow + (c >> 3)]! >> (7 - (c & 7))) & 1;
  // Scaled by the wider of the two factors' cells: each data dot is scaleX x scaleY printer dots.
  let d = '';
  for (let r = 0; r < image.height; r++)
    for (let c = 0; c < image.width; ) {
      if (!pixs[r * image.width + c]) {
        c++;
        continue;
      }
      let end = c;
      while (end < image.width && pixs[r * image.width + end]) end++;
      d += `M${x0 + c * image.scaleX} ${top + r * image.scaleY}h${(end - c) * image.scaleX}v${image.scaleY}h${-(end - c) * image.scaleX}z`;
      c = end;
    }
  return {
    svg: `<g class="image"><path d="${d}" fill="#000"/></g>`,
    height: image.height * image.scaleY,
  };
}

/** One ticket's drawing from `top`, and the height it takes. */
function ticketBody(ticket: Ticket, g: PaperGeometry, top: number): Drawn {
  let y = top + MARGIN;
  let svg = '';
  const glyphs: Glyphs = new Map(ticket.userDefined.map((u) => [u.char, u]));
  for (const item of printOrder(ticket)) {
    const drawn =
      item.kind === 'line'
        ? lineSvg(item.line, y, g, glyphs)
        : item.kind === 'code'
          ? codeSvg(item.code, y, g)
          : imageSvg(item.image, y, g);
    svg += drawn.svg;
    y += drawn.height;
  }
  if (ticket.cut) {
    y += 12;
    svg += `<line class="cut" x1="0" y1="${y}" x2="${g.dotsPerLine + 2 * MARGIN}" y2="${y}" stroke="#888" stroke-width="2" stroke-dasharray="8 6"/>`;
  }
  return { svg, height: y - top };
}

/** Tickets one below the other as one SVG document, 1 unit per printer dot. */
export function ticketsSvg(tickets: readonly Ticket[], options: PreviewOptions = {}): string {
  const g = paperGeometry({ columns: options.columns ?? 48 });
  let height = 0;
  let body = '';
  for (const ticket of tickets) {
    const drawn = ticketBody(ticket, g, height);
    body += drawn.svg;
    height += drawn.height;
  }
  const width = g.dotsPerLine + 2 * MARGIN;
  height += MARGIN;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${FONT_FAMILY}">` +
    `<rect width="${width}" height="${height}" fill="#fff"/>${body}</svg>\n`
  );
}

/**
 * The preview of exact ESC/POS bytes: decoded by the emulator on paper of `columns`, every ticket
 * (the cut ones, then what is left uncut) drawn.
 */
export function bytesToSvg(bytes: Uint8Array, options: PreviewOptions = {}): string {
  const printer = new VirtualPrinter({ columns: options.columns ?? 48 });
  printer.write(bytes);
  return ticketsSvg(printer.tickets(), options);
}
