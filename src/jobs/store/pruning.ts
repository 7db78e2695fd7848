/**
 * The queries retention runs (`../retention.ts` decides when and how much): finished jobs pruned
 * into the dedupe ledger, the ledger pruned in turn, `jobs purge --printed-before`, the
 * incremental vacuum and the space figures it is judged by. Separate from the job store proper
 * because they never move a job through its states: they only delete what is finished, in small
 * batches, each one short write transaction so the spooler and the inbox never wait long for the
 * lock.
 */
import type { JobRow } from '../job.js';
import type { JobDatabase } from './database.js';
import type { Dedupe } from './dedupe.js';
import { FINISHED_SQL, PENDING_SQL } from './rows.js';

export class Pruning {
  constructor(
    private readonly db: JobDatabase,
    private readonly dedupe: Dedupe,
  ) {}

  /**
   * One batch of retention: deletes up to `batchSize` finished jobs (printed, unconfirmed, failed)
   * that finished before `before`, moving their dedupe keys to the ledger so that a replay still
   * meets `duplicate`. Originals of pending reprints are kept.
   */
  pruneFinished(before: number, batchSize: number): number {
    return this.pruneWhere(
      `state IN ${FINISHED_SQL} AND finished_at < ?`,
      [before],
      batchSize,
      'pruning finished jobs',
    );
  }

  /** `jobs purge --printed-before`: printed jobs printed before `before`, in batches; returns the count. */
  purgePrinted(before: number, batchSize: number): number {
    let total = 0;
    for (;;) {
      const n = this.pruneWhere(
        `state IN ${FINISHED_SQL} AND state = 'printed' AND printed_at < ?`,
        [before],
        batchSize,
        'purging printed jobs',
      );
      total += n;
      if (n < batchSize) return total;
    }
  }

  /** One batch of ledger retention: forgets dedupe keys pruned before `before`. */
  pruneLedger(before: number, batchSize: number): number {
    return this.db.write('pruning the dedupe ledger', () => {
      const info = this.db
        .statement(
          `DELETE FROM dedupe_ledger WHERE (key_kind, key) IN
             (SELECT key_kind, key FROM dedupe_ledger WHERE pruned_at < ? LIMIT ?)`,
        )
        .run(before, batchSize);
      return info.changes;
    });
  }

  /**
   * Returns up to `pages` free pages to the file system (`auto_vacuum=INCREMENTAL`). Never a full
   * VACUUM: that rewrites the whole file under an exclusive lock. Without this call the freed
   * pages are reused by later inserts anyway, so the file stays bounded either way.
   */
  incrementalVacuum(pages: number): void {
    this.db.read('vacuuming', () => {
      this.db.pragma(`incremental_vacuum(${Math.max(1, Math.floor(pages))})`);
    });
  }

  /** Free pages in the file (`freelist_count`) and its size in pages. */
  spaceStats(): { pageSize: number; pages: number; freePages: number } {
    return this.db.read('reading space statistics', () => ({
      pageSize: Number(this.db.pragma('page_size')),
      pages: Number(this.db.pragma('page_count')),
      freePages: Number(this.db.pragma('freelist_count')),
    }));
  }

  private pruneWhere(where: string, args: number[], batchSize: number, doing: string): number {
    return this.db.write(doing, () => {
      const now = this.db.now();
      const rows = this.db
        .statement(
          `SELECT * FROM jobs WHERE ${where}
             AND id NOT IN (SELECT source_job FROM jobs
                            WHERE source_job IS NOT NULL AND state IN ${PENDING_SQL})
           ORDER BY id LIMIT ?`,
        )
        .all(...args, batchSize) as JobRow[];
      const del = this.db.statement('DELETE FROM jobs WHERE id = ?');
      // A printer's last print outlives its printed jobs (migration 7).
      const activity = this.db.statement(
        `INSERT INTO printer_activity (printer, last_printed_at) VALUES (?, ?)
         ON CONFLICT (printer) DO UPDATE SET last_printed_at = MAX(last_printed_at, excluded.last_printed_at)`,
      );
      for (const r of rows) {
        this.dedupe.remember(r, now);
        if (r.state === 'printed' && r.printed_at !== null) activity.run(r.printer, r.printed_at);
        del.run(r.id);
      }
      return rows.length;
    });
  }
}
