/**
 * The peso sign as a user-defined character (issue 18): on a profile that takes them, amounts
 * print `₱` in one column, the job downloads its glyph once (`ESC &` after `ESC @`) and selects the
 * user-defined set only around each sign (`ESC % 1` ... `ESC % 0`); on a profile that does not,
 * amounts keep printing `PHP` (decision 22). What the bytes print is checked by the emulator in
 * test/emulator/udc.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { charsetFor } from '../../src/receipt/charset.js';
import { receiptOptions } from '../../src/receipt/options.js';
import { getProfile, loadProfiles, parseProfile } from '../../src/receipt/profile.js';
import { renderReceipt } from '../../src/receipt/render.js';
import {
  glyphColumns,
  PESO_SIGN,
  type UserDefinedCharacter,
} from '../../src/receipt/user-defined.js';
import { displayWidth } from '../../src/receipt/width.js';
import { loadFixture, STORE_OPTIONS } from '../helpers/receipts.js';

const ESC = 0x1b;
const INIT = [ESC, 0x40, 0x1c, 0x2e, ESC, 0x4d, 0]; // ESC @, FS ., ESC M 0
const DEFINE = [ESC, 0x26]; // ESC &
const SELECT = [ESC, 0x25, 1];
const CANCEL = [ESC, 0x25, 0];

/** Offsets of every occurrence of `seq` in `bytes` from `from`. */
function find(bytes: Uint8Array, seq: readonly number[], from = 0): number[] {
  const at: number[] = [];
  for (let i = from; i + seq.length <= bytes.length; i++) {
    if (seq.every((b, k) => bytes[i + k] === b)) at.push(i);
  }
  return at;
}

/** Amounts as the layout prints them: `₱1,234.56`, `-₱60.00`, `PHP 3.80`. */
const AMOUNT = /-?(₱|PHP )?\d[\d,]*\.\d\d\b/g;

function render(profileId: string, options = STORE_OPTIONS, fixture = 'queue-online-pwd') {
  return renderReceipt({ source: loadFixture(fixture), profile: getProfile(profileId), options });
}

describe('profiles: userDefinedCharacters', () => {
  it('is on for the generic and Epson profiles, off for the Chinese CJK clone', () => {
    const on = Object.fromEntries(
      [...loadProfiles().values()].map((p) => [p.id, p.userDefinedCharacters]),
    );
    assert.deepEqual(on, {
      'epson-tm-t20iii': true,
      'epson-tm-t88vi': true,
      'generic-58mm': true,
      'generic-80mm': true,
      'generic-80mm-buzzer': true,
      'pos-5890-gb18030': false,
    });
  });

  it('defaults to false: a profile must claim the commands to get them', () => {
    const { userDefinedCharacters: _, ...rest } = getProfile('generic-80mm');
    assert.equal(parseProfile(rest, 'test').userDefinedCharacters, false);
  });

  it('makes ₱ a one-column character of the charset, only where the profile says so', () => {
    const udc = charsetFor(getProfile('generic-80mm'));
    assert.equal(udc.inCodepage('₱'), true);
    assert.deepEqual(udc.map('₱125.00'), { text: '₱125.00', unprintable: [] });
    assert.equal(displayWidth('₱'), 1);
    assert.deepEqual([...udc.userDefined.keys()], ['₱']);
    const clone = charsetFor(getProfile('pos-5890-gb18030'));
    assert.equal(clone.inCodepage('₱'), false);
    assert.deepEqual(clone.map('₱125.00'), { text: 'PHP 125.00', unprintable: [] });
    assert.equal(clone.userDefined.size, 0);
    // The glyph is drawn for font A: a profile printing in font B keeps the ISO code.
    const fontB = charsetFor({ ...getProfile('generic-80mm'), font: 'B' });
    assert.equal(fontB.inCodepage('₱'), false);
  });
});

