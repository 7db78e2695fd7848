/**
 * Images: raster bit images (`GS v 0`), bit-image bands in the text line (`ESC *`), the
 * downloaded bit image (`GS *`, `GS /`), NV bit images (`FS q`, `FS p`) and the graphics of
 * `GS ( L` / `GS 8 L` (store with fn 112 or 113, print with fn 50). Every image becomes packed
 * rows on the paper; one wider than the print area is printed cut, with a warning.
 */
import { commandName, hex } from '../command-syntax.js';
import type { Frame } from '../framer.js';
import type { PaperImage } from '../paper.js';
import type { Bitmap } from '../print-state.js';
import { type CommandFamily, type Execution, u16 } from './command.js';

export const images: CommandFamily = {
  // GS v 0 m xL xH yL yH d1..dk: x bytes wide, y dots high; m bit0 double width, bit1 double height.
  'GS v'(x, { frame, bytes: b }) {
    if (b[2] !== 0x30) return x.warn(frame, `unknown command ${commandName(b)}: skipped`);
    if (!x.paper.atLineStart) {
      return x.warn(frame, 'GS v 0 is only processed with an empty print buffer (Epson): ignored');
    }
    const mode = b[3]! % 48;
    printImage(x, 'GS v 0', {
      width: u16(b, 4) * 8,
      height: u16(b, 6),
      scaleX: mode & 1 ? 2 : 1,
      scaleY: mode & 2 ? 2 : 1,
      data: b.slice(8),
    });
  },
  // ESC * m nL nH d1..dk: column format; m 0/1 8-dot (single/double density), 32/33 24-dot.
  'ESC *'(x, { frame, bytes: b }) {
    const m = b[2]!;
    if (![0, 1, 32, 33].includes(m)) return x.warn(frame, `ESC *: unknown mode ${m}: skipped`);
    const n = u16(b, 3);
    const bytesPerColumn = m >= 32 ? 3 : 1;
    const bmp = columnsToBitmap(
      b.subarray(5),
      n,
      bytesPerColumn,
      m === 0 || m === 32 ? 2 : 1,
      m < 32 ? 3 : 1,
    );
    x.paper.putBand({ source: 'ESC *', ...bmp });
  },
  // Downloaded bit image: x*8 dots wide, y*8 dots high, column format.
  // It shares memory with user-defined characters: defining it clears them (ESC/POS reference).
  'GS *'(x, { bytes: b }) {
    x.kept.downloaded = columnsToBitmap(b.subarray(4), b[2]! * 8, b[3]!, 1, 1);
    clearUserDefined(x);
  },
  'GS /'(x, { frame, n }) {
    x.atLineStart(frame, () => {
      const image = x.kept.downloaded;
      if (!image) return x.warn(frame, 'GS /: no downloaded bit image defined');
      printImage(x, 'GS /', scaled(image, n % 48));
    });
  },
  // NV bit images, each x*8 dots wide and y*8 high, column format.
  'FS q'(x, { bytes: b }) {
    const nv: Bitmap[] = [];
    x.kept.nvImages = nv;
    clearUserDefined(x);
    let at = 3;
    for (let i = 0; i < b[2]!; i++) {
      const w = u16(b, at);
      const h = u16(b, at + 2);
      const k = w * h * 8;
      nv.push(columnsToBitmap(b.subarray(at + 4, at + 4 + k), w * 8, h, 1, 1));
      at += 4 + k;
    }
  },
  'FS p'(x, { frame, bytes: b, n }) {
    x.atLineStart(frame, () => {
      const image = x.kept.nvImages[n - 1];
      if (!image) return x.warn(frame, `FS p: NV bit image ${n} not defined in this session`);
      printImage(x, 'FS p', scaled(image, b[3]! % 48));
    });
  },
  'GS ( L'(x, { frame, name }) {
    graphics(x, frame, name, 5);
  },
  'GS 8'(x, { frame, bytes: b, n }) {
    if (n !== 0x4c) return x.warn(frame, `unknown command ${commandName(b)}: skipped`);
    graphics(x, frame, 'GS 8 L', 7);
  },
};

/** `GS /` and `FS p` scale: bit0 double width, bit1 double height. */
function scaled(image: Bitmap, s: number): Bitmap {
  return { ...image, scaleX: s & 1 ? 2 : 1, scaleY: s & 2 ? 2 : 1 };
}

function printImage(x: Execution, source: string, bmp: Bitmap): PaperImage {
  if (bmp.width * bmp.scaleX > x.state.areaWidth) {
    x.paper.warn({
      offset: x.executing?.offset ?? -1,
      bytes: x.executing ? hex(x.executing.bytes.subarray(0, 8)) : '',
      message: `${source} image is wider than the print area: the excess is not printed`,
    });
  }
  return x.paper.addImage({ source, ...bmp });
}

/** `GS ( L` / `GS 8 L`: m fn at `at`, `at + 1`. Stores (fn 112) and prints (fn 50) graphics. */
function graphics(x: Execution, frame: Frame, name: string, at: number): void {
  const b = frame.bytes;
  const fn = b[at + 1];
  if (fn === 112 || fn === 113) {
    // a bx by c xL xH yL yH d1..dk; raster (112) or column (113) format.
    const p = at + 2;
    const bx = b[p + 1]!;
    const by = b[p + 2]!;
    const w = u16(b, p + 4);
    const h = u16(b, p + 6);
    const data = b.subarray(p + 8);
    x.state.graphics =
      fn === 112
        ? { width: w, height: h, scaleX: bx, scaleY: by, data: data.slice(0, Math.ceil(w / 8) * h) }
        : columnsToBitmap(data, w, Math.ceil(h / 8), bx, by);
    return;
  }
  if (fn === 50 || fn === 2) {
    x.atLineStart(frame, () => {
      const g = x.state.graphics;
      if (!g) return x.warn(frame, `${name} fn 50: no graphics stored`);
      x.state.graphics = undefined;
      printImage(x, name, g);
    });
    return;
  }
  x.warn(frame, `${name} fn ${fn} is not emulated: skipped by its length`);
}

/** `GS *` and `FS q` delete every user-defined character (ESC/POS reference, "ESC &"). */
function clearUserDefined(x: Execution): void {
  x.state.userDefinedChars.A.clear();
  x.state.userDefinedChars.B.clear();
}

/**
 * Converts column-format image data (ESC *, GS *, FS q, ESC &: each column `bytesPerColumn`
 * bytes, most significant bit on top) to packed rows.
 */
export function columnsToBitmap(
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
