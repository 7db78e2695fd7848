/**
 * Picks the specific response code for two query rejections the spec leaves open: modes mixed
 * (4.1 rule 8) and a range over 30 days (§8). Decided from the param values themselves, not from
 * the schema's message text, so rewording a message cannot change a code.
 */
import { QUERY_LIMITS, wallClockMs } from '../protocol/index.js';
import type { ResponseCodeName } from './codes.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export function classifyQueryRejection(rawParam: unknown): ResponseCodeName | null {
  if (typeof rawParam !== 'string') return null;
  let p: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(rawParam);
    if (typeof parsed !== 'object' || parsed === null) return null;
    p = parsed as Record<string, unknown>;
  } catch {
    return null;
  }
  const given = (k: string) => p[k] !== undefined && p[k] !== null;
  const modes = [
    given('startTime') || given('endTime'),
    given('orderInnerNo'),
    given('receiptNo'),
  ].filter(Boolean).length;
  if (modes > 1) return 'QUERY_MODES_MIXED';
  if (typeof p.startTime === 'string' && typeof p.endTime === 'string') {
    const start = wallClockMs(p.startTime);
    const end = wallClockMs(p.endTime);
    if (start !== null && end !== null && end - start > QUERY_LIMITS.maxRangeDays * DAY_MS)
      return 'RANGE_TOO_LONG';
  }
  return null;
}
