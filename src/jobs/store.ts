/**
 * The durable job store (issue 6; reliability guarantees 1, 3, 4, 6, 11): one SQLite file in the
 * agent's state directory, shared by the daemon and the `jobs` CLI. `JobStore` is the one face the
 * rest of the agent sees and the one emitter of its events (`store/events.ts`); the parts in
 * `store/` do the work, on one connection (`store/database.ts`), so a write that spans parts is one
 * transaction:
 *
 * - `store/insertion.ts`: storing orders, commands and local jobs, with their dedupe check;
 * - `store/transitions.ts`: moving jobs through their states (print-protocol §6);
 * - `store/queries.ts`: reading jobs, the head of a queue, the figures of the status;
 * - `store/outbox.ts`: events and status waiting for the broker; every transition writes its event
 *   there in its own transaction (guarantee 6);
 * - `store/meta.ts`: the catch-up cursor, the time floor and the poller's other named values;
 * - `store/pruning.ts`: retention's queries and the space figures;
 * - `store/dedupe.ts` (business keys and the ledger of pruned jobs' keys, guarantee 3) and
 *   `store/rows.ts` (rows into jobs, with their caches) serve the parts above.
 *
 * The methods below only hand on to the part that does the work (its comments say what each does),
 * but for the outbox's, which announce `outbox` here.
 */
import { EventEmitter } from 'node:events';
import type { AgentStatus, NewJobEvent } from '../protocol/print-protocol.js';
import type { Job, JobReason } from './job.js';
import type { Route } from './routing.js';
import { JobDatabase, type JobStoreOptions } from './store/database.js';
import { Dedupe } from './store/dedupe.js';
import type { StoreEvents } from './store/events.js';
import {
  Insertion,
  type InsertResult,
  type OrderInput,
  type RoutedInsert,
} from './store/insertion.js';
import { Meta } from './store/meta.js';
import { Outbox, type OutboxEntry } from './store/outbox.js';
import { Pruning } from './store/pruning.js';
import { type ListOptions, type PrinterQueueStats, Queries } from './store/queries.js';
import { JobRows } from './store/rows.js';
import { type InterruptedPolicy, Transitions } from './store/transitions.js';

export { DATABASE_FILE, DEFAULT_STATE_DIR, type JobStoreOptions } from './store/database.js';
export type { DedupeKey, ExistingJob } from './store/dedupe.js';
export type { StoreEvents } from './store/events.js';
export type { InsertResult, OrderInput, RoutedInsert } from './store/insertion.js';
export type { OutboxEntry } from './store/outbox.js';
export type { ListOptions, PrinterQueueStats } from './store/queries.js';
export type { InterruptedPolicy } from './store/transitions.js';

export class JobStore extends EventEmitter<StoreEvents> {
  readonly path: string;
  private readonly db: JobDatabase;
  private readonly insertion: Insertion;
  private readonly transitions: Transitions;
  private readonly queries: Queries;
  private readonly outbox: Outbox;
  private readonly meta: Meta;
  private readonly pruning: Pruning;

