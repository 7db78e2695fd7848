/**
 * Money. The order API carries every amount as an integer number of cents (the currency's minor
 * unit). Amounts are only ever added as integers; formatting builds the decimal string with
 * integer arithmetic and lets Intl group and place the sign from that exact string, so no
 * amount ever passes through a float.
 */
import { z } from 'zod';

export const MONEY_DISPLAYS = ['symbol', 'code'] as const;
export type MoneyDisplay = (typeof MONEY_DISPLAYS)[number];

export interface MoneyFormat {
  /** ISO 4217 code, e.g. `PHP`. */
  currency: string;
  /** BCP 47 locale for grouping and sign placement, e.g. `en-PH`. */
  locale: string;
  /** `symbol`: `₱123.45`; `code`: `PHP 123.45` (for printers whose code page lacks the sign). */
  display: MoneyDisplay;
}

export const moneyFormatSchema = z.object({
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code of three capital letters, e.g. PHP')
    .default('PHP')
    .describe('Currency of the amounts (ISO 4217); amounts are in its minor unit (cents).'),
  locale: z
    .string()
    .refine(isSupportedLocale, 'must be a BCP 47 locale this Node.js knows, e.g. en-PH')
    .default('en-PH')
    .describe('Locale for digit grouping and the place of the sign.'),
  display: z
    .enum(MONEY_DISPLAYS, { error: 'must be symbol or code' })
    .default('symbol')
    .describe('symbol prints ₱123.45, code prints PHP 123.45.'),
});

function isSupportedLocale(locale: string): boolean {
  try {
    return Intl.NumberFormat.supportedLocalesOf([locale]).length > 0;
  } catch {
    return false;
  }
}

/** A formatter with its fraction digits, read once: `resolvedOptions()` builds a new object. */
interface Formatter {
  nf: Intl.NumberFormat;
  digits: number;
}

const formatters = new Map<string, Formatter>();

function formatterFor(fmt: MoneyFormat): Formatter {
  const key = `${fmt.locale}|${fmt.currency}|${fmt.display}`;
  let formatter = formatters.get(key);
  if (!formatter) {
    const nf = new Intl.NumberFormat(fmt.locale, {
      style: 'currency',
      currency: fmt.currency,
      currencyDisplay: fmt.display === 'code' ? 'code' : 'narrowSymbol',
    });
    formatter = { nf, digits: nf.resolvedOptions().maximumFractionDigits ?? 2 };
    formatters.set(key, formatter);
  }
  return formatter;
}

// Bidi marks and no-break spaces that Intl adds for screens: a receipt printer has no use for
// them and most code pages cannot print them.
const INVISIBLE = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
const NARROW_SPACES = /[\u00A0\u202F]/g;

/** Throws unless `value` is a safe integer: the only shape an amount may have. */
export function assertCents(value: number | bigint, what = 'amount'): bigint {
  if (typeof value === 'bigint') return value;
  if (!Number.isSafeInteger(value)) {
    throw new RangeError(`${what}: must be a whole number of cents, got ${value}`);
  }
  return BigInt(value);
}

/** The amount as an exact decimal string in major units, e.g. 12345 -> `123.45`, -5 -> `-0.05`. */
export function centsToDecimal(value: number | bigint, minorDigits = 2): string {
  const amount = assertCents(value);
  const negative = amount < 0n;
  const abs = negative ? -amount : amount;
  const scale = 10n ** BigInt(minorDigits);
  const whole = (abs / scale).toString();
  const fraction = minorDigits > 0 ? `.${(abs % scale).toString().padStart(minorDigits, '0')}` : '';
  return `${negative ? '-' : ''}${whole}${fraction}`;
}

/** 12345 cents PHP -> `₱123.45` (display symbol) or `PHP 123.45` (display code). */
export function formatMoney(value: number | bigint, fmt: MoneyFormat): string {
  const { nf, digits } = formatterFor(fmt);
  const decimal = centsToDecimal(value, digits);
  // Intl formats a numeric string as an exact decimal (ECMA-402 NumberFormat v3).
  return nf
    .format(decimal as Intl.StringNumericLiteral)
    .replace(INVISIBLE, '')
    .replace(NARROW_SPACES, ' ');
}

/** Integer sum of amounts in cents; absent amounts count as zero. */
export function sumCents(...values: ReadonlyArray<number | null | undefined>): number {
  let total = 0n;
  for (const v of values) if (v != null) total += assertCents(v);
  const result = Number(total);
  if (!Number.isSafeInteger(result)) throw new RangeError('sum of amounts is out of range');
  return result;
}

/** Integer product for `quantity x unit price`. */
export function multiplyCents(unitCents: number, quantity: number): number {
  const result = Number(assertCents(unitCents) * assertCents(quantity, 'quantity'));
  if (!Number.isSafeInteger(result)) throw new RangeError('line total is out of range');
  return result;
}
