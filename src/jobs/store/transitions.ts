/**
 * Moving jobs through their states (print-protocol §6): the spooler's transitions, `jobs retry`,
 * the recovery of jobs a crash left printing, and the parking of jobs no printer serves. Each
 * transition is one write transaction that updates the row and adds its job event to the outbox
 * (reliability guarantee 6), and announces `outbox` (and `job` when a job became ready) after its
 * commit.
 */
import { AgentError } from '../../errors.js';
import type { JobState } from '../../protocol/print-protocol.js';
import type { ReceiptMarkings } from '../../receipt/model.js';
import {
  type Job,
  type JobReason,
  type JobRow,
  jobEvent,
  jobFromRow,
  type StoredJobState,
} from '../job.js';
import type { JobDatabase } from './database.js';
import type { StoreAnnouncer } from './events.js';
import type { Outbox } from './outbox.js';
import { type JobRows, PENDING_SQL } from './rows.js';

export type InterruptedPolicy = 'reprint-marked' | 'hold';

/** Columns a transition may set besides `state` and `updated_at`. */
interface Changes {
  attempts?: number;
  next_attempt_at?: number | null;
  last_error_code?: string | null;
  last_error_message?: string | null;
  warnings?: string;
  notices?: string;
  markings?: string;
  held?: number;
  queued_at?: number;
  printing_at?: number;
  printed_at?: number;
  finished_at?: number | null;
}

/** A transition's job event; `withNotices`: it reports the attempt's notices as `warnings`. */
interface PlannedEvent {
  state: JobState;
  reason: JobReason | null;
  withNotices?: boolean;
}

export class Transitions {
  constructor(
    private readonly db: JobDatabase,
    private readonly rows: JobRows,
    private readonly outbox: Outbox,
    private readonly events: StoreAnnouncer,
  ) {}

  /**
   * queued/waiting -> printing, before the first byte goes out: a crash from here on is seen. The
   * render's `notices` (CONTENT_CUT...) are kept with the attempt and reported as `warnings` by its
   * `printing`, `printed` and `unconfirmed` events.
   */
  markPrinting(
    id: number,
    render: { markings: ReceiptMarkings; warnings: string[]; notices?: readonly JobReason[] },
  ): Job {
    const markings = JSON.stringify(render.markings);
    const warnings = JSON.stringify(render.warnings);
    const notices = JSON.stringify(render.notices ?? []);
    return (
      this.guardedTransition(
        id,
        'printing',
        `attempts = attempts + 1, printing_at = @now, next_attempt_at = NULL,
         markings = @markings, warnings = @warnings, notices = @notices`,
        "state IN ('queued', 'waiting') AND held = 0",
        { markings, warnings, notices },
        { state: 'printing', reason: null, withNotices: true },
      ) ??
      // The guard did not hold: the checked path names the conflict (held, wrong state, gone).
      this.transition(id, ['queued', 'waiting'], 'printing', (job, now) => {
        if (job.held) {
          throw new AgentError(
            'JOB_STATE_CONFLICT',
            `job ${id} is held for a person: \`jobs retry ${id}\` releases it`,
          );
        }
        return {
          changes: {
            attempts: job.attempts + 1,
            printing_at: now,
            next_attempt_at: null,
            markings,
            warnings,
            notices,
          },
          event: { state: 'printing', reason: null, withNotices: true },
        };
      })
    );
  }

  /** printing -> printed: the printer confirmed the job (guarantee 4). */
  markPrinted(id: number): Job {
    return (
      this.guardedTransition(
        id,
        'printed',
        `printed_at = @now, finished_at = @now, last_error_code = NULL, last_error_message = NULL`,
        "state = 'printing'",
        {},
        { state: 'printed', reason: null, withNotices: true },
      ) ??
      this.transition(id, ['printing'], 'printed', (_job, now) => ({
        changes: {
          printed_at: now,
          finished_at: now,
          last_error_code: null,
          last_error_message: null,
        },
        event: { state: 'printed', reason: null, withNotices: true },
      }))
    );
  }

  /**
   * The group commit of a printer's queue (issue 16; decision 206): the `printed` of the job the
   * printer just confirmed and the `printing` of the next one, in one commit instead of two. Both
   * or neither: when the second cannot be made (a conflict), nothing is written and the caller
   * records the first on its own.
   */
  markPrintedThenPrinting(
    printedId: number,
    nextId: number,
    render: Parameters<Transitions['markPrinting']>[1],
  ): { printed: Job; printing: Job } {
    return this.db.write(
      `moving job ${printedId} to printed and job ${nextId} to printing`,
      () => ({
        printed: this.markPrinted(printedId),
        printing: this.markPrinting(nextId, render),
      }),
    );
  }

