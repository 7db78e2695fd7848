/**
 * Issue 42 item 13: with only fonts-dejavu-core installed, a CJK name printed as a row of hollow
 * boxes (resvg draws what no font has as .notdef) and nobody was told. Now the fonts' cmaps are
 * asked first: a character none has prints as `?` with the job's warning (as docs/printers.md promises
 * when fonts are missing), the rasterizer announces it once for the journal and the status, and
 * `doctor` names the scripts the fonts lack.
 *
 * - the cmap reader against a font built here byte by byte (formats 4 and 12 in a collection,
 *   with the glyph-0 holes each format can have), and against DejaVu Sans as installed;
 * - a receipt rendered with a font set of DejaVu alone, decoded by the emulator: the CJK name is
 *   `?` on paper with no image, the Arabic name (DejaVu has Arabic) still drawn;
 * - doctor's fonts line for that set, for no fonts, and for raster lines switched off.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type CheckLine, checkFonts } from '../../src/cli/doctor.js';
import { agentConfigSchema } from '../../src/config/schema.js';
import { renderText, VirtualPrinter } from '../../src/emulator/index.js';
import { printInstructionSchema } from '../../src/protocol/print-protocol.js';
import { FontCoverage } from '../../src/receipt/font-coverage.js';
import { receiptOptions } from '../../src/receipt/options.js';
import { getProfile } from '../../src/receipt/profile.js';
import { type FontCandidate, fontMissing, LineRasterizer } from '../../src/receipt/raster-text.js';
import { renderReceipt } from '../../src/receipt/render.js';
import { fileConfig } from '../config/fixtures.js';

const DEJAVU = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';
/** A font set that lacks CJK and Thai: what a Pi with only fonts-dejavu-core has. */
const DEJAVU_ONLY: FontCandidate[] = [{ family: 'DejaVu Sans', files: [DEJAVU] }];
const NO_DEJAVU = existsSync(DEJAVU)
  ? false
  : 'needs DejaVu Sans (Debian package fonts-dejavu-core)';

