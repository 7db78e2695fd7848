import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { FieldIssue } from '../../src/errors.js';
import {
  formatWallClock,
  type Parsed,
  parseWith,
  QUERY_LIMITS,
  type QueryParams,
  queryParamsSchema,
  queryResultSchema,
  wallClockMs,
} from '../../src/protocol/index.js';

const DAY_S = 24 * 60 * 60;

function ok(input: unknown): QueryParams {
  const r = parseWith(queryParamsSchema, input);
  if (!r.ok)
    assert.fail(`expected ${JSON.stringify(input)} to pass, got ${JSON.stringify(r.issues)}`);
  return r.value;
}

function issues(input: unknown): FieldIssue[] {
  const r: Parsed<QueryParams> = parseWith(queryParamsSchema, input);
  if (r.ok)
    assert.fail(`expected ${JSON.stringify(input)} to be rejected, got ${JSON.stringify(r.value)}`);
  assert.ok(r.issues.length > 0);
  return r.issues;
}

/** Exactly one issue, on `path`, whose message matches `message`. */
function rejectedOnce(input: unknown, path: string, message: RegExp): FieldIssue {
  const list = issues(input);
  assert.equal(list.length, 1, `one issue expected, got ${JSON.stringify(list)}`);
  const [issue] = list;
  assert.equal(issue!.path, path);
  assert.match(issue!.message, message);
  return issue!;
}

const range = (startTime: string, endTime: string) => ({ startTime, endTime });

describe('queryParamsSchema: the three query modes (order-api 4.1 rules 1-3)', () => {
  it('a time range becomes mode time-range with both times kept', () => {
    assert.deepEqual(ok(range('2026-11-01 00:00:00', '2026-11-25 23:59:59')), {
      mode: 'time-range',
      startTime: '2026-11-01 00:00:00',
      endTime: '2026-11-25 23:59:59',
      pageNum: 1,
      pageSize: 15,
    });
  });

  it('orderInnerNo alone becomes mode after-order', () => {
    assert.deepEqual(ok({ orderInnerNo: 'O202611250001' }), {
      mode: 'after-order',
      orderInnerNo: 'O202611250001',
      pageNum: 1,
      pageSize: 15,
    });
  });

  it('receiptNo alone becomes mode after-receipt', () => {
    assert.deepEqual(ok({ receiptNo: 'R-000123' }), {
      mode: 'after-receipt',
      receiptNo: 'R-000123',
      pageNum: 1,
      pageSize: 15,
    });
  });

  it('null for the fields of the other modes means "not given" (Java clients send nulls)', () => {
    const v = ok({ startTime: null, endTime: null, orderInnerNo: 'O1', receiptNo: null });
    assert.equal(v.mode, 'after-order');
    const w = ok({
      orderInnerNo: null,
      receiptNo: null,
      ...range('2026-01-01 00:00:00', '2026-01-02 00:00:00'),
    });
    assert.equal(w.mode, 'time-range');
  });

  it('an empty orderInnerNo or receiptNo is not a starting point', () => {
    rejectedOnce({ orderInnerNo: '' }, 'orderInnerNo', /must be 1 to 64 characters/);
    rejectedOnce({ receiptNo: '' }, 'receiptNo', /must be 1 to 64 characters/);
  });

  it('a number where an order number belongs is rejected, not coerced', () => {
    rejectedOnce({ orderInnerNo: 12345 }, 'orderInnerNo', /must be a string/);
  });
});