  /** printing -> unconfirmed: sent, never confirmed; not re-sent automatically. */
  markUnconfirmed(id: number, reason: JobReason): Job {
    return this.transition(id, ['printing'], 'unconfirmed', (_job, now) => ({
      changes: { finished_at: now, ...errorColumns(reason) },
      event: { state: 'unconfirmed', reason, withNotices: true },
    }));
  }

  /**
   * -> waiting: the printer cannot take the job now; retried at `nextAttemptAt`. A job that may
   * have printed in part (`possibleDuplicate`) keeps that marking for every later copy. A retry
   * that fails for the same reason only moves the next attempt: the service already knows.
   */
  markWaiting(
    id: number,
    reason: JobReason,
    nextAttemptAt: number,
    options: { possibleDuplicate?: boolean } = {},
  ): Job {
    return this.transition(id, ['queued', 'waiting', 'printing'], 'waiting', (job) => {
      const markings = options.possibleDuplicate
        ? { ...job.markings, possibleDuplicate: true }
        : job.markings;
      const unchanged =
        job.state === 'waiting' &&
        job.lastError?.code === reason.code &&
        Boolean(job.markings.possibleDuplicate) === Boolean(markings.possibleDuplicate);
      return {
        changes: {
          next_attempt_at: nextAttemptAt,
          markings: JSON.stringify(markings),
          ...errorColumns(reason),
        },
        event: unchanged ? null : { state: 'waiting', reason },
      };
    });
  }

  /** -> failed: a permanent error (cannot render, profile missing); the queue moves on. */
  markFailed(id: number, reason: JobReason): Job {
    return this.transition(id, ['queued', 'waiting', 'printing'], 'failed', (_job, now) => ({
      changes: { finished_at: now, next_attempt_at: null, ...errorColumns(reason) },
      event: { state: 'failed', reason },
    }));
  }

  /**
   * `jobs retry`: failed, unconfirmed or waiting (held included) -> queued, to print at once. A job
   * whose bytes may already be on paper (unconfirmed) prints with POSSIBLE DUPLICATE.
   */
  retry(id: number): Job {
    const job = this.transition(id, ['failed', 'unconfirmed', 'waiting'], 'queued', (job, now) => {
      const markings =
        job.state === 'unconfirmed' ? { ...job.markings, possibleDuplicate: true } : job.markings;
      return {
        changes: {
          queued_at: now,
          next_attempt_at: null,
          held: 0,
          finished_at: null,
          last_error_code: null,
          last_error_message: null,
          markings: JSON.stringify(markings),
        },
        event: { state: 'queued', reason: null },
      };
    });
    this.events.emit('job', job.printer);
    return job;
  }

  /**
   * At start-up: jobs found in `printing` were interrupted (guarantee 4). `reprint-marked` puts
   * them back at the head of their queue with POSSIBLE DUPLICATE; `hold` parks them for a person
   * (waiting, NEEDS_ATTENTION, skipped by the spooler, still marked for when `jobs retry` releases
   * them). Only the daemon calls this, once, before its spooler starts.
   */
  recoverInterrupted(policy: InterruptedPolicy): Job[] {
    const recovered = this.db.write('recovering interrupted jobs', () => {
      const now = this.db.now();
      const rows = this.db
        .statement(
          // Named: without statistics SQLite would rather scan the table in id order than sort
          // the few jobs the index finds.
          `SELECT * FROM jobs INDEXED BY jobs_active
           WHERE state IN ${PENDING_SQL} AND state = 'printing' ORDER BY id`,
        )
        .all() as JobRow[];
      return rows.map((row) => {
        const job = jobFromRow(row);
        const markings = JSON.stringify({ ...job.markings, possibleDuplicate: true });
        const reason: JobReason =
          policy === 'hold'
            ? {
                code: 'NEEDS_ATTENTION',
                message: `interrupted while printing (attempt ${job.attempts}); held for a person: it may have printed. \`printer-agent jobs retry ${job.id}\` prints it marked POSSIBLE DUPLICATE`,
              }
            : {
                code: 'JOB_INTERRUPTED',
                message: `interrupted while printing (attempt ${job.attempts}); printed again marked POSSIBLE DUPLICATE`,
              };
        const state: StoredJobState = policy === 'hold' ? 'waiting' : 'queued';
        return this.applyTransition(row, job, state, now, {
          changes: {
            markings,
            held: policy === 'hold' ? 1 : 0,
            next_attempt_at: null,
            queued_at: now,
            ...errorColumns(reason),
          },
          event: { state, reason },
        });
      });
    });
    if (recovered.length > 0) this.events.emit('outbox');
    for (const job of recovered) this.events.emit('job', job.printer);
    return recovered;
  }

