/**
 * The time floor (print-protocol v1.2 §10). A Pi without NTP cannot judge an order's age by its
 * own clock, so the anti-replay rule is skipped while the clock is not known to be synchronized.
 * What it can judge by is what it has already authenticated: the store keeps, durably and in the
 * same transaction as the job, the newest createTime of every instruction and record it stored
 * (`JobStore.timeFloor`), and an order older than that floor minus the anti-replay age is refused
 * (STALE_ORDER) even then. A replay of a months-old genuine instruction meets a floor set by the
 * orders since; a store's first order has no floor to meet (decision 228).
 */
import { wallClockMs } from '../protocol/time.js';
import type { JobReason } from './job.js';

export function belowTimeFloor(
  createTime: string,
  floor: string | null,
  maxAgeMs: number,
  setting: string,
): JobReason | null {
  if (floor === null) return null;
  const created = wallClockMs(createTime);
  const newest = wallClockMs(floor);
  if (created === null || newest === null) return null;
  const behindMs = newest - created;
  if (behindMs <= maxAgeMs) return null;
  const days = (ms: number) => `${Math.floor(ms / 86_400_000)} days`;
  return {
    code: 'STALE_ORDER',
    message: `createTime ${createTime} (service time) is ${days(behindMs)} older than the newest order this agent has authenticated (${floor}), more than ${days(maxAgeMs)} (${setting}), and the clock is not synchronized: treated as a replay, not printed; \`printer-agent jobs retry\` prints it`,
  };
}
