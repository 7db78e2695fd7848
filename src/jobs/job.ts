/**
 * A job as the store keeps it, and the job event (print-protocol §6) each of its transitions
 * produces. Times are milliseconds since the epoch on the agent's clock: integers compare and
 * subtract cheaply in SQL (queue age, next attempt, retention).
 */
import { MAX_JSON_DEPTH, tooDeep } from '../protocol/limits.js';
import type { JobState, NewJobEvent } from '../protocol/print-protocol.js';
import type { ReceiptMarkings } from '../receipt/model.js';
import type { Layout } from './routing.js';

export const JOB_SOURCES = ['mqtt', 'catch-up', 'command', 'local'] as const;
export type JobSource = (typeof JOB_SOURCES)[number];

export const JOB_KINDS = ['receipt', 'reprint', 'test'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/** `rejected` and `duplicate` (print-protocol §6) answer a message; they never become a job row. */
export const STORED_JOB_STATES = [
  'queued',
  'waiting',
  'printing',
  'printed',
  'unconfirmed',
  'failed',
] as const satisfies readonly JobState[];
export type StoredJobState = (typeof STORED_JOB_STATES)[number];

/** States a job can still leave by itself (counted as pending in the status). */
export const PENDING_STATES: readonly StoredJobState[] = ['queued', 'waiting', 'printing'];
export const FINISHED_STATES: readonly StoredJobState[] = ['printed', 'unconfirmed', 'failed'];

export type PayloadType = 'instruction' | 'record' | 'command';

export interface JobReason {
  code: string;
  message: string;
}

export interface Job {
  /** The store's row id: what `jobs show` / `jobs retry` take. */
  id: number;
  source: JobSource;
  kind: JobKind;
  jobId: string;
  orderNo: string | null;
  commandId: string | null;
  printer: string;
  payloadType: PayloadType;
  /**
   * The verified instruction, record or command, parsed from the JSON stored as received; null
   * when the stored text cannot be read (see `payloadProblem`).
   */
  payload: unknown;
  /** Why `payload` is null although text is stored (not JSON, nested too deep); else null. */
  payloadProblem: string | null;
  state: StoredJobState;
  /** Times the job went to `printing`. */
  attempts: number;
  nextAttemptAt: number | null;
  lastError: JobReason | null;
  warnings: string[];
  /**
   * Notices of the latest attempt (e.g. CONTENT_CUT: free text cut at the receipt's maximum
   * length), reported as `warnings` by that attempt's job events.
   */
  notices: JobReason[];
  markings: ReceiptMarkings;
  /**
   * What an order's job prints (issue 18): the payment receipt or a kitchen ticket. A reprint
   * prints its original's layout.
   */
  layout: Layout;
  /** Indexes of the order's items a ticket lists (a routing rule's item filter); null: all. */
  items: readonly number[] | null;
  /** Held for a person: the spooler skips it until `jobs retry`. */
  held: boolean;
  /** For a reprint: the row id of the original receipt job. */
  sourceJob: number | null;
  createdAt: number;
  queuedAt: number | null;
  printingAt: number | null;
  printedAt: number | null;
  finishedAt: number | null;
  updatedAt: number;
}

/** The row as SQLite returns it. */
export interface JobRow {
  id: number;
  source: string;
  kind: string;
  job_id: string;
  order_no: string | null;
  command_id: string | null;
  printer: string;
  payload_type: string;
  payload: string;
  state: string;
  attempts: number;
  next_attempt_at: number | null;
  last_error_code: string | null;
  last_error_message: string | null;
  warnings: string;
  /** Since schema version 3. */
  notices?: string;
  markings: string;
  /** Since schema version 4. */
  layout?: string;
  items?: string | null;
  held: number;
  source_job: number | null;
  created_at: number;
  queued_at: number | null;
  printing_at: number | null;
  printed_at: number | null;
  finished_at: number | null;
  updated_at: number;
}

/** Where each column of a `jobs` row is in a statement's result (`jobColumns`). */
export type JobColumns = Readonly<Record<keyof JobRow, number>>;

const JOB_COLUMNS: ReadonlyArray<keyof JobRow> = [
  'id',
  'source',
  'kind',
  'job_id',
  'order_no',
  'command_id',
  'printer',
  'payload_type',
  'payload',
  'state',
  'attempts',
  'next_attempt_at',
  'last_error_code',
  'last_error_message',
  'warnings',
  'notices',
  'markings',
  'layout',
  'items',
  'held',
  'source_job',
  'created_at',
  'queued_at',
  'printing_at',
  'printed_at',
  'finished_at',
  'updated_at',
];

/** The positions of a `jobs` row's columns among a statement's result columns, by name. */
export function jobColumns(names: readonly string[]): JobColumns {
  const columns = {} as Record<keyof JobRow, number>;
  for (const column of JOB_COLUMNS) {
    const index = names.indexOf(column);
    if (index < 0) throw new Error(`jobs row without column ${column}: ${names.join(', ')}`);
    columns[column] = index;
  }
  return columns;
}

/**
 * A `jobs` row from a raw result array (issue 16): better-sqlite3 builds a row object column by
 * column through V8's slow path, 5.7 us for a jobs row; this literal takes 3.3 us with the array.
 */
export function jobRowFromArray(r: readonly unknown[], c: JobColumns): JobRow {
  const at = (i: number) => r[i] as never;
  return {
    id: at(c.id),
    source: at(c.source),
    kind: at(c.kind),
    job_id: at(c.job_id),
    order_no: at(c.order_no),
    command_id: at(c.command_id),
    printer: at(c.printer),
    payload_type: at(c.payload_type),
    payload: at(c.payload),
    state: at(c.state),
    attempts: at(c.attempts),
    next_attempt_at: at(c.next_attempt_at),
    last_error_code: at(c.last_error_code),
    last_error_message: at(c.last_error_message),
    warnings: at(c.warnings),
    notices: at(c.notices),
    markings: at(c.markings),
    layout: at(c.layout),
    items: at(c.items),
    held: at(c.held),
    source_job: at(c.source_job),
    created_at: at(c.created_at),
    queued_at: at(c.queued_at),
    printing_at: at(c.printing_at),
    printed_at: at(c.printed_at),
    finished_at: at(c.finished_at),
    updated_at: at(c.updated_at),
  };
}

function parseJson<T>(text: string, fallback: T): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    // A hand-edited or truncated column must not make the whole queue unreadable.
    return fallback;
  }
}

