/**
 * The durable job store (issue 6; reliability guarantees 1, 3, 4, 6, 11): one SQLite file in the
 * agent's state directory, shared by the daemon and the `jobs` CLI. This file keeps the jobs:
 * storing them (with their dedupe check), moving them through their states (print-protocol §6)
 * and reading them. `JobStore` is the one face the rest of the agent sees and the only emitter of
 * its events; the parts in `store/` sit behind it on the same connection (`store/database.ts`), so
 * a write that spans parts is one transaction:
 *
 * - `store/dedupe.ts`: business keys, and the ledger of pruned jobs' keys (guarantee 3);
 * - `store/outbox.ts`: events and status waiting for the broker; every transition writes its event
 *   there in its own transaction (guarantee 6);
 * - `store/meta.ts`: the catch-up cursor and the poller's other named values;
 * - `store/pruning.ts`: retention's queries and the space figures.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { AgentError } from '../errors.js';
import type { OrderRecord } from '../protocol/order-record.js';
import type {
  AgentStatus,
  Command,
  JobState,
  NewJobEvent,
  PrintInstruction,
} from '../protocol/print-protocol.js';
import { DEFAULT_PRINTER_ROLE } from '../protocol/print-protocol.js';
import type { ReceiptMarkings } from '../receipt/model.js';
import { faultPoint } from './fault-points.js';
import {
  FINISHED_STATES,
  type Job,
  type JobColumns,
  type JobKind,
  type JobReason,
  type JobRow,
  type JobSource,
  jobColumns,
  jobEvent,
  jobFromRow,
  jobRowFromArray,
  localTimestamp,
  type PayloadType,
  PENDING_STATES,
  type StoredJobState,
} from './job.js';
import { type Route, routedJobId } from './routing.js';
import { JobDatabase, type JobStoreOptions, sqlList } from './store/database.js';
import { Dedupe, type Duplicate, type ExistingJob } from './store/dedupe.js';
import { Meta } from './store/meta.js';
import { Outbox, type OutboxEntry } from './store/outbox.js';
import { Pruning } from './store/pruning.js';

export { DATABASE_FILE, DEFAULT_STATE_DIR, type JobStoreOptions } from './store/database.js';
export type { DedupeKey, ExistingJob } from './store/dedupe.js';
export type { OutboxEntry } from './store/outbox.js';

export type InsertResult =
  | {
      status: 'inserted';
      job: Job;
      /**
       * The job took over this order's row from a catch-up record that was stored `failed`
       * STALE_ORDER and never printed (see `insert`); absent for a new row.
       */
      replaced?: ExistingJob;
    }
  | Duplicate;

/** One route's outcome of `enqueueOrder`. */
export interface RoutedInsert {
  route: Route;
  result: InsertResult;
}

/** An order to store: a verified instruction (`raw`: its param as received) or a record. */
export type OrderInput =
  | {
      kind: 'instruction';
      instruction: Omit<PrintInstruction, 'printer'>;
      raw?: string;
      source?: 'mqtt' | 'local';
    }
  | { kind: 'record'; record: OrderRecord; jobId?: string };

export type InterruptedPolicy = 'reprint-marked' | 'hold';

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

interface StoreEvents {
  /** A job became ready to print on `printer` (insert, retry, recovery): wake its loop. */
  job: [printer: string];
  /** Rows were added to the outbox: wake the reporter. */
  outbox: [];
}

interface NewJobRow {
  source: JobSource;
  kind: JobKind;
  jobId: string;
  orderNo: string | null;
  commandId: string | null;
  printer: string;
  payloadType: PayloadType;
  payload: string;
  markings: ReceiptMarkings;
  sourceJob: number | null;
  /** Default: the payment receipt, every item. */
  layout?: Route['layout'];
  items?: readonly number[] | null;
}

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

// The WHERE terms of the partial indexes jobs_active and jobs_done (migration 5): a query names
// the term verbatim for SQLite to use the index.
const PENDING_SQL = sqlList(PENDING_STATES);
const FINISHED_SQL = sqlList(FINISHED_STATES);

