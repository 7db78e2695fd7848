import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  formatTimestamp,
  formatWallClock,
  isDate,
  isTimestamp,
  parseWith,
  timestamp,
  wallClockMs,
} from '../../src/protocol/index.js';

const SECOND = 1000;
const DAY = 86_400 * SECOND;

describe('isTimestamp / wallClockMs: real date-times only', () => {
  it('accepts ordinary timestamps and the last second of a day', () => {
    for (const s of [
      '2026-11-25 12:30:05',
      '2026-01-01 00:00:00',
      '2026-12-31 23:59:59',
      '2026-01-31 23:59:59',
      '2026-04-30 00:00:00',
      '0001-01-01 00:00:00',
      '9999-12-31 23:59:59',
    ]) {
      assert.equal(isTimestamp(s), true, s);
      assert.notEqual(wallClockMs(s), null, s);
    }
  });

  it('Feb 29 exists only in leap years (divisible by 4, centuries only by 400)', () => {
    const leap = ['2024', '2028', '2000', '2400', '1996', '0004'];
    const common = ['2025', '2026', '2023', '1900', '2100', '1800', '2200'];
    for (const y of leap)
      assert.equal(isTimestamp(`${y}-02-29 12:00:00`), true, `${y} is a leap year`);
    for (const y of common)
      assert.equal(isTimestamp(`${y}-02-29 12:00:00`), false, `${y} is not a leap year`);
    for (const y of [...leap, ...common]) assert.equal(isTimestamp(`${y}-02-28 12:00:00`), true);
    assert.equal(isTimestamp('2024-02-30 00:00:00'), false);
  });

  it('30-day months have no 31st; 31-day months do', () => {
    for (const m of ['04', '06', '09', '11']) {
      assert.equal(isTimestamp(`2026-${m}-31 00:00:00`), false, `month ${m}`);
      assert.equal(isTimestamp(`2026-${m}-30 00:00:00`), true, `month ${m}`);
    }
    for (const m of ['01', '03', '05', '07', '08', '10', '12']) {
      assert.equal(isTimestamp(`2026-${m}-31 00:00:00`), true, `month ${m}`);
      assert.equal(isTimestamp(`2026-${m}-32 00:00:00`), false, `month ${m}`);
    }
  });

  it('rejects month 00 and 13, day 00, year 0000', () => {
    for (const s of [
      '2026-00-10 00:00:00',
      '2026-13-10 00:00:00',
      '2026-05-00 00:00:00',
      '0000-01-01 00:00:00',
    ]) {
      assert.equal(isTimestamp(s), false, s);
      assert.equal(wallClockMs(s), null, s);
    }
  });

  it('rejects 24:00:00, minute 60 and second 60 (no leap seconds)', () => {
    for (const s of [
      '2026-01-01 24:00:00',
      '2026-01-01 12:60:00',
      '2026-01-01 12:00:60',
      '2026-12-31 23:59:60',
    ]) {
      assert.equal(isTimestamp(s), false, s);
    }
  });

  it('rejects wrong separators, padding, extra text and other digits', () => {
    for (const s of [
      '2026/01/01 00:00:00',
      '2026-01-01T00:00:00',
      '2026-01-01T00:00:00Z',
      '2026-01-01  00:00:00',
      '2026-01-01 00.00.00',
      '2026-01-01 00:00',
      '2026-01-01',
      '2026-1-01 00:00:00',
      '2026-01-1 00:00:00',
      '2026-01-01 0:00:00',
      '26-01-01 00:00:00',
      '+2026-01-01 00:00:00',
      '02026-01-01 00:00:00',
      ' 2026-01-01 00:00:00',
      '2026-01-01 00:00:00 ',
      '2026-01-01 00:00:00\n',
      '2026-01-01 00:00:00.000',
      '2026-01-01 00:00:00+08:00',
      '２０２６-01-01 00:00:00',
      '٢٠٢٦-01-01 00:00:00',
      '',
    ]) {
      assert.equal(isTimestamp(s), false, JSON.stringify(s));
      assert.equal(wallClockMs(s), null, JSON.stringify(s));
    }
  });

  it('the timestamp schema says what is wrong', () => {
    const bad = parseWith(timestamp, '2026-02-30 00:00:00');
    assert.ok(!bad.ok);
    assert.match(bad.issues[0]!.message, /real date and time in the form yyyy-MM-dd HH:mm:ss/);
    const missing = parseWith(timestamp, undefined);
    assert.ok(!missing.ok);
    assert.equal(missing.issues[0]!.message, 'is required');
    const num = parseWith(timestamp, 0);
    assert.ok(!num.ok);
    assert.match(num.issues[0]!.message, /must be a string/);
  });
});