describe('queryParamsSchema: paging (order-api 2.3, 4.1 rule 5, section 8)', () => {
  it('pageNum defaults to 1 and pageSize to 15 when omitted', () => {
    const v = ok({ receiptNo: 'R1' });
    assert.equal(v.pageNum, 1);
    assert.equal(v.pageSize, 15);
    assert.equal(QUERY_LIMITS.pageNumDefault, 1);
    assert.equal(QUERY_LIMITS.pageSizeDefault, 15);
    assert.equal(QUERY_LIMITS.pageSizeMax, 100);
  });

  it('null page fields take the defaults too', () => {
    const v = ok({ receiptNo: 'R1', pageNum: null, pageSize: null });
    assert.equal(v.pageNum, 1);
    assert.equal(v.pageSize, 15);
  });

  it('given values are kept', () => {
    const v = ok({ orderInnerNo: 'O1', pageNum: 7, pageSize: 40 });
    assert.equal(v.pageNum, 7);
    assert.equal(v.pageSize, 40);
  });

  it('pageSize 100 is the maximum and accepted; 1 is accepted', () => {
    assert.equal(ok({ orderInnerNo: 'O1', pageSize: 100 }).pageSize, 100);
    assert.equal(ok({ orderInnerNo: 'O1', pageSize: 1 }).pageSize, 1);
  });

  it('pageSize 101 and 0 and negatives are rejected', () => {
    for (const pageSize of [101, 0, -1, 1000]) {
      rejectedOnce({ orderInnerNo: 'O1', pageSize }, 'pageSize', /must be between 1 and 100/);
    }
  });

  it('pageNum 0 and negatives are rejected; pageNum starts at 1', () => {
    for (const pageNum of [0, -1]) {
      rejectedOnce({ orderInnerNo: 'O1', pageNum }, 'pageNum', /must be between 1 and/);
    }
    assert.equal(ok({ orderInnerNo: 'O1', pageNum: 1 }).pageNum, 1);
    assert.equal(ok({ orderInnerNo: 'O1', pageNum: 100_000 }).pageNum, 100_000);
  });

  it('non-integers are rejected', () => {
    rejectedOnce({ orderInnerNo: 'O1', pageSize: 15.5 }, 'pageSize', /must be an integer/);
    rejectedOnce({ orderInnerNo: 'O1', pageNum: 1.5 }, 'pageNum', /must be an integer/);
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY]) {
      const list = issues({ orderInnerNo: 'O1', pageSize: bad });
      assert.deepEqual(
        list.map((i) => i.path),
        ['pageSize'],
      );
    }
  });

  it('numbers written as strings are rejected (the field list says integer)', () => {
    rejectedOnce({ orderInnerNo: 'O1', pageNum: '2' }, 'pageNum', /must be a number/);
    rejectedOnce({ orderInnerNo: 'O1', pageSize: '15' }, 'pageSize', /must be a number/);
  });
});

describe('queryParamsSchema: the 30-day rule of a time range (section 8)', () => {
  it('exactly 30 days passes', () => {
    const v = ok(range('2026-11-01 08:00:00', '2026-12-01 08:00:00'));
    assert.equal(v.mode, 'time-range');
  });

  it('30 days and 1 second fails on endTime', () => {
    rejectedOnce(
      range('2026-11-01 08:00:00', '2026-12-01 08:00:01'),
      'endTime',
      /must be at most 30 days after startTime/,
    );
  });

  it('the same start and end passes (an empty range is not an error)', () => {
    assert.equal(ok(range('2026-05-05 10:00:00', '2026-05-05 10:00:00')).mode, 'time-range');
  });

  it('endTime before startTime fails on endTime, even by one second', () => {
    rejectedOnce(
      range('2026-05-05 10:00:00', '2026-05-05 09:59:59'),
      'endTime',
      /must not be before startTime/,
    );
    rejectedOnce(
      range('2027-01-01 00:00:00', '2026-12-31 23:59:59'),
      'endTime',
      /must not be before startTime/,
    );
  });

  it('counts real calendar days across a short February (2026, not a leap year)', () => {
    // Jan 31 -> Feb 28 is 28 days, -> Mar 2 is 30 days.
    ok(range('2026-01-31 00:00:00', '2026-03-02 00:00:00'));
    rejectedOnce(range('2026-01-31 00:00:00', '2026-03-02 00:00:01'), 'endTime', /30 days/);
    rejectedOnce(range('2026-01-31 00:00:00', '2026-03-03 00:00:00'), 'endTime', /30 days/);
  });

  it('counts Feb 29 in a leap year (2024)', () => {
    // Jan 31 -> Feb 29 is 29 days, -> Mar 1 is 30 days; Mar 2 is 31.
    ok(range('2024-01-31 00:00:00', '2024-03-01 00:00:00'));
    rejectedOnce(range('2024-01-31 00:00:00', '2024-03-02 00:00:00'), 'endTime', /30 days/);
    rejectedOnce(range('2024-01-31 00:00:00', '2024-03-01 00:00:01'), 'endTime', /30 days/);
  });

  it('counts across a 31-day month and a year boundary', () => {
    // Dec 15 -> Dec 31 is 16 days, -> Jan 14 is 30 days.
    ok(range('2025-12-15 08:00:00', '2026-01-14 08:00:00'));
    rejectedOnce(range('2025-12-15 08:00:00', '2026-01-14 08:00:01'), 'endTime', /30 days/);
    // Jul 1 -> Jul 31 is 30 days (July has 31).
    ok(range('2026-07-01 00:00:00', '2026-07-31 00:00:00'));
    rejectedOnce(range('2026-07-01 00:00:00', '2026-08-01 00:00:00'), 'endTime', /30 days/);
  });

  it('is wall-clock arithmetic: a DST change in some host zone does not shift it', () => {
    // 2026-03-08 is the US DST change; on wall-clock values this is still exactly 30 days.
    ok(range('2026-02-20 12:00:00', '2026-03-22 12:00:00'));
    rejectedOnce(range('2026-02-20 12:00:00', '2026-03-22 12:00:01'), 'endTime', /30 days/);
  });

  it('property: up to 30 days passes, anything longer fails', () => {
    const start = fc.integer({
      min: wallClockMs('2000-01-01 00:00:00')! / 1000,
      max: wallClockMs('2099-12-01 00:00:00')! / 1000,
    });
    fc.assert(
      fc.property(start, fc.integer({ min: 0, max: 30 * DAY_S }), (s, d) => {
        const r = parseWith(
          queryParamsSchema,
          range(formatWallClock(s * 1000), formatWallClock((s + d) * 1000)),
        );
        return r.ok && r.value.mode === 'time-range';
      }),
    );
    fc.assert(
      fc.property(start, fc.integer({ min: 30 * DAY_S + 1, max: 400 * DAY_S }), (s, d) => {
        const r = parseWith(
          queryParamsSchema,
          range(formatWallClock(s * 1000), formatWallClock((s + d) * 1000)),
        );
        return !r.ok && r.issues.length === 1 && r.issues[0]!.path === 'endTime';
      }),
    );
  });
});

