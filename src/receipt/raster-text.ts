/**
 * Text lines no code page can carry (CJK on a printer without a CJK font, Thai, Arabic...), drawn
 * as 1-bit images for the printer's raster command (issue 18). Each piece of text is drawn where
 * the layout put it, over exactly the columns it reserved, so a raster line has the columns, size
 * and weight its text line would have: a row's amount stays right-aligned under the others.
 *
 * The drawing is resvg's (`@resvg/resvg-js`, already the preview's renderer): it shapes with
 * rustybuzz (Arabic joining, Thai marks), orders right-to-left runs, and falls back from font to
 * font per character. Fonts come from the system (Debian packages; decision 179): DejaVu Sans
 * for Latin, Greek, Cyrillic, Arabic and Hebrew, then Noto Sans CJK when installed, then GNU
 * Unifont, which covers every character of the Basic Multilingual Plane in 5 MB. Without any of
 * them there is no rasterizer and the layout falls back to `?` with a warning, as before.
 *
 * resvg draws a character none of the fonts has as an empty box, silently: the charset asks
 * `covers` first (the fonts' cmaps, font-coverage.ts), so such a character prints as `?` with the
 * job's warning, and the rasterizer announces it once (`missing`) for the journal and the status
 * (issue 42 item 13).
 *
 * All raster lines of one receipt are drawn in one render: resvg parses its fonts per render, and
 * on a Pi that costs more than the drawing.
 */
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Resvg as ResvgClass } from '@resvg/resvg-js';
import { FontCoverage } from './font-coverage.js';

let Resvg: typeof ResvgClass | undefined;

/** A 1-bit image: rows top to bottom, ceil(width / 8) bytes each, MSB leftmost, 1 = black. */
export interface BitImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/** One piece of a line: its text, the first column and the columns the layout reserved for it. */
export interface RasterPiece {
  text: string;
  column: number;
  columns: number;
  bold: boolean;
  invert: boolean;
  underline: boolean;
  /** Height multiplier: 2 draws a double-height line. */
  height: 1 | 2;
}

export interface RasterGeometry {
  /** Dots across the print area (the profile's `dotsPerLine`). */
  dotsPerLine: number;
  /** Columns of the body font across that width. */
  columns: number;
}

/** A font family and the files that may hold it. */
export interface FontCandidate {
  family: string;
  files: readonly string[];
}

/** The system fonts tried, in fallback order; the first family found is the default. */
export const SYSTEM_FONTS: readonly FontCandidate[] = [
  {
    family: 'DejaVu Sans',
    files: [
      '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf',
      '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf',
    ],
  },
  { family: 'Noto Sans CJK SC', files: ['/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc'] },
  { family: 'Unifont', files: ['/usr/share/fonts/opentype/unifont/unifont.otf'] },
];

/** The packages that bring fonts for what DejaVu lacks, for messages. */
export const FONT_PACKAGES = 'fonts-unifont (every character of the BMP) or fonts-noto-cjk';

/**
 * Characters drawn as nothing whatever the font (joiners, variation selectors, the BOM): fonts
 * often leave them out of the cmap, and shaping uses them without a glyph.
 */
const IGNORABLE = /^\p{Default_Ignorable_Code_Point}$/u;

/**
 * The warning for a character no raster font has (`missing`): the journal's line and the status's
 * FONT_MISSING, once per agent run.
 */