describe('wallClockMs: values and ordering', () => {
  it('reads the fields as if UTC (hand-computed epoch values)', () => {
    assert.equal(wallClockMs('1970-01-01 00:00:00'), 0);
    assert.equal(wallClockMs('1970-01-01 00:00:01'), 1000);
    assert.equal(wallClockMs('1970-01-02 00:00:00'), DAY);
    assert.equal(wallClockMs('1969-12-31 23:59:59'), -1000);
    // 30 years of 365 days plus 7 leap days (72, 76, 80, 84, 88, 92, 96) = 10957 days.
    assert.equal(wallClockMs('2000-01-01 00:00:00'), 10_957 * DAY);
    assert.equal(wallClockMs('2000-01-01 00:00:00'), 946_684_800_000);
    assert.equal(wallClockMs('2000-03-01 00:00:00'), (10_957 + 31 + 29) * DAY);
  });

  it('years below 100 are not shifted into the 1900s', () => {
    // 0001-01-01 is 719162 days before 1970-01-01 in the proleptic Gregorian calendar.
    assert.equal(wallClockMs('0001-01-01 00:00:00'), -719_162 * DAY);
    assert.notEqual(wallClockMs('0050-06-15 00:00:00'), wallClockMs('1950-06-15 00:00:00'));
    assert.equal(formatWallClock(wallClockMs('0050-06-15 08:09:10')!), '0050-06-15 08:09:10');
  });

  it('orders timestamps chronologically, with exact differences', () => {
    const ordered = [
      '2025-12-31 23:59:59',
      '2026-01-01 00:00:00',
      '2026-01-31 23:59:59',
      '2026-02-01 00:00:00',
      '2026-02-28 23:59:59',
      '2026-03-01 00:00:00',
      '2026-11-25 12:30:05',
    ];
    const ms = ordered.map((s) => wallClockMs(s)!);
    for (let i = 1; i < ms.length; i++)
      assert.ok(ms[i - 1]! < ms[i]!, `${ordered[i - 1]} < ${ordered[i]}`);
    assert.equal(ms[1]! - ms[0]!, SECOND);
    assert.equal(ms[3]! - ms[2]!, SECOND);
    assert.equal(ms[5]! - ms[4]!, SECOND);
    assert.equal(
      wallClockMs('2024-03-01 00:00:00')! - wallClockMs('2024-02-28 00:00:00')!,
      2 * DAY,
    );
    assert.equal(wallClockMs('2026-03-01 00:00:00')! - wallClockMs('2026-02-28 00:00:00')!, DAY);
  });

  it('does not depend on daylight saving (wall-clock days are always 24 h)', () => {
    // US and EU DST changes of 2026.
    assert.equal(wallClockMs('2026-03-09 00:00:00')! - wallClockMs('2026-03-08 00:00:00')!, DAY);
    assert.equal(wallClockMs('2026-10-26 00:00:00')! - wallClockMs('2026-10-25 00:00:00')!, DAY);
  });

  it('property: string order equals numeric order for valid timestamps', () => {
    const ts = fc
      .integer({
        min: wallClockMs('1900-01-01 00:00:00')! / 1000,
        max: wallClockMs('2199-12-31 23:59:59')! / 1000,
      })
      .map((s) => formatWallClock(s * 1000));
    fc.assert(
      fc.property(ts, ts, (a, b) => {
        const cmp = Math.sign(wallClockMs(a)! - wallClockMs(b)!);
        return cmp === (a < b ? -1 : a > b ? 1 : 0);
      }),
    );
  });
});