describe('queryParamsSchema: incomplete and malformed time ranges', () => {
  it('only startTime: the error names endTime', () => {
    const issue = rejectedOnce({ startTime: '2026-11-01 00:00:00' }, 'endTime', /is required/);
    assert.match(issue.message, /startTime and endTime go together/);
  });

  it('only endTime: the error names startTime', () => {
    rejectedOnce({ endTime: '2026-11-01 00:00:00' }, 'startTime', /is required/);
  });

  it('only one time plus null for the other still names the missing one', () => {
    rejectedOnce({ startTime: '2026-11-01 00:00:00', endTime: null }, 'endTime', /is required/);
  });

  it('impossible dates are rejected on the field that carries them', () => {
    rejectedOnce(range('2026-02-30 00:00:00', '2026-03-01 00:00:00'), 'startTime', /real date/);
    rejectedOnce(range('2026-04-01 00:00:00', '2026-04-31 00:00:00'), 'endTime', /real date/);
    rejectedOnce(range('2026-02-29 00:00:00', '2026-03-01 00:00:00'), 'startTime', /real date/);
    rejectedOnce(range('2026-01-01 24:00:00', '2026-01-02 00:00:00'), 'startTime', /real date/);
  });

  it('other formats are rejected (ISO T, no seconds, date only)', () => {
    rejectedOnce(
      range('2026-01-01T00:00:00', '2026-01-02 00:00:00'),
      'startTime',
      /yyyy-MM-dd HH:mm:ss/,
    );
    rejectedOnce(
      range('2026-01-01 00:00', '2026-01-02 00:00:00'),
      'startTime',
      /yyyy-MM-dd HH:mm:ss/,
    );
    rejectedOnce(range('2026-01-01 00:00:00', '2026-01-02'), 'endTime', /yyyy-MM-dd HH:mm:ss/);
  });

  it('a time as a number (epoch) is rejected', () => {
    rejectedOnce(
      range('2026-01-01 00:00:00', 1767225600 as unknown as string),
      'endTime',
      /must be a string/,
    );
  });
});

describe('queryParamsSchema: mixed or missing modes (4.1 rule 8: we reject)', () => {
  it('time range + orderInnerNo is one clear error naming both', () => {
    const issue = rejectedOnce(
      { ...range('2026-11-01 00:00:00', '2026-11-02 00:00:00'), orderInnerNo: 'O1' },
      'orderInnerNo',
      /cannot be combined with/,
    );
    assert.match(issue.message, /startTime\/endTime/);
    assert.match(issue.message, /one query mode/);
  });

  it('orderInnerNo + receiptNo is one clear error naming both', () => {
    const issue = rejectedOnce(
      { orderInnerNo: 'O1', receiptNo: 'R1' },
      'receiptNo',
      /cannot be combined with/,
    );
    assert.match(issue.message, /orderInnerNo/);
  });

  it('all three modes together is one error naming the other two', () => {
    const issue = rejectedOnce(
      {
        ...range('2026-11-01 00:00:00', '2026-11-02 00:00:00'),
        orderInnerNo: 'O1',
        receiptNo: 'R1',
      },
      'receiptNo',
      /cannot be combined with/,
    );
    assert.match(issue.message, /startTime\/endTime/);
    assert.match(issue.message, /orderInnerNo/);
  });

  it('half a time range + another mode is a mix, not a missing endTime', () => {
    rejectedOnce(
      { startTime: '2026-11-01 00:00:00', receiptNo: 'R1' },
      'receiptNo',
      /cannot be combined/,
    );
    rejectedOnce(
      { endTime: '2026-11-01 00:00:00', orderInnerNo: 'O1' },
      'orderInnerNo',
      /cannot be combined/,
    );
  });

  it('no mode at all is rejected with a message listing the modes', () => {
    for (const input of [{}, { pageNum: 2, pageSize: 50 }, { restaurantNo: 'RST001' }]) {
      const issue = rejectedOnce(input, 'startTime', /is required/);
      assert.match(issue.message, /orderInnerNo/);
      assert.match(issue.message, /receiptNo/);
    }
  });

  it('a param that is not an object is rejected', () => {
    for (const input of [null, 'orderInnerNo=O1', [], 42]) issues(input);
  });
});