export function fontMissing(ch: string): { code: 'FONT_MISSING'; message: string } {
  const cp = `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  return {
    code: 'FONT_MISSING',
    message: `no installed font has ${cp} (${ch}): characters the fonts lack print as '?' (install ${FONT_PACKAGES})`,
  };
}

/** Characters remembered as missing, for the `missing` event: a bound on a hostile stream. */
const MISSING_KEPT = 256;

/** Dots of a body-font line: font A is 12 x 24 on every profile we ship. */
const LINE_DOTS = 24;

/**
 * Lines kept drawn, the least recently used dropped first: a menu's dish names come back on
 * receipt after receipt, and each costs resvg about 4 ms here (issue 16), far more on a Pi. 256
 * lines of 80 mm paper are about 440 KB.
 */
const CACHED_LINES = 256;

export interface LineRasterizerEvents {
  /**
   * A character none of the fonts has was asked for (it prints as `?`): once per character, the
   * first few hundred.
   */
  missing: [ch: string];
}

export class LineRasterizer extends EventEmitter<LineRasterizerEvents> {
  /** Drawn lines by their pieces and geometry (`lineKey`), in least recently used order. */
  private readonly cache = new Map<string, BitImage>();
  private drawn = 0;
  /** The fonts' characters, read at the first question (most receipts never ask). */
  private coverage: FontCoverage | null = null;
  private readonly missing = new Set<string>();

  private constructor(
    private readonly families: readonly string[],
    private readonly files: readonly string[],
    private readonly cachedLines: number,
  ) {
    super();
  }

  /**
   * The rasterizer over the fonts this system has, or null when it has none of them.
   * `cachedLines`: how many drawn lines to keep (tests make it small).
   */
  static fromSystem(
    candidates: readonly FontCandidate[] = SYSTEM_FONTS,
    options: { cachedLines?: number } = {},
  ): LineRasterizer | null {
    const found = candidates
      .map((c) => ({ family: c.family, files: c.files.filter((f) => existsSync(f)) }))
      .filter((c) => c.files.length > 0);
    if (found.length === 0) return null;
    return new LineRasterizer(
      found.map((c) => c.family),
      found.flatMap((c) => c.files),
      options.cachedLines ?? CACHED_LINES,
    );
  }

  /** Lines drawn by resvg so far (not those served from the cache). */
  get linesDrawn(): number {
    return this.drawn;
  }

  /** The font families in use, for `doctor` and the test page. */
  get fonts(): readonly string[] {
    return this.families;
  }

  /**
   * Whether one of the fonts has `ch` (a whole character, not a UTF-16 unit), so that drawing it
   * prints it rather than an empty box. A font file that cannot be read covers nothing.
   */
  covers(ch: string): boolean {
    const cp = ch.codePointAt(0);
    if (cp === undefined || IGNORABLE.test(ch)) return true;
    this.coverage ??= FontCoverage.union(
      this.files.map((file) => {
        try {
          return FontCoverage.read(file);
        } catch {
          return FontCoverage.EMPTY;
        }
      }),
    );
    if (this.coverage.has(cp)) return true;
    if (this.missing.size < MISSING_KEPT && !this.missing.has(ch)) {
      this.missing.add(ch);
      this.emit('missing', ch);
    }
    return false;
  }

  /**
   * Each line (its pieces) as an image as wide as the print area, 24 dots per line of height.
   * A line drawn before comes from the cache; the images are shared, never to be written to.
   */
  rasterize(lines: ReadonlyArray<readonly RasterPiece[]>, geometry: RasterGeometry): BitImage[] {
    const keys = lines.map((pieces) => lineKey(pieces, geometry));
    const missing = new Map<string, readonly RasterPiece[]>();
    for (const [i, key] of keys.entries()) {
      if (!this.cache.has(key) && !missing.has(key)) missing.set(key, lines[i]!);
    }
    if (missing.size > 0) {
      const drawn = this.draw([...missing.values()], geometry);
      this.drawn += drawn.length;
      for (const [i, key] of [...missing.keys()].entries()) this.cache.set(key, drawn[i]!);
    }
    const images = keys.map((key) => {
      const image = this.cache.get(key)!;
      // Most recently used last: re-inserted.
      this.cache.delete(key);
      this.cache.set(key, image);
      return image;
    });
    while (this.cache.size > this.cachedLines) {
      this.cache.delete(this.cache.keys().next().value as string);
    }
    return images;
  }

  /** The lines drawn by resvg in one render, each in its own viewport. */
  private draw(lines: ReadonlyArray<readonly RasterPiece[]>, geometry: RasterGeometry): BitImage[] {
    if (lines.length === 0) return [];
    const width = geometry.dotsPerLine;
    const cell = width / geometry.columns;
    const heights = lines.map((pieces) => LINE_DOTS * Math.max(1, ...pieces.map((p) => p.height)));
    const tops: number[] = [];
    let total = 0;
    for (const h of heights) {
      tops.push(total);
      total += h;
    }
    const family = this.families.map((f) => `'${f}'`).join(', ');
    // Each line in its own viewport, which clips it: a mark above or below a line never inks its
    // neighbour, so a line draws the same alone as among others.
    const body = lines
      .map(
        (pieces, i) =>
          `<svg x="0" y="${tops[i]}" width="${width}" height="${heights[i]}">` +
          `${pieces.map((p) => this.piece(p, heights[i]!, cell)).join('')}</svg>`,
      )
      .join('');
    const svg =
      `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${total}" ` +
      `font-family="${family}"><rect width="${width}" height="${total}" fill="#fff"/>${body}</svg>`;
    // Required on the first raster line, not imported: the native renderer costs every agent
    // start time and memory (issue 16), and most receipts never need it.
    Resvg ??= (createRequire(import.meta.url)('@resvg/resvg-js') as { Resvg: typeof ResvgClass })
      .Resvg;
    const rendered = new Resvg(svg, {
      font: {
        loadSystemFonts: false,
        fontFiles: [...this.files],
        defaultFontFamily: this.families[0]!,
      },
      // Thermal dots are on or off: no anti-aliased edges to threshold into ragged strokes.
      textRendering: 0,
      shapeRendering: 0,
    }).render();
    const pixels = rendered.pixels;
    return heights.map((h, i) => {
      const image = threshold(pixels, width, tops[i]!, h);
      for (const p of lines[i]!) if (p.bold) embolden(image, p, cell);
      return image;
    });
  }

  /** One piece as SVG, in its line's viewport: its text over exactly its columns. */
  private piece(p: RasterPiece, lineHeight: number, cell: number): string {
    const x = p.column * cell;
    const w = p.columns * cell;
    const size = LINE_DOTS * p.height;
    // Baseline at 80 % of the line, the bottom of the line for a double-height piece.
    const baseline = lineHeight - Math.round(size * 0.2);
    const fill = p.invert ? '#fff' : '#000';
    const parts: string[] = [];
    if (p.invert)
      parts.push(`<rect x="${x}" y="0" width="${w}" height="${lineHeight}" fill="#000"/>`);
    const text = escapeXml(p.text);
    if (text.trim() !== '')
      parts.push(
        `<text x="${x}" y="${baseline}" font-size="${size}" textLength="${w}" ` +
          `lengthAdjust="spacingAndGlyphs" xml:space="preserve" fill="${fill}"` +
          `${p.bold ? ' font-weight="bold"' : ''}>${text}</text>`,
      );
    if (p.underline)
      parts.push(`<rect x="${x}" y="${lineHeight - 2}" width="${w}" height="2" fill="${fill}"/>`);
    return parts.join('');
  }
}