export class JobStore extends EventEmitter<StoreEvents> {
  readonly path: string;
  private readonly db: JobDatabase;
  private readonly dedupe: Dedupe;
  private readonly outbox: Outbox;
  private readonly meta: Meta;
  private readonly pruning: Pruning;
  /** See `jobRow`: its statements by SQL text, with where their row's columns are. */
  private readonly rowStatements = new Map<
    string,
    { statement: ReturnType<JobDatabase['prepareRaw']>; columns: JobColumns }
  >();
  /** See `toJob`. */
  private lastParsed: (Pick<Job, 'payload' | 'payloadProblem'> & { payloadText: string }) | null =
    null;

  /** An insert inside `inOneCommit` that its outermost commit has not committed yet. */
  private insertedUncommitted = false;

  private constructor(db: JobDatabase) {
    super();
    this.db = db;
    this.path = db.path;
    this.dedupe = new Dedupe(db);
    this.outbox = new Outbox(db);
    this.meta = new Meta(db);
    this.pruning = new Pruning(db, this.dedupe);
  }

  /** Opens (and creates or migrates) the database; throws STORE_FAILED / STORE_FULL. */
  static open(options: JobStoreOptions = {}): JobStore {
    return new JobStore(JobDatabase.open(options));
  }

  close(): void {
    this.db.close();
  }

  get isOpen(): boolean {
    return this.db.isOpen;
  }

  // Health (store/database.ts) ------------------------------------------------------------------

  /** The settings that carry the durability promise, as SQLite reports them. */
  pragmas(): ReturnType<JobDatabase['pragmas']> {
    return this.db.pragmas();
  }

  /** `PRAGMA integrity_check`: `ok`, or the problems found, one per line. */
  integrityCheck(): string {
    return this.db.integrityCheck();
  }

  /** Caps the file size (`max_page_count`); see `JobDatabase.setSizeLimit`. */
  setSizeLimit(bytes: number | null): void {
    this.db.setSizeLimit(bytes);
  }

  /**
   * Runs `fn`, whose store calls commit together: one transaction, each call inside it a savepoint
   * (a call that throws undoes its own writes only, unless the error escapes `fn`). Nested, it is a
   * savepoint itself, whose errors go on unchanged. For the inbox's messages of one turn
   * (decision 211).
   */
  inOneCommit<T>(doing: string, fn: () => T): T {
    if (this.db.inTransaction) return this.db.savepoint(fn);
    let result: T;
    try {
      result = this.db.write(doing, fn);
    } catch (error) {
      this.insertedUncommitted = false;
      throw error;
    }
    if (this.insertedUncommitted) {
      this.insertedUncommitted = false;
      faultPoint('after-insert');
    }
    return result;
  }

  // Inserting ----------------------------------------------------------------------------------

  /**
   * Stores a verified print instruction (print-protocol §4) as one job on its `printer` role, in
   * the `route`'s layout (default: the payment receipt). `raw` is the `param` string exactly as
   * received; when given it is what the job keeps. Options as `enqueueOrder`'s.
   */
  enqueueInstruction(
    instruction: PrintInstruction,
    options: {
      source?: 'mqtt' | 'local';
      raw?: string;
      failed?: JobReason;
      warnings?: readonly JobReason[];
      markings?: ReceiptMarkings;
      route?: Route;
    } = {},
  ): InsertResult {
    const { source, raw, route, ...rest } = options;
    return this.enqueueOrder(
      {
        kind: 'instruction',
        instruction,
        ...(raw !== undefined ? { raw } : {}),
        ...(source ? { source } : {}),
      },
      [route ?? { role: instruction.printer, layout: 'receipt', items: null }],
      { ...rest, named: true },
    )[0]!.result;
  }

