/**
 * Retention: keeps the database bounded under continuous load without ever stopping the queue.
 *
 * - Finished jobs (printed, unconfirmed, failed) are deleted `keepDays` after they finished, in
 *   batches of `batchSize`, each its own short transaction, with the event loop free between
 *   batches: the spooler and the inbox never wait more than one batch for the write lock.
 * - Their dedupe keys move to a ledger kept `ledgerDays` more, so a replay weeks later is still a
 *   `duplicate` (fault matrix row 16) after its job is gone.
 * - No VACUUM (it rewrites the whole file under an exclusive lock). Freed pages are reused by new
 *   rows, which alone keeps the file from growing; new databases are created with
 *   `auto_vacuum=INCREMENTAL`, and a small `incremental_vacuum` after each run hands some free
 *   pages back to the file system.
 */
import { DEDUPE_LEDGER_DAYS } from '../protocol/limits.js';
import { faultPoint, faultRetentionSoon } from './fault-points.js';
import type { JobStore } from './store.js';

export interface RetentionOptions {
  /** Days a finished job stays visible to `jobs list` / `jobs reprint`. */
  keepDays: number;
  /** Days the dedupe keys of a pruned job are still remembered, after it was pruned. */
  ledgerDays: number;
  batchSize?: number;
  /** Pages handed back per run (at 4 KiB a page, 256 = 1 MiB). */
  vacuumPages?: number;
  now?: () => number;
}

export const DEFAULT_RETENTION: RetentionOptions = { keepDays: 14, ledgerDays: DEDUPE_LEDGER_DAYS };

const DAY_MS = 24 * 60 * 60 * 1000;

export interface RetentionRun {
  jobs: number;
  ledgerKeys: number;
}

/** One retention pass, yielding to the event loop between batches. */
export async function runRetention(
  store: JobStore,
  options: RetentionOptions = DEFAULT_RETENTION,
): Promise<RetentionRun> {
  const now = (options.now ?? Date.now)();
  const batch = options.batchSize ?? 200;
  const run: RetentionRun = { jobs: 0, ledgerKeys: 0 };
  for (;;) {
    const n = store.pruneFinished(now - options.keepDays * DAY_MS, batch);
    run.jobs += n;
    if (n > 0) faultPoint('retention-batch');
    if (n < batch) break;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  for (;;) {
    const n = store.pruneLedger(now - options.ledgerDays * DAY_MS, batch);
    run.ledgerKeys += n;
    if (n < batch) break;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  if (run.jobs > 0 || run.ledgerKeys > 0) store.incrementalVacuum(options.vacuumPages ?? 256);
  return run;
}

/** Runs retention every `intervalMs` (default hourly) until stopped. */
export class Retention {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<RetentionRun> | null = null;

  constructor(
    private readonly store: JobStore,
    private readonly options: RetentionOptions & { intervalMs?: number } = DEFAULT_RETENTION,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  start(): void {
    if (this.timer) return;
    const tick = () => {
      this.running = runRetention(this.store, this.options);
      this.running.catch(this.onError).finally(() => {
        this.running = null;
      });
    };
    this.timer = setInterval(
      tick,
      faultRetentionSoon() ? 1000 : (this.options.intervalMs ?? 60 * 60_000),
    );
    // Retention alone never keeps the agent alive.
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }
}