describe('queryParamsSchema: restaurantNo inside param (4.1 rule 6)', () => {
  it('is accepted and kept with an incremental query', () => {
    const v = ok({ restaurantNo: 'RST001', orderInnerNo: 'O202611250001' });
    assert.deepEqual(v, {
      mode: 'after-order',
      orderInnerNo: 'O202611250001',
      pageNum: 1,
      pageSize: 15,
      restaurantNo: 'RST001',
    });
  });

  it('is kept with the receipt and time-range modes too', () => {
    assert.equal(ok({ restaurantNo: 'RST001', receiptNo: 'R1' }).restaurantNo, 'RST001');
    assert.equal(
      ok({ restaurantNo: 'RST001', ...range('2026-11-01 00:00:00', '2026-11-02 00:00:00') })
        .restaurantNo,
      'RST001',
    );
  });

  it('is not required, and null means absent', () => {
    assert.equal('restaurantNo' in ok({ orderInnerNo: 'O1' }), false);
    assert.equal('restaurantNo' in ok({ orderInnerNo: 'O1', restaurantNo: null }), false);
  });

  it('must be a string', () => {
    rejectedOnce({ orderInnerNo: 'O1', restaurantNo: 1001 }, 'restaurantNo', /must be a string/);
  });
});

const record = {
  orderInnerNo: 'O202611250001',
  restaurantNo: 'RST001',
  branchIdentifier: 'BR-MNL-01',
  orderSerialNumber: 23,
  realAmount: 37000,
  orderStatus: 3,
  paymentStatus: 2,
  createTime: '2026-11-25 12:30:00',
  paymentTime: '2026-11-25 12:30:04',
  skuList: [
    {
      categoryNo: 'C1',
      productNo: 'P1',
      variant: 2,
      skuName: 'Chicken Adobo',
      count: 2,
      price: 18500,
      optionAmount: 0,
    },
  ],
};

describe('queryResultSchema (order-api 2.4)', () => {
  it('accepts an empty page: list is an empty array when nothing matches', () => {
    const r = parseWith(queryResultSchema, { total: 0, pageNum: 1, pageSize: 15, list: [] });
    assert.ok(r.ok);
    assert.deepEqual(r.value, { total: 0, pageNum: 1, pageSize: 15, list: [] });
  });

  it('accepts a page with records and keeps them', () => {
    const second = { ...record, orderInnerNo: 'O202611250002', orderSerialNumber: 24 };
    const r = parseWith(queryResultSchema, {
      total: 117,
      pageNum: 2,
      pageSize: 100,
      list: [record, second],
    });
    assert.ok(r.ok);
    assert.equal(r.value.total, 117);
    assert.deepEqual(
      r.value.list.map((o) => o.orderInnerNo),
      ['O202611250001', 'O202611250002'],
    );
    assert.equal(r.value.list[0]!.skuList[0]!.skuName, 'Chicken Adobo');
  });

  it('rejects a missing list, and a bad record with its path inside list', () => {
    const missing = parseWith(queryResultSchema, { total: 0, pageNum: 1, pageSize: 15 });
    assert.ok(!missing.ok);
    assert.deepEqual(
      missing.issues.map((i) => i.path),
      ['list'],
    );
    const bad = parseWith(queryResultSchema, {
      total: 1,
      pageNum: 1,
      pageSize: 15,
      list: [{ ...record, orderStatus: 9 }],
    });
    assert.ok(!bad.ok);
    assert.deepEqual(
      bad.issues.map((i) => i.path),
      ['list[0].orderStatus'],
    );
  });

  it('rejects page numbers and totals outside their ranges', () => {
    for (const [field, value] of [
      ['total', -1],
      ['pageNum', 0],
      ['pageSize', 101],
      ['pageSize', 0],
      ['total', 1.5],
    ] as const) {
      const r = parseWith(queryResultSchema, {
        total: 0,
        pageNum: 1,
        pageSize: 15,
        list: [],
        [field]: value,
      });
      assert.ok(!r.ok, `${field}=${value} should be rejected`);
      assert.deepEqual(
        r.issues.map((i) => i.path),
        [field],
      );
    }
  });
});
