/**
 * What a printer can print (issue 3 item 4): characters the code page lacks are never silently
 * lost. Currency signs fall back to the ISO code (escpos-notes "Currency signs": `₱` is in no
 * Epson single-byte code page, print `PHP 125.00`, never `?`) unless the model takes user-defined
 * characters (test/receipt/udc.test.ts); CJK goes through the GB18030 font
 * on CJK-capable profiles; anything else becomes a visible `?`, reported once. Characters that a
 * code page keeps at byte positions 0x00-0x1F or 0x7F are never printable: encoding them would
 * emit ESC and other control bytes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import CodepageEncoder from '@point-of-sale/codepage-encoder';
import fc from 'fast-check';
import { charsetFor, REPLACEMENT } from '../../src/receipt/charset.js';
import { getProfile } from '../../src/receipt/profile.js';

const latin = charsetFor(getProfile('generic-58mm'));
const cjk = charsetFor(getProfile('pos-5890-gb18030'));

/**
 * The graphics PC437/PC850/PC858 print at positions 0x01-0x1F and 0x7F (IBM code page charts),
 * minus the two that PC850 also has in its upper half (¶ 0xF4, § 0xF5, tested apart), the bullet,
 * which the charset transliterates to `*`, and ‼, whose compatibility form (NFKC) is `!!`.
 */
const LOW_GRAPHICS = '☺☻♥♦♣♠◘○◙♂♀♪♫☼►◄↕▬↨↑↓→←∟↔▲▼⌂';

describe('charsetFor(generic-58mm): code page cp858', () => {
  it('uses the profile code page', () => {
    assert.equal(getProfile('generic-58mm').codepage, 'cp858');
    assert.equal(latin.codepage, 'cp858');
  });

  it('keeps printable ASCII unchanged', () => {
    let ascii = '';
    for (let cp = 0x20; cp < 0x7f; cp++) ascii += String.fromCharCode(cp);
    assert.deepEqual(latin.map(ascii), { text: ascii, unprintable: [] });
    for (const ch of ascii) assert.ok(latin.inCodepage(ch), ch);
  });

  it('keeps é, € (PC858 D5), £ and the rest of the PC850 upper half', () => {
    for (const ch of ['é', '€', '£', 'ü', 'Ç', 'ñ', 'Ñ', 'ß', '½', '¡', '«', '»', '¤', '█', '°']) {
      assert.ok(latin.inCodepage(ch), ch);
    }
    assert.deepEqual(latin.map('Café con leche € £'), {
      text: 'Café con leche € £',
      unprintable: [],
    });
  });

  it('without user-defined characters prints ₱ as PHP, with a space before digits, never as ?', () => {
    const plain = charsetFor({ ...getProfile('generic-58mm'), userDefinedCharacters: false });
    assert.equal(plain.inCodepage('₱'), false);
    assert.deepEqual(plain.map('₱125.00'), { text: 'PHP 125.00', unprintable: [] });
    assert.deepEqual(plain.map('₱ 125.00'), { text: 'PHP 125.00', unprintable: [] });
    assert.deepEqual(plain.map('Total in ₱'), { text: 'Total in PHP', unprintable: [] });
    assert.deepEqual(plain.map('-₱5'), { text: '-PHP 5', unprintable: [] });
  });

  it('prints other currency signs missing from the code page by their ISO code', () => {
    assert.equal(latin.map('₹10').text, 'INR 10');
    assert.equal(latin.map('₩1000').text, 'KRW 1000');
  });

  it('transliterates curly quotes, dashes and the ellipsis to ASCII', () => {
    assert.deepEqual(latin.map('“Lola’s” ‘best’ – pancit — fresh…'), {
      text: `"Lola's" 'best' - pancit - fresh...`,
      unprintable: [],
    });
  });

  it('prints fullwidth Latin and digits as their plain form (NFKC)', () => {
    assert.deepEqual(latin.map('ＡＢＣ　１２３'), { text: 'ABC 123', unprintable: [] });
  });

  it('replaces emoji, Hangul and CJK with ?, reporting each character once in order', () => {
    assert.deepEqual(latin.map('Spicy ramen 🌶 라면'), {
      text: 'Spicy ramen ? ??',
      unprintable: ['🌶', '라', '면'],
    });
    assert.deepEqual(latin.map('😀中😀中문'), {
      text: '?????',
      unprintable: ['😀', '中', '문'],
    });
    assert.equal(latin.isCjk('中'), false);
  });

  it('a character outside the BMP becomes one ?, not two', () => {
    assert.deepEqual(latin.map('a😀b'), { text: 'a?b', unprintable: ['😀'] });
  });

  it('never prints a character the code page keeps at 0x00-0x1F or 0x7F', () => {
    // The hazard is real: the code page library itself encodes these as control bytes.
    assert.deepEqual([...CodepageEncoder.encode('←☺⌂', 'cp858')], [0x1b, 0x01, 0x7f]);
    for (const ch of ['←', '☺', '⌂']) {
      assert.equal(latin.inCodepage(ch), false, ch);
      assert.deepEqual(latin.map(ch), { text: REPLACEMENT, unprintable: [ch] });
    }
    for (const ch of LOW_GRAPHICS) assert.equal(latin.inCodepage(ch), false, ch);
    const mapped = latin.map(LOW_GRAPHICS);
    assert.equal(mapped.text, '?'.repeat([...LOW_GRAPHICS].length));
    assert.deepEqual(mapped.unprintable, [...LOW_GRAPHICS]);
    // ‼ (0x13) and • (0x07) print as their plain forms from the printable range instead.
    assert.equal(latin.inCodepage('‼'), false);
    assert.deepEqual(latin.map('‼ •'), { text: '!! *', unprintable: [] });
  });

  it('never prints ¶ or §: PC850 has them at F4/F5 but also at 0x14/0x15, where they encode', () => {
    assert.deepEqual([...CodepageEncoder.encode('¶§', 'cp858')], [0x14, 0x15]);
    for (const ch of ['¶', '§']) assert.equal(latin.inCodepage(ch), false, ch);
    assert.deepEqual(latin.map('Soup § special ¶'), {
      text: 'Soup ? special ?',
      unprintable: ['§', '¶'],
    });
  });

  it('maps control characters themselves to ? (the sanitizer removes them earlier)', () => {
    for (const ch of ['\x00', '\x1B', '\x1D', '\x10', '\x7F', '\x9B']) {
      assert.equal(latin.inCodepage(ch), false, JSON.stringify(ch));
      assert.equal(latin.map(ch).text, '?');
    }
  });

  it('property: the mapped text is made of code-page characters only, none of them a control', () => {
    const unit = fc.oneof(
      fc.integer({ min: 0, max: 0x2fff }),
      fc.integer({ min: 0xff00, max: 0xffef }),
      fc.integer({ min: 0x1f300, max: 0x1f64f }),
    );
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 30 }), (cps) => {
        const input = String.fromCodePoint(...cps);
        const { text, unprintable } = latin.map(input);
        for (const ch of text) {
          assert.ok(latin.inCodepage(ch), `U+${ch.codePointAt(0)!.toString(16)}`);
          const bytes = CodepageEncoder.encode(ch, 'cp858');
          assert.equal(bytes.length, 1);
          assert.ok(bytes[0]! >= 0x20 && bytes[0] !== 0x7f, `byte ${bytes[0]}`);
        }
        assert.equal(new Set(unprintable).size, unprintable.length);
        assert.ok([...text].filter((c) => c === '?').length >= unprintable.length);
        for (const ch of unprintable) assert.ok(input.includes(ch));
      }),
      { numRuns: 300 },
    );
  });
});

