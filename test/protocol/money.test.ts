import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  assertCents,
  centsToDecimal,
  formatMoney,
  type MoneyFormat,
  moneyFormatSchema,
  multiplyCents,
  parseWith,
  sumCents,
} from '../../src/protocol/index.js';

const PHP: MoneyFormat = { currency: 'PHP', locale: 'en-PH', display: 'symbol' };
const PHP_CODE: MoneyFormat = { currency: 'PHP', locale: 'en-PH', display: 'code' };
const EUR_DE: MoneyFormat = { currency: 'EUR', locale: 'de-DE', display: 'symbol' };
const USD_US: MoneyFormat = { currency: 'USD', locale: 'en-US', display: 'symbol' };

/** Nothing a receipt code page cannot print: no bidi marks, no no-break or narrow spaces. */
const INVISIBLE_OR_NBSP = /[\u00A0\u202F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

describe('formatMoney: PHP in en-PH', () => {
  it('12345 cents with the symbol is ₱123.45', () => {
    assert.equal(formatMoney(12345, PHP), '₱123.45');
  });

  it('12345 cents with the code is "PHP 123.45" with a plain space', () => {
    const s = formatMoney(12345, PHP_CODE);
    assert.equal(s, 'PHP 123.45');
    assert.equal(s.charCodeAt(3), 0x20);
    assert.doesNotMatch(s, INVISIBLE_OR_NBSP);
  });

  it('zero, small, negative and grouped amounts', () => {
    assert.equal(formatMoney(0, PHP), '₱0.00');
    assert.equal(formatMoney(1, PHP), '₱0.01');
    assert.equal(formatMoney(10, PHP), '₱0.10');
    assert.equal(formatMoney(100, PHP), '₱1.00');
    assert.equal(formatMoney(-5, PHP), '-₱0.05');
    assert.equal(formatMoney(-12345, PHP), '-₱123.45');
    assert.equal(formatMoney(100000, PHP), '₱1,000.00');
    assert.equal(formatMoney(100000000, PHP), '₱1,000,000.00');
    assert.equal(formatMoney(100000000, PHP_CODE), 'PHP 1,000,000.00');
  });

  it('negative zero prints as zero, not as "-₱0.00"', () => {
    assert.equal(formatMoney(-0, PHP), '₱0.00');
  });

  it('accepts bigint cents', () => {
    assert.equal(formatMoney(12345n, PHP), '₱123.45');
    assert.equal(formatMoney(-5n, PHP), '-₱0.05');
  });
});

describe('formatMoney: other currencies and locales', () => {
  it('EUR in de-DE: comma decimals, dot groups, symbol after a plain space', () => {
    assert.equal(formatMoney(12345, EUR_DE), '123,45 €');
    assert.equal(formatMoney(123456789, EUR_DE), '1.234.567,89 €');
    assert.equal(formatMoney(-5, EUR_DE), '-0,05 €');
    assert.doesNotMatch(formatMoney(12345, EUR_DE), INVISIBLE_OR_NBSP);
    assert.equal(formatMoney(12345, { ...EUR_DE, display: 'code' }), '123,45 EUR');
  });

  it('USD in en-US', () => {
    assert.equal(formatMoney(12345, USD_US), '$123.45');
    assert.equal(formatMoney(-12345, USD_US), '-$123.45');
    assert.equal(formatMoney(123456789, USD_US), '$1,234,567.89');
    assert.equal(formatMoney(12345, { ...USD_US, display: 'code' }), 'USD 123.45');
  });

  it('a currency without minor digits (JPY) shows the amount as whole units', () => {
    assert.equal(
      formatMoney(12345, { currency: 'JPY', locale: 'en-US', display: 'symbol' }),
      '¥12,345',
    );
  });

  it('property: the digits are exactly the cents, whatever the amount', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
        (n) => {
          const s = formatMoney(n, PHP_CODE);
          const digits = s.replace(/[^0-9]/g, '');
          return (
            BigInt(digits) === (n < 0 ? -BigInt(n) : BigInt(n)) &&
            s.startsWith(n < 0 ? '-PHP ' : 'PHP ')
          );
        },
      ),
    );
  });
});