const dir = mkdtempSync(join(tmpdir(), 'pa-fonts-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A TrueType collection of one font whose only table is a cmap with two Unicode subtables:
 * format 4 (3,1): A-C by delta; U+4E2D-U+4E2F through the glyph array, the middle one glyph 0;
 * format 12 (3,10): U+1F600-U+1F601 from glyph 0 (so only U+1F601), U+20000-U+20002.
 */
function builtFont(): Buffer {
  const u16 = (...v: number[]) => Buffer.from(v.flatMap((n) => [(n >> 8) & 0xff, n & 0xff]));
  const u32 = (...v: number[]) => Buffer.concat(v.map((n) => u16(n >>> 16, n & 0xffff)));
  const segments = { end: [0x43, 0x4e2f, 0xffff], start: [0x41, 0x4e2d, 0xffff] };
  const format4Body = Buffer.concat([
    u16(6, 0, 0, 0), // segCountX2, searchRange, entrySelector, rangeShift
    u16(...segments.end),
    u16(0), // reservedPad
    u16(...segments.start),
    u16((1 - 0x41) & 0xffff, 0, 1), // idDelta
    u16(0, 4, 0), // idRangeOffset: the second segment's glyphs are 4 bytes on, in the array
    u16(5, 0, 7), // glyphIdArray
  ]);
  const format4 = Buffer.concat([u16(4, 6 + format4Body.length, 0), format4Body]);
  const groups = [
    [0x1f600, 0x1f601, 0],
    [0x20000, 0x20002, 10],
  ];
  const format12 = Buffer.concat([
    u16(12, 0),
    u32(16 + groups.length * 12, 0, groups.length),
    ...groups.map((g) => u32(...g)),
  ]);
  const header = 4 + 2 * 8;
  const cmap = Buffer.concat([
    u16(0, 2),
    u16(3, 1),
    u32(header),
    u16(3, 10),
    u32(header + format4.length),
    format4,
    format12,
  ]);
  const fontAt = 16;
  const cmapAt = fontAt + 12 + 16;
  return Buffer.concat([
    Buffer.from('ttcf', 'latin1'),
    u32(0x00010000, 1, fontAt),
    u32(0x00010000),
    u16(1, 0, 0, 0),
    Buffer.from('cmap', 'latin1'),
    u32(0, cmapAt, cmap.length),
    cmap,
  ]);
}

describe('font coverage from the cmap', () => {
  it('reads formats 4 and 12 of a collection, glyph-0 holes left out', () => {
    const file = join(dir, 'built.ttc');
    writeFileSync(file, builtFont());
    const coverage = FontCoverage.read(file);
    const has = (cp: number) => coverage.has(cp);
    assert.deepEqual(
      [0x40, 0x41, 0x42, 0x43, 0x44].map(has),
      [false, true, true, true, false],
      'A-C by delta',
    );
    assert.deepEqual([0x4e2d, 0x4e2e, 0x4e2f].map(has), [true, false, true], 'the glyph array');
    assert.deepEqual([0x1f600, 0x1f601].map(has), [false, true], 'a group starting at .notdef');
    assert.deepEqual([0x20000, 0x20002, 0x20003].map(has), [true, true, false]);
    assert.equal(coverage.size, 3 + 2 + 1 + 3);
  });

  it('refuses what is not a font', () => {
    const file = join(dir, 'not-a-font.ttf');
    writeFileSync(file, 'this is text, not a font');
    assert.throws(() => FontCoverage.read(file), /not a font file this reader knows/);
  });

  it('DejaVu Sans has Latin, Greek, Cyrillic, Arabic and Hebrew, not CJK or Thai', {
    skip: NO_DEJAVU,
  }, () => {
    const coverage = FontCoverage.read(DEJAVU);
    const has = (s: string) => [...s].map((ch) => coverage.has(ch.codePointAt(0)!));
    assert.deepEqual(has('AΩЖبא₱'), [true, true, true, true, true, true]);
    assert.deepEqual(has('中あ한ผ'), [false, false, false, false]);
  });
});

const instruction = printInstructionSchema.parse({
  jobId: 'P-FONTS-1',
  orderNo: 'O-FONTS-1',
  createTime: '2026-11-25 12:30:05',
  order: {
    productInfo: [
      { productName: '宫保鸡丁', price: 18_500, quantity: 1 },
      { productName: 'شاورما دجاج', price: 15_000, quantity: 1 },
    ],
    orderType: 1,
    paymentWay: 2,
    paymentTransactionId: 'M-FONTS-1',
  },
});

describe('a receipt drawn with DejaVu alone', { skip: NO_DEJAVU }, () => {
  it('prints the CJK name as ?, with the warning and no image; the Arabic name still drawn', () => {
    const rasterizer = LineRasterizer.fromSystem(DEJAVU_ONLY)!;
    const missing: string[] = [];
    rasterizer.on('missing', (ch) => missing.push(ch));
    const profile = getProfile('generic-80mm');
    const rendered = renderReceipt({
      source: { kind: 'instruction', instruction },
      profile,
      options: { ...receiptOptions({ header: ['Fonts'] }), rasterizer },
    });
    assert.match(rendered.text, /^\?\?\?\?$/m);
    assert.match(rendered.text, /^شاورما دجاج$/m);
    assert.ok(
      rendered.warnings.some((w) => w.includes("replaced by '?'") && w.includes('U+5BAB')),
      rendered.warnings.join('\n'),
    );
    const emulator = new VirtualPrinter({ columns: profile.fonts.A.columns });
    emulator.write(rendered.bytes);
    const ticket = emulator.paper.tickets[0]!;
    assert.match(renderText(ticket), /^\?\?\?\?$/m, 'the name is ? on paper, as text');
    assert.equal(
      ticket.images.filter((i) => i.source === 'GS v 0').length,
      1,
      'one raster line: the Arabic name; none of empty boxes',
    );
    // Each missing character is announced once, however often it is asked for.
    assert.deepEqual(missing, [...'宫保鸡丁']);
    renderReceipt({
      source: { kind: 'instruction', instruction },
      profile,
      options: { ...receiptOptions({ header: ['Fonts'] }), rasterizer },
    });
    assert.deepEqual(missing, [...'宫保鸡丁']);
    assert.equal(fontMissing('宫').code, 'FONT_MISSING');
    assert.match(fontMissing('宫').message, /U\+5BAB \(宫\).*fonts-unifont/);
  });
});

describe("doctor's fonts line", () => {
  const file = agentConfigSchema.parse(fileConfig());
  const run = (fonts: FontCandidate[], change: (f: typeof file) => void = () => {}) => {
    const copy = structuredClone(file);
    change(copy);
    const out: CheckLine[] = [];
    checkFonts(out, copy, fonts);
    return out;
  };

  it('DejaVu alone: a warning naming the scripts it lacks and the packages', {
    skip: NO_DEJAVU,
  }, () => {
    const [line] = run(DEJAVU_ONLY);
    assert.equal(line?.status, 'warn');
    assert.equal(line?.name, 'fonts');
    assert.equal(
      line?.detail,
      'raster lines drawn with DejaVu Sans; none has Thai, Chinese, Japanese, Korean: such characters print as ? on printers without them in their own fonts',
    );
    assert.match(line?.fix ?? '', /fonts-unifont.*fonts-noto-cjk/);
  });

  it('no fonts at all: a warning; raster lines off: ok, saying so', () => {
    const [none] = run([{ family: 'Nothing', files: [join(dir, 'absent.ttf')] }]);
    assert.equal(none?.status, 'warn');
    assert.match(none?.detail ?? '', /^no fonts for raster lines/);
    const [off] = run(DEJAVU_ONLY, (f) => {
      f.receipt.rasterLines = false;
    });
    assert.equal(off?.status, 'ok');
    assert.match(off?.detail ?? '', /raster lines are off/);
  });
});