/** Rows `top` to `top + height` of an RGBA picture as 1-bit rows (dark half of grey = black). */
function threshold(rgba: Uint8Array, width: number, top: number, height: number): BitImage {
  const stride = Math.ceil(width / 8);
  const data = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const row = (top + y) * width * 4;
    for (let x = 0; x < width; x++) {
      const i = row + x * 4;
      const luminance = (rgba[i]! * 299 + rgba[i + 1]! * 587 + rgba[i + 2]! * 114) / 1000;
      if (luminance < 128) data[y * stride + (x >> 3)]! |= 0x80 >> (x & 7);
    }
  }
  return { width, height, data };
}

/**
 * Bold as the printer makes it (`ESC E`: each dot printed again one dot to its right), over the
 * piece's columns only: the fallback fonts for CJK, Thai and the rest (Unifont, Noto Sans CJK
 * Regular) have no bold face, and resvg does not embolden, so without this a bold CJK name or
 * remark would print at regular weight. White-on-black pieces thicken their white strokes.
 */
function embolden(image: BitImage, p: RasterPiece, cell: number): void {
  const stride = Math.ceil(image.width / 8);
  const x0 = Math.max(0, Math.round(p.column * cell));
  const x1 = Math.min(image.width, Math.round((p.column + p.columns) * cell));
  const on = p.invert ? 0 : 1;
  for (let y = 0; y < image.height; y++) {
    const row = y * stride;
    const dot = (x: number) => (image.data[row + (x >> 3)]! >> (7 - (x & 7))) & 1;
    // Right to left, so each dot reads its left neighbour as drawn, not as already thickened.
    for (let x = x1 - 1; x > x0; x--) {
      if (dot(x - 1) !== on || dot(x) === on) continue;
      image.data[row + (x >> 3)]! ^= 0x80 >> (x & 7);
    }
  }
}

/** What makes a line's image: its pieces and the print area's geometry. */
function lineKey(pieces: readonly RasterPiece[], geometry: RasterGeometry): string {
  return JSON.stringify([
    geometry.dotsPerLine,
    geometry.columns,
    pieces.map((p) => [p.text, p.column, p.columns, p.bold, p.invert, p.underline, p.height]),
  ]);
}

function escapeXml(text: string): string {
  return text.replace(
    /[<>&"']/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!,
  );
}
