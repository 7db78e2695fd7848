/**
 * User-defined characters in the emulator (`ESC &` defines glyphs per font, `ESC % 1` prints a
 * defined code as its glyph, `ESC % 0` / `ESC @` / `ESC ?` / `GS *` end that; ESC/POS reference).
 * The emulator cannot know what a glyph means: the text shows a private-use stand-in for the font
 * and code (U+E000 + code in font A), and the ticket keeps the glyph. Our receipts' `₱` is checked
 * here from the paper alone: the stand-in where the text twin has `₱`, and a glyph that has the
 * shape of a peso sign by simple checks on its dots, written without our encoder's drawing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  bitmapRows,
  bytesToSvg,
  renderLine,
  renderText,
  ticketToJson,
  userDefinedChar,
  VirtualPrinter,
} from '../../src/emulator/index.js';
import { getProfile } from '../../src/receipt/profile.js';
import { renderReceipt } from '../../src/receipt/render.js';
import { loadFixture, STORE_OPTIONS } from '../helpers/receipts.js';
import { bytes, decode } from './bytes.js';

const ESC = 0x1b;
const LF = 0x0a;
const P = 0x50;
const STAND_IN_P = '\uE050';

/**
 * ESC & 3 'P' 'P' 12: column 0 all black, column 1 the top dot only, column 11 the bottom dot
 * only, the rest white.
 */
const DEFINE_P = bytes(
  ESC,
  0x26,
  3,
  P,
  P,
  12,
  [0xff, 0xff, 0xff],
  [0x80, 0, 0],
  Array(27).fill(0),
  [0, 0, 0x01],
);
const EXPECTED_P_ROWS = Array.from({ length: 24 }, (_, r) => {
  let row = '#';
  row += r === 0 ? '#' : '.';
  row += '.'.repeat(9);
  row += r === 23 ? '#' : '.';
  return row;
});

describe('ESC & / ESC %: user-defined characters', () => {
  it('the stand-in is U+E000 + code in font A, U+E100 + code in font B', () => {
    assert.equal(userDefinedChar(P, 'A'), STAND_IN_P);
    assert.equal(userDefinedChar(P, 'B'), '\uE150');
  });

  it('a defined code prints its glyph only while ESC % 1 is on; undefined codes print as usual', () => {
    const { open } = decode(
      bytes(ESC, 0x40, DEFINE_P, 'P', ESC, 0x25, 1, 'PQ', ESC, 0x25, 0, 'P', LF),
    );
    assert.equal(open.lines[0]!.text, `P${STAND_IN_P}QP`);
    assert.deepEqual(open.lines[0]!.userDefined, [{ char: STAND_IN_P, column: 1 }]);
    assert.deepEqual(open.warnings, []);
    assert.equal(open.userDefined.length, 1);
    const glyph = open.userDefined[0]!;
    assert.deepEqual(
      { char: glyph.char, code: glyph.code, font: glyph.font, width: glyph.width },
      { char: STAND_IN_P, code: P, font: 'A', width: 12 },
    );
    assert.deepEqual(bitmapRows(glyph), EXPECTED_P_ROWS, 'column format, top dot in the MSB');
    const json = ticketToJson(open, { imageRows: true });
    assert.deepEqual(json.userDefined[0]!.rows, EXPECTED_P_ROWS);
  });

  it('the glyph takes one cell of its font, scaled like any character', () => {
    const { open } = decode(
      bytes(DEFINE_P, 0x1d, 0x21, 0x11, ESC, 0x25, 1, 'AP', ESC, 0x25, 0, 'A', LF),
    );
    const line = open.lines[0]!;
    assert.equal(line.width, 6, 'three double-width cells');
    assert.deepEqual(line.userDefined, [{ char: STAND_IN_P, column: 2 }]);
    assert.ok(line.runs.every((r) => r.width === 2 && r.height === 2));
  });

  it('ESC @, ESC ? and GS * delete definitions; each font has its own', () => {
    const select = [ESC, 0x25, 1];
    const cases: Array<[string, Uint8Array]> = [
      ['ESC @', bytes(DEFINE_P, ESC, 0x40, select, 'P', LF)],
      ['ESC ?', bytes(DEFINE_P, ESC, 0x3f, P, select, 'P', LF)],
      ['GS *', bytes(DEFINE_P, 0x1d, 0x2a, 1, 1, Array(8).fill(0), select, 'P', LF)],
      ['font B', bytes(DEFINE_P, ESC, 0x4d, 1, select, 'P', LF)],
    ];
    for (const [name, data] of cases) {
      const { open } = decode(data);
      assert.equal(open.lines[0]!.text, 'P', name);
      assert.deepEqual(open.warnings, [], name);
    }
  });

  it('a definition out of range (code below 0x20, too many dot columns) is ignored with a warning', () => {
    const low = decode(bytes(ESC, 0x26, 3, 0x1f, 0x1f, 1, 0, 0, 0, ESC, 0x25, 1, 0x1f, 'A', LF));
    assert.match(low.open.warnings[0]!.message, /ESC &: .*out of range/);
    const wide = decode(bytes(ESC, 0x26, 3, P, P, 13, Array(39).fill(0xff), ESC, 0x25, 1, 'P', LF));
    assert.match(wide.open.warnings[0]!.message, /13 dot columns in a 12-dot font/);
    assert.equal(wide.open.lines[0]!.text, 'P');
  });
});

