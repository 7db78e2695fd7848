/**
 * The text helpers every receipt field passes through: the sanitizer (issue 3 item 6: every
 * control character below 0x20, 0x7F and the C1 controls is removed before layout; invisible
 * format characters too) and the column arithmetic (issue 3 item 3: East Asian wide characters
 * count as two columns; escpos-notes "Paper and columns": CJK glyphs take two columns).
 *
 * Expected values are written from Unicode (UAX #11 widths, NFC, the Bidi_Control and
 * Variation_Selector lists) and by hand, never copied from the code's output.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { eastAsianWidth } from 'get-east-asian-width';
import { sanitizeLine, sanitizeMultiline } from '../../src/receipt/sanitize.js';
import { charWidth, displayWidth, wrap } from '../../src/receipt/width.js';

const hex = (cp: number) => `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;

// ---------------------------------------------------------------------------------------------
// Sanitizer

/** C0 controls with a meaning the sanitizer keeps as structure: TAB, LF, CR. */
const STRUCTURAL = new Set([0x09, 0x0a, 0x0d]);
const C0_REMOVED = Array.from({ length: 0x20 }, (_, i) => i).filter((cp) => !STRUCTURAL.has(cp));
const C1 = Array.from({ length: 0x20 }, (_, i) => 0x80 + i);

/** Zero-width characters: ZWSP, ZWNJ, ZWJ, word joiner, BOM / zero-width no-break space. */
const ZERO_WIDTH = [0x200b, 0x200c, 0x200d, 0x2060, 0xfeff];
/** Unicode's Bidi_Control property: ALM, LRM, RLM, LRE..RLO, LRI..PDI. */
const BIDI_CONTROLS = [
  0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069,
];
/** Variation selectors VS1-VS16 and (supplement) VS17-VS256, first and last of each block. */
const VARIATION_SELECTORS = [0xfe00, 0xfe0e, 0xfe0f, 0xe0100, 0xe01ef];

