/**
 * What the service keeps: orders, the counters that number them, the outbox of print
 * instructions not yet published and the order callbacks not yet delivered. Two databases hold
 * it behind one interface (issue 19): a SQLite file (store-sqlite.ts, the embedded default, one
 * instance or a few on one host) and PostgreSQL (store-postgres.ts, several instances on several
 * hosts). `openOrderStore` (open-store.ts) chooses by the `database` setting.
 *
 * This file is the interface and its records; the create and the SQL both databases share are in
 * store-sql.ts. The rules both keep, written once there (`createInTransaction`):
 *
 * - Idempotent create (print-protocol v1.1 §9): one order per (appId, storeKey,
 *   paymentTransactionId), guaranteed by a unique index, and looked up under the store's lock, so
 *   two copies of a request (in one instance or two) make one order and the second answers it.
 * - The list order is safe for the agent's cursor. Orders are listed by (createTime, seq) as
 *   order-api 4.1 rule 4 asks; both are assigned while the transaction holds the store's lock
 *   (SQLite: the file's write lock; PostgreSQL: an advisory lock per store), and createTime is
 *   never earlier than the store's latest order. So an order commits after every order listed
 *   before it: a query "after orderInnerNo X" can never miss an order committed later with a
 *   place before X. Without the lock, two instances could number 41 and 42 and commit 42 first;
 *   an agent that saw 42 would skip 41 for ever.
 * - An order never exists without its print instruction in the outbox, or its callback (if the
 *   app registered a URL): all written in the create's transaction.
 * - Outbox entries and callbacks are claimed before they are sent: an instance sends only what no
 *   other instance holds, and one that dies mid-send releases its claim with its connection.
 */

import type { QueryMode } from '../protocol/index.js';

export interface NewOrder {
  appId: string;
  storeKey: string;
  /**
   * The service's clock as `yyyy-MM-dd HH:mm:ss` local time, read under the store's lock (see the
   * module comment); the stored createTime is this or the store's latest, whichever is later.
   */
  now: () => string;
  orderType: number;
  /** The merchant's pickUpNum when given and not empty (order-api 4.2 rule 5). */
  pickUpNum: string | null;
  /** The merchant's order number (order-api 2.9): with appId and storeKey, the create's identity. */
  paymentTransactionId: string;
  /** The create parameters exactly as received: the signed `param` string. */
  rawParam: string;
}

export interface StoredOrder {
  seq: number;
  orderNo: string;
  receiptNo: string;
  appId: string;
  storeKey: string;
  serial: number;
  createTime: string;
  pickUpNo: string | null;
  takeoutNo: string | null;
  /** null only for an order of an older database that repeated an earlier order's id. */
  paymentTransactionId: string | null;
  rawParam: string;
  orderStatus: number;
  paymentStatus: number;
}

/** A create either made a new order or found the one its identity already has. */
export type CreateOutcome =
  | { created: true; order: StoredOrder }
  | { created: false; order: StoredOrder };

/** An order callback (order-api §6) still to be delivered, or its final state. */
export interface CallbackEntry {
  id: number;
  orderNo: string;
  url: string;
  body: string;
  state: 'pending' | 'delivered' | 'given-up';
  attempts: number;
  nextAt: number;
  lastError: string | null;
}

export interface OutboxEntry {
  id: number;
  jobId: string;
  storeId: string;
  /** The signed envelope as JSON text, published unchanged. */
  body: string;
  attempts: number;
}

export type ListResult = { ok: true; total: number; orders: StoredOrder[] } | { ok: false };

/** The print instruction of a new order, made inside the create (it may throw: rolled back). */
export type InstructionFor = (stored: StoredOrder) => {
  jobId: string;
  storeId: string;
  body: string;
};
/** The app's order callback, when it registered a URL; due at `nextAt` (ms since epoch). */
export type CallbackFor = (
  stored: StoredOrder,
) => { url: string; body: string; nextAt: number } | null;

/** What a sender answers for each claimed outbox entry: published (null) or the error. */
export type OutboxResults = ReadonlyMap<number, string | null>;
/** What a sender answers for each claimed callback: delivered, retried at nextAt, or given up. */
export type CallbackResults = ReadonlyMap<number, { error: string | null; nextAt: number | null }>;

export interface OrderStore {
  /** `sqlite` or `postgres`, for the start log. */
  readonly kind: 'sqlite' | 'postgres';
  /**
   * Stores an order with its print instruction (and callback) in one transaction. When the
   * create's identity already has an order, nothing is written (no number is used up) and that
   * order is returned with `created: false`. A callback that throws (an instruction too large:
   * TOO_LARGE) rolls everything back and the error propagates. Database failures are AgentErrors
   * STORE_FAILED or STORE_FULL (retryable, answered 21000).
   */
  createOrder(
    order: NewOrder,
    instruction: InstructionFor,
    callback?: CallbackFor,
  ): Promise<CreateOutcome>;
  /** The order a create identity made, if any. */
  findByCreateIdentity(
    appId: string,
    storeKey: string,
    paymentTransactionId: string,
  ): Promise<StoredOrder | undefined>;
  /** One page of a store's orders in one of the three query modes (order-api 4.1). */
  listOrders(
    appId: string,
    storeKey: string,
    mode: QueryMode,
    pageNum: number,
    pageSize: number,
  ): Promise<ListResult>;
  /** Instructions committed and not yet published (by any instance). */
  outboxSize(): Promise<number>;
  /**
   * Claims up to `limit` pending instructions, oldest first, that no other instance holds, and
   * hands them to `send`; entries it answers are deleted (published) or marked (failed), the
   * others stay pending. Resolves with how many were claimed (0: nothing left to claim).
   */
  claimOutbox(
    limit: number,
    send: (entries: OutboxEntry[]) => Promise<OutboxResults>,
  ): Promise<number>;
  /** Like claimOutbox, for the callbacks due at `now`, oldest first. */
  claimDueCallbacks(
    now: number,
    limit: number,
    deliver: (entries: CallbackEntry[]) => Promise<CallbackResults>,
  ): Promise<number>;
  callbacksFor(orderNo: string): Promise<CallbackEntry[]>;
  close(): Promise<void>;
}