/** Where `#` marks a black dot: the shape checks read rows of `#` and `.` only. */
function pesoShapeProblems(rows: string[]): string[] {
  const problems: string[] = [];
  const height = rows.length;
  const width = rows[0]!.length;
  const black = (r: number, c: number) => rows[r]![c] === '#';
  // The stem: the columns holding the longest vertical run of black dots.
  const runOf = (c: number) => {
    let best = { top: 0, bottom: -1 };
    let top = -1;
    for (let r = 0; r <= height; r++) {
      if (r < height && black(r, c)) {
        if (top < 0) top = r;
      } else if (top >= 0) {
        if (r - 1 - top > best.bottom - best.top) best = { top, bottom: r - 1 };
        top = -1;
      }
    }
    return best;
  };
  const runs = Array.from({ length: width }, (_, c) => runOf(c));
  const longest = Math.max(...runs.map((r) => r.bottom - r.top + 1));
  if (longest < height * 0.6) problems.push(`no stem: longest vertical stroke ${longest} dots`);
  const stem = runs
    .map((r, c) => (r.bottom - r.top + 1 === longest ? c : -1))
    .filter((c) => c >= 0);
  const stemLeft = Math.min(...stem);
  const stemRight = Math.max(...stem);
  const { top, bottom } = runs[stemLeft]!;
  const middle = (top + bottom) / 2;
  // The bars: rows at least three quarters black, in bands apart from each other.
  const barRows = rows
    .map((row, r) => ({ r, n: [...row].filter((c) => c === '#').length }))
    .filter((x) => x.n >= width * 0.75)
    .map((x) => x.r);
  const bands: number[][] = [];
  for (const r of barRows) {
    const last = bands.at(-1);
    if (last && last.at(-1) === r - 1) last.push(r);
    else bands.push([r]);
  }
  if (bands.length !== 2) problems.push(`${bands.length} horizontal bars, not 2`);
  for (const band of bands) {
    if (!band.every((r) => r < middle)) problems.push(`bar at rows ${band} below the bowl`);
    if (!band.some((r) => black(r, stemLeft) && [...rows[r]!.slice(0, stemLeft)].includes('#')))
      problems.push(`bar at rows ${band} does not cross the stem from its left`);
  }
  // The bowl: black to the right of the stem above the middle, nothing there in the lower third.
  const rightOfStem = (r: number) => [...rows[r]!.slice(stemRight + 1)].includes('#');
  const upper = Array.from({ length: Math.floor(middle) - top }, (_, i) => top + i);
  if (!upper.some((r) => rightOfStem(r) && !barRows.includes(r))) problems.push('no bowl');
  const lowerThird = Array.from(
    { length: bottom - Math.ceil(top + ((bottom - top) * 2) / 3) + 1 },
    (_, i) => Math.ceil(top + ((bottom - top) * 2) / 3) + i,
  );
  if (lowerThird.some(rightOfStem)) problems.push('dots right of the stem low down: not a P');
  return problems;
}

