/**
 * The store's logo (issue 18): a PNG or SVG file turned, once when the agent starts, into the 1-bit
 * images the receipt layout prints first (`GS v 0`), one per print width among the configured
 * printers' profiles. Nothing here runs per receipt.
 *
 * - Size: `receipt.logo.widthMm` at the profile's dots per millimetre (its dots across its print
 *   width: 72 mm on 80 mm paper, 48 mm on 58 mm), or the whole print width; never wider than the
 *   printer prints, always whole bytes (a multiple of 8 dots), at most LOGO_MAX_HEIGHT_DOTS high
 *   (a taller logo is printed narrower).
 * - Decoding: PNG with pngjs (pure JavaScript, bounded inflate), SVG with resvg (already the
 *   preview's renderer, loaded only for an SVG logo), drawn straight at the printed size on white.
 *   A hostile file cannot exhaust a Pi: at most LOGO_MAX_FILE_BYTES on disk and LOGO_MAX_PIXELS
 *   decoded (a PNG's size is read from its header before anything is inflated), and an SVG may not
 *   link to nor embed images (resvg would read any path, /dev/zero included, and decode an
 *   embedded image of any size): a logo SVG is shapes only, a raster logo comes as PNG.
 * - Grey: luma (Rec. 601) with transparency on white paper; a PNG is scaled by area averaging.
 * - Black and white: ordered dithering with a 4 x 4 Bayer matrix, not error diffusion. A logo is
 *   mostly flat colour with sharp edges: each dot is decided from its own pixel, so solid areas
 *   and edges print exactly as a threshold would, with no error trails; flat tints get a regular
 *   fine pattern (0.5 mm at 203 dpi) whose darkening by thermal dot gain is even, where
 *   Floyd-Steinberg's irregular clusters turn blotchy. 50% grey prints exactly half the dots.
 *
 * Problems are LOGO_UNREADABLE errors naming `receipt.logo.file`, the path and why: `config check`
 * and `doctor` fail on them, the running agent prints without the logo and says so in its status.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { PNG } from 'pngjs';
import { AgentError, errorMessage, type FieldIssue } from '../errors.js';
import { RASTER_BAND_DOTS } from './layout.js';
import type { LogoAlign, LogoSettings, MonoImage, ReceiptLogo } from './options.js';
import type { PrinterProfile } from './profile.js';

/** The largest logo file read (a logo is a few KB; this bounds what a mistake can cost). */
export const LOGO_MAX_FILE_BYTES = 1024 * 1024;
/** The most pixels a logo may decode to: 16 MB of RGBA while it is converted, then freed. */
export const LOGO_MAX_PIXELS = 4_000_000;
/** The tallest logo printed: 480 dots (60 mm at 203 dpi, 20 text lines, two raster bands). */
export const LOGO_MAX_HEIGHT_DOTS = 480;
/** The config field every message names. */
export const LOGO_FIELD = 'receipt.logo.file';

/** Print width in millimetres of the paper widths profiles have (the head's dots span it). */
const PRINT_WIDTH_MM: Record<PrinterProfile['paperWidthMm'], number> = { 58: 48, 80: 72 };
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** 4 x 4 Bayer thresholds: a dot is black when grey < (m + 0.5) * 16. */
const BAYER_4 = [0, 8, 2, 10, 12, 4, 14, 6, 3, 11, 1, 9, 15, 7, 13, 5];