  /**
   * print-protocol v1.1 §4, unknown role: pending jobs of `role` (which no configured printer
   * serves) become `waiting` with `reason`, ready to print as soon as a printer with that role
   * exists (`next_attempt_at` now). One event per job: a job already waiting for this reason, or
   * held for a person, is left alone. Returns the jobs it changed.
   */
  markUnrouted(role: string, reason: JobReason): Job[] {
    const changed = this.db.write(`parking jobs for role ${role}`, () => {
      const now = this.db.now();
      const rows = this.db
        .statement(
          `SELECT * FROM jobs WHERE printer = ? AND state IN ${PENDING_SQL} AND held = 0
           AND (state = 'queued'
             OR (state = 'waiting' AND (last_error_code IS NULL OR last_error_code <> ?)))
         ORDER BY id`,
        )
        .all(role, reason.code) as JobRow[];
      return rows.map((row) =>
        this.applyTransition(row, jobFromRow(row), 'waiting', now, {
          changes: { next_attempt_at: now, ...errorColumns(reason) },
          event: { state: 'waiting', reason },
        }),
      );
    });
    if (changed.length > 0) this.events.emit('outbox');
    return changed;
  }

  private transition(
    id: number,
    from: readonly StoredJobState[],
    to: StoredJobState,
    plan: (job: Job, now: number) => { changes: Changes; event: PlannedEvent | null },
  ): Job {
    let wrote = false;
    const job = this.db.write(`moving job ${id} to ${to}`, () => {
      const now = this.db.now();
      const row = this.rows.mustGetRow(id);
      const current = this.rows.toJob(row);
      if (!from.includes(current.state)) {
        throw new AgentError(
          'JOB_STATE_CONFLICT',
          `job ${id} is ${current.state}; it can become ${to} only from ${from.join(', ')}`,
          { details: { state: current.state } },
        );
      }
      const p = plan(current, now);
      wrote = p.event !== null;
      return this.applyTransition(row, current, to, now, p);
    });
    if (wrote) this.events.emit('outbox');
    return job;
  }

  /**
   * The spooler's two transitions per printed job in one statement each (issue 16): `UPDATE …
   * WHERE id = ? AND <guard> RETURNING *` instead of a SELECT, a check in JavaScript and an UPDATE.
   * `set` may use `@now` and the names of `values`. Null when the guard does not hold (another
   * state, a held job, no such job): nothing changed, and the caller's checked `transition` names
   * the problem.
   */
  private guardedTransition(
    id: number,
    to: StoredJobState,
    set: string,
    guard: string,
    values: Record<string, string>,
    event: PlannedEvent,
  ): Job | null {
    const job = this.db.write(`moving job ${id} to ${to}`, () => {
      const now = this.db.now();
      const row = this.rows.row(
        `UPDATE jobs SET state = '${to}', updated_at = @now, ${set}
           WHERE id = @id AND ${guard} RETURNING *`,
        [{ ...values, now, id }],
      );
      if (!row) return null;
      const updated = this.rows.toJob(row);
      this.addEvent(updated, event, now);
      return updated;
    });
    if (job) this.events.emit('outbox');
    return job;
  }

  /** Runs inside a write transaction: the row update and its event commit together. */
  private applyTransition(
    row: JobRow,
    current: Job,
    to: StoredJobState,
    now: number,
    plan: { changes: Changes; event: PlannedEvent | null },
  ): Job {
    const entries = Object.entries(plan.changes) as Array<[keyof Changes, unknown]>;
    const columns = ['state', 'updated_at', ...entries.map(([k]) => k)];
    const sql = `UPDATE jobs SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`;
    this.db.statement(sql).run(to, now, ...entries.map(([, v]) => v), current.id);
    // The row as this UPDATE left it, without reading it back: the same columns set to the same
    // values. A transition never changes the payload, so its parsed form is reused (issue 16: a
    // SELECT * and a JSON.parse of the payload per transition; a test compares with a re-read).
    const updated = jobFromRow({ ...row, ...plan.changes, state: to, updated_at: now }, current);
    if (plan.event) this.addEvent(updated, plan.event, now);
    return updated;
  }

  /** Inside the transition's write transaction: its job event, committed with it. */
  private addEvent(updated: Job, event: PlannedEvent, now: number): void {
    const warnings = event.withNotices ? updated.notices : [];
    this.outbox.add('job', jobEvent(updated, event.state, now, event.reason, warnings), now);
  }
}

function errorColumns(reason: JobReason): Changes {
  return { last_error_code: reason.code, last_error_message: reason.message };
}