describe('our ₱ on the emulated paper (generic-80mm)', () => {
  const profile = getProfile('generic-80mm');
  const rendered = renderReceipt({
    source: loadFixture('queue-online-pwd'),
    profile,
    options: STORE_OPTIONS,
  });
  const printer = new VirtualPrinter({
    columns: profile.fonts.A.columns,
    columnsFontB: profile.fonts.B?.columns,
  });
  assert.equal(printer.write(rendered.bytes), true);
  const ticket = printer.paper.tickets[0]!;

  it('prints without a warning, one user-defined character of font A', () => {
    assert.ok(ticket);
    assert.deepEqual(ticket.warnings, []);
    assert.equal(ticket.userDefined.length, 1);
    assert.equal(ticket.userDefined[0]!.font, 'A');
  });

  it('puts the user-defined character wherever the text twin has ₱, and only there', () => {
    const stand = ticket.userDefined[0]!.char;
    const paper = renderText(ticket).split('\n');
    const twin = rendered.text.split('\n');
    assert.equal(paper.length, twin.length);
    let signs = 0;
    twin.forEach((line, i) => {
      for (let j = 0; j < line.length; j++) {
        if (line[j] === '₱') {
          signs++;
          assert.equal(paper[i]![j], stand, `line ${i + 1} column ${j + 1}`);
        }
      }
      assert.equal(paper[i]!.replaceAll(stand, '₱'), line);
    });
    assert.equal(signs, 11);
    const total = ticket.lines.find((l) => renderLine(l).startsWith('TOTAL'))!;
    assert.match(renderLine(total), new RegExp(`^TOTAL +${stand}480\\.00$`));
    assert.ok(
      total.runs.some((r) => r.text.includes(stand) && r.bold && r.height === 2),
      'the sign is as tall and bold as the TOTAL amount',
    );
  });

  it('the glyph the job defined has the shape of a peso sign', () => {
    const glyph = ticket.userDefined[0]!;
    assert.deepEqual([glyph.width, glyph.height], [12, 24]);
    const rows = bitmapRows(glyph);
    assert.deepEqual(pesoShapeProblems(rows), [], `\n${rows.join('\n')}`);
  });

  it('the shape checks tell a peso sign from a P, a B and a bar', () => {
    const glyph = bitmapRows(ticket.userDefined[0]!);
    const bars = glyph.flatMap((row, r) =>
      [...row].filter((c) => c === '#').length > 8 ? [r] : [],
    );
    const plainP = glyph.map((row, r) => (bars.includes(r) ? glyph[r - 1]! : row));
    assert.match(pesoShapeProblems(plainP).join(), /0 horizontal bars/);
    const shortBars = glyph.map((row, r) => (bars.includes(r) ? `..${row.slice(2)}` : row));
    assert.match(pesoShapeProblems(shortBars).join(), /does not cross the stem from its left/);
    const b = glyph.map((row, r) => (r >= 15 && r <= 19 ? '..##.....##.' : row));
    assert.match(pesoShapeProblems(b).join(), /not a P/);
    assert.match(pesoShapeProblems(Array(24).fill('############')).join(), /bars/);
  });

  it('without ESC % 1 the same code prints its own character', () => {
    // The job's bytes with every ESC % 1 turned into ESC % 0: the definition stays, unused.
    const unselected = Uint8Array.from(rendered.bytes);
    for (let i = 0; i + 2 < unselected.length; i++) {
      if (unselected[i] === ESC && unselected[i + 1] === 0x25 && unselected[i + 2] === 1)
        unselected[i + 2] = 0;
    }
    const plain = new VirtualPrinter({ columns: profile.fonts.A.columns });
    plain.write(unselected);
    const text = renderText(plain.paper.tickets[0]!);
    assert.ok(!text.includes(STAND_IN_P));
    assert.match(text, /^TOTAL +P480\.00$/m, 'the letter the sign stands on');
    assert.equal(plain.paper.tickets[0]!.userDefined.length, 0);
  });

  it('the preview draws the glyph in the sign’s cell', () => {
    const svg = bytesToSvg(rendered.bytes, { columns: 48 });
    const paths = svg.match(/<path class="user-defined" data-code="80" d="[^"]+"/g) ?? [];
    assert.equal(paths.length, 11);
    assert.ok(!svg.includes(STAND_IN_P), 'no private-use character left in the text');
  });
});
