/**
 * The job database's `meta` table: small named values that must survive a restart, above all the
 * catch-up cursor (print-protocol §8: the last order number seen) and the catch-up poller's other
 * keys (the time of its last query). Separate from the job rows because these are the poller's
 * state, not a job's; `putCatchUpCursor` runs inside the caller's write transaction, so an order
 * stored by catch-up and the cursor move commit together.
 */
import type { JobDatabase } from './database.js';

/** The meta key of the catch-up cursor (print-protocol §8). */
const CATCH_UP_CURSOR = 'catch-up.lastOrderNo';
/** The newest authenticated createTime (print-protocol v1.2 §10, src/jobs/time-floor.ts). */
const TIME_FLOOR = 'freshness.newestCreateTime';

export class Meta {
  constructor(private readonly db: JobDatabase) {}

  get(key: string): string | null {
    return this.db.read('reading meta', () => {
      const r = this.db.statement('SELECT value FROM meta WHERE key = ?').get(key) as
        | { value: string }
        | undefined;
      return r?.value ?? null;
    });
  }

  set(key: string, value: string): void {
    this.db.write('writing meta', () => this.put(key, value));
  }

  /** The catch-up cursor: the last order number seen (print-protocol §8). */
  catchUpCursor(): string | null {
    return this.get(CATCH_UP_CURSOR);
  }

  setCatchUpCursor(orderNo: string): void {
    this.set(CATCH_UP_CURSOR, orderNo);
  }

  /** Inside a write transaction: the cursor moves with what the transaction stores. */
  putCatchUpCursor(orderNo: string): void {
    this.put(CATCH_UP_CURSOR, orderNo);
  }

  /** Forgets the cursor (the service does not know it): the next catch-up reads by time range. */
  clearCatchUpCursor(): void {
    this.db.write('writing meta', () => {
      this.db.statement('DELETE FROM meta WHERE key = ?').run(CATCH_UP_CURSOR);
    });
  }

  /** The newest createTime stored so far (`yyyy-MM-dd HH:mm:ss`, service time), or null. */
  timeFloor(): string | null {
    return this.get(TIME_FLOOR);
  }

  /**
   * Inside a write transaction: raises the floor to `createTime` when newer. The fixed-width
   * timestamp form sorts as text, so SQLite's max() compares it.
   */
  raiseTimeFloor(createTime: string): void {
    this.db
      .statement(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)',
      )
      .run(TIME_FLOOR, createTime);
  }

  /** Inside a write transaction. */
  private put(key: string, value: string): void {
    this.db
      .statement(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      )
      .run(key, value);
  }
}