describe('the ₱ glyph', () => {
  it('is 24 rows of 12 dots standing on an ESC & code (0x20-0x7E)', () => {
    assert.equal(PESO_SIGN.char, '₱');
    assert.ok(PESO_SIGN.code >= 0x20 && PESO_SIGN.code <= 0x7e);
    assert.equal(PESO_SIGN.rows.length, 24);
    for (const row of PESO_SIGN.rows) assert.match(row, /^[#.]{12}$/);
  });

  it('goes to ESC & column by column, 3 bytes each, the top dot in the most significant bit', () => {
    const rows = Array.from({ length: 24 }, () => '.'.repeat(12));
    rows[0] = `#${'.'.repeat(10)}#`; // top dot of the first and the last column
    rows[23] = '.#..........'; // bottom dot of the second column
    rows[8] = '..#.........'; // top dot of the third column's second byte
    const dot: UserDefinedCharacter = { char: 'x', code: 0x41, rows };
    const bytes = glyphColumns(dot);
    assert.equal(bytes.length, 36);
    assert.deepEqual(bytes.slice(0, 9), [0x80, 0, 0, 0, 0, 0x01, 0, 0x80, 0]);
    assert.deepEqual(bytes.slice(33), [0x80, 0, 0]);
  });
});

describe('a receipt with amounts on generic-80mm', () => {
  const rendered = render('generic-80mm');
  const lines = rendered.text.split('\n');
  const signs = [...rendered.text].filter((c) => c === '₱').length;

  it('prints ₱ before every amount and PHP nowhere', () => {
    const amounts = lines.flatMap((l) => l.match(AMOUNT) ?? []);
    assert.equal(amounts.length, 11, amounts.join(' | '));
    for (const amount of amounts) assert.match(amount, /^-?₱\d/);
    assert.equal(signs, 11);
    assert.ok(!rendered.text.includes('PHP'));
    assert.ok(lines.some((l) => /^TOTAL {36}₱480\.00$/.test(l)));
    assert.ok(lines.some((l) => /^PWD discount {29}-₱60\.00$/.test(l)));
    assert.deepEqual(rendered.warnings, []);
  });

  it('keeps every line to the columns, and every line with an amount exactly as wide', () => {
    const columns = rendered.layout.columns;
    assert.equal(columns, 48);
    let withSign = 0;
    for (const c of rendered.layout.commands) {
      if (c.kind !== 'line') continue;
      const text = c.segments.map((s) => s.text).join('');
      const width = c.segments.reduce((n, s) => n + displayWidth(s.text) * s.style.width, 0);
      assert.ok(width <= columns, text);
      if (text.includes('₱')) {
        withSign++;
        assert.equal(width, columns, text);
      }
    }
    assert.equal(withSign, 8, 'three item lines, five total rows');
  });

  it('downloads the glyph once, right after initializing, as ESC & 3 c c 12 and 36 bytes', () => {
    const bytes = rendered.bytes;
    assert.deepEqual([...bytes.subarray(0, INIT.length)], INIT);
    assert.deepEqual(find(bytes, DEFINE), [INIT.length], 'one ESC & and only there');
    const define = [...bytes.subarray(INIT.length, INIT.length + 6 + 36)];
    assert.deepEqual(define.slice(0, 6), [ESC, 0x26, 3, PESO_SIGN.code, PESO_SIGN.code, 12]);
    assert.deepEqual(define.slice(6), glyphColumns(PESO_SIGN));
  });

  it('selects the user-defined set around each ₱ only, and always cancels it', () => {
    const bytes = rendered.bytes;
    const after = INIT.length + 6 + 36;
    const selects = find(bytes, SELECT, after);
    const cancels = find(bytes, CANCEL, after);
    assert.equal(selects.length, signs);
    assert.equal(cancels.length, signs);
    selects.forEach((at, i) => {
      // ESC % 1, the code, ESC % 0: nothing else is printed with the set selected.
      assert.equal(bytes[at + 3], PESO_SIGN.code);
      assert.equal(cancels[i], at + 4);
    });
    assert.ok(!find(bytes, SELECT).some((at) => at < after), 'not selected before the definition');
  });

  it('carries the definition in every print of the order: a reprint is a job of its own', () => {
    const reprint = renderReceipt({
      source: loadFixture('queue-online-pwd'),
      profile: getProfile('generic-80mm'),
      options: STORE_OPTIONS,
      markings: { reprint: { count: 2, originalTime: '2026-11-25 12:31:00' } },
    });
    assert.deepEqual(find(reprint.bytes, DEFINE), [INIT.length]);
    assert.equal(find(reprint.bytes, SELECT).length, signs);
  });
});

describe('no ₱, no user-defined character', () => {
  it('the ISO code display prints PHP and downloads nothing', () => {
    const code = render(
      'generic-80mm',
      receiptOptions({ money: { currency: 'PHP', locale: 'en-PH', display: 'code' } }),
    );
    assert.match(code.text, /^TOTAL +PHP 480\.00$/m);
    assert.ok(!code.text.includes('₱'));
    assert.deepEqual(find(code.bytes, DEFINE), []);
    assert.deepEqual(find(code.bytes, SELECT), []);
  });

  it('a kitchen ticket (no amounts) downloads nothing', () => {
    const kitchen = renderReceipt({
      source: loadFixture('queue-online-pwd'),
      profile: getProfile('generic-80mm'),
      options: STORE_OPTIONS,
      document: { layout: 'kitchen', role: 'kitchen' },
    });
    assert.deepEqual(find(kitchen.bytes, DEFINE), []);
  });

  it('pos-5890-gb18030 (no user-defined characters) keeps PHP on every amount (decision 22)', () => {
    const clone = render('pos-5890-gb18030');
    const amounts = clone.text.split('\n').flatMap((l) => l.match(AMOUNT) ?? []);
    assert.equal(amounts.length, 11);
    for (const amount of amounts) assert.match(amount, /^-?PHP \d/);
    assert.ok(!clone.text.includes('₱'));
    assert.deepEqual(find(clone.bytes, DEFINE), []);
    assert.deepEqual(find(clone.bytes, SELECT), []);
    for (const line of clone.text.split('\n')) assert.ok(displayWidth(line) <= 32, line);
  });
});
