/**
 * The query operation's parameters (order-api 2.3, 4.1) and result (2.4).
 *
 * Three modes, exactly one per request: a creation-time range, incremental after an order number,
 * incremental after the order of a receipt number. The spec does not say what happens when modes
 * are mixed (4.1 rule 8); we reject it, so a client never gets a result it did not ask for.
 */
import { z } from 'zod';
import { orderRecordSchema } from './order-record.js';
import { timestamp, wallClockMs } from './time.js';
import { int, text } from './validation.js';

export const QUERY_LIMITS = {
  pageNumDefault: 1,
  pageSizeDefault: 15,
  pageSizeMax: 100,
  maxRangeDays: 30,
  /** order-api §8: recommended minimum interval between queries. */
  minIntervalMs: 10_000,
  /** order-api §8: data may appear up to 5 minutes late. */
  dataDelayMs: 5 * 60_000,
} as const;

const DAY_MS = 24 * 60 * 60 * 1000;

const queryParamsObject = z.object({
  startTime: timestamp.nullish(),
  endTime: timestamp.nullish(),
  orderInnerNo: text(1, 64).nullish(),
  receiptNo: text(1, 64).nullish(),
  pageNum: int(1, Number.MAX_SAFE_INTEGER).nullish(),
  pageSize: int(1, QUERY_LIMITS.pageSizeMax).nullish(),
  // 4.1 rule 6: samples put the restaurant number inside param; accepted, not required.
  restaurantNo: z.string({ error: 'must be a string' }).nullish(),
});

export type QueryMode =
  | { mode: 'time-range'; startTime: string; endTime: string }
  | { mode: 'after-order'; orderInnerNo: string }
  | { mode: 'after-receipt'; receiptNo: string };

export type QueryParams = QueryMode & {
  pageNum: number;
  pageSize: number;
  restaurantNo?: string;
};

export const queryParamsSchema = queryParamsObject.transform((p, ctx): QueryParams => {
  const given = {
    timeRange: p.startTime != null || p.endTime != null,
    afterOrder: p.orderInnerNo != null,
    afterReceipt: p.receiptNo != null,
  };
  const count = Object.values(given).filter(Boolean).length;
  const page = {
    pageNum: p.pageNum ?? QUERY_LIMITS.pageNumDefault,
    pageSize: p.pageSize ?? QUERY_LIMITS.pageSizeDefault,
    ...(p.restaurantNo != null ? { restaurantNo: p.restaurantNo } : {}),
  };
  if (count === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['startTime'],
      message:
        'is required: give one query mode (startTime and endTime, or orderInnerNo, or receiptNo)',
    });
    return z.NEVER;
  }
  if (count > 1) {
    const names = [
      given.timeRange ? 'startTime/endTime' : null,
      given.afterOrder ? 'orderInnerNo' : null,
      given.afterReceipt ? 'receiptNo' : null,
    ].filter((n): n is string => n !== null);
    ctx.addIssue({
      code: 'custom',
      path: [names[names.length - 1] === 'receiptNo' ? 'receiptNo' : 'orderInnerNo'],
      message: `cannot be combined with ${names.slice(0, -1).join(' and ')}: give one query mode per request`,
    });
    return z.NEVER;
  }
  if (given.afterOrder) return { mode: 'after-order', orderInnerNo: p.orderInnerNo!, ...page };
  if (given.afterReceipt) return { mode: 'after-receipt', receiptNo: p.receiptNo!, ...page };

  if (p.startTime == null || p.endTime == null) {
    const missing = p.startTime == null ? 'startTime' : 'endTime';
    ctx.addIssue({
      code: 'custom',
      path: [missing],
      message: 'is required for a time range query (startTime and endTime go together)',
    });
    return z.NEVER;
  }
  const start = wallClockMs(p.startTime)!;
  const end = wallClockMs(p.endTime)!;
  if (end < start) {
    ctx.addIssue({ code: 'custom', path: ['endTime'], message: 'must not be before startTime' });
    return z.NEVER;
  }
  if (end - start > QUERY_LIMITS.maxRangeDays * DAY_MS) {
    ctx.addIssue({
      code: 'custom',
      path: ['endTime'],
      message: `must be at most ${QUERY_LIMITS.maxRangeDays} days after startTime`,
    });
    return z.NEVER;
  }
  return { mode: 'time-range', startTime: p.startTime, endTime: p.endTime, ...page };
});

export type QueryParamsInput = z.input<typeof queryParamsSchema>;

/** 2.4 */
export const queryResultSchema = z.object({
  total: int(0, Number.MAX_SAFE_INTEGER),
  pageNum: int(1, Number.MAX_SAFE_INTEGER),
  pageSize: int(1, QUERY_LIMITS.pageSizeMax),
  list: z.array(orderRecordSchema),
});
export type QueryResult = z.output<typeof queryResultSchema>;
