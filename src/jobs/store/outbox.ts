/**
 * The outbox (reliability guarantee 6): job events and the status waiting for the broker, in the
 * order they were written, until the reporter's publish is acknowledged. Separate from the job
 * rows because its readers differ (the reporter drains it, nobody else reads it) and because the
 * status, which is not a job's, goes through it too. `add` runs inside the caller's write
 * transaction, so a transition and its event (print-protocol §6) commit together: an event is
 * never lost nor published for a transition that did not commit.
 *
 * Published entries are forgotten at once and removed later (issue 16): the reporter says up to
 * which id the broker acknowledged (`acknowledge`), reading and counting skip those rows from then
 * on, and they are deleted inside the next write that adds an entry (a transition's own
 * transaction, which writes the outbox's page anyway), or by `sweep` when none comes. Before, a
 * transaction of its own per acknowledgement cost more than the publish. A crash before the
 * deletion only publishes them again (at-least-once, as before; the eventId lets a reader dedupe).
 *
 * Ids only grow, in this process and across processes (the CLI adds events too): a row's id is
 * the highest id + 1 (schema 6: no AUTOINCREMENT, whose sqlite_sequence page cost a WAL page per
 * commit), so the row with the highest id is never deleted. `add` deletes only below the row it
 * has just added; `sweep` keeps the highest row, marked `sent` (published; never read again), and
 * a new status replaces older ones after it is added.
 */
import { randomUUID } from 'node:crypto';
import type { AgentStatus, NewJobEvent } from '../../protocol/print-protocol.js';
import type { JobDatabase } from './database.js';

export interface OutboxEntry {
  id: number;
  kind: 'job' | 'status';
  /** The payload as stored: JSON text, published as it is. */
  json: string;
  /** The payload parsed (on each read of it). */
  readonly payload: unknown;
  createdAt: number;
}

interface OutboxRow {
  id: number;
  kind: 'job' | 'status';
  payload: string;
  created_at: number;
}

function entryFromRow(r: OutboxRow): OutboxEntry {
  return {
    id: r.id,
    kind: r.kind,
    json: r.payload,
    get payload() {
      return JSON.parse(r.payload) as unknown;
    },
    createdAt: r.created_at,
  };
}

export class Outbox {
  /** The highest id the broker acknowledged: rows up to it are published, deleted or not. */
  private acked = 0;
  /** The highest id a committed or pending deletion covered. */
  private deleted = 0;

  constructor(private readonly db: JobDatabase) {}

  /**
   * Inside a write transaction. A job event gets its `eventId` here (print-protocol v1.1 §6):
   * written with the event, so every redelivery of it carries the same id and no two events
   * share one.
   */
  add(kind: 'job' | 'status', payload: unknown, now: number): number {
    const body =
      kind === 'job' && typeof payload === 'object' && payload !== null
        ? { eventId: randomUUID(), ...payload }
        : payload;
    const id = Number(
      this.db
        .statement('INSERT INTO outbox (kind, payload, created_at) VALUES (?, ?, ?)')
        .run(kind, JSON.stringify(body), now).lastInsertRowid,
    );
    // Published entries go with this commit. Rolled back, they stay until a later deletion (every
    // one covers all lower ids) and are never read again while this process runs.
    if (this.acked > this.deleted) this.deleteUpTo(this.acked);
    return id;
  }

  /** Inside a write transaction, after an insert: the new row is the highest and stays. */
  private deleteUpTo(id: number): void {
    this.db.statement('DELETE FROM outbox WHERE id <= ?').run(id);
    this.deleted = id;
  }

  /** A job event for a message that never became a job (e.g. `rejected`, print-protocol §3). */
  recordEvent(event: NewJobEvent): void {
    this.db.write('recording an event', () => this.add('job', event, this.db.now()));
  }

  /** Status is retained: only the newest unpublished one matters, so it replaces older ones. */
  appendStatus(status: AgentStatus): void {
    this.db.write('storing a status', () => {
      const id = this.add('status', status, this.db.now());
      this.db.statement("DELETE FROM outbox WHERE kind = 'status' AND id < ?").run(id);
    });
  }

  /** The oldest unpublished entries, in the order they were written. */
  drain(limit: number): OutboxEntry[] {
    // The limit is part of the SQL, not a parameter: SQLite re-prepares a statement each time a
    // LIMIT parameter is bound (it may plan with the value), 40% of this read's time (perf,
    // issue 16). Callers pass a constant, so there is one statement per caller.
    const count = Math.max(0, Math.floor(limit) || 0);
    return this.db.read('reading the outbox', () =>
      (
        this.db
          .statement(
            `SELECT * FROM outbox WHERE id > ? AND kind <> 'sent' ORDER BY id LIMIT ${count}`,
          )
          .all(this.acked) as OutboxRow[]
      ).map(entryFromRow),
    );
  }

  /**
   * The broker acknowledged every entry up to `id` (published in order): they are not read again,
   * and deleted with the next entry's commit or by `sweep`.
   */
  acknowledge(id: number): void {
    if (id > this.acked) this.acked = id;
  }

  /**
   * Deletes acknowledged entries now, if any wait (a write without fsync of its own), but the
   * highest row, which keeps the ids growing: it stays, marked `sent`, until an entry is added.
   */
  sweep(): void {
    if (this.acked <= this.deleted) return;
    const upTo = this.acked;
    this.db.writeUnsynced('removing published outbox entries', () => {
      this.db
        .statement('DELETE FROM outbox WHERE id <= ? AND id < (SELECT max(id) FROM outbox)')
        .run(upTo);
      this.db
        .statement(
          "UPDATE outbox SET kind = 'sent', payload = '' WHERE id = (SELECT max(id) FROM outbox) AND id <= ?",
        )
        .run(upTo);
      this.deleted = upTo;
    });
  }

  size(): number {
    return this.db.read('reading the outbox', () => {
      const r = this.db
        .statement("SELECT COUNT(*) AS n FROM outbox WHERE id > ? AND kind <> 'sent'")
        .get(this.acked) as { n: number };
      return r.n;
    });
  }
}