  /**
   * Stores an order pulled by catch-up (print-protocol §8) as one job on `printer` (default the
   * receipt role). Its jobId is `catch-up:ORDER_NO` unless given, so a catch-up that runs twice
   * dedupes on the jobId as well as on the orderNo. Options as `enqueueOrder`'s.
   */
  enqueueRecord(
    record: OrderRecord,
    options: {
      printer?: string;
      jobId?: string;
      failed?: JobReason;
      warnings?: readonly JobReason[];
      advanceCursor?: boolean;
    } = {},
  ): InsertResult {
    const { printer, jobId, ...rest } = options;
    return this.enqueueOrder(
      { kind: 'record', record, ...(jobId !== undefined ? { jobId } : {}) },
      [{ role: printer ?? DEFAULT_PRINTER_ROLE, layout: 'receipt', items: null }],
      { ...rest, named: true },
    )[0]!.result;
  }

  /**
   * Stores one order as one job per route (issue 18, `routing.ts`), in one transaction: a crash
   * stores all of them or none, and the broker's acknowledgement (or the catch-up cursor) follows
   * only the commit. Each route's job is deduped on its own (jobId, and one per order and role:
   * print-protocol v1.1 §4), so a redelivered order meets its own jobs and a second path to the same
   * order (MQTT and catch-up) prints nothing twice.
   *
   * - `named`: the instruction named its role; its one job keeps the instruction's jobId.
   * - `failed`: store the jobs finished, `failed` with this reason (a stale order: reported, not
   *   printed; `jobs retry` prints it). A duplicate stays a duplicate.
   * - `warnings`: carried by the `queued` (or `failed`) events, e.g. CLOCK_UNSYNCHRONIZED.
   * - `markings`: printed from the first copy on (LATE decided at arrival).
   * - `advanceCursor`: (records) move the catch-up cursor to this order in the same transaction,
   *   whether its jobs were stored or duplicates, so a crash never leaves the cursor ahead of (or
   *   behind) the jobs.
   */
  enqueueOrder(
    order: OrderInput,
    routes: readonly Route[],
    options: {
      named?: boolean;
      failed?: JobReason;
      warnings?: readonly JobReason[];
      markings?: ReceiptMarkings;
      advanceCursor?: boolean;
    } = {},
  ): RoutedInsert[] {
    const base =
      order.kind === 'instruction'
        ? {
            source: order.source ?? 'mqtt',
            jobId: order.instruction.jobId,
            orderNo: order.instruction.orderNo,
            payloadType: 'instruction' as const,
            payload: order.raw ?? JSON.stringify(order.instruction),
          }
        : {
            source: 'catch-up' as const,
            jobId: order.jobId ?? `catch-up:${order.record.orderInnerNo}`,
            orderNo: order.record.orderInnerNo,
            payloadType: 'record' as const,
            payload: JSON.stringify(order.record),
          };
    const extra = {
      ...(options.failed ? { failed: options.failed } : {}),
      ...(options.warnings ? { warnings: options.warnings } : {}),
    };
    const results = this.db.write('storing a job', () => {
      const now = this.db.now();
      const inserted = routes.map((route) => ({
        route,
        result: this.insertRow(
          {
            ...base,
            kind: 'receipt',
            jobId: routedJobId(base.jobId, route.role, options.named === true),
            commandId: null,
            printer: route.role,
            markings: options.markings ?? {},
            sourceJob: null,
            layout: route.layout,
            items: route.items,
          },
          undefined,
          extra,
          now,
        ),
      }));
      if (options.advanceCursor && order.kind === 'record')
        this.meta.putCatchUpCursor(order.record.orderInnerNo);
      return inserted;
    });
    this.afterInsert(results.map((r) => r.result));
    return results;
  }

