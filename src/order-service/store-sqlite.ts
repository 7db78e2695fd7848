/**
 * The service's own SQLite file (store.ts has the rules every order store keeps): the embedded
 * default, for the demo and one instance (or a few on one host: they take turns on the file's
 * write lock). (Deviation from the architecture map, which gives the SQLite driver to jobs/: the
 * service is a separate program with its own file, so it opens it here.)
 *
 * The file holds store keys: it is created 0600 and an existing one (with its -wal and -shm) is
 * tightened to 0600 when opened.
 *
 * A create runs in one write transaction (BEGIN IMMEDIATE): the write lock is the store's lock of
 * store.ts, taken before the look-up, so a second create waits for the first to commit and finds
 * its order. The driver is synchronous and one connection serves the process, so the store's
 * calls take turns (`serial`): no statement of another call runs inside a create's transaction.
 */

import { AgentError } from '../errors.js';
import { keepDatabasePrivate } from '../host/private-file.js';
import Database from '../host/sqlite.js';
import type { QueryMode } from '../protocol/index.js';
import type {
  CallbackEntry,
  CallbackFor,
  CallbackResults,
  CreateOutcome,
  InstructionFor,
  ListResult,
  NewOrder,
  OrderStore,
  OutboxEntry,
  OutboxResults,
  StoredOrder,
} from './store.js';
import {
  CALLBACK_COLUMNS,
  callbackState,
  createInTransaction,
  listOrdersWith,
  OUTBOX_COLUMNS,
  sqlCreateTransaction,
} from './store-sql.js';

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

export class SqliteOrderStore implements OrderStore {
  readonly kind = 'sqlite';
  private readonly db: Database.Database;
  /** The store's calls, one after the other (module comment). */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(path = ':memory:') {
    const file = path !== ':memory:' && path !== '';
    if (file) keepDatabasePrivate(path, { create: true });
    this.db = new Database(path);
    if (file) {
      this.db.pragma('journal_mode = WAL');
      // better-sqlite3 builds SQLite with WAL's default sync at NORMAL, which keeps a commit only
      // until the next checkpoint syncs it: a power cut then took back creates already answered
      // (issue 39, found by the power-cut loop). FULL syncs each commit before the answer.
      this.db.pragma('synchronous = FULL');
    }
    this.db.exec(SCHEMA);
    migrate(this.db);
  }

  async close(): Promise<void> {
    await this.serial(async () => this.db.close());
  }

  /** Runs `work` after every call before it has finished; its failure is its caller's alone. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const result = this.turn.then(work);
    this.turn = result.catch(() => undefined);
    return result;
  }

  private get<T>(sql: string, ...args: unknown[]): T | undefined {
    return this.db.prepare(sql).get(...args) as T | undefined;
  }

  /** Any statement: its rows when it returns some (a SELECT, RETURNING), else none. */
  private run(sql: string, args: readonly unknown[]): unknown[] {
    const statement = this.db.prepare(sql);
    if (statement.reader) return statement.all(...args);
    statement.run(...args);
    return [];
  }

  createOrder(
    order: NewOrder,
    instruction: InstructionFor,
    callback?: CallbackFor,
  ): Promise<CreateOutcome> {
    const tx = sqlCreateTransaction(async (sql, args) => this.run(sql, args));
    return this.serial(async () => {
      try {
        // IMMEDIATE: take the write lock first, so a second connection waits (busy timeout)
        // instead of failing to upgrade a read transaction, and reads what the first committed.
        this.db.exec('BEGIN IMMEDIATE');
      } catch (error) {
        throw orderDatabaseError(error, 'creating an order');
      }
      try {
        const outcome = await createInTransaction(tx, order, instruction, callback);
        this.db.exec('COMMIT');
        return outcome;
      } catch (error) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw orderDatabaseError(error, 'creating an order');
      }
    });
  }

  findByCreateIdentity(
    appId: string,
    storeKey: string,
    paymentTransactionId: string,
  ): Promise<StoredOrder | undefined> {
    return this.serial(() =>
      sqlCreateTransaction(async (sql, args) => this.run(sql, args)).findByCreateIdentity(
        appId,
        storeKey,
        paymentTransactionId,
      ),
    );
  }

  listOrders(
    appId: string,
    storeKey: string,
    mode: QueryMode,
    pageNum: number,
    pageSize: number,
  ): Promise<ListResult> {
    return this.serial(() =>
      listOrdersWith(
        async (sql, args) => this.run(sql, args),
        appId,
        storeKey,
        mode,
        pageNum,
        pageSize,
      ),
    );
  }

  outboxSize(): Promise<number> {
    return this.serial(async () => this.get<{ n: number }>('SELECT count(*) AS n FROM outbox')!.n);
  }

  /**
   * One process, one connection: nothing else in this process claims the same rows while `send`
   * runs (the Outbox drains one batch at a time). Another process on the same file may send an
   * entry too; publishing twice is harmless (the agent dedupes), losing one is not.
   */
  async claimOutbox(
    limit: number,
    send: (entries: OutboxEntry[]) => Promise<OutboxResults>,
  ): Promise<number> {
    const entries = await this.serial(
      async () =>
        this.db
          .prepare(`SELECT ${OUTBOX_COLUMNS} FROM outbox ORDER BY id LIMIT ?`)
          .all(limit) as OutboxEntry[],
    );
    if (entries.length === 0) return 0;
    const results = await send(entries);
    await this.serial(async () => {
      const published = this.db.prepare('DELETE FROM outbox WHERE id = ?');
      const failed = this.db.prepare(
        'UPDATE outbox SET attempts = attempts + 1, last_error = ? WHERE id = ?',
      );
      this.db.transaction(() => {
        for (const [id, error] of results) {
          if (error === null) published.run(id);
          else failed.run(error.slice(0, 500), id);
        }
      })();
    });
    return entries.length;
  }

  async claimDueCallbacks(
    now: number,
    limit: number,
    deliver: (entries: CallbackEntry[]) => Promise<CallbackResults>,
  ): Promise<number> {
    const due = await this.serial(
      async () =>
        this.db
          .prepare(
            `SELECT ${CALLBACK_COLUMNS} FROM callbacks WHERE state = 'pending' AND next_at <= ?
             ORDER BY next_at, id LIMIT ?`,
          )
          .all(now, limit) as CallbackEntry[],
    );
    if (due.length === 0) return 0;
    const results = await deliver(due);
    await this.serial(async () => {
      const record = this.db.prepare(
        `UPDATE callbacks SET attempts = attempts + 1, state = ?, last_error = ?,
           next_at = coalesce(?, next_at) WHERE id = ?`,
      );
      this.db.transaction(() => {
        for (const [id, outcome] of results) {
          record.run(
            callbackState(outcome),
            outcome.error?.slice(0, 500) ?? null,
            outcome.nextAt,
            id,
          );
        }
      })();
    });
    return due.length;
  }

  callbacksFor(orderNo: string): Promise<CallbackEntry[]> {
    return this.serial(
      async () =>
        this.db
          .prepare(`SELECT ${CALLBACK_COLUMNS} FROM callbacks WHERE order_no = ? ORDER BY id`)
          .all(orderNo) as CallbackEntry[],
    );
  }
}