describe('sanitizeLine / sanitizeMultiline', () => {
  for (const [name, sanitize] of [
    ['sanitizeLine', sanitizeLine],
    ['sanitizeMultiline', sanitizeMultiline],
  ] as const) {
    it(`${name} removes and counts every C0 control but TAB, LF and CR`, () => {
      for (const cp of C0_REMOVED) {
        const c = String.fromCodePoint(cp);
        assert.deepEqual(sanitize(`a${c}b`), { text: 'ab', removed: 1 }, hex(cp));
      }
    });

    it(`${name} removes DEL and every C1 control (0x80-0x9F)`, () => {
      assert.deepEqual(sanitize('a\x7Fb'), { text: 'ab', removed: 1 });
      for (const cp of C1) {
        const c = String.fromCodePoint(cp);
        assert.deepEqual(sanitize(`a${c}b`), { text: 'ab', removed: 1 }, hex(cp));
      }
    });

    it(`${name} removes zero-width, bidi and variation-selector characters`, () => {
      for (const cp of [...ZERO_WIDTH, ...BIDI_CONTROLS, ...VARIATION_SELECTORS]) {
        const c = String.fromCodePoint(cp);
        assert.deepEqual(sanitize(`x${c}y`), { text: 'xy', removed: 1 }, hex(cp));
      }
    });

    it(`${name} counts each removed character`, () => {
      const r = sanitize('\x1Bp\x00\x19\u200B\u202EPizza\x9B\uFE0F');
      assert.equal(r.text, 'pPizza');
      assert.equal(r.removed, 7);
    });

    it(`${name} turns a tab into a space (not a removal)`, () => {
      assert.deepEqual(sanitize('Qty\t2'), { text: 'Qty 2', removed: 0 });
    });

    it(`${name} composes e + U+0301 into é (NFC)`, () => {
      const r = sanitize('Cafe\u0301');
      assert.equal(r.text, 'Caf\u00E9');
      assert.equal([...r.text].length, 4);
      assert.equal(r.removed, 0);
    });

    it(`${name} leaves printable text of any script alone`, () => {
      const text = 'Café 中文 라면 ₱50 “quote” – € £ 😀 Ｆｕｌｌ ½';
      assert.deepEqual(sanitize(text), { text, removed: 0 });
    });

    it(`${name}: nothing below 0x20 except LF, nor 0x7F-0x9F, survives (property)`, () => {
      const anyChar = fc.oneof(
        fc.integer({ min: 0, max: 0xff }),
        fc.constantFrom(...ZERO_WIDTH, ...BIDI_CONTROLS, ...VARIATION_SELECTORS),
        fc.integer({ min: 0x4e00, max: 0x4e20 }),
      );
      fc.assert(
        fc.property(fc.array(anyChar, { maxLength: 40 }), (cps) => {
          const input = String.fromCodePoint(...cps);
          const { text } = sanitize(input);
          for (const ch of text) {
            const cp = ch.codePointAt(0)!;
            assert.ok(cp === 0x0a || cp >= 0x20, hex(cp));
            assert.ok(cp < 0x7f || cp > 0x9f, hex(cp));
            assert.ok(!ZERO_WIDTH.includes(cp) && !BIDI_CONTROLS.includes(cp), hex(cp));
            assert.ok(!VARIATION_SELECTORS.includes(cp), hex(cp));
          }
        }),
        { numRuns: 300 },
      );
    });
  }

  it('sanitizeLine turns every line break into a space', () => {
    assert.deepEqual(sanitizeLine('one\r\ntwo\nthree\rfour'), {
      text: 'one two three four',
      removed: 0,
    });
  });

  it('sanitizeMultiline keeps LF and normalizes CRLF and CR to LF', () => {
    assert.deepEqual(sanitizeMultiline('one\r\ntwo\nthree\rfour'), {
      text: 'one\ntwo\nthree\nfour',
      removed: 0,
    });
    assert.deepEqual(sanitizeMultiline('a\n\nb'), { text: 'a\n\nb', removed: 0 });
  });

  it('an injected drawer kick loses its ESC: only the harmless letter and digits remain', () => {
    // ESC p 0 25 250: the 0x00, 0x19 and 0xFA bytes as characters; 0xFA (ú) is printable text.
    assert.deepEqual(sanitizeMultiline('Note\x1Bp\x00\x19\xFA\nend'), {
      text: 'Note\u0070\u00FA\nend',
      removed: 3,
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Widths

describe('charWidth / displayWidth', () => {
  it('ASCII letters, digits, punctuation and space are one column', () => {
    for (let cp = 0x20; cp < 0x7f; cp++) assert.equal(charWidth(String.fromCharCode(cp)), 1);
    assert.equal(displayWidth('Halo-halo x2'), 12);
  });

  it('CJK ideographs, Hangul, kana and fullwidth forms are two columns', () => {
    for (const ch of ['中', '文', '牛', '라', '면', 'あ', 'カ', 'Ａ', '１', '，', '。', '（'])
      assert.equal(charWidth(ch), 2, ch);
    assert.equal(displayWidth('牛肉面'), 6);
    assert.equal(displayWidth('ＡＢＣ'), 6);
    assert.equal(displayWidth('白切鸡 Hainanese Chicken'), 6 + 1 + 17);
  });

  it('halfwidth katakana and Latin with accents are one column', () => {
    for (const ch of ['ｱ', 'ｶ', 'é', 'ñ', 'Ü', '€', '£']) assert.equal(charWidth(ch), 1, ch);
  });

  it('combining marks are zero columns', () => {
    assert.equal(charWidth('\u0301'), 0); // combining acute (Mn)
    assert.equal(charWidth('\u0308'), 0); // combining diaeresis (Mn)
    assert.equal(charWidth('\u20DD'), 0); // combining enclosing circle (Me)
    assert.equal(displayWidth('e\u0301'), 1);
    assert.equal(displayWidth('Cafe\u0301 au lait'), 12);
  });

  it('ambiguous-width characters count as narrow (UAX #11 default)', () => {
    // U+00B7 middle dot, U+00B0 degree, U+03B1 alpha, U+2500 box drawing, U+00D7 times: all EA=A.
    for (const ch of ['\u00B7', '\u00B0', '\u03B1', '\u2500', '\u00D7']) {
      assert.equal(charWidth(ch), 1, hex(ch.codePointAt(0)!));
    }
  });

  it('a character outside the BMP is measured as one character', () => {
    assert.equal(displayWidth('𠀀'), 2); // U+20000, CJK extension B: wide
    assert.equal(displayWidth('😀'), 2); // U+1F600: wide emoji
    assert.equal(displayWidth(''), 0);
  });

  // The shortcut below U+0300 (issue 16) must give what the full rule gives: a combining mark
  // (Mn, Me) is zero columns, anything else what get-east-asian-width says.
  const fullRule = (ch: string) =>
    /\p{Mn}|\p{Me}/u.test(ch) ? 0 : eastAsianWidth(ch.codePointAt(0)!);

  it('every code point is as wide as the full rule says (the shortcut changes nothing)', () => {
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const ch = String.fromCodePoint(cp);
      if (charWidth(ch) !== fullRule(ch)) assert.fail(`${hex(cp)}: ${charWidth(ch)}`);
    }
  });

  it('a text is as wide as the sum of its characters by the full rule (property)', () => {
    const pieces = fc.constantFrom('a', ' ', 'é', '\u0301', '\u02ff', '\u0300', '中', '😀', 'ｱ');
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 30 }), (parts) => {
        const text = parts.join('');
        let expected = 0;
        for (const ch of text) expected += fullRule(ch);
        assert.equal(displayWidth(text), expected, JSON.stringify(text));
      }),
      { numRuns: 2000 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Wrapping

const squeeze = (s: string) => s.replace(/\s+/g, '');

describe('wrap', () => {
  it('empty input gives one empty line', () => {
    assert.deepEqual(wrap('', 10), ['']);
    assert.deepEqual(wrap('', 1), ['']);
  });

  it('text that fits stays on one line', () => {
    assert.deepEqual(wrap('Plain Rice', 10), ['Plain Rice']);
    assert.deepEqual(wrap('Plain Rice', 32), ['Plain Rice']);
  });

  it('breaks at spaces, never inside a word that fits on a line', () => {
    assert.deepEqual(wrap('Chicken Adobo with Garlic Rice', 12), [
      'Chicken', // "Chicken Adobo" is 13
      'Adobo with', // 10; "Adobo with Garlic" is 17
      'Garlic Rice', // 11
    ]);
    assert.deepEqual(wrap('hello world', 5), ['hello', 'world']);
    assert.deepEqual(wrap('one two three', 7), ['one two', 'three']);
  });

  it('splits a word longer than the line, losing nothing', () => {
    assert.deepEqual(wrap('abcdefghij', 4), ['abcd', 'efgh', 'ij']);
    // The word after a short one first fills the rest of the current line (after one space).
    assert.deepEqual(wrap('ab cdefghij', 5), ['ab cd', 'efghi', 'j']);
  });

  it('splits a CJK run without spaces between characters', () => {
    assert.deepEqual(wrap('扬州炒饭扬州炒饭', 6), ['扬州炒', '饭扬州', '炒饭']);
    assert.deepEqual(wrap('中文字', 4), ['中文', '字']);
  });

  it('never lets a wide character straddle the right edge', () => {
    // 5 columns: "中文" is 4, a third wide character would need columns 5-6.
    assert.deepEqual(wrap('中文字', 5), ['中文', '字']);
    assert.deepEqual(wrap('a中文', 2), ['a', '中', '文']);
    // After "ab" and a space only one column is left: the wide character goes to the next line.
    assert.deepEqual(wrap('ab 中文字', 4), ['ab', '中文', '字']);
    assert.deepEqual(wrap('abc 中文', 5), ['abc', '中文']);
  });

  it('keeps a combining mark with its base character', () => {
    const lines = wrap('abcde\u0301fg', 5);
    assert.deepEqual(lines, ['abcde\u0301', 'fg']);
  });

  it('rejects a width below one column', () => {
    assert.throws(() => wrap('x', 0), RangeError);
  });

  // Words of ASCII, accented Latin, CJK and emoji, joined by one or more spaces.
  const wordChar = fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789') },
    { weight: 2, arbitrary: fc.constantFrom('é', 'ñ', 'Ü', 'ç') },
    {
      weight: 3,
      arbitrary: fc.integer({ min: 0x4e00, max: 0x9fa5 }).map((c) => String.fromCodePoint(c)),
    },
    { weight: 1, arbitrary: fc.constantFrom('😀', '𠀀', 'Ａ', '라') },
  );
  const word = fc.string({ unit: wordChar, minLength: 1, maxLength: 30 });
  const text = fc
    .array(fc.tuple(word, fc.constantFrom(' ', ' ', ' ', '  ')), { maxLength: 12 })
    .map((parts) => parts.map(([w, sep]) => w + sep).join(''));

  it('property: no line is wider than the width, and no character is lost or reordered', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 2, max: 48 }), (t, width) => {
        const lines = wrap(t, width);
        assert.ok(lines.length >= 1);
        for (const line of lines) {
          assert.ok(displayWidth(line) <= width, `${JSON.stringify(line)} wider than ${width}`);
        }
        assert.equal(squeeze(lines.join('')), squeeze(t));
      }),
      { numRuns: 1000 },
    );
  });

  it('property: when every word fits, joining the lines with spaces restores the words', () => {
    fc.assert(
      fc.property(
        fc.array(word, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 2, max: 48 }),
        (words, width) => {
          fc.pre(words.every((w) => displayWidth(w) <= width));
          const t = words.join(' ');
          const lines = wrap(t, width);
          assert.equal(lines.join(' '), t);
          // ...and no line could have taken the next line's first word.
          for (let i = 0; i + 1 < lines.length; i++) {
            const next = lines[i + 1]!.split(' ')[0]!;
            assert.ok(displayWidth(lines[i]!) + 1 + displayWidth(next) > width);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