  private constructor(db: JobDatabase) {
    super();
    this.db = db;
    this.path = db.path;
    const rows = new JobRows(db);
    const dedupe = new Dedupe(db);
    this.outbox = new Outbox(db);
    this.meta = new Meta(db);
    this.queries = new Queries(db, rows);
    this.insertion = new Insertion(db, rows, this.queries, dedupe, this.outbox, this.meta, this);
    this.transitions = new Transitions(db, rows, this.outbox, this);
    this.pruning = new Pruning(db, dedupe);
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

  // The database (store/database.ts) -------------------------------------------------------------

  pragmas(): ReturnType<JobDatabase['pragmas']> {
    return this.db.pragmas();
  }

  integrityCheck(): string {
    return this.db.integrityCheck();
  }

  setSizeLimit(bytes: number | null): void {
    this.db.setSizeLimit(bytes);
  }

  // Inserting (store/insertion.ts) ---------------------------------------------------------------

  inOneCommit<T>(doing: string, fn: () => T): T {
    return this.insertion.inOneCommit(doing, fn);
  }

  enqueueInstruction(
    instruction: Parameters<Insertion['enqueueInstruction']>[0],
    options?: Parameters<Insertion['enqueueInstruction']>[1],
  ): InsertResult {
    return this.insertion.enqueueInstruction(instruction, options);
  }

  enqueueRecord(
    record: Parameters<Insertion['enqueueRecord']>[0],
    options?: Parameters<Insertion['enqueueRecord']>[1],
  ): InsertResult {
    return this.insertion.enqueueRecord(record, options);
  }

  enqueueOrder(
    order: OrderInput,
    routes: readonly Route[],
    options?: Parameters<Insertion['enqueueOrder']>[2],
  ): RoutedInsert[] {
    return this.insertion.enqueueOrder(order, routes, options);
  }

  enqueueCommand(
    command: Parameters<Insertion['enqueueCommand']>[0],
    options?: Parameters<Insertion['enqueueCommand']>[1],
  ): InsertResult {
    return this.insertion.enqueueCommand(command, options);
  }

  enqueueReprint(orderNo: string, options?: { printer?: string }): InsertResult {
    return this.insertion.enqueueReprint(orderNo, options);
  }

  enqueueTestPrint(printer?: string): InsertResult {
    return this.insertion.enqueueTestPrint(printer);
  }

  // Transitions (store/transitions.ts) -----------------------------------------------------------

  markPrinting(id: number, render: Parameters<Transitions['markPrinting']>[1]): Job {
    return this.transitions.markPrinting(id, render);
  }

  markPrinted(id: number): Job {
    return this.transitions.markPrinted(id);
  }

  markPrintedThenPrinting(
    printedId: number,
    nextId: number,
    render: Parameters<Transitions['markPrinting']>[1],
  ): { printed: Job; printing: Job } {
    return this.transitions.markPrintedThenPrinting(printedId, nextId, render);
  }

  markUnconfirmed(id: number, reason: JobReason): Job {
    return this.transitions.markUnconfirmed(id, reason);
  }

  markWaiting(
    id: number,
    reason: JobReason,
    nextAttemptAt: number,
    options?: { possibleDuplicate?: boolean },
  ): Job {
    return this.transitions.markWaiting(id, reason, nextAttemptAt, options);
  }

  markFailed(id: number, reason: JobReason): Job {
    return this.transitions.markFailed(id, reason);
  }

  retry(id: number): Job {
    return this.transitions.retry(id);
  }

  recoverInterrupted(policy: InterruptedPolicy): Job[] {
    return this.transitions.recoverInterrupted(policy);
  }

  markUnrouted(role: string, reason: JobReason): Job[] {
    return this.transitions.markUnrouted(role, reason);
  }

  // Reading (store/queries.ts) -------------------------------------------------------------------

  get(id: number): Job | null {
    return this.queries.get(id);
  }

  getByJobId(jobId: string): Job | null {
    return this.queries.getByJobId(jobId);
  }

  find(ref: string): Job | null {
    return this.queries.find(ref);
  }

  getReceipt(orderNo: string, role?: string | null): Job | null {
    return this.queries.getReceipt(orderNo, role);
  }

  list(options?: ListOptions): Job[] {
    return this.queries.list(options);
  }

  head(printer: string): Job | null {
    return this.queries.head(printer);
  }

  pendingPrinters(): string[] {
    return this.queries.pendingPrinters();
  }

  countByState(): ReturnType<Queries['countByState']> {
    return this.queries.countByState();
  }

  queueStats(printers?: readonly string[]): PrinterQueueStats[] {
    return this.queries.queueStats(printers);
  }

  // The outbox (store/outbox.ts) -----------------------------------------------------------------

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

  drainOutbox(limit = 100): OutboxEntry[] {
    return this.outbox.drain(limit);
  }

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

  // Named values (store/meta.ts) -----------------------------------------------------------------

  getMeta(key: string): string | null {
    return this.meta.get(key);
  }

  setMeta(key: string, value: string): void {
    this.meta.set(key, value);
  }

  timeFloor(): string | null {
    return this.meta.timeFloor();
  }

  getCatchUpCursor(): string | null {
    return this.meta.catchUpCursor();
  }

  setCatchUpCursor(orderNo: string): void {
    this.meta.setCatchUpCursor(orderNo);
  }

  clearCatchUpCursor(): void {
    this.meta.clearCatchUpCursor();
  }

  // Retention (store/pruning.ts; when and how much: ./retention.ts) ------------------------------

  pruneFinished(before: number, batchSize = 200): number {
    return this.pruning.pruneFinished(before, batchSize);
  }

  purgePrinted(before: number, batchSize = 500): number {
    return this.pruning.purgePrinted(before, batchSize);
  }

  pruneLedger(before: number, batchSize = 500): number {
    return this.pruning.pruneLedger(before, batchSize);
  }

  incrementalVacuum(pages = 256): void {
    this.pruning.incrementalVacuum(pages);
  }

  spaceStats(): ReturnType<Pruning['spaceStats']> {
    return this.pruning.spaceStats();
  }
}