describe('charsetFor(pos-5890-gb18030): CJK through the GB18030 font', () => {
  it('has a CJK font and the same single-byte code page', () => {
    assert.deepEqual(getProfile('pos-5890-gb18030').cjk, { encoding: 'gb18030' });
    assert.equal(cjk.codepage, 'cp858');
  });

  it('keeps CJK Han characters and CJK punctuation, as CJK', () => {
    for (const ch of ['中', '牛', '肉', '面', '扬', '鸡', '，', '。', '（', '）']) {
      assert.ok(cjk.isCjk(ch), ch);
      assert.equal(cjk.inCodepage(ch), false, ch);
    }
    assert.deepEqual(cjk.map('白切鸡 Hainanese Chicken'), {
      text: '白切鸡 Hainanese Chicken',
      unprintable: [],
    });
    assert.deepEqual(cjk.map('酸辣汤（大份）'), { text: '酸辣汤（大份）', unprintable: [] });
  });

  it('replaces Hangul and characters GB18030 encodes in four bytes', () => {
    // U+20000 is in CJK extension B: four bytes in GB18030 (95 32 82 36), beyond the printer font.
    for (const ch of ['라', '면', '𠀀', '😀']) assert.equal(cjk.isCjk(ch), false, ch);
    assert.deepEqual(cjk.map('牛肉 라면 𠀀 😀'), {
      text: '牛肉 ?? ? ?',
      unprintable: ['라', '면', '𠀀', '😀'],
    });
  });

  it('keeps single-byte text from the code page and still maps ₱', () => {
    assert.equal(cjk.isCjk('A'), false);
    assert.equal(cjk.isCjk('é'), false);
    assert.deepEqual(cjk.map('Café ₱50'), { text: 'Café PHP 50', unprintable: [] });
  });

  it('never reports a fullwidth form as unprintable', () => {
    assert.deepEqual(cjk.map('ＡＢ１').unprintable, []);
  });

  it('narrow characters are never sent to the CJK font', () => {
    // Ambiguous-width Greek is in GB2312, but a double-byte font would print it two columns wide.
    assert.equal(cjk.isCjk('α'), false);
  });
});
