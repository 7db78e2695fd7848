/**
 * Which characters a font file has glyphs for, read from its `cmap` table (OpenType 1.9,
 * "cmap - Character to glyph index mapping table"): formats 4 (the Basic Multilingual Plane), 12
 * and 13 (every plane), in TrueType and CFF OpenType files and in collections (`.ttc`: the first
 * font; the faces of a collection share their character set). Only Unicode subtables count
 * (platform 0, and platform 3 encodings 1 and 10).
 *
 * Why: resvg draws a character no font has as the font's empty box (.notdef) and says nothing, so
 * with only DejaVu installed a CJK name printed as a row of hollow boxes (issue 42 item 13). The
 * charset asks here before it keeps a character to be drawn; one no font has prints as `?` with a
 * warning, as docs/printers.md promises.
 *
 * Only the table directory and the cmap are read, by position: Noto Sans CJK is 20 MB, its cmap a
 * few hundred KB.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

export class FontCoverage {
  /** `[first, last]` code point pairs, sorted, not overlapping. */
  private constructor(private readonly ranges: Uint32Array) {}

  static readonly EMPTY = new FontCoverage(new Uint32Array(0));

  /** The characters of one font file. Throws when it is not a font this reader knows. */
  static read(file: string): FontCoverage {
    const fd = openSync(file, 'r');
    try {
      return new FontCoverage(merge(cmapRanges(fd)));
    } finally {
      closeSync(fd);
    }
  }

  /** The characters any of `coverages` has. */
  static union(coverages: readonly FontCoverage[]): FontCoverage {
    const pairs: Array<[number, number]> = [];
    for (const c of coverages)
      for (let i = 0; i < c.ranges.length; i += 2) pairs.push([c.ranges[i]!, c.ranges[i + 1]!]);
    return new FontCoverage(merge(pairs));
  }

  has(codePoint: number): boolean {
    let lo = 0;
    let hi = this.ranges.length / 2 - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (codePoint < this.ranges[mid * 2]!) hi = mid - 1;
      else if (codePoint > this.ranges[mid * 2 + 1]!) lo = mid + 1;
      else return true;
    }
    return false;
  }

  /** How many characters: for messages and tests. */
  get size(): number {
    let n = 0;
    for (let i = 0; i < this.ranges.length; i += 2) n += this.ranges[i + 1]! - this.ranges[i]! + 1;
    return n;
  }
}

function fail(message: string): never {
  throw new Error(`not a font file this reader knows: ${message}`);
}

/** `length` bytes at `position` (fewer past the end). */
function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  const n = readSync(fd, buffer, 0, length, position);
  return buffer.subarray(0, n);
}

function cmapRanges(fd: number): Array<[number, number]> {
  const size = fstatSync(fd).size;
  const head = readAt(fd, 0, 16);
  if (head.length < 12) fail('too short');
  let offset = 0;
  if (head.toString('latin1', 0, 4) === 'ttcf') {
    // A collection: the first font's offset table.
    if (head.readUInt32BE(8) < 1 || head.length < 16) fail('an empty collection');
    offset = head.readUInt32BE(12);
  }
  const table = readAt(fd, offset, 12);
  if (table.length < 12) fail('no table directory');
  const version = table.readUInt32BE(0);
  // 0x00010000 TrueType, 'OTTO' CFF, 'true' Apple TrueType.
  if (version !== 0x00010000 && version !== 0x4f54544f && version !== 0x74727565)
    fail(`sfnt version ${version.toString(16)}`);
  const numTables = table.readUInt16BE(4);
  const records = readAt(fd, offset + 12, numTables * 16);
  for (let i = 0; i + 16 <= records.length; i += 16) {
    if (records.toString('latin1', i, i + 4) !== 'cmap') continue;
    const at = records.readUInt32BE(i + 8);
    const length = records.readUInt32BE(i + 12);
    if (at + length > size) fail('cmap past the end of the file');
    return subtableRanges(readAt(fd, at, length));
  }
  return fail('no cmap table');
}

/** The union of the Unicode subtables' characters. */
function subtableRanges(cmap: Buffer): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  const count = cmap.readUInt16BE(2);
  const seen = new Set<number>();
  for (let i = 0; i < count; i++) {
    const record = 4 + i * 8;
    if (record + 8 > cmap.length) break;
    const platform = cmap.readUInt16BE(record);
    const encoding = cmap.readUInt16BE(record + 2);
    const at = cmap.readUInt32BE(record + 4);
    const unicode = platform === 0 || (platform === 3 && (encoding === 1 || encoding === 10));
    // Several records may point at one subtable.
    if (!unicode || seen.has(at) || at + 4 > cmap.length) continue;
    seen.add(at);
    const format = cmap.readUInt16BE(at);
    if (format === 4) format4(cmap, at, ranges);
    else if (format === 12 || format === 13) format12(cmap, at, format, ranges);
  }
  return ranges;
}

/** Segment mapping to delta values: every character whose glyph is not 0 (.notdef). */
function format4(cmap: Buffer, at: number, out: Array<[number, number]>): void {
  const segX2 = cmap.readUInt16BE(at + 6);
  const ends = at + 14;
  const starts = ends + segX2 + 2;
  const deltas = starts + segX2;
  const rangeOffsets = deltas + segX2;
  if (rangeOffsets + segX2 > cmap.length) return;
  for (let s = 0; s < segX2 / 2; s++) {
    const end = cmap.readUInt16BE(ends + s * 2);
    const start = cmap.readUInt16BE(starts + s * 2);
    const delta = cmap.readUInt16BE(deltas + s * 2);
    const rangeOffset = cmap.readUInt16BE(rangeOffsets + s * 2);
    let runStart = -1;
    for (let c = start; c <= end && c !== 0xffff; c++) {
      let glyph: number;
      if (rangeOffset === 0) glyph = (c + delta) & 0xffff;
      else {
        const address = rangeOffsets + s * 2 + rangeOffset + (c - start) * 2;
        glyph = address + 2 <= cmap.length ? cmap.readUInt16BE(address) : 0;
        if (glyph !== 0) glyph = (glyph + delta) & 0xffff;
      }
      if (glyph !== 0 && runStart < 0) runStart = c;
      if (glyph === 0 && runStart >= 0) {
        out.push([runStart, c - 1]);
        runStart = -1;
      }
    }
    if (runStart >= 0) out.push([runStart, Math.min(end, 0xfffe)]);
  }
}

/** Segmented coverage (12) and many-to-one range mappings (13): groups of characters. */
function format12(cmap: Buffer, at: number, format: number, out: Array<[number, number]>): void {
  const groups = cmap.readUInt32BE(at + 12);
  for (let g = 0; g < groups; g++) {
    const group = at + 16 + g * 12;
    if (group + 12 > cmap.length) return;
    const start = cmap.readUInt32BE(group);
    const end = Math.min(cmap.readUInt32BE(group + 4), 0x10ffff);
    const glyph = cmap.readUInt32BE(group + 8);
    if (glyph !== 0) out.push([start, end]);
    // Format 12 counts up from the group's glyph: only its first character can be .notdef.
    else if (format === 12 && end > start) out.push([start + 1, end]);
  }
}

function merge(pairs: Array<[number, number]>): Uint32Array {
  const sorted = pairs.filter(([a, b]) => a <= b).sort((x, y) => x[0] - y[0]);
  const out: number[] = [];
  for (const [a, b] of sorted) {
    const last = out.length - 1;
    if (last > 0 && a <= out[last]! + 1) out[last] = Math.max(out[last]!, b);
    else out.push(a, b);
  }
  return Uint32Array.from(out);
}
