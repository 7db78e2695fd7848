/**
 * The order API's timestamps: `yyyy-MM-dd HH:mm:ss`, service local time, no zone (order-api
 * conventions). They are compared and subtracted as wall-clock values (fields read as if UTC),
 * which is exact for ordering and for the 30-day rule and immune to the host's time zone.
 */
import { z } from 'zod';
import { contractFacts, typeError } from './validation.js';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}

function realDate(y: number, mo: number, d: number): boolean {
  return y >= 1 && mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth(y, mo);
}

/** The number written by `count` ASCII digits of `text` from `at`, or -1 if one is not a digit. */
function digitsAt(text: string, at: number, count: number): number {
  let n = 0;
  for (let i = at; i < at + count; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    n = n * 10 + digit;
  }
  return n;
}

/**
 * Milliseconds of the wall-clock value, or null when it is not a real date-time. Read character
 * by character: every instruction's createTime passes here twice (schema, freshness), and the
 * regular expression with its match array and a Date cost ~0.6 µs, a tenth of the schema (issue 16).
 */
export function wallClockMs(value: string): number | null {
  if (
    value.length !== 19 ||
    value[4] !== '-' ||
    value[7] !== '-' ||
    value[10] !== ' ' ||
    value[13] !== ':' ||
    value[16] !== ':'
  )
    return null;
  const y = digitsAt(value, 0, 4);
  const mo = digitsAt(value, 5, 2);
  const d = digitsAt(value, 8, 2);
  const h = digitsAt(value, 11, 2);
  const mi = digitsAt(value, 14, 2);
  const s = digitsAt(value, 17, 2);
  // -1 (not digits) fails these comparisons too.
  if (!realDate(y, mo, d) || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59) return null;
  // Date.UTC reads years 0 to 99 as 1900 to 1999; setUTCFullYear takes the year as written.
  if (y >= 100) return Date.UTC(y, mo - 1, d, h, mi, s);
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, 0);
  return date.getTime();
}

export function isTimestamp(value: string): boolean {
  return wallClockMs(value) !== null;
}

export function isDate(value: string): boolean {
  const m = DATE.exec(value);
  if (!m) return false;
  const [y, mo, d] = m.slice(1).map(Number) as [number, number, number];
  return realDate(y, mo, d);
}

const timestampFormats = new Map<string | undefined, Intl.DateTimeFormat>();

/** One formatter per time zone: building one costs more than formatting (every instruction
 * received is checked against the wall clock through it; issue 16). */
function timestampFormat(timeZone: string | undefined): Intl.DateTimeFormat {
  let format = timestampFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    timestampFormats.set(timeZone, format);
  }
  return format;
}

const two = (n: number) => (n < 10 ? `0${n}` : String(n));

/** `yyyy-MM-dd HH:mm:ss` of the given instant in `timeZone` (default: the host's zone). */
export function formatTimestamp(date: Date, timeZone?: string): string {
  // The host's zone from Date's own fields: the same zone and rules as Intl's default, without
  // the locale data a DateTimeFormat loads (8 MB of RSS, on every instruction's freshness check;
  // issue 16). A zone named in the config still goes through Intl.
  if (timeZone === undefined) {
    return `${String(date.getFullYear()).padStart(4, '0')}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
  }
  const parts = timestampFormat(timeZone).formatToParts(date);
  const get = (type: Intl.DateTimeFormatPartTypes) =>
    parts.find((p) => p.type === type)?.value ?? '00';
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}:${get('second')}`;
}

/** Inverse of `wallClockMs`: the timestamp string of a wall-clock millisecond value. */
export function formatWallClock(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

export const timestamp = z
  .string({ error: typeError('a string yyyy-MM-dd HH:mm:ss') })
  .refine(isTimestamp, 'must be a real date and time in the form yyyy-MM-dd HH:mm:ss');

/**
 * `isTimestamp` as a regular expression, for the contract documents (issue 19): years 0001 to
 * 9999, the days of each month, 29 February in leap years only, hours 00 to 23. Without
 * lookaround and with [0-9] rather than \d (Python's \d also matches other scripts' digits), so
 * that the regex engines of other languages (RE2 in Go, Python's re) read it as ECMA-262 does.
 */
const YEAR = '(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])';
const LEAP_YEAR =
  '(?:[0-9][0-9](?:[2468][048]|[13579][26]|0[48])|(?:[2468][048]|[13579][26]|0[48])00)';
export const TIMESTAMP_PATTERN = `^(?:${LEAP_YEAR}-02-29|${YEAR}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))) (?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]$`;
contractFacts.add(timestamp, {
  pattern: TIMESTAMP_PATTERN,
  description: 'yyyy-MM-dd HH:mm:ss, a real date and time, with no zone',
});