/** A logo file that cannot be printed: the path and why, as `config check` prints it. */
export function logoError(path: string, why: string, cause?: unknown): AgentError {
  const detail = `${path}: ${why}`;
  return new AgentError('LOGO_UNREADABLE', `${LOGO_FIELD}: ${detail}`, {
    issues: [{ path: LOGO_FIELD, message: detail }],
    details: { file: path },
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The logo's width in dots on this profile: whole bytes, at most the print width. */
export function logoWidthDots(profile: PrinterProfile, widthMm?: number): number {
  const dots =
    widthMm === undefined
      ? profile.dotsPerLine
      : Math.round((widthMm * profile.dotsPerLine) / PRINT_WIDTH_MM[profile.paperWidthMm]);
  return Math.max(8, Math.floor(Math.min(dots, profile.dotsPerLine) / 8) * 8);
}

/** A decoded logo, drawn at any size as grey levels (0 black to 255 white), row by row. */
export interface LogoPicture {
  kind: 'png' | 'svg';
  width: number;
  height: number;
  draw(width: number, height: number): Uint8Array;
}

/** Reads and decodes the file: every check of the module header, in that order. */
export async function readLogo(path: string): Promise<LogoPicture> {
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw logoError(path, 'not a file');
    size = st.size;
  } catch (error) {
    if (error instanceof AgentError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw logoError(path, code === 'ENOENT' ? 'missing (ENOENT)' : `cannot be read (${code})`);
  }
  if (size > LOGO_MAX_FILE_BYTES)
    throw logoError(
      path,
      `too large: ${size} bytes, more than the ${LOGO_MAX_FILE_BYTES} bytes (1 MB) a logo file may have`,
    );
  const bytes = readAll(path, size);
  if (PNG_SIGNATURE.every((b, i) => bytes[i] === b)) return decodePng(path, bytes);
  const head = bytes.subarray(0, 1024).toString('utf8');
  if (/^(\uFEFF)?\s*</.test(head) && /<svg[\s>]/.test(bytes.toString('utf8')))
    return parseSvg(path, bytes);
  throw logoError(path, 'not a PNG or SVG image');
}

function readAll(path: string, size: number): Buffer {
  const fd = (() => {
    try {
      return openSync(path, 'r');
    } catch (error) {
      throw logoError(path, `cannot be read (${(error as NodeJS.ErrnoException).code})`);
    }
  })();
  try {
    // Never more than the size checked: a file that grew since is cut, not read whole.
    const buffer = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buffer, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

function tooManyPixels(path: string, width: number, height: number): AgentError {
  return logoError(
    path,
    `too large: ${width} x ${height} pixels, more than the ${LOGO_MAX_PIXELS} a logo may have`,
  );
}

function decodePng(path: string, bytes: Buffer): LogoPicture {
  // IHDR is the first chunk (PNG spec 5.6): its size is known before anything is inflated.
  if (bytes.length < 24 || bytes.toString('latin1', 12, 16) !== 'IHDR')
    throw logoError(path, 'not a valid PNG (no IHDR header)');
  const headerWidth = bytes.readUInt32BE(16);
  const headerHeight = bytes.readUInt32BE(20);
  if (headerWidth === 0 || headerHeight === 0)
    throw logoError(path, 'not a valid PNG (zero width or height)');
  if (headerWidth * headerHeight > LOGO_MAX_PIXELS)
    throw tooManyPixels(path, headerWidth, headerHeight);
  let png: PNG;
  try {
    png = PNG.sync.read(bytes);
  } catch (error) {
    throw logoError(path, `not a valid PNG (${errorMessage(error)})`, error);
  }
  const { width, height, data } = png;
  return {
    kind: 'png',
    width,
    height,
    draw: (w, h) => resample(data, width, height, w, h),
  };
}

/**
 * Every `href` that is not a fragment (`#id`): a file resvg would read from disk (any path,
 * /dev/zero included), or an embedded image it would decode with no size limit of ours (a small
 * data: URL can inflate to gigabytes). A logo SVG is vector only; a raster logo comes as PNG.
 */
function imageLinks(svg: string): string[] {
  const links: string[] = [];
  for (const match of svg.matchAll(/\bhref\s*=\s*(["'])(.*?)\1/gs)) {
    const target = match[2]!.trim();
    if (!target.startsWith('#'))
      links.push(target.length > 40 ? `${target.slice(0, 37)}...` : target);
  }
  return links;
}

async function parseSvg(path: string, bytes: Buffer): Promise<LogoPicture> {
  const text = bytes.toString('utf8');
  const links = imageLinks(text);
  if (links.length > 0)
    throw logoError(
      path,
      `the SVG links to or embeds images (${links.slice(0, 3).join(', ')}): a logo SVG must be drawn with shapes only; save a raster logo as PNG`,
    );
  // resvg is a native module: loaded only when a logo is an SVG.
  const { Resvg } = await import('@resvg/resvg-js');
  let intrinsic: { width: number; height: number };
  try {
    const probe = new Resvg(text, { font: { loadSystemFonts: false } });
    intrinsic = { width: probe.width, height: probe.height };
  } catch (error) {
    throw logoError(path, `not a valid SVG (${errorMessage(error)})`, error);
  }
  if (!(intrinsic.width > 0 && intrinsic.height > 0))
    throw logoError(path, 'not a valid SVG (no width and height, nor a viewBox)');
  return {
    kind: 'svg',
    width: intrinsic.width,
    height: intrinsic.height,
    draw: (w, h) => {
      const image = new Resvg(text, {
        fitTo: { mode: 'width', value: w },
        background: '#ffffff',
        // Text in a logo is drawn with the system's fonts (paths need none).
        font: { loadSystemFonts: true },
      }).render();
      // resvg rounds the height its own way: take exactly the rows asked for, white below.
      const grey = new Uint8Array(w * h).fill(255);
      const rows = Math.min(h, image.height);
      const pixels = image.pixels;
      for (let y = 0; y < rows; y++)
        for (let x = 0; x < w && x < image.width; x++) {
          const j = (y * image.width + x) * 4;
          grey[y * w + x] = luma(pixels[j]!, pixels[j + 1]!, pixels[j + 2]!);
        }
      return grey;
    },
  };
}

function luma(r: number, g: number, b: number): number {
  return 0.299 * r + 0.587 * g + 0.114 * b;
}

/** One output pixel's share of the source pixels along an axis (box filter, weights sum to 1). */
interface Span {
  start: number;
  weights: Float64Array;
}

function spans(from: number, to: number): Span[] {
  const scale = from / to;
  const out: Span[] = [];
  for (let o = 0; o < to; o++) {
    const a = o * scale;
    const b = (o + 1) * scale;
    const start = Math.min(from - 1, Math.floor(a));
    const end = Math.max(start + 1, Math.min(from, Math.ceil(b)));
    const weights = new Float64Array(end - start);
    let total = 0;
    for (let i = start; i < end; i++) {
      const w = Math.max(0, Math.min(b, i + 1) - Math.max(a, i));
      weights[i - start] = w;
      total += w;
    }
    for (let i = 0; i < weights.length; i++) weights[i] = total > 0 ? weights[i]! / total : 1;
    out.push({ start, weights });
  }
  return out;
}

/**
 * RGBA to grey at `w` x `h` by area averaging: each output dot is the mean of the source pixels it
 * covers (a downscaled logo keeps its tints; an upscaled one keeps its edges). No intermediate
 * image: the work is one pass over the source.
 */
export function resample(
  rgba: Uint8Array,
  width: number,
  height: number,
  w: number,
  h: number,
): Uint8Array {
  const xs = spans(width, w);
  const ys = spans(height, h);
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    const sy = ys[y]!;
    for (let x = 0; x < w; x++) {
      const sx = xs[x]!;
      let sum = 0;
      for (let j = 0; j < sy.weights.length; j++) {
        const row = (sy.start + j) * width + sx.start;
        let rowSum = 0;
        for (let i = 0; i < sx.weights.length; i++) {
          const p = (row + i) * 4;
          const alpha = rgba[p + 3]! / 255;
          // Transparent parts are the paper: white.
          const grey = luma(rgba[p]!, rgba[p + 1]!, rgba[p + 2]!) * alpha + 255 * (1 - alpha);
          rowSum += sx.weights[i]! * grey;
        }
        sum += sy.weights[j]! * rowSum;
      }
      out[y * w + x] = Math.round(sum);
    }
  }
  return out;
}

/** Grey levels to dots: 4 x 4 ordered (Bayer) dithering, rows packed MSB first, 1 = black. */
export function dither(grey: Uint8Array, width: number, height: number): MonoImage {
  const stride = Math.ceil(width / 8);
  const data = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const threshold = (BAYER_4[(y & 3) * 4 + (x & 3)]! + 0.5) * 16;
      if (grey[y * width + x]! < threshold) {
        const i = y * stride + (x >> 3);
        data[i] = data[i]! | (0x80 >> (x & 7));
      }
    }
  return { width: stride * 8, height, data };
}

/** The printed size of a picture at `widthDots`: its aspect kept, at most LOGO_MAX_HEIGHT_DOTS. */
export function logoSize(
  picture: Pick<LogoPicture, 'width' | 'height'>,
  widthDots: number,
): { width: number; height: number } | null {
  const aspect = picture.height / picture.width;
  let width = widthDots;
  let height = Math.max(1, Math.round(width * aspect));
  if (height > LOGO_MAX_HEIGHT_DOTS) {
    width = Math.floor(LOGO_MAX_HEIGHT_DOTS / aspect / 8) * 8;
    height = Math.min(LOGO_MAX_HEIGHT_DOTS, Math.max(1, Math.round(width * aspect)));
  }
  return width >= 8 ? { width, height } : null;
}

/** The picture as printed `widthDots` wide (see logoSize). */
export function convertLogo(picture: LogoPicture, widthDots: number, path = 'logo'): MonoImage {
  const size = logoSize(picture, widthDots);
  if (!size)
    throw logoError(
      path,
      `too tall for its width (${picture.width} x ${picture.height}): at most ${LOGO_MAX_HEIGHT_DOTS} dots high it would be under 8 dots wide`,
    );
  return dither(picture.draw(size.width, size.height), size.width, size.height);
}

/**
 * Reads the logo once and converts it for each profile (once per distinct width). Throws
 * LOGO_UNREADABLE naming `receipt.logo.file` and the path.
 */
export async function loadLogo(
  settings: LogoSettings,
  profiles: readonly PrinterProfile[],
): Promise<ReceiptLogo> {
  try {
    const picture = await readLogo(settings.file);
    const byWidth = new Map<number, MonoImage>();
    const images = new Map<string, MonoImage>();
    for (const profile of profiles) {
      const dots = logoWidthDots(profile, settings.widthMm);
      let image = byWidth.get(dots);
      if (!image) {
        image = convertLogo(picture, dots, settings.file);
        byWidth.set(dots, image);
      }
      images.set(profile.id, image);
    }
    return { align: settings.align, images };
  } catch (error) {
    // Anything else (resvg missing on this platform, a decoder bug) is still the logo's problem.
    if (error instanceof AgentError && error.code === 'LOGO_UNREADABLE') throw error;
    throw logoError(settings.file, `cannot be used (${errorMessage(error)})`, error);
  }
}

/**
 * Bytes the logo adds to each receipt: per band, `GS v 0` (8 bytes) and its rows, and `ESC a` (3
 * bytes) before and after it unless it is left-aligned.
 */
export function logoBytes(image: MonoImage, align: LogoAlign): number {
  const bands = Math.ceil(image.height / RASTER_BAND_DOTS);
  return (image.width / 8) * image.height + bands * (8 + (align === 'left' ? 0 : 6));
}

/**
 * `config check`: the logo's problem as config issues (`receipt.logo.file: PATH: why`), none when
 * it converts for every profile (or no logo is configured).
 */
export async function logoIssues(
  settings: LogoSettings | undefined,
  profiles: readonly PrinterProfile[],
): Promise<FieldIssue[]> {
  if (!settings) return [];
  try {
    await loadLogo(settings, profiles);
    return [];
  } catch (error) {
    if (error instanceof AgentError) return [...error.issues];
    throw error;
  }
}