describe('isDate (yyyy-MM-dd)', () => {
  it('accepts real dates only', () => {
    for (const s of ['2026-11-25', '2024-02-29', '2000-02-29', '2026-12-31'])
      assert.equal(isDate(s), true, s);
    for (const s of [
      '2026-02-29',
      '1900-02-29',
      '2026-04-31',
      '2026-13-01',
      '2026-00-01',
      '2026-01-00',
      '0000-01-01',
      '2026-1-01',
      '2026/01/01',
      '2026-01-01 00:00:00',
      '20260101',
      ' 2026-01-01',
      '',
    ]) {
      assert.equal(isDate(s), false, JSON.stringify(s));
    }
  });
});

describe("formatTimestamp: the host's zone without Intl", () => {
  it('matches Intl for the zone TZ names at every instant, across daylight-saving changes', () => {
    // The host-zone path reads Date's local fields; Intl with TZ's zone named is the reference.
    // Node re-reads TZ when it changes; this file runs in its own process.
    const saved = process.env.TZ;
    try {
      for (const zone of ['America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'UTC']) {
        process.env.TZ = zone;
        // The Intl path with the zone named: tested on its own below, with fixed instants.
        const reference = (d: Date) => formatTimestamp(d, zone);
        // The New York spring-forward instant, a Lord Howe half-hour change, then random ones.
        for (const iso of [
          '2026-03-08T06:59:59.999Z',
          '2026-03-08T07:00:00.000Z',
          '2026-10-03T15:30:00.000Z',
        ])
          assert.equal(formatTimestamp(new Date(iso)), reference(new Date(iso)), `${zone} ${iso}`);
        fc.assert(
          fc.property(
            fc.date({
              min: new Date('1970-01-01T00:00:00Z'),
              max: new Date('2099-12-31T23:59:59Z'),
              noInvalidDate: true,
            }),
            (d) => formatTimestamp(d) === reference(d),
          ),
          { numRuns: 500 },
        );
      }
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });
});

describe('formatTimestamp: an instant in a given time zone', () => {
  it('Asia/Manila is UTC+8', () => {
    // 04:30:05 UTC + 8 h = 12:30:05 the same day.
    assert.equal(
      formatTimestamp(new Date('2026-11-25T04:30:05.000Z'), 'Asia/Manila'),
      '2026-11-25 12:30:05',
    );
    // 16:00 UTC on Dec 31 is midnight of the new year in Manila: hour 00, not 24.
    assert.equal(
      formatTimestamp(new Date('2026-12-31T16:00:00.000Z'), 'Asia/Manila'),
      '2027-01-01 00:00:00',
    );
    // 15:59:59 UTC Feb 28 2028 is 23:59:59 in Manila; 16:00 UTC is Feb 29 (2028 is a leap year).
    assert.equal(
      formatTimestamp(new Date('2028-02-28T15:59:59.000Z'), 'Asia/Manila'),
      '2028-02-28 23:59:59',
    );
    assert.equal(
      formatTimestamp(new Date('2028-02-28T16:00:00.000Z'), 'Asia/Manila'),
      '2028-02-29 00:00:00',
    );
  });

  it('drops milliseconds instead of rounding them up', () => {
    assert.equal(
      formatTimestamp(new Date('2026-11-25T04:30:05.999Z'), 'Asia/Manila'),
      '2026-11-25 12:30:05',
    );
  });

  it('UTC and half-hour zones', () => {
    assert.equal(
      formatTimestamp(new Date('2026-11-25T04:30:05.000Z'), 'UTC'),
      '2026-11-25 04:30:05',
    );
    // Asia/Kolkata is UTC+5:30.
    assert.equal(
      formatTimestamp(new Date('2026-01-01T18:29:59.000Z'), 'Asia/Kolkata'),
      '2026-01-01 23:59:59',
    );
    assert.equal(
      formatTimestamp(new Date('2026-01-01T18:30:00.000Z'), 'Asia/Kolkata'),
      '2026-01-02 00:00:00',
    );
  });

  it('follows daylight saving in zones that have it', () => {
    // New York switches to EDT (UTC-4) at 07:00 UTC on 2026-03-08 (second Sunday of March).
    assert.equal(
      formatTimestamp(new Date('2026-03-08T06:30:00.000Z'), 'America/New_York'),
      '2026-03-08 01:30:00',
    );
    assert.equal(
      formatTimestamp(new Date('2026-03-08T07:30:00.000Z'), 'America/New_York'),
      '2026-03-08 03:30:00',
    );
  });

  it('always produces a valid timestamp, equal to formatWallClock in UTC', () => {
    // From 2000: Manila kept UTC+8 throughout (it observed daylight saving as late as 1990).
    const seconds = fc.integer({
      min: wallClockMs('2000-01-01 00:00:00')! / 1000,
      max: wallClockMs('2199-12-31 23:59:59')! / 1000,
    });
    fc.assert(
      fc.property(seconds, (s) => {
        const d = new Date(s * 1000);
        const utc = formatTimestamp(d, 'UTC');
        return (
          utc === formatWallClock(s * 1000) &&
          isTimestamp(utc) &&
          isTimestamp(formatTimestamp(d, 'Asia/Manila')) &&
          wallClockMs(formatTimestamp(d, 'Asia/Manila'))! - s * 1000 === 8 * 3600 * 1000
        );
      }),
    );
  });
});

describe('formatWallClock: the inverse of wallClockMs', () => {
  it('formats hand-computed values', () => {
    assert.equal(formatWallClock(0), '1970-01-01 00:00:00');
    assert.equal(formatWallClock(946_684_800_000), '2000-01-01 00:00:00');
    assert.equal(formatWallClock(946_684_800_000 - 1000), '1999-12-31 23:59:59');
    assert.equal(formatWallClock(-1000), '1969-12-31 23:59:59');
  });

  it('round-trips every valid timestamp string', () => {
    for (const s of [
      '2024-02-29 23:59:59',
      '2026-11-25 12:30:05',
      '0001-01-01 00:00:00',
      '9999-12-31 23:59:59',
    ]) {
      assert.equal(formatWallClock(wallClockMs(s)!), s);
    }
    const ts = fc
      .record({
        y: fc.integer({ min: 1, max: 9999 }),
        mo: fc.integer({ min: 1, max: 12 }),
        d: fc.integer({ min: 1, max: 31 }),
        h: fc.integer({ min: 0, max: 23 }),
        mi: fc.integer({ min: 0, max: 59 }),
        s: fc.integer({ min: 0, max: 59 }),
      })
      .map(({ y, mo, d, h, mi, s }) => {
        const p = (n: number, w = 2) => String(n).padStart(w, '0');
        return `${p(y, 4)}-${p(mo)}-${p(d)} ${p(h)}:${p(mi)}:${p(s)}`;
      });
    fc.assert(
      fc.property(ts, (s) => {
        const ms = wallClockMs(s);
        // Day 29-31 may not exist in the month; then the string must be rejected, not rolled over.
        if (ms === null) return Number(s.slice(8, 10)) >= 29;
        return formatWallClock(ms) === s;
      }),
    );
  });

  it('round-trips whole-second values the other way', () => {
    fc.assert(
      fc.property(
        fc.integer({
          min: wallClockMs('0001-01-01 00:00:00')! / 1000,
          max: wallClockMs('9999-12-31 23:59:59')! / 1000,
        }),
        (s) => wallClockMs(formatWallClock(s * 1000)) === s * 1000,
      ),
    );
  });
});