describe('formatMoney: only whole cents, exact digits', () => {
  it('throws on non-integers', () => {
    for (const bad of [1.5, 0.1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      assert.throws(() => formatMoney(bad, PHP), RangeError, String(bad));
    }
  });

  it('throws on numbers beyond the safe integer range (they are not exact any more)', () => {
    assert.throws(() => formatMoney(Number.MAX_SAFE_INTEGER + 1, PHP), RangeError);
    assert.throws(() => formatMoney(1e20, PHP), RangeError);
  });

  it('the largest safe integer keeps every digit', () => {
    assert.equal(formatMoney(9007199254740991, PHP), '₱90,071,992,547,409.91');
    assert.equal(formatMoney(-9007199254740991, PHP), '-₱90,071,992,547,409.91');
  });

  it('large amounts that a float path gets wrong are exact', () => {
    // 9007199254740990 / 100 as a double is 90071992547409.90625, which rounds to .91.
    const cents = 9007199254740990;
    assert.notEqual(
      (cents / 100).toFixed(2),
      '90071992547409.90',
      'the example must defeat a float path',
    );
    assert.equal(formatMoney(cents, PHP), '₱90,071,992,547,409.90');
    // 9007199254740899 / 100 as a double is 90071992547408.984375, which rounds to .98.
    assert.notEqual((9007199254740899 / 100).toFixed(2), '90071992547408.99');
    assert.equal(formatMoney(9007199254740899, PHP), '₱90,071,992,547,408.99');
    assert.equal(formatMoney(4503599627370497, PHP), '₱45,035,996,273,704.97');
  });

  it('bigint amounts beyond the double range keep every digit', () => {
    assert.equal(formatMoney(123456789012345678901n, PHP), '₱1,234,567,890,123,456,789.01');
  });
});

describe('centsToDecimal', () => {
  it('builds the exact decimal string', () => {
    assert.equal(centsToDecimal(12345), '123.45');
    assert.equal(centsToDecimal(0), '0.00');
    assert.equal(centsToDecimal(7), '0.07');
    assert.equal(centsToDecimal(70), '0.70');
    assert.equal(centsToDecimal(100), '1.00');
    assert.equal(centsToDecimal(-5), '-0.05');
    assert.equal(centsToDecimal(-100), '-1.00');
    assert.equal(centsToDecimal(-0), '0.00');
    assert.equal(centsToDecimal(9007199254740991), '90071992547409.91');
    assert.equal(centsToDecimal(123456789012345678901n), '1234567890123456789.01');
  });

  it('honours other numbers of minor digits', () => {
    assert.equal(centsToDecimal(12345, 0), '12345');
    assert.equal(centsToDecimal(12345, 3), '12.345');
    assert.equal(centsToDecimal(5, 3), '0.005');
    assert.equal(centsToDecimal(-5, 3), '-0.005');
  });

  it('throws on non-integers', () => {
    for (const bad of [1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => centsToDecimal(bad), /must be a whole number of cents/);
    }
  });

  it('assertCents names what was wrong', () => {
    assert.throws(
      () => assertCents(2.5, 'serviceFee'),
      /^RangeError: serviceFee: must be a whole number of cents, got 2.5$/,
    );
    assert.equal(assertCents(42), 42n);
    assert.equal(assertCents(42n), 42n);
  });
});

describe('sumCents', () => {
  it('adds integer amounts; null and undefined count as zero', () => {
    assert.equal(sumCents(), 0);
    assert.equal(sumCents(100, 250), 350);
    assert.equal(sumCents(100, null, undefined, 250), 350);
    assert.equal(sumCents(null, undefined), 0);
    assert.equal(sumCents(37000, 1500, 500, -2000), 37000);
  });

  it('is exact where floats would drift', () => {
    // 0.10 + 0.20 as cents is 30, never 30.000000000000004.
    assert.equal(sumCents(10, 20), 30);
    assert.equal(sumCents(Number.MAX_SAFE_INTEGER, -1), Number.MAX_SAFE_INTEGER - 1);
    assert.equal(sumCents(Number.MAX_SAFE_INTEGER - 2, 1, 1), Number.MAX_SAFE_INTEGER);
  });

  it('throws on floats and non-finite numbers', () => {
    assert.throws(() => sumCents(100, 1.5), RangeError);
    assert.throws(() => sumCents(0.1, 0.2), RangeError);
    assert.throws(() => sumCents(Number.NaN), RangeError);
    assert.throws(() => sumCents(Number.POSITIVE_INFINITY), RangeError);
  });

  it('throws when the total leaves the safe range', () => {
    assert.throws(() => sumCents(Number.MAX_SAFE_INTEGER, 1), /out of range/);
    assert.throws(() => sumCents(-Number.MAX_SAFE_INTEGER, -1), /out of range/);
  });
});

describe('multiplyCents', () => {
  it('multiplies unit price by quantity exactly', () => {
    assert.equal(multiplyCents(18500, 2), 37000);
    assert.equal(multiplyCents(1_000_000, 1000), 1_000_000_000);
    assert.equal(multiplyCents(0, 1000), 0);
    assert.equal(multiplyCents(-250, 3), -750);
    assert.equal(multiplyCents(4503599627370495, 2), 9007199254740990);
  });

  it('throws on a fractional price or quantity, naming the quantity', () => {
    assert.throws(() => multiplyCents(1.5, 2), /amount: must be a whole number/);
    assert.throws(() => multiplyCents(100, 1.5), /quantity: must be a whole number/);
    assert.throws(() => multiplyCents(100, Number.NaN), /quantity/);
  });

  it('throws when the product leaves the safe range', () => {
    assert.throws(() => multiplyCents(Number.MAX_SAFE_INTEGER, 2), /out of range/);
    assert.throws(() => multiplyCents(4503599627370496, 2), /out of range/);
  });
});

describe('moneyFormatSchema', () => {
  it('defaults to PHP, en-PH, symbol', () => {
    const r = parseWith(moneyFormatSchema, {});
    assert.ok(r.ok);
    assert.deepEqual(r.value, { currency: 'PHP', locale: 'en-PH', display: 'symbol' });
  });

  it('keeps given values', () => {
    const r = parseWith(moneyFormatSchema, { currency: 'EUR', locale: 'de-DE', display: 'code' });
    assert.ok(r.ok);
    assert.deepEqual(r.value, { currency: 'EUR', locale: 'de-DE', display: 'code' });
  });

  it('rejects a currency that is not three capital letters', () => {
    for (const currency of ['php', 'Php', 'PESO', 'PH', 'P HP', '']) {
      const r = parseWith(moneyFormatSchema, { currency });
      assert.ok(!r.ok, currency);
      assert.deepEqual(
        r.issues.map((i) => i.path),
        ['currency'],
      );
      assert.match(r.issues[0]!.message, /ISO 4217/);
    }
  });

  it('rejects an unknown or malformed locale', () => {
    for (const locale of ['xx', 'zz', 'not a locale', '']) {
      const r = parseWith(moneyFormatSchema, { locale });
      assert.ok(!r.ok, locale);
      assert.deepEqual(
        r.issues.map((i) => i.path),
        ['locale'],
      );
      assert.match(r.issues[0]!.message, /BCP 47 locale/);
    }
  });

  it('rejects a display other than symbol or code', () => {
    const r = parseWith(moneyFormatSchema, { display: 'name' });
    assert.ok(!r.ok);
    assert.deepEqual(r.issues, [{ path: 'display', message: 'must be symbol or code' }]);
  });
});
