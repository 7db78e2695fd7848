/**
 * The spooler's decisions as pure functions (no I/O, no clock of their own), tested directly:
 * how long to wait before the next attempt, what a print failure means for the job, whether a
 * printer state allows printing, whether a job is late.
 */
import { AgentError, errorMessage } from '../errors.js';
import type { JobReason } from './job.js';

export interface BackoffOptions {
  /** Delay after the first failure. */
  initialMs: number;
  /** Cap: a printer that comes back is tried again within this long even without a monitor. */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 1000, maxMs: 30_000 };

/**
 * Capped exponential backoff with jitter: the n-th consecutive failure (n >= 1) waits between half
 * and all of `min(maxMs, initialMs * 2^(n-1))`. The jitter keeps several agents that share a
 * network printer (or a print server) from retrying in lockstep; the lower half bound keeps the
 * growth real. `random` is injectable so tests pin it.
 */
export function backoffDelay(
  failures: number,
  options: BackoffOptions = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  const n = Math.max(1, Math.floor(failures));
  // 2^30 already exceeds any sane cap; the exponent bound keeps the arithmetic finite.
  const base = Math.min(options.maxMs, options.initialMs * 2 ** Math.min(n - 1, 30));
  const r = Math.min(1, Math.max(0, random()));
  return Math.round(base / 2 + r * (base / 2));
}

/** Printer states in which a job is sent (print-protocol §7): `unknown` because mute models print. */
export function canPrint(state: string): boolean {
  return state === 'ready' || state === 'paper-near-end' || state === 'unknown';
}

/** The job event reason for a printer state that stops printing (print-protocol §6 `reason`). */
export function reasonForState(state: string, message: string): JobReason {
  switch (state) {
    case 'paper-out':
      return { code: 'PAPER_OUT', message };
    case 'cover-open':
      return { code: 'COVER_OPEN', message };
    case 'offline':
    case 'error':
      return { code: 'PRINTER_OFFLINE', message };
    case 'disconnected':
      return { code: 'PRINTER_UNREACHABLE', message };
    default:
      return { code: 'PRINTER_NOT_READY', message };
  }
}

/** Codes the printer raises before the first byte of a job leaves (printer.ts `print`). */
const BEFORE_SENDING: ReadonlySet<string> = new Set(['PRINTER_NOT_READY', 'PRINTER_UNREACHABLE']);

export type PrintFailure =
  /** Retry later; `possibleDuplicate` when some bytes may have reached the paper. */
  | { action: 'wait'; reason: JobReason; possibleDuplicate: boolean }
  /** A permanent error: the job fails and the queue moves on. */
  | { action: 'fail'; reason: JobReason };

/**
 * What a thrown print error means (guarantees 4 and 5). Not ready, unreachable or a link that
 * dropped before the first byte: wait and retry, never give up. Bytes sent before the failure
 * (`details.sentBytes > 0`, or no count at all after a link error): wait and retry, but the next
 * copy carries POSSIBLE DUPLICATE. An error we do not know could have struck anywhere, so it is
 * treated as possibly printed: a needless marking costs nothing, an unmarked duplicate does.
 */
export function classifyPrintFailure(error: unknown): PrintFailure {
  if (!(error instanceof AgentError)) {
    const detail = errorMessage(error);
    return {
      action: 'wait',
      reason: { code: 'PRINT_FAILED', message: detail },
      possibleDuplicate: true,
    };
  }
  if (!error.retryable) return { action: 'fail', reason: error.toReason() };
  // Without a byte count the failure may have come after the whole job was sent (the link
  // dropping while the confirmation was asked for), so only the two codes that are raised before
  // any job byte goes out count as "nothing printed".
  const sent = error.details.sentBytes;
  const possibleDuplicate = typeof sent === 'number' ? sent > 0 : !BEFORE_SENDING.has(error.code);
  if (error.code === 'PRINTER_NOT_READY' && typeof error.details.state === 'string') {
    return {
      action: 'wait',
      reason: reasonForState(error.details.state, error.message),
      possibleDuplicate,
    };
  }
  return { action: 'wait', reason: error.toReason(), possibleDuplicate };
}

/** A permanent failure before printing (render, profile, payload): the reason to record. */
export function failureReason(error: unknown): JobReason {
  if (error instanceof AgentError) return error.toReason();
  const detail = errorMessage(error);
  return { code: 'RENDER_FAILED', message: detail };
}

/** Late: the job waited longer than `lateAfterMs` since it was stored (null: never late). */
export function isLate(createdAt: number, now: number, lateAfterMs: number | null): boolean {
  return lateAfterMs !== null && now - createdAt >= lateAfterMs;
}
