/**
 * The outbox (reliability guarantee 6): job events and the status waiting for the broker, in the
 * order they were written, until the reporter's publish is acknowledged. Separate from the job
 * rows because its readers differ (the reporter drains it, nobody else reads it) and because the
 * status, which is not a job's, goes through it too. `add` runs inside the caller's write
 * transaction, so a transition and its event (print-protocol §6) commit together: an event is
 * never lost nor published for a transition that did not commit.
 */
import { randomUUID } from 'node:crypto';
import type { AgentStatus, NewJobEvent } from '../../protocol/print-protocol.js';
import type { JobDatabase } from './database.js';

export interface OutboxEntry {
  id: number;
  kind: 'job' | 'status';
  payload: unknown;
  createdAt: number;
}

export class Outbox {
  constructor(private readonly db: JobDatabase) {}

  /**
   * Inside a write transaction. A job event gets its `eventId` here (print-protocol v1.1 §6):
   * written with the event, so every redelivery of it carries the same id and no two events
   * share one.
   */
  add(kind: 'job' | 'status', payload: unknown, now: number): void {
    const body =
      kind === 'job' && typeof payload === 'object' && payload !== null
        ? { eventId: randomUUID(), ...payload }
        : payload;
    this.db
      .statement('INSERT INTO outbox (kind, payload, created_at) VALUES (?, ?, ?)')
      .run(kind, JSON.stringify(body), now);
  }

  /** A job event for a message that never became a job (e.g. `rejected`, print-protocol §3). */
  recordEvent(event: NewJobEvent): void {
    this.db.write('recording an event', () => this.add('job', event, this.db.now()));
  }

  /** Status is retained: only the newest unpublished one matters, so it replaces older ones. */
  appendStatus(status: AgentStatus): void {
    this.db.write('storing a status', () => {
      this.db.statement("DELETE FROM outbox WHERE kind = 'status'").run();
      this.add('status', status, this.db.now());
    });
  }

  /** The oldest unpublished entries, in the order they were written. */
  drain(limit: number): OutboxEntry[] {
    return this.db.read('reading the outbox', () =>
      (
        this.db.statement('SELECT * FROM outbox ORDER BY id LIMIT ?').all(limit) as Array<{
          id: number;
          kind: 'job' | 'status';
          payload: string;
          created_at: number;
        }>
      ).map((r) => ({
        id: r.id,
        kind: r.kind,
        payload: JSON.parse(r.payload) as unknown,
        createdAt: r.created_at,
      })),
    );
  }

  /** Removes published entries (after the broker's PUBACK). */
  ack(ids: readonly number[]): void {
    if (ids.length === 0) return;
    // Undone by a power cut, they are only published again: no fsync of their own.
    this.db.writeUnsynced('acknowledging outbox entries', () => {
      const del = this.db.statement('DELETE FROM outbox WHERE id = ?');
      for (const id of ids) del.run(id);
    });
  }

  size(): number {
    return this.db.read('reading the outbox', () => {
      const r = this.db.statement('SELECT COUNT(*) AS n FROM outbox').get() as { n: number };
      return r.n;
    });
  }
}