/**
 * The stored payload, parsed. A payload nested deeper than MAX_JSON_DEPTH (a database written by an
 * agent before the limit) is not parsed: walking it (JSON.stringify, the schema) could overflow
 * the stack and take `jobs show` or the spooler down.
 */
function parsePayload(text: string): { payload: unknown; payloadProblem: string | null } {
  if (tooDeep(text))
    return {
      payload: null,
      payloadProblem: `the stored payload (${text.length} characters) is nested deeper than ${MAX_JSON_DEPTH} levels: not read`,
    };
  try {
    return { payload: JSON.parse(text) as unknown, payloadProblem: null };
  } catch {
    return { payload: null, payloadProblem: 'the stored payload is not JSON' };
  }
}

/**
 * The job a row holds. `parsed`: a job read from the same payload text before, whose parsed
 * payload is reused instead of parsing it again (a transition never changes the payload).
 */
export function jobFromRow(row: JobRow, parsed?: Pick<Job, 'payload' | 'payloadProblem'>): Job {
  return {
    id: row.id,
    source: row.source as JobSource,
    kind: row.kind as JobKind,
    jobId: row.job_id,
    orderNo: row.order_no,
    commandId: row.command_id,
    printer: row.printer,
    payloadType: row.payload_type as PayloadType,
    ...(parsed
      ? { payload: parsed.payload, payloadProblem: parsed.payloadProblem }
      : parsePayload(row.payload)),
    state: row.state as StoredJobState,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastError:
      row.last_error_code === null
        ? null
        : { code: row.last_error_code, message: row.last_error_message ?? '' },
    warnings: parseJson<string[]>(row.warnings, []),
    notices: parseJson<JobReason[]>(row.notices ?? '[]', []),
    markings: parseJson<ReceiptMarkings>(row.markings, {}),
    layout: row.layout === 'kitchen' ? 'kitchen' : 'receipt',
    items: row.items == null ? null : itemIndexes(row.items),
    held: row.held !== 0,
    sourceJob: row.source_job,
    createdAt: row.created_at,
    queuedAt: row.queued_at,
    printingAt: row.printing_at,
    printedAt: row.printed_at,
    finishedAt: row.finished_at,
    updatedAt: row.updated_at,
  };
}

/** A stored item list; a hand-edited one that is not a list of indexes means all items. */
function itemIndexes(text: string): number[] | null {
  const value = parseJson<unknown>(text, null);
  return Array.isArray(value) && value.every((i) => Number.isInteger(i) && i >= 0)
    ? (value as number[])
    : null;
}

/** The markings as the words printed on the receipt, for job events. */
export function markingWords(markings: ReceiptMarkings): string[] {
  const words: string[] = [];
  if (markings.reprint) words.push('REPRINT');
  if (markings.possibleDuplicate) words.push('POSSIBLE DUPLICATE');
  if (markings.late) words.push('LATE');
  return words;
}

/**
 * The print-protocol §6 event for `job` entering `state`; `warnings` (v1.1) are things the service
 * should know that did not stop the job (CONTENT_CUT, CLOCK_UNSYNCHRONIZED).
 */
export function jobEvent(
  job: Pick<Job, 'jobId' | 'orderNo' | 'commandId' | 'printer' | 'attempts' | 'markings'>,
  state: JobState,
  at: number,
  reason: JobReason | null,
  warnings: readonly JobReason[] = [],
): NewJobEvent {
  const event: NewJobEvent = {
    jobId: job.jobId,
    orderNo: job.orderNo,
    state,
    printer: job.printer,
    attempt: job.attempts,
    at: new Date(at).toISOString(),
    reason,
  };
  if (job.commandId !== null) event.commandId = job.commandId;
  const words = markingWords(job.markings);
  if (words.length > 0) event.markings = words;
  if (warnings.length > 0)
    event.warnings = warnings.map((w) => ({ code: w.code, message: w.message }));
  return event;
}

/** `yyyy-MM-dd HH:mm:ss` in the agent's local time, the form receipts print times in. */
export function localTimestamp(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** A job for people and scripts: times as ISO 8601, markings as the printed words. */
export function jobSummary(job: Job) {
  return {
    id: job.id,
    jobId: job.jobId,
    orderNo: job.orderNo,
    commandId: job.commandId,
    kind: job.kind,
    source: job.source,
    printer: job.printer,
    state: job.state,
    held: job.held,
    attempts: job.attempts,
    markings: markingWords(job.markings),
    reason: job.lastError,
    warnings: job.warnings,
    notices: job.notices,
    createdAt: iso(job.createdAt),
    printingAt: iso(job.printingAt),
    printedAt: iso(job.printedAt),
    finishedAt: iso(job.finishedAt),
    nextAttemptAt: iso(job.nextAttemptAt),
  };
}
