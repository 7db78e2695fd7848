/**
 * Reading jobs: one by its row id, jobId or order and role, lists for the CLI, the head of a
 * printer's queue for the spooler, and the figures the status shows (print-protocol §7). Separate
 * from the writing parts because nothing here changes a row; `receiptRow` is also how a reprint
 * finds its original inside the insert's transaction (`insertion.ts`).
 */

import { DEFAULT_PRINTER_ROLE } from '../../protocol/print-protocol.js';
import type { Job, JobRow, StoredJobState } from '../job.js';
import { jobFromRow, PENDING_STATES } from '../job.js';
import type { JobDatabase } from './database.js';
import { FINISHED_SQL, type JobRows, PENDING_SQL } from './rows.js';

export interface PrinterQueueStats {
  printer: string;
  /** Jobs not finished yet: queued, waiting (held ones included) and printing. */
  pending: number;
  /** Of those, held for a person. */
  held: number;
  /** Age of the oldest pending job, in whole seconds (print-protocol §7 `oldestPendingSec`). */
  oldestPendingSec: number;
  lastPrintedAt: number | null;
}

export interface ListOptions {
  state?: StoredJobState;
  printer?: string;
  /** Newest first; at most this many (default 100). */
  limit?: number;
}

export class Queries {
  constructor(
    private readonly db: JobDatabase,
    private readonly rows: JobRows,
  ) {}

  get(id: number): Job | null {
    return this.one('SELECT * FROM jobs WHERE id = ?', id);
  }

  getByJobId(jobId: string): Job | null {
    return this.one('SELECT * FROM jobs WHERE job_id = ?', jobId);
  }

  /** A job by the store's row id (digits) or else by its jobId: what the CLI's ID argument means. */
  find(ref: string): Job | null {
    if (/^\d{1,15}$/.test(ref)) {
      const byId = this.get(Number(ref));
      if (byId) return byId;
    }
    return this.getByJobId(ref);
  }

  /**
   * The receipt job of an order for a printer role (at most one: unique key). Without a role: the
   * `receipt` role's, else the order's oldest receipt job (print-protocol v1.1 §4: one receipt per
   * order and role). What a `reprint` without `printer` reprints.
   */
  getReceipt(orderNo: string, role?: string | null): Job | null {
    return this.db.read('reading a job', () => {
      const row = this.receiptRow(orderNo, role ?? null);
      return row ? jobFromRow(row) : null;
    });
  }

  /** The job of the one row `sql` selects by `key`, or null. */
  private one(sql: string, key: string | number): Job | null {
    return this.db.read('reading a job', () => {
      const row = this.db.statement(sql).get(key) as JobRow | undefined;
      return row ? jobFromRow(row) : null;
    });
  }

  /** Inside `read`/`write`'s function: the row `getReceipt` reads. */
  receiptRow(orderNo: string, role: string | null): JobRow | undefined {
    if (role !== null) {
      return this.db
        .statement("SELECT * FROM jobs WHERE kind = 'receipt' AND order_no = ? AND printer = ?")
        .get(orderNo, role) as JobRow | undefined;
    }
    return this.db
      .statement(
        `SELECT * FROM jobs WHERE kind = 'receipt' AND order_no = ?
       ORDER BY printer = '${DEFAULT_PRINTER_ROLE}' DESC, id LIMIT 1`,
      )
      .get(orderNo) as JobRow | undefined;
  }

  list(options: ListOptions = {}): Job[] {
    const where: string[] = [];
    const args: Array<string | number> = [];
    if (options.state) {
      where.push(
        `state IN ${PENDING_STATES.includes(options.state) ? PENDING_SQL : FINISHED_SQL}`,
        'state = ?',
      );
      args.push(options.state);
    }
    if (options.printer) {
      where.push('printer = ?');
      args.push(options.printer);
    }
    const sql = `SELECT * FROM jobs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
    return this.db.read('listing jobs', () =>
      (this.db.statement(sql).all(...args, options.limit ?? 100) as JobRow[]).map((row) =>
        jobFromRow(row),
      ),
    );
  }

  /** The head of a printer's FIFO: the oldest queued or waiting job that is not held. */
  head(printer: string): Job | null {
    return this.db.read('reading the queue', () => {
      const row = this.rows.row(
        `SELECT * FROM jobs WHERE printer = ? AND state IN ${PENDING_SQL} AND state <> 'printing'
             AND held = 0 ORDER BY id LIMIT 1`,
        [printer],
      );
      return row ? this.rows.toJob(row) : null;
    });
  }

  /** Printers that have pending jobs, configured or not (an unknown role is worth reporting). */
  pendingPrinters(): string[] {
    return this.db.read('reading the queue', () =>
      (
        this.db
          .statement(
            `SELECT DISTINCT printer FROM jobs WHERE state IN ${PENDING_SQL} ORDER BY printer`,
          )
          .all() as Array<{ printer: string }>
      ).map((r) => r.printer),
    );
  }

  countByState(): Record<StoredJobState, number> {
    return this.db.read('counting jobs', () => {
      const counts: Record<StoredJobState, number> = {
        queued: 0,
        waiting: 0,
        printing: 0,
        printed: 0,
        unconfirmed: 0,
        failed: 0,
      };
      for (const r of this.db
        .statement(
          `SELECT state, COUNT(*) AS n FROM jobs WHERE state IN ${PENDING_SQL} GROUP BY state
           UNION ALL
           SELECT state, COUNT(*) AS n FROM jobs WHERE state IN ${FINISHED_SQL} GROUP BY state`,
        )
        .all() as Array<{
        state: StoredJobState;
        n: number;
      }>)
        counts[r.state] = r.n;
      return counts;
    });
  }

  /** Queue figures per printer for the status message (print-protocol §7). */
  queueStats(printers: readonly string[] = []): PrinterQueueStats[] {
    return this.db.read('reading queue statistics', () => {
      const now = this.db.now();
      const stats = new Map<string, PrinterQueueStats>();
      const entry = (printer: string) => {
        let s = stats.get(printer);
        if (!s) {
          s = { printer, pending: 0, held: 0, oldestPendingSec: 0, lastPrintedAt: null };
          stats.set(printer, s);
        }
        return s;
      };
      for (const p of printers) entry(p);
      const pending = this.db
        .statement(
          `SELECT printer, COUNT(*) AS n, SUM(held) AS held, MIN(created_at) AS oldest
         FROM jobs WHERE state IN ${PENDING_SQL} GROUP BY printer`,
        )
        .all() as Array<{ printer: string; n: number; held: number; oldest: number }>;
      for (const r of pending) {
        const s = entry(r.printer);
        s.pending = r.n;
        s.held = r.held;
        s.oldestPendingSec = Math.max(0, Math.floor((now - r.oldest) / 1000));
      }
      const printed = this.db
        .statement(
          `SELECT printer, MAX(printed_at) AS at FROM jobs
           WHERE state IN ${FINISHED_SQL} AND state = 'printed' GROUP BY printer
           UNION ALL SELECT printer, last_printed_at AS at FROM printer_activity`,
        )
        .all() as Array<{ printer: string; at: number }>;
      // The newest of the printed jobs and of the ones retention pruned (migration 7).
      for (const r of printed) {
        const s = entry(r.printer);
        s.lastPrintedAt = Math.max(s.lastPrintedAt ?? 0, r.at);
      }
      return [...stats.values()].sort((a, b) => a.printer.localeCompare(b.printer));
    });
  }
}