  /**
   * Stores a `reprint` or `test-print` command (print-protocol §5); `status` is not a job. A
   * reprint of an order without a stored receipt throws JOB_NOT_FOUND.
   */
  enqueueCommand(
    // The inbox checked storeId already; local callers (tests, the CLI) need not invent one.
    command:
      | (Omit<Extract<Command, { type: 'reprint' }>, 'storeId'> & { storeId?: string })
      | (Omit<Extract<Command, { type: 'test-print' }>, 'storeId'> & { storeId?: string }),
    options: { raw?: string; defaultPrinter?: string } = {},
  ): InsertResult {
    const payload = options.raw ?? JSON.stringify(command);
    const jobId = `command:${command.commandId}`;
    if (command.type === 'reprint') {
      return this.reprintJob(command.orderNo, {
        source: 'command',
        jobId,
        commandId: command.commandId,
        printer: command.printer ?? null,
        payload,
      });
    }
    return this.insert({
      source: 'command',
      kind: 'test',
      jobId,
      orderNo: null,
      commandId: command.commandId,
      printer: command.printer ?? options.defaultPrinter ?? DEFAULT_PRINTER_ROLE,
      payloadType: 'command',
      payload,
      markings: {},
      sourceJob: null,
    });
  }

  /**
   * `jobs reprint ORDER_NO`: a local reprint of the stored receipt, marked REPRINT, on `printer`
   * (default: the original's). Which receipt: that role's when the order has one, else the
   * `receipt` role's, else the oldest (print-protocol v1.1 §4: one receipt per order and role).
   */
  enqueueReprint(orderNo: string, options: { printer?: string } = {}): InsertResult {
    return this.reprintJob(orderNo, {
      source: 'local',
      jobId: `local-reprint:${randomUUID()}`,
      commandId: null,
      printer: options.printer ?? null,
      payload: JSON.stringify({ type: 'reprint', orderNo, printer: options.printer }),
    });
  }

  /** A test page on `printer` asked for locally (the status page, `printer-agent test-print`). */
  enqueueTestPrint(printer: string = DEFAULT_PRINTER_ROLE): InsertResult {
    return this.insert({
      source: 'local',
      kind: 'test',
      jobId: `local-test:${randomUUID()}`,
      orderNo: null,
      commandId: null,
      printer,
      payloadType: 'command',
      payload: JSON.stringify({ type: 'test-print', printer }),
      markings: {},
      sourceJob: null,
    });
  }

  private reprintJob(
    orderNo: string,
    spec: {
      source: JobSource;
      jobId: string;
      commandId: string | null;
      printer: string | null;
      payload: string;
    },
  ): InsertResult {
    return this.insert(
      {
        source: spec.source,
        kind: 'reprint',
        jobId: spec.jobId,
        orderNo,
        commandId: spec.commandId,
        printer: spec.printer ?? DEFAULT_PRINTER_ROLE,
        payloadType: 'command',
        payload: spec.payload,
        markings: {},
        sourceJob: null,
      },
      (row) => {
        // Resolved inside the insert's transaction, after the dedupe check: a redelivered
        // reprint command is a duplicate even when the order has since been pruned.
        // With a printer: that role's receipt when the order has one, else the one a reprint
        // without a printer takes (the receipt role's, else the oldest), printed on that printer.
        const original =
          (spec.printer !== null ? this.receiptRow(orderNo, spec.printer) : undefined) ??
          this.receiptRow(orderNo, null);
        if (!original) {
          throw new AgentError(
            'JOB_NOT_FOUND',
            `no stored receipt for order ${orderNo} to reprint (never received, or pruned)`,
          );
        }
        const { n } = this.db
          .statement("SELECT COUNT(*) AS n FROM jobs WHERE kind = 'reprint' AND source_job = ?")
          .get(original.id) as { n: number };
        return {
          ...row,
          printer: spec.printer ?? original.printer,
          sourceJob: original.id,
          markings: {
            reprint: {
              count: n + 1,
              originalTime: localTimestamp(original.printed_at ?? original.created_at),
            },
          },
        };
      },
    );
  }

  /**
   * `extra.failed` stores the job finished in `failed` (one `failed` event, no `queued`);
   * `extra.alsoWrite` runs inside the same transaction, after the insert or the duplicate check.
   */
  private insert(
    row: NewJobRow,
    complete?: (row: NewJobRow) => NewJobRow,
    extra: { failed?: JobReason; warnings?: readonly JobReason[]; alsoWrite?: () => void } = {},
  ): InsertResult {
    const result = this.db.write('storing a job', (): InsertResult => {
      const inserted = this.insertRow(row, complete, extra, this.db.now());
      extra.alsoWrite?.();
      return inserted;
    });
    this.afterInsert([result]);
    return result;
  }

