/**
 * Decoder: text, print modes, alignment, wrapping, positions and character tables. Every byte
 * sequence is written from the ESC/POS command reference, not produced by our encoder.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import iconv from 'iconv-lite';
import { renderLine, renderText } from '../../src/emulator/index.js';
import { bytes, decode } from './bytes.js';

const LF = 0x0a;

describe('decoder: plain text and line feeds', () => {
  it('prints a line at LF with one unstyled run', () => {
    const { open } = decode(bytes('Hello', LF));
    assert.equal(open.lines.length, 1);
    const line = open.lines[0]!;
    assert.equal(line.text, 'Hello');
    assert.equal(line.align, 'left');
    assert.equal(line.columns, 48);
    assert.equal(line.width, 5);
    assert.equal(line.indent, 0);
    assert.deepEqual(line.runs, [
      {
        text: 'Hello',
        column: 0,
        columns: 5,
        font: 'A',
        bold: false,
        underline: 0,
        width: 1,
        height: 1,
        reverse: false,
        upsideDown: false,
        rotated: false,
      },
    ]);
  });

  it('keeps text without LF in the print buffer, not on the paper', () => {
    const { open, decoder } = decode(bytes('AB'));
    assert.equal(open.lines.length, 0);
    assert.equal(decoder.paper.pendingLine()?.text, 'AB');
  });

  it('LF on an empty buffer feeds a blank line; CR is ignored', () => {
    // 41 0D 0A: "A" CR LF; 0A: LF alone; 42 0D 0A: "B" CR LF
    const { open } = decode(bytes('A', 0x0d, LF, LF, 'B', 0x0d, LF));
    assert.deepEqual(
      open.lines.map((l) => l.text),
      ['A', '', 'B'],
    );
  });
});

describe('decoder: print modes', () => {
  const styleOf = (...parts: Parameters<typeof bytes>) =>
    decode(bytes(...parts, 'x', LF)).open.lines[0]!.runs[0]!;

  it('ESC ! n: bit0 font B, bit3 bold, bit4 double height, bit5 double width, bit7 underline', () => {
    assert.equal(styleOf(0x1b, 0x21, 0x01).font, 'B'); // ESC ! 01
    assert.equal(styleOf(0x1b, 0x21, 0x08).bold, true); // ESC ! 08
    const big = styleOf(0x1b, 0x21, 0x30); // ESC ! 30
    assert.equal(big.width, 2);
    assert.equal(big.height, 2);
    assert.equal(styleOf(0x1b, 0x21, 0x10).height, 2); // ESC ! 10
    assert.equal(styleOf(0x1b, 0x21, 0x10).width, 1);
    assert.equal(styleOf(0x1b, 0x21, 0x20).width, 2); // ESC ! 20
    assert.equal(styleOf(0x1b, 0x21, 0x80).underline, 1); // ESC ! 80
  });

  it('ESC ! 0 cancels what an earlier ESC ! set', () => {
    // ESC ! B9 (font B, bold, 2x2, underline), ESC ! 00
    const run = styleOf(0x1b, 0x21, 0xb9, 0x1b, 0x21, 0x00);
    assert.equal(run.font, 'A');
    assert.equal(run.bold, false);
    assert.equal(run.width, 1);
    assert.equal(run.height, 1);
    assert.equal(run.underline, 0);
  });

  it('ESC E n and ESC G n (double strike) print bold; bit 0 only', () => {
    assert.equal(styleOf(0x1b, 0x45, 0x01).bold, true); // ESC E 1
    assert.equal(styleOf(0x1b, 0x45, 0x01, 0x1b, 0x45, 0x00).bold, false); // ESC E 1, ESC E 0
    assert.equal(styleOf(0x1b, 0x45, 0xfe).bold, false); // ESC E FE: bit 0 clear
    assert.equal(styleOf(0x1b, 0x47, 0x01).bold, true); // ESC G 1
  });

  it('ESC - n: 0/1/2 and the ASCII forms 48/49/50', () => {
    assert.equal(styleOf(0x1b, 0x2d, 0x01).underline, 1); // ESC - 1
    assert.equal(styleOf(0x1b, 0x2d, 0x02).underline, 2); // ESC - 2
    assert.equal(styleOf(0x1b, 0x2d, 0x32).underline, 2); // ESC - '2'
    assert.equal(styleOf(0x1b, 0x2d, 0x31, 0x1b, 0x2d, 0x30).underline, 0); // ESC - '1', ESC - '0'
  });

  it('GS B n: reverse; ESC M n: font A/B', () => {
    assert.equal(styleOf(0x1d, 0x42, 0x01).reverse, true); // GS B 1
    assert.equal(styleOf(0x1b, 0x4d, 0x01).font, 'B'); // ESC M 1
    assert.equal(styleOf(0x1b, 0x4d, 0x31).font, 'B'); // ESC M '1'
    assert.equal(styleOf(0x1b, 0x4d, 0x01, 0x1b, 0x4d, 0x30).font, 'A'); // ESC M 1, ESC M '0'
  });

  it('GS ! n: width = high nibble + 1, height = low nibble + 1', () => {
    const a = styleOf(0x1d, 0x21, 0x11); // GS ! 11
    assert.deepEqual([a.width, a.height], [2, 2]);
    const b = styleOf(0x1d, 0x21, 0x70); // GS ! 70
    assert.deepEqual([b.width, b.height], [8, 1]);
    const c = styleOf(0x1d, 0x21, 0x02); // GS ! 02
    assert.deepEqual([c.width, c.height], [1, 3]);
  });

  it('GS ! with a nibble above 7 is ignored with a warning', () => {
    // GS ! 11, then GS ! 80 (width 9: out of range)
    const { open } = decode(bytes(0x1d, 0x21, 0x11, 0x1d, 0x21, 0x80, 'x', LF));
    assert.equal(open.lines[0]!.runs[0]!.width, 2);
    assert.equal(open.warnings.length, 1);
    assert.equal(open.warnings[0]!.bytes, '1D 21 80');
  });

  it('ESC { n upside-down and ESC V n rotation are recorded on the run', () => {
    assert.equal(styleOf(0x1b, 0x7b, 0x01).upsideDown, true); // ESC { 1
    assert.equal(styleOf(0x1b, 0x56, 0x01).rotated, true); // ESC V 1
    assert.equal(styleOf(0x1b, 0x56, 0x01, 0x1b, 0x56, 0x00).rotated, false); // ESC V 1, ESC V 0
  });

  it('splits a line into runs where the style changes', () => {
    // "A" ESC E 1 "BC" ESC E 0 "D" LF
    const line = decode(bytes('A', 0x1b, 0x45, 1, 'BC', 0x1b, 0x45, 0, 'D', LF)).open.lines[0]!;
    assert.deepEqual(
      line.runs.map((r) => [r.text, r.column, r.bold]),
      [
        ['A', 0, false],
        ['BC', 1, true],
        ['D', 3, false],
      ],
    );
  });
});

describe('decoder: alignment', () => {
  it('ESC a 1 centres: floor((C - w) / 2) leading columns', () => {
    // ESC a 1, "ABC" LF: (48 - 3) / 2 = 22.5 -> 22
    const line = decode(bytes(0x1b, 0x61, 0x01, 'ABC', LF)).open.lines[0]!;
    assert.equal(line.align, 'center');
    assert.equal(line.indent, 22);
    assert.equal(line.runs[0]!.column, 22);
    assert.equal(renderLine(line), `${' '.repeat(22)}ABC`);
  });

  it("ESC a '2' (ASCII form) right-aligns: C - w leading columns", () => {
    const line = decode(bytes(0x1b, 0x61, 0x32, 'AB', LF)).open.lines[0]!; // ESC a '2'
    assert.equal(line.align, 'right');
    assert.equal(line.indent, 46);
  });

  it('alignment applies from the line being started and stays until changed', () => {
    // ESC a 1 "X" LF "Y" LF ESC a 0 "Z" LF
    const lines = decode(bytes(0x1b, 0x61, 1, 'X', LF, 'Y', LF, 0x1b, 0x61, 0x30, 'Z', LF)).open
      .lines;
    assert.deepEqual(
      lines.map((l) => l.align),
      ['center', 'center', 'left'],
    );
  });

  it('ESC a in the middle of a line is ignored (Epson: only at the beginning of a line)', () => {
    // "AB" ESC a 1 "CD" LF "E" LF
    const { open } = decode(bytes('AB', 0x1b, 0x61, 1, 'CD', LF, 'E', LF));
    assert.equal(open.lines[0]!.align, 'left');
    assert.equal(open.lines[1]!.align, 'left');
    assert.equal(open.warnings.length, 1);
    assert.match(open.warnings[0]!.message, /beginning of a line/);
  });

  it('a double-width centred line counts its characters twice', () => {
    // ESC a 1, GS ! 10 (2x wide), "AB" LF: w = 4 columns, (48 - 4) / 2 = 22
    const line = decode(bytes(0x1b, 0x61, 1, 0x1d, 0x21, 0x10, 'AB', LF)).open.lines[0]!;
    assert.equal(line.width, 4);
    assert.equal(line.indent, 22);
  });

  it('centres a font B line in the font B grid (64 columns on 80 mm)', () => {
    // ESC a 1, ESC M 1, "ABCD" LF: (64 - 4) / 2 = 30
    const line = decode(bytes(0x1b, 0x61, 1, 0x1b, 0x4d, 1, 'ABCD', LF)).open.lines[0]!;
    assert.equal(line.font, 'B');
    assert.equal(line.columns, 64);
    assert.equal(line.indent, 30);
  });
});

describe('decoder: wrapping at the column budget', () => {
  it('the character that does not fit starts the next line', () => {
    const { open } = decode(bytes('x'.repeat(40), LF), { columns: 32 });
    assert.deepEqual(
      open.lines.map((l) => [l.text.length, l.wrapped]),
      [
        [32, true],
        [8, false],
      ],
    );
  });

  it('exactly C characters then LF make one line, not a blank one after it', () => {
    const { open } = decode(bytes('y'.repeat(32), LF), { columns: 32 });
    assert.equal(open.lines.length, 1);
  });

  it('double-width characters wrap by their doubled width', () => {
    // GS ! 10, 20 characters of 2 columns in 32 columns: 16 fit
    const { open } = decode(bytes(0x1d, 0x21, 0x10, 'z'.repeat(20), LF), { columns: 32 });
    assert.deepEqual(
      open.lines.map((l) => [l.text.length, l.width]),
      [
        [16, 32],
        [4, 8],
      ],
    );
  });

  it('each wrapped line of centred text is centred on its own', () => {
    // ESC a 1, 36 characters in 32 columns: 32 (indent 0), then 4 (indent 14)
    const { open } = decode(bytes(0x1b, 0x61, 1, 'w'.repeat(36), LF), { columns: 32 });
    assert.deepEqual(
      open.lines.map((l) => l.indent),
      [0, 14],
    );
  });

  it('font B has its own budget (64 on 48-column paper, 42 on 32-column paper)', () => {
    const b64 = decode(bytes(0x1b, 0x4d, 1, 'b'.repeat(65), LF)).open; // ESC M 1
    assert.deepEqual(
      b64.lines.map((l) => l.text.length),
      [64, 1],
    );
    const b42 = decode(bytes(0x1b, 0x4d, 1, 'b'.repeat(43), LF), { columns: 32 }).open;
    assert.deepEqual(
      b42.lines.map((l) => l.text.length),
      [42, 1],
    );
    const custom = decode(bytes(0x1b, 0x4d, 1, 'b'.repeat(57), LF), {
      columns: 42,
      columnsFontB: 56,
    }).open;
    assert.deepEqual(
      custom.lines.map((l) => [l.text.length, l.columns]),
      [
        [56, 56],
        [1, 56],
      ],
    );
  });
});

describe('decoder: horizontal positions', () => {
  it('HT advances to the next tab stop, every 8 columns by default', () => {
    // "A" HT "B" HT "C" LF
    const line = decode(bytes('A', 0x09, 'B', 0x09, 'C', LF)).open.lines[0]!;
    assert.equal(line.text, 'A       B       C');
    assert.deepEqual(
      line.runs.map((r) => r.column),
      [0, 8, 16],
    );
  });

  it('ESC D sets tab stops in characters; ESC D NUL clears them', () => {
    // ESC D 04 0A 00, "A" HT "B" HT "C" LF
    const set = decode(bytes(0x1b, 0x44, 0x04, 0x0a, 0x00, 'A', 0x09, 'B', 0x09, 'C', LF)).open;
    assert.equal(set.lines[0]!.text, 'A   B     C');
    // ESC D 00, "A" HT "B" LF: no stop, HT ignored
    const cleared = decode(bytes(0x1b, 0x44, 0x00, 'A', 0x09, 'B', LF)).open;
    assert.equal(cleared.lines[0]!.text, 'AB');
  });

  it('ESC D ends at a non-increasing value, which is then ordinary data', () => {
    // ESC D 04 0A, then 0A (10 <= 10) ends the list and is an ordinary LF; "A" HT "B" HT "C" LF
    const { open } = decode(bytes(0x1b, 0x44, 0x04, 0x0a, LF, 'A', 0x09, 'B', 0x09, 'C', LF));
    assert.deepEqual(
      open.lines.map((l) => l.text),
      ['', 'A   B     C'],
    );
  });

  it('ESC $ sets the absolute position in dots; beyond the print area it is ignored', () => {
    // "A" ESC $ 60 00 (96 dots = column 8) "B" LF
    const line = decode(bytes('A', 0x1b, 0x24, 0x60, 0x00, 'B', LF)).open.lines[0]!;
    assert.equal(line.text, 'A       B');
    // ESC $ 58 02 (600 dots > 576): ignored with a warning
    const far = decode(bytes('A', 0x1b, 0x24, 0x58, 0x02, 'B', LF)).open;
    assert.equal(far.lines[0]!.text, 'AB');
    assert.equal(far.warnings.length, 1);
  });

  it('ESC \\ moves relative to the position, backwards with a negative value', () => {
    // "AB" ESC \ 18 00 (+24 dots = 2 columns) "C" ESC \ E8 FF (-24 dots) ... "D" overprints
    const line = decode(bytes('AB', 0x1b, 0x5c, 0x18, 0x00, 'C', LF)).open.lines[0]!;
    assert.equal(line.text, 'AB  C');
  });

  it('ESC SP n widens every character by n dots', () => {
    // ESC SP 0C: 12 + 12 = 24 dots per character = 2 columns
    const line = decode(bytes(0x1b, 0x20, 0x0c, 'AB', LF)).open.lines[0]!;
    assert.equal(line.width, 4);
  });

  it('GS L sets the left margin and GS W the print area, both in dots', () => {
    // GS L 30 00 (48 dots = 4 columns), "A" LF
    const margin = decode(bytes(0x1d, 0x4c, 0x30, 0x00, 'A', LF)).open.lines[0]!;
    assert.equal(margin.indent, 4);
    assert.equal(renderLine(margin), '    A');
    // GS W C0 00 (192 dots = 16 columns), 20 characters wrap at 16
    const area = decode(bytes(0x1d, 0x57, 0xc0, 0x00, 'q'.repeat(20), LF)).open;
    assert.deepEqual(
      area.lines.map((l) => [l.text.length, l.columns]),
      [
        [16, 16],
        [4, 16],
      ],
    );
  });
});

describe('decoder: code pages (ESC t) and international sets (ESC R)', () => {
  const printed = (...parts: Parameters<typeof bytes>) =>
    decode(bytes(...parts, LF)).open.lines[0]!.text;

  it('PC437 is the power-on page: 9C is the pound sign', () => {
    assert.equal(printed(0x9c), '£');
    assert.equal(printed(0x1b, 0x74, 0x00, 0x9b, 0x9c, 0x9d), '¢£¥'); // ESC t 0
  });

  it('PC858 (ESC t 19): D5 is the euro sign; PC850 (ESC t 2) has a dotless i there', () => {
    assert.equal(printed(0x1b, 0x74, 0x13, 0xd5), '€'); // ESC t 19
    assert.equal(printed(0x1b, 0x74, 0x02, 0xd5), 'ı'); // ESC t 2
  });

  it('WPC1252 (ESC t 16): 80 is the euro sign, E9 is é', () => {
    assert.equal(printed(0x1b, 0x74, 0x10, 0x80, 0xe9), '€é'); // ESC t 16
  });

  it('PC866 (ESC t 17) and WPC1251 (ESC t 46) print Cyrillic', () => {
    assert.equal(printed(0x1b, 0x74, 0x11, 0x80), 'А'); // ESC t 17: 80 = U+0410
    assert.equal(printed(0x1b, 0x74, 0x2e, 0xc0), 'А'); // ESC t 46: C0 = U+0410
  });

  it('an unknown ESC t number keeps the page and warns', () => {
    // ESC t 13 (PC858), ESC t 63 (not in the table), D5
    const { open } = decode(bytes(0x1b, 0x74, 0x13, 0x1b, 0x74, 0x3f, 0xd5, LF));
    assert.equal(open.lines[0]!.text, '€');
    assert.equal(open.warnings[0]!.bytes, '1B 74 3F');
  });

  it('the ESC t table can be swapped for a clone that renumbers its pages', () => {
    const clone = {
      0: { name: 'PC437', encoding: 'cp437' },
      3: { name: 'PC858', encoding: 'cp858' },
    };
    const { open } = decode(bytes(0x1b, 0x74, 0x03, 0xd5, LF), { codePages: clone }); // ESC t 3
    assert.equal(open.lines[0]!.text, '€');
  });

  it('ESC R n substitutes the national characters in the ASCII range', () => {
    assert.equal(printed(0x1b, 0x52, 0x03, '#'), '£'); // ESC R 3 (U.K.)
    assert.equal(printed(0x1b, 0x52, 0x02, '[\\]{|}~'), 'ÄÖÜäöüß'); // ESC R 2 (Germany)
    assert.equal(printed(0x1b, 0x52, 0x08, '\\'), '¥'); // ESC R 8 (Japan)
  });
});

describe('decoder: Kanji / Chinese double-byte mode (FS & / FS .)', () => {
  const SHAOJI = [0xc9, 0xd5, 0xbc, 0xa6]; // '烧鸡' in GB18030

  it('the GB18030 bytes used here are what iconv-lite encodes', () => {
    assert.deepEqual([...iconv.encode('烧鸡', 'gb18030')], SHAOJI);
  });

  it('FS & pairs bytes >= 0x80 and decodes GB18030; each character takes two columns', () => {
    // FS &, C9 D5 BC A6, FS ., LF
    const line = decode(bytes(0x1c, 0x26, SHAOJI, 0x1c, 0x2e, LF)).open.lines[0]!;
    assert.equal(line.text, '烧鸡');
    assert.equal(line.width, 4);
    assert.equal(line.runs[0]!.columns, 4);
  });

  it('ASCII mixes with double-byte characters in FS & mode', () => {
    // FS &, "A" C9 D5 "B", LF
    const line = decode(bytes(0x1c, 0x26, 'A', 0xc9, 0xd5, 'B', LF)).open.lines[0]!;
    assert.equal(line.text, 'A烧B');
    assert.deepEqual(
      line.runs.map((r) => [r.text, r.column, r.columns]),
      [['A烧B', 0, 4]],
    );
  });

  it('after FS . the same bytes are single-byte PC437 characters again', () => {
    const line = decode(bytes(0x1c, 0x26, 0x1c, 0x2e, 0xc9, 0xd5, LF)).open.lines[0]!;
    assert.equal(line.text, '╔╒');
  });

  it('a centred CJK line uses the 2-column widths', () => {
    // ESC a 1, FS &, 烧鸡: (48 - 4) / 2 = 22
    const line = decode(bytes(0x1b, 0x61, 1, 0x1c, 0x26, SHAOJI, LF)).open.lines[0]!;
    assert.equal(line.indent, 22);
  });

  it('CJK characters wrap as whole two-column cells', () => {
    // 17 characters (34 columns) in 32 columns: 16 fit
    const text = iconv.encode('烧'.repeat(17), 'gb18030');
    const { open } = decode(bytes(0x1c, 0x26, text, LF), { columns: 32 });
    assert.deepEqual(
      open.lines.map((l) => l.width),
      [32, 2],
    );
  });

  it('four-byte GB18030 sequences decode too', () => {
    const grin = iconv.encode('😀', 'gb18030');
    assert.equal(grin.length, 4);
    const line = decode(bytes(0x1c, 0x26, grin, LF)).open.lines[0]!;
    assert.equal(line.text, '😀');
  });

  it('a lead byte cut off by a command prints a replacement and warns', () => {
    // FS &, C9, LF
    const { open } = decode(bytes(0x1c, 0x26, 0xc9, LF));
    assert.equal(open.lines[0]!.text, '\uFFFD');
    assert.match(open.warnings[0]!.message, /incomplete double-byte/);
  });

  it('a clone that powers up in GBK mode decodes without FS &, and ESC @ returns to it', () => {
    const opts = { powerOnMultiByte: true };
    assert.equal(decode(bytes(SHAOJI, LF), opts).open.lines[0]!.text, '烧鸡');
    // FS . then ESC @: back in double-byte mode
    const again = decode(bytes(0x1c, 0x2e, 0x1b, 0x40, SHAOJI, LF), opts).open;
    assert.equal(again.lines[0]!.text, '烧鸡');
  });

  it('ESC @ leaves double-byte mode on an Epson-like printer', () => {
    const { open } = decode(bytes(0x1c, 0x26, 0x1b, 0x40, 0xc9, 0xd5, LF));
    assert.equal(open.lines[0]!.text, '╔╒');
  });

  it('FS ! doubles Kanji only; ESC ! doubles ASCII only; GS ! both', () => {
    // FS ! 0C (Kanji double width + height), "A" C9 D5
    const kanji = decode(bytes(0x1c, 0x26, 0x1c, 0x21, 0x0c, 'A', 0xc9, 0xd5, LF)).open.lines[0]!;
    assert.deepEqual(
      kanji.runs.map((r) => [r.text, r.width, r.columns]),
      [
        ['A', 1, 1],
        ['烧', 2, 4],
      ],
    );
    // ESC ! 20 (double width), "A" C9 D5
    const ank = decode(bytes(0x1c, 0x26, 0x1b, 0x21, 0x20, 'A', 0xc9, 0xd5, LF)).open.lines[0]!;
    assert.deepEqual(
      ank.runs.map((r) => [r.text, r.width, r.columns]),
      [
        ['A', 2, 2],
        ['烧', 1, 2],
      ],
    );
    // GS ! 11, "A" C9 D5
    const both = decode(bytes(0x1c, 0x26, 0x1d, 0x21, 0x11, 'A', 0xc9, 0xd5, LF)).open.lines[0]!;
    assert.deepEqual(
      both.runs.map((r) => [r.text, r.width, r.columns]),
      [['A烧', 2, 6]],
    );
  });
});

describe('decoder: UTF-8 mode (FS ( C fn 48)', () => {
  it('decodes UTF-8 and gives East Asian wide characters two columns', () => {
    // FS ( C 02 00 30 02: select UTF-8
    const text = Buffer.from('é烧x', 'utf8');
    const line = decode(bytes(0x1c, 0x28, 0x43, 0x02, 0x00, 0x30, 0x02, text, LF)).open.lines[0]!;
    assert.equal(line.text, 'é烧x');
    assert.equal(line.width, 4);
  });
});

describe('decoder: ESC @ initialise', () => {
  it('resets styles, alignment and code page', () => {
    // ESC E 1, GS ! 11, ESC a 1, ESC t 19, GS B 1, ESC @, "x" D5 LF
    const { open } = decode(
      bytes(
        0x1b,
        0x45,
        1,
        0x1d,
        0x21,
        0x11,
        0x1b,
        0x61,
        1,
        0x1b,
        0x74,
        19,
        0x1d,
        0x42,
        1,
        0x1b,
        0x40,
        'x',
        0xd5,
        LF,
      ),
    );
    const line = open.lines[0]!;
    assert.equal(line.align, 'left');
    assert.equal(line.text, 'x╒');
    const run = line.runs[0]!;
    assert.deepEqual([run.bold, run.width, run.height, run.reverse], [false, 1, 1, false]);
  });

  it('discards the unprinted line buffer (with a warning), as the printer does', () => {
    // "AB" ESC @ "C" LF
    const { open } = decode(bytes('AB', 0x1b, 0x40, 'C', LF));
    assert.deepEqual(
      open.lines.map((l) => l.text),
      ['C'],
    );
    assert.match(open.warnings[0]!.message, /discarded 2/);
  });

  it('plain text of a small receipt', () => {
    const stream = bytes(
      [0x1b, 0x40], // ESC @
      [0x1b, 0x61, 0x01], // ESC a 1
      [0x1d, 0x21, 0x11], // GS ! 11
      'CAFE',
      LF,
      [0x1d, 0x21, 0x00], // GS ! 00
      [0x1b, 0x61, 0x00], // ESC a 0
      'Coffee',
      [0x1b, 0x24, 0xd8, 0x00], // ESC $ 216 dots = column 18
      '2.50',
      LF,
    );
    assert.equal(
      renderText(decode(stream, { columns: 24 }).open),
      '        CAFE\nCoffee            2.50\n',
    );
  });
});
