/**
 * The service's own SQLite file: orders, the counters that number them, and the outbox of print
 * instructions not yet published. (Deviation from the architecture map, which gives the SQLite
 * driver to jobs/: the service is a separate program with its own file, so it opens it here.)
 *
 * The file holds store keys: it is created 0600 and an existing one (with its -wal and -shm) is
 * tightened to 0600 when opened.
 *
 * Idempotent create (print-protocol v1.1 §9): the database, not the code, guarantees one order
 * per (appId, storeKey, paymentTransactionId), with a unique index, so two requests at once (in
 * one process or in several instances sharing the database) make one order. A create looks the
 * identity up and inserts in one write transaction (BEGIN IMMEDIATE): the second of two waits for
 * the first to commit, finds its order and writes nothing.
 *
 * Orders are listed by (create_time, seq): creation time ascending as order-api 4.1 rule 4 asks,
 * with the insertion sequence as the tie-break so pages never overlap or skip when many orders
 * share one second.
 */

import { AgentError } from '../errors.js';
import { keepDatabasePrivate } from '../host/private-file.js';
import Database from '../host/sqlite.js';
import type { QueryMode } from '../protocol/index.js';

export interface NewOrder {
  appId: string;
  storeKey: string;
  /** `yyyy-MM-dd HH:mm:ss`, service local time. */
  createTime: string;
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

/** Our choice, since order-api §3 does not state the initial state: created = paid and accepted. */
export const INITIAL_ORDER_STATUS = 2; // Accepted
export const INITIAL_PAYMENT_STATUS = 2; // Paid

const SCHEMA = `
CREATE TABLE IF NOT EXISTS orders (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  order_no TEXT NOT NULL UNIQUE,
  receipt_no TEXT NOT NULL UNIQUE,
  app_id TEXT NOT NULL,
  store_key TEXT NOT NULL,
  serial INTEGER NOT NULL,
  create_time TEXT NOT NULL,
  pick_up_no TEXT,
  takeout_no TEXT,
  raw_param TEXT NOT NULL,
  order_status INTEGER NOT NULL,
  payment_status INTEGER NOT NULL,
  payment_transaction_id TEXT
);
CREATE INDEX IF NOT EXISTS orders_by_store_time ON orders (app_id, store_key, create_time, seq);
CREATE TABLE IF NOT EXISTS counters (
  scope TEXT NOT NULL,
  day TEXT NOT NULL,
  value INTEGER NOT NULL,
  PRIMARY KEY (scope, day)
);
CREATE TABLE IF NOT EXISTS outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id TEXT NOT NULL UNIQUE,
  store_id TEXT NOT NULL,
  body TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT
);
CREATE TABLE IF NOT EXISTS callbacks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  order_no TEXT NOT NULL,
  url TEXT NOT NULL,
  body TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'given-up')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at INTEGER NOT NULL,
  last_error TEXT
);
CREATE INDEX IF NOT EXISTS callbacks_due ON callbacks (state, next_at);
`;

/**
 * The create identity, enforced by the database. NULLs are distinct in a unique index (SQLite and
 * PostgreSQL alike), which is what the orders of an older database that repeated an id need.
 */
const CREATE_IDENTITY_INDEX = `
CREATE UNIQUE INDEX IF NOT EXISTS orders_by_create_identity
  ON orders (app_id, store_key, payment_transaction_id);
`;

/**
 * Brings a database written before idempotent create up to date, in one transaction: adds the
 * column, fills it from each order's signed param, and only for the first order of each identity:
 * an older service made a new order for each retried create, and those later doubles keep a NULL
 * (they stay listed, as they were); a retry from now on answers the first, the original request's.
 */
function migrate(db: Database.Database): void {
  // IMMEDIATE, and the column looked up inside: two instances starting at once on an older file
  // take turns, and the second finds the work done.
  db.transaction(() => {
    const columns = db.prepare('PRAGMA table_info(orders)').all() as { name: string }[];
    if (!columns.some((c) => c.name === 'payment_transaction_id')) {
      db.exec('ALTER TABLE orders ADD COLUMN payment_transaction_id TEXT');
      db.exec(`
        UPDATE orders SET payment_transaction_id = json_extract(raw_param, '$.paymentTransactionId')
        WHERE json_valid(raw_param)
          AND json_type(raw_param, '$.paymentTransactionId') = 'text'
          AND seq = (
            SELECT min(o.seq) FROM orders o
            WHERE o.app_id = orders.app_id AND o.store_key = orders.store_key
              AND json_valid(o.raw_param)
              AND json_extract(o.raw_param, '$.paymentTransactionId')
                = json_extract(orders.raw_param, '$.paymentTransactionId'))`);
    }
    db.exec(CREATE_IDENTITY_INDEX);
  }).immediate();
}

interface OrderRow {
  seq: number;
  order_no: string;
  receipt_no: string;
  app_id: string;
  store_key: string;
  serial: number;
  create_time: string;
  pick_up_no: string | null;
  takeout_no: string | null;
  raw_param: string;
  order_status: number;
  payment_status: number;
  payment_transaction_id: string | null;
}

function fromRow(r: OrderRow): StoredOrder {
  return {
    seq: r.seq,
    orderNo: r.order_no,
    receiptNo: r.receipt_no,
    appId: r.app_id,
    storeKey: r.store_key,
    serial: r.serial,
    createTime: r.create_time,
    pickUpNo: r.pick_up_no,
    takeoutNo: r.takeout_no,
    paymentTransactionId: r.payment_transaction_id,
    rawParam: r.raw_param,
    orderStatus: r.order_status,
    paymentStatus: r.payment_status,
  };
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Short codes cycle 001..999 per store and day, the way a counter screen shows them. */
const shortCode = (prefix: string, n: number) => `${prefix}${pad(((n - 1) % 999) + 1, 3)}`;

/**
 * A driver error in the catalogue's terms: STORE_FULL for a full disk, STORE_FAILED otherwise
 * (locked by another instance past the busy timeout, a constraint, an I/O error); both retryable,
 * answered 21000. Anything else (a callback's AgentError, a bug) passes through unchanged.
 */
function orderDatabaseError(error: unknown, doing: string): unknown {
  if (!(error instanceof Database.SqliteError)) return error;
  return new AgentError(
    error.code === 'SQLITE_FULL' ? 'STORE_FULL' : 'STORE_FAILED',
    `order database error while ${doing}: ${error.message}`,
    { cause: error, details: { sqlite: error.code } },
  );
}

export type ListResult = { ok: true; total: number; orders: StoredOrder[] } | { ok: false };

export class OrderStore {
  private readonly db: Database.Database;

  constructor(path = ':memory:') {
    const file = path !== ':memory:' && path !== '';
    if (file) keepDatabasePrivate(path, { create: true });
    this.db = new Database(path);
    if (file) this.db.pragma('journal_mode = WAL');
    this.db.exec(SCHEMA);
    migrate(this.db);
  }

  close(): void {
    this.db.close();
  }

  private next(scope: string, day: string): number {
    const row = this.db
      .prepare(
        `INSERT INTO counters (scope, day, value) VALUES (?, ?, 1)
         ON CONFLICT (scope, day) DO UPDATE SET value = value + 1 RETURNING value`,
      )
      .get(scope, day) as { value: number };
    return row.value;
  }

  /**
   * Stores an order and, in the same transaction, its print instruction in the outbox, so an
   * order never exists without an instruction waiting to be published (and vice versa).
   *
   * When the create's identity already has an order, nothing is written (no number is used up,
   * no instruction, no callback) and that order is returned with `created: false`. A callback
   * that throws (an instruction too large: TOO_LARGE) rolls everything back and the error
   * propagates.
   */
  createOrder(
    order: NewOrder,
    instruction: (stored: StoredOrder) => { jobId: string; storeId: string; body: string },
    /** The app's order callback, when it registered a URL; due at `nextAt` (ms since epoch). */
    callback?: (stored: StoredOrder) => { url: string; body: string; nextAt: number } | null,
  ): CreateOutcome {
    // IMMEDIATE (below): the write lock is taken before the look-up, so no other connection can
    // insert or delete between the look-up and the insert, and the order found is there to read.
    const create = this.db.transaction((): CreateOutcome => {
      const existing = this.findByCreateIdentity(
        order.appId,
        order.storeKey,
        order.paymentTransactionId,
      );
      if (existing !== undefined) return { created: false, order: existing };
      const day = order.createTime.slice(0, 10).replaceAll('-', '');
      const storeScope = JSON.stringify([order.appId, order.storeKey]);
      // orderNo: O + yyyyMMdd + daily sequence; sorts like the creation order within a day.
      const n = this.next('order', day);
      const orderNo = `O${day}${pad(n, 6)}`;
      const receiptNo = `R${day}${pad(n, 6)}`;
      const serial = this.next(`serial:${storeScope}`, day);
      const pickUpNo =
        order.orderType === 2
          ? (order.pickUpNum ?? shortCode('A', this.next(`pickup:${storeScope}`, day)))
          : null;
      const takeoutNo =
        order.orderType === 3 ? shortCode('T', this.next(`takeout:${storeScope}`, day)) : null;
      // The unique index still refuses a second order for the identity, whatever writes the
      // file: under the lock that cannot happen, and if it did the insert would fail, not double.
      const row = this.db
        .prepare(
          `INSERT INTO orders (order_no, receipt_no, app_id, store_key, serial, create_time,
             pick_up_no, takeout_no, raw_param, order_status, payment_status,
             payment_transaction_id)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           RETURNING seq`,
        )
        .get(
          orderNo,
          receiptNo,
          order.appId,
          order.storeKey,
          serial,
          order.createTime,
          pickUpNo,
          takeoutNo,
          order.rawParam,
          INITIAL_ORDER_STATUS,
          INITIAL_PAYMENT_STATUS,
          order.paymentTransactionId,
        ) as { seq: number };
      const stored: StoredOrder = {
        seq: row.seq,
        orderNo,
        receiptNo,
        appId: order.appId,
        storeKey: order.storeKey,
        serial,
        createTime: order.createTime,
        pickUpNo,
        takeoutNo,
        paymentTransactionId: order.paymentTransactionId,
        rawParam: order.rawParam,
        orderStatus: INITIAL_ORDER_STATUS,
        paymentStatus: INITIAL_PAYMENT_STATUS,
      };
      const out = instruction(stored);
      this.db
        .prepare('INSERT INTO outbox (job_id, store_id, body) VALUES (?, ?, ?)')
        .run(out.jobId, out.storeId, out.body);
      const cb = callback?.(stored);
      if (cb)
        this.db
          .prepare('INSERT INTO callbacks (order_no, url, body, next_at) VALUES (?, ?, ?, ?)')
          .run(stored.orderNo, cb.url, cb.body, cb.nextAt);
      return { created: true, order: stored };
    });
    try {
      // IMMEDIATE: take the write lock first, so a second connection waits (busy timeout) instead
      // of failing to upgrade a read transaction, and reads the state the first one committed.
      return create.immediate();
    } catch (error) {
      throw orderDatabaseError(error, 'creating an order');
    }
  }

  /** The order a create identity made, if any. */
  findByCreateIdentity(
    appId: string,
    storeKey: string,
    paymentTransactionId: string,
  ): StoredOrder | undefined {
    const row = this.db
      .prepare(
        `SELECT * FROM orders
         WHERE app_id = ? AND store_key = ? AND payment_transaction_id = ?`,
      )
      .get(appId, storeKey, paymentTransactionId) as OrderRow | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** One page of a store's orders in one of the three query modes (order-api 4.1). */
  listOrders(
    appId: string,
    storeKey: string,
    mode: QueryMode,
    pageNum: number,
    pageSize: number,
  ): ListResult {
    let where = 'app_id = ? AND store_key = ?';
    const args: (string | number)[] = [appId, storeKey];
    if (mode.mode === 'time-range') {
      // Fixed-width timestamps compare correctly as text; both ends inclusive.
      where += ' AND create_time >= ? AND create_time <= ?';
      args.push(mode.startTime, mode.endTime);
    } else {
      const column = mode.mode === 'after-order' ? 'order_no' : 'receipt_no';
      const value = mode.mode === 'after-order' ? mode.orderInnerNo : mode.receiptNo;
      const start = this.db
        .prepare(`SELECT seq, create_time FROM orders WHERE ${where} AND ${column} = ?`)
        .get(...args, value) as { seq: number; create_time: string } | undefined;
      if (start === undefined) return { ok: false };
      where += ' AND (create_time > ? OR (create_time = ? AND seq > ?))';
      args.push(start.create_time, start.create_time, start.seq);
    }
    const total = (
      this.db.prepare(`SELECT count(*) AS n FROM orders WHERE ${where}`).get(...args) as {
        n: number;
      }
    ).n;
    // A page beyond the end is simply empty; checked first so a huge pageNum cannot overflow.
    if (pageNum - 1 > total / pageSize) return { ok: true, total, orders: [] };
    const rows = this.db
      .prepare(`SELECT * FROM orders WHERE ${where} ORDER BY create_time, seq LIMIT ? OFFSET ?`)
      .all(...args, pageSize, (pageNum - 1) * pageSize) as OrderRow[];
    return { ok: true, total, orders: rows.map(fromRow) };
  }

  pendingOutbox(limit = 100): OutboxEntry[] {
    return this.db
      .prepare(
        'SELECT id, job_id AS jobId, store_id AS storeId, body, attempts FROM outbox ORDER BY id LIMIT ?',
      )
      .all(limit) as OutboxEntry[];
  }

  outboxSize(): number {
    return (this.db.prepare('SELECT count(*) AS n FROM outbox').get() as { n: number }).n;
  }

  markPublished(id: number): void {
    this.db.prepare('DELETE FROM outbox WHERE id = ?').run(id);
  }

  /** Pending callbacks due at `now`, oldest first. */
  dueCallbacks(now: number, limit = 20): CallbackEntry[] {
    return this.db
      .prepare(
        `SELECT id, order_no AS orderNo, url, body, state, attempts, next_at AS nextAt,
           last_error AS lastError
         FROM callbacks WHERE state = 'pending' AND next_at <= ? ORDER BY next_at, id LIMIT ?`,
      )
      .all(now, limit) as CallbackEntry[];
  }

  callbacksFor(orderNo: string): CallbackEntry[] {
    return this.db
      .prepare(
        `SELECT id, order_no AS orderNo, url, body, state, attempts, next_at AS nextAt,
           last_error AS lastError FROM callbacks WHERE order_no = ? ORDER BY id`,
      )
      .all(orderNo) as CallbackEntry[];
  }

  /** Records one attempt: delivered, retried at `nextAt`, or given up when `nextAt` is null. */
  recordCallbackAttempt(
    id: number,
    outcome: { error: string | null; nextAt: number | null },
  ): void {
    const state =
      outcome.error === null ? 'delivered' : outcome.nextAt === null ? 'given-up' : 'pending';
    this.db
      .prepare(
        `UPDATE callbacks SET attempts = attempts + 1, state = ?, last_error = ?,
           next_at = coalesce(?, next_at) WHERE id = ?`,
      )
      .run(state, outcome.error?.slice(0, 500) ?? null, outcome.nextAt, id);
  }

  markFailed(id: number, error: string): void {
    this.db
      .prepare('UPDATE outbox SET attempts = attempts + 1, last_error = ? WHERE id = ?')
      .run(error.slice(0, 500), id);
  }
}
