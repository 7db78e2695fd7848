/**
 * Storing jobs (reliability guarantees 1 and 3): orders as one job per printer role, commands and
 * local reprints and test pages, each checked against the dedupe keys (`dedupe.ts`) and stored
 * with its first job event (`outbox.ts`) in one transaction; the catch-up cursor and the time
 * floor move in the same one (`meta.ts`). Announces `outbox` and `job` after the commit, and
 * passes the `after-insert` crash point there (fault matrix).
 */
import { randomUUID } from 'node:crypto';
import { AgentError } from '../../errors.js';
import type { OrderRecord } from '../../protocol/order-record.js';
import type { Command, PrintInstruction } from '../../protocol/print-protocol.js';
import { DEFAULT_PRINTER_ROLE } from '../../protocol/print-protocol.js';
import type { ReceiptMarkings } from '../../receipt/model.js';
import { faultPoint } from '../fault-points.js';
import { type Job, type JobReason, type JobSource, jobEvent, localTimestamp } from '../job.js';
import { type Route, routedJobId } from '../routing.js';
import type { JobDatabase } from './database.js';
import type { Dedupe, Duplicate, ExistingJob } from './dedupe.js';
import type { StoreAnnouncer } from './events.js';
import type { Meta } from './meta.js';
import type { Outbox } from './outbox.js';
import type { Queries } from './queries.js';
import type { JobRows } from './rows.js';

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

/** A job about to be stored: its keys and what it prints; the insert sets the rest. */
type NewJobRow = Pick<
  Job,
  | 'source'
  | 'kind'
  | 'jobId'
  | 'orderNo'
  | 'commandId'
  | 'printer'
  | 'payloadType'
  | 'markings'
  | 'sourceJob'
> & {
  /** The payload as stored: the text received, or the record or command as JSON. */
  payload: string;
  /** Default: the payment receipt, every item. */
  layout?: Route['layout'];
  items?: readonly number[] | null;
};

export class Insertion {
  /** An insert inside `inOneCommit` that its outermost commit has not committed yet. */
  private insertedUncommitted = false;

  constructor(
    private readonly db: JobDatabase,
    private readonly rows: JobRows,
    private readonly queries: Queries,
    private readonly dedupe: Dedupe,
    private readonly outbox: Outbox,
    private readonly meta: Meta,
    private readonly events: StoreAnnouncer,
  ) {}

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
      // Every order stored here was authenticated (signed instruction or signed page).
      this.meta.raiseTimeFloor(
        order.kind === 'instruction' ? order.instruction.createTime : order.record.createTime,
      );
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
          (spec.printer !== null ? this.queries.receiptRow(orderNo, spec.printer) : undefined) ??
          this.queries.receiptRow(orderNo, null);
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
    this.events.emit('outbox');
    for (const r of inserted) if (r.job.state === 'queued') this.events.emit('job', r.job.printer);
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
    const inserted = this.rows.row(
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
    const job = this.rows.toJob(inserted!);
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
    return this.rows.mustGet(stale.id);
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