  /** After the commit of inserts: wake the reporter and the printers' loops. */
  private afterInsert(results: readonly InsertResult[]): void {
    const inserted = results.filter((r) => r.status === 'inserted');
    if (inserted.length === 0) return;
    this.emit('outbox');
    for (const r of inserted) if (r.job.state === 'queued') this.emit('job', r.job.printer);
    // The crash point is after the commit: inside `inOneCommit`, after its outermost one.
    if (this.db.inTransaction) this.insertedUncommitted = true;
    else faultPoint('after-insert');
  }

  /** Inside a write transaction: one job row, or the duplicate its keys meet. */
  private insertRow(
    row: NewJobRow,
    complete: ((row: NewJobRow) => NewJobRow) | undefined,
    extra: { failed?: JobReason; warnings?: readonly JobReason[] },
    now: number,
  ): InsertResult {
    // A duplicate changes nothing and writes nothing: whether it deserves an answer is the
    // caller's call (the MQTT inbox answers `duplicate`; catch-up re-reads its trailing window
    // every round and must not flood the service with duplicates of its own overlap).
    const duplicate = this.dedupe.find(row);
    const failed = extra.failed ?? null;
    if (duplicate && staleCatchUpRecord(duplicate, row)) {
      // The catch-up record was only judged by the agent's own clock against catchUp.maxAgeMinutes
      // and never printed; the signed instruction for the same order and role is the service's
      // own word, judged by its own rule (freshness). It takes the row over instead of being
      // answered `duplicate`, so a clock that ran ahead cannot cost the receipt.
      const job = this.takeOver(duplicate.job!, row, failed, now);
      this.outbox.add(
        'job',
        jobEvent(job, failed ? 'failed' : 'queued', now, failed, extra.warnings),
        now,
      );
      return { status: 'inserted', job, replaced: duplicate.existing };
    }
    if (duplicate) return duplicate;
    const full = complete ? complete(row) : row;
    const inserted = this.jobRow(
      `INSERT INTO jobs (source, kind, job_id, order_no, command_id, printer, payload_type, payload,
         state, markings, source_job, created_at, queued_at, updated_at, finished_at,
         last_error_code, last_error_message, layout, items)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      [
        full.source,
        full.kind,
        full.jobId,
        full.orderNo,
        full.commandId,
        full.printer,
        full.payloadType,
        full.payload,
        failed ? 'failed' : 'queued',
        JSON.stringify(full.markings),
        full.sourceJob,
        now,
        now,
        now,
        failed ? now : null,
        failed?.code ?? null,
        failed?.message ?? null,
        full.layout ?? 'receipt',
        full.items ? JSON.stringify(full.items) : null,
      ],
    );
    // The row as stored, defaults included, from the insert itself (issue 16: no second read).
    const job = this.toJob(inserted!);
    this.outbox.add(
      'job',
      jobEvent(job, failed ? 'failed' : 'queued', now, failed, extra.warnings),
      now,
    );
    return { status: 'inserted', job };
  }

  /** Inside `insert`'s transaction: the row of `stale` becomes the job `row` describes. */
  private takeOver(stale: Job, row: NewJobRow, failed: JobReason | null, now: number): Job {
    this.db
      .statement(
        `UPDATE jobs SET source = ?, job_id = ?, payload_type = ?, payload = ?, markings = ?,
         layout = ?, items = ?,
         state = ?, attempts = 0, next_attempt_at = NULL, held = 0, warnings = '[]',
         last_error_code = ?, last_error_message = ?, queued_at = ?, updated_at = ?,
         finished_at = ?
       WHERE id = ?`,
      )
      .run(
        row.source,
        row.jobId,
        row.payloadType,
        row.payload,
        JSON.stringify(row.markings),
        row.layout ?? 'receipt',
        row.items ? JSON.stringify(row.items) : null,
        failed ? 'failed' : 'queued',
        failed?.code ?? null,
        failed?.message ?? null,
        now,
        now,
        failed ? now : null,
        stale.id,
      );
    return this.mustGet(stale.id);
  }

  // Transitions (print-protocol §6) -----------------------------------------------------------

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
    render: Parameters<JobStore['markPrinting']>[1],
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
    this.emit('job', job.printer);
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
    if (recovered.length > 0) this.emit('outbox');
    for (const job of recovered) this.emit('job', job.printer);
    return recovered;
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
      const row = this.mustGetRow(id);
      const current = this.toJob(row);
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
    if (wrote) this.emit('outbox');
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
      const row = this.jobRow(
        `UPDATE jobs SET state = '${to}', updated_at = @now, ${set}
           WHERE id = @id AND ${guard} RETURNING *`,
        [{ ...values, now, id }],
      );
      if (!row) return null;
      const updated = this.toJob(row);
      this.addEvent(updated, event, now);
      return updated;
    });
    if (job) this.emit('outbox');
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

  /**
   * The one `jobs` row of `sql` (`SELECT *` or `RETURNING *`), or undefined: for the statements
   * of every job's way (insert, head of the queue, transitions), built from the raw result
   * (`jobRowFromArray`, issue 16). Inside `read`/`write`'s function.
   */
  private jobRow(sql: string, params: unknown[]): JobRow | undefined {
    let prepared = this.rowStatements.get(sql);
    if (!prepared) {
      const statement = this.db.prepareRaw(sql);
      prepared = { statement, columns: jobColumns(statement.columns().map((c) => c.name)) };
      this.rowStatements.set(sql, prepared);
    }
    const row = prepared.statement.get(...params) as unknown[] | undefined;
    return row === undefined ? undefined : jobRowFromArray(row, prepared.columns);
  }

  /**
   * The job a row holds, its payload parsed once for the last payload text seen: the spooler reads
   * a job at the head of its queue and then moves it twice, each time with the same payload (issue
   * 16: one JSON.parse per job instead of three). Parsing is a function of the text alone.
   */
  private toJob(row: JobRow): Job {
    const last = this.lastParsed;
    if (last !== null && last.payloadText === row.payload) return jobFromRow(row, last);
    const job = jobFromRow(row);
    this.lastParsed = {
      payloadText: row.payload,
      payload: job.payload,
      payloadProblem: job.payloadProblem,
    };
    return job;
  }

  // Reading ------------------------------------------------------------------------------------

  get(id: number): Job | null {
    return this.db.read('reading a job', () => {
      const row = this.db.statement('SELECT * FROM jobs WHERE id = ?').get(id) as
        | JobRow
        | undefined;
      return row ? jobFromRow(row) : null;
    });
  }

  getByJobId(jobId: string): Job | null {
    return this.db.read('reading a job', () => {
      const row = this.db.statement('SELECT * FROM jobs WHERE job_id = ?').get(jobId) as
        | JobRow
        | undefined;
      return row ? jobFromRow(row) : null;
    });
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

  private receiptRow(orderNo: string, role: string | null): JobRow | undefined {
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
      const row = this.jobRow(
        `SELECT * FROM jobs WHERE printer = ? AND state IN ${PENDING_SQL} AND state <> 'printing'
             AND held = 0 ORDER BY id LIMIT 1`,
        [printer],
      );
      return row ? this.toJob(row) : null;
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
    if (changed.length > 0) this.emit('outbox');
    return changed;
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
           WHERE state IN ${FINISHED_SQL} AND state = 'printed' GROUP BY printer`,
        )
        .all() as Array<{ printer: string; at: number }>;
      for (const r of printed) entry(r.printer).lastPrintedAt = r.at;
      return [...stats.values()].sort((a, b) => a.printer.localeCompare(b.printer));
    });
  }
  // Outbox (store/outbox.ts) --------------------------------------------------------------------

  /** A job event for a message that never became a job (e.g. `rejected`, print-protocol §3). */
  recordEvent(event: NewJobEvent): void {
    this.outbox.recordEvent(event);
    this.emit('outbox');
  }

  /** Status is retained: only the newest unpublished one matters, so it replaces older ones. */
  appendStatus(status: AgentStatus): void {
    this.outbox.appendStatus(status);
    this.emit('outbox');
  }

  /** The oldest unpublished entries, in the order they were written. */
  drainOutbox(limit = 100): OutboxEntry[] {
    return this.outbox.drain(limit);
  }

  /**
   * The broker acknowledged every entry up to `id`: not read again; deleted with the next event's
   * commit or by `sweepOutbox` (store/outbox.ts).
   */
  acknowledgeOutbox(id: number): void {
    this.outbox.acknowledge(id);
  }

  /** Deletes acknowledged outbox entries now (idle, or stopping). */
  sweepOutbox(): void {
    this.outbox.sweep();
  }

  outboxSize(): number {
    return this.outbox.size();
  }

  // Meta (store/meta.ts) ------------------------------------------------------------------------

  getMeta(key: string): string | null {
    return this.meta.get(key);
  }

  setMeta(key: string, value: string): void {
    this.meta.set(key, value);
  }

  /** The catch-up cursor: the last order number seen (print-protocol §8). */
  getCatchUpCursor(): string | null {
    return this.meta.catchUpCursor();
  }

  setCatchUpCursor(orderNo: string): void {
    this.meta.setCatchUpCursor(orderNo);
  }

  /** Forgets the cursor (the service does not know it): the next catch-up reads by time range. */
  clearCatchUpCursor(): void {
    this.meta.clearCatchUpCursor();
  }

  // Retention (store/pruning.ts) ----------------------------------------------------------------

  /** One batch of retention: finished jobs that finished before `before`, keys to the ledger. */
  pruneFinished(before: number, batchSize = 200): number {
    return this.pruning.pruneFinished(before, batchSize);
  }

  /** `jobs purge --printed-before`: printed jobs printed before `before`, in batches; returns the count. */
  purgePrinted(before: number, batchSize = 500): number {
    return this.pruning.purgePrinted(before, batchSize);
  }

  /** One batch of ledger retention: forgets dedupe keys pruned before `before`. */
  pruneLedger(before: number, batchSize = 500): number {
    return this.pruning.pruneLedger(before, batchSize);
  }

  /** Returns up to `pages` free pages to the file system; never a full VACUUM. */
  incrementalVacuum(pages = 256): void {
    this.pruning.incrementalVacuum(pages);
  }

  /** Free pages in the file (`freelist_count`) and its size in pages. */
  spaceStats(): { pageSize: number; pages: number; freePages: number } {
    return this.pruning.spaceStats();
  }

  // Plumbing -------------------------------------------------------------------------------------

  private mustGet(id: number): Job {
    return this.toJob(this.mustGetRow(id));
  }

  private mustGetRow(id: number): JobRow {
    const row = this.db.statement('SELECT * FROM jobs WHERE id = ?').get(id) as JobRow | undefined;
    if (!row) throw new AgentError('JOB_NOT_FOUND', `no job with id ${id}`);
    return row;
  }
}

/**
 * A signed MQTT instruction meeting, for the same order and role, a catch-up record stored
 * `failed` STALE_ORDER that never printed (decision 131).
 */
function staleCatchUpRecord(duplicate: Duplicate, row: NewJobRow): boolean {
  const job = duplicate.job;
  return (
    duplicate.matchedOn === 'orderNo' &&
    job !== null &&
    row.source === 'mqtt' &&
    row.payloadType === 'instruction' &&
    job.source === 'catch-up' &&
    job.state === 'failed' &&
    job.lastError?.code === 'STALE_ORDER' &&
    job.printedAt === null
  );
}

function errorColumns(reason: JobReason): Changes {
  return { last_error_code: reason.code, last_error_message: reason.message };
}
