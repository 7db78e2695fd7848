/**
 * The service's SQLite file (issue 13 items 2 and 9): created 0600 with its -wal and -shm, an
 * existing file tightened; one order per create identity enforced by the database itself; a
 * database failure in a create reported with a catalogue code (STORE_FAILED); and a
 * database written by the service before idempotent create migrated in place, its historical
 * double orders kept and a retry answered with the first of them.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isAgentError } from '../../src/errors.js';
import Database from '../../src/host/sqlite.js';
import { SqliteOrderStore, toOrderRecord } from '../../src/order-service/index.js';
import { formatWallClock } from '../../src/protocol/time.js';
import {
  APP_ID,
  baseOrder,
  makeService,
  newOrder,
  OTHER_STORE_KEY,
  post,
  STORE_KEY,
  signed,
} from './harness.js';

const mode = (path: string) => statSync(path).mode & 0o777;
const fresh = () => join(mkdtempSync(join(tmpdir(), 'order-service-file-')), 'orders.sqlite');

/** Orders in the file, all stores, counted by a reader of its own (as an operator would). */
function orderRows(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM orders').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** The orders table and its neighbours exactly as the service created them before issue 13. */
const SCHEMA_BEFORE_ISSUE_13 = `
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
  payment_status INTEGER NOT NULL
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
 * The day the older service made its orders: five days before today (UTC, the harness's service
 * time zone), never a fixed date. A new order is made today, on another day, whatever the
 * calendar says; a fixed day after today would make the service number new orders on that day
 * (it never numbers an order before the latest one).
 */
const OLD_DAY = formatWallClock(Date.now() - 5 * 86_400_000).slice(0, 10);
const OLD_DAY_COMPACT = OLD_DAY.replaceAll('-', '');
/** The order or receipt number `n` of the old day, as the older service made them. */
const oldNo = (letter: 'O' | 'R', n: number) =>
  `${letter}${OLD_DAY_COMPACT}${String(n).padStart(6, '0')}`;

/** An older service's file: 0644, three orders of which two are one retried create. */
function oldDatabase(path: string): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(SCHEMA_BEFORE_ISSUE_13);
  const insert = db.prepare(
    `INSERT INTO orders (order_no, receipt_no, app_id, store_key, serial, create_time,
       pick_up_no, takeout_no, raw_param, order_status, payment_status)
     VALUES (?, ?, ?, ?, ?, '${OLD_DAY} 10:00:00', NULL, NULL, ?, 2, 2)`,
  );
  const retried = JSON.stringify({ ...baseOrder, paymentTransactionId: 'POS-retried' });
  insert.run(oldNo('O', 1), oldNo('R', 1), APP_ID, STORE_KEY, 1, retried);
  insert.run(oldNo('O', 2), oldNo('R', 2), APP_ID, STORE_KEY, 2, retried);
  insert.run(
    oldNo('O', 3),
    oldNo('R', 3),
    APP_ID,
    STORE_KEY,
    3,
    JSON.stringify({ ...baseOrder, paymentTransactionId: 'POS-other' }),
  );
  // The same id at another store is another identity, kept as it is.
  insert.run(oldNo('O', 4), oldNo('R', 4), APP_ID, OTHER_STORE_KEY, 1, retried);
  db.prepare("INSERT INTO counters (scope, day, value) VALUES ('order', ?, 4)").run(
    OLD_DAY_COMPACT,
  );
  for (const file of [path, `${path}-wal`, `${path}-shm`]) chmodSync(file, 0o644);
  return db;
}

describe('order-service database file', () => {
  it('creates a new file 0600, and its -wal and -shm', () => {
    const path = fresh();
    const store = new SqliteOrderStore(path);
    try {
      assert.equal(mode(path), 0o600);
      for (const suffix of ['-wal', '-shm']) {
        assert.ok(existsSync(`${path}${suffix}`), `${suffix} exists while open (WAL)`);
        assert.equal(mode(`${path}${suffix}`), 0o600, suffix);
      }
    } finally {
      store.close();
    }
  });

  it('tightens an existing 0644 file and its -wal and -shm to 0600', () => {
    const path = fresh();
    const older = oldDatabase(path); // still open, as another process would hold it
    try {
      assert.equal(mode(path), 0o644);
      const store = new SqliteOrderStore(path);
      store.close();
      for (const file of [path, `${path}-wal`, `${path}-shm`])
        assert.equal(mode(file), 0o600, file);
    } finally {
      older.close();
    }
  });

  it('enforces one order per create identity in the database itself', async () => {
    const path = fresh();
    // Two connections to one file, as two service instances would have.
    const one = new SqliteOrderStore(path);
    const two = new SqliteOrderStore(path);
    const order = (ptid: string) => ({
      appId: APP_ID,
      storeKey: STORE_KEY,
      now: () => '2026-11-25 10:00:00',
      orderType: 1,
      pickUpNum: null,
      paymentTransactionId: ptid,
      rawParam: JSON.stringify({ ...baseOrder, paymentTransactionId: ptid }),
    });
    const instruction = (o: { orderNo: string }) => ({
      jobId: `J-${o.orderNo}`,
      storeId: 's',
      body: '{}',
    });
    try {
      const first = await one.createOrder(order('POS-1'), instruction);
      const repeat = await two.createOrder(order('POS-1'), instruction);
      assert.equal(first.created, true);
      assert.equal(repeat.created, false);
      assert.equal(repeat.order.orderNo, first.order.orderNo);
      // The repeat used up no number: the next order follows the first directly.
      const next = await two.createOrder(order('POS-2'), instruction);
      assert.equal(Number(next.order.orderNo.slice(9)), Number(first.order.orderNo.slice(9)) + 1);
      assert.equal(orderRows(path), 2);
      assert.equal(await one.outboxSize(), 2);
      // Not only the code: a plain insert of the same identity is refused by SQLite.
      const raw = new Database(path);
      try {
        assert.throws(
          () =>
            raw
              .prepare(
                `INSERT INTO orders (order_no, receipt_no, app_id, store_key, serial, create_time,
                   raw_param, order_status, payment_status, payment_transaction_id)
                 VALUES ('O-x', 'R-x', ?, ?, 9, '2026-11-25 10:00:00', '{}', 2, 2, 'POS-1')`,
              )
              .run(APP_ID, STORE_KEY),
          (error: { code?: string }) => error.code === 'SQLITE_CONSTRAINT_UNIQUE',
        );
      } finally {
        raw.close();
      }
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('reports a database failure in a create with a catalogue code, writing nothing', async () => {
    const path = fresh();
    const store = new SqliteOrderStore(path);
    // Another instance holds the write lock past the busy timeout (better-sqlite3's 5 s).
    const other = new Database(path);
    const order = {
      appId: APP_ID,
      storeKey: STORE_KEY,
      now: () => '2026-11-25 10:00:00',
      orderType: 1,
      pickUpNum: null,
      paymentTransactionId: 'POS-locked',
      rawParam: JSON.stringify({ ...baseOrder, paymentTransactionId: 'POS-locked' }),
    };
    const instruction = (o: { orderNo: string }) => ({
      jobId: `J-${o.orderNo}`,
      storeId: 's',
      body: '{}',
    });
    try {
      other.exec('BEGIN IMMEDIATE');
      await assert.rejects(
        () => store.createOrder(order, instruction),
        (error: unknown) => {
          assert.ok(isAgentError(error), `an AgentError, got ${String(error)}`);
          assert.equal(error.code, 'STORE_FAILED');
          assert.equal(error.retryable, true);
          assert.equal(error.details.sqlite, 'SQLITE_BUSY');
          assert.match(error.message, /^order database error while creating an order: /);
          return true;
        },
      );
      other.exec('ROLLBACK');
      assert.equal(orderRows(path), 0);
      assert.equal(await store.outboxSize(), 0);
      // The retry, once the lock is free, makes the order.
      assert.equal((await store.createOrder(order, instruction)).created, true);
    } finally {
      other.close();
      await store.close();
    }
  });

  it('migrates a database from before idempotent create, keeping every order', async () => {
    const path = fresh();
    oldDatabase(path).close();
    const svc = makeService({ database: path });
    try {
      const rows = new Database(path, { readonly: true });
      try {
        const ids = rows
          .prepare('SELECT order_no, payment_transaction_id AS id FROM orders ORDER BY seq')
          .all();
        assert.deepEqual(ids, [
          { order_no: oldNo('O', 1), id: 'POS-retried' },
          { order_no: oldNo('O', 2), id: null }, // the historical double: kept, unnamed
          { order_no: oldNo('O', 3), id: 'POS-other' },
          { order_no: oldNo('O', 4), id: 'POS-retried' },
        ]);
        const index = rows
          .prepare("SELECT sql FROM sqlite_master WHERE name = 'orders_by_create_identity'")
          .get() as { sql: string };
        assert.match(index.sql, /UNIQUE INDEX/);
      } finally {
        rows.close();
      }
      // A retry of the retried create answers the first order, publishing nothing.
      const retry = await post(
        svc.app,
        'create',
        signed({ ...baseOrder, paymentTransactionId: 'POS-retried' }),
      );
      assert.equal(retry.body.code, 10000, retry.body.message);
      assert.equal(retry.body.data.orderNo, oldNo('O', 1));
      const conflict = await post(
        svc.app,
        'create',
        signed({ ...baseOrder, paymentTransactionId: 'POS-other', orderType: 2 }),
      );
      assert.equal(conflict.body.code, 40901);
      assert.match(conflict.body.message, new RegExp(`order ${oldNo('O', 3)} .*\\(orderType\\)`));
      assert.equal(svc.publisher.calls.length, 0);
      // Every old order is still listed, and new ones are still made.
      const created = await post(svc.app, 'create', signed(newOrder()));
      assert.equal(created.body.code, 10000);
      const listed = await post(
        svc.app,
        'list',
        signed({ startTime: `${OLD_DAY} 00:00:00`, endTime: `${OLD_DAY} 23:59:59` }),
      );
      assert.deepEqual(
        listed.body.data.list.map((r: { orderInnerNo: string }) => r.orderInnerNo),
        [oldNo('O', 1), oldNo('O', 2), oldNo('O', 3)],
      );
    } finally {
      await svc.app.close();
      await svc.store.close();
    }
    // Opening it again changes nothing.
    const again = new SqliteOrderStore(path);
    try {
      assert.equal(orderRows(path), 5);
      const first = await again.findByCreateIdentity(APP_ID, STORE_KEY, 'POS-retried');
      assert.equal(first?.orderNo, oldNo('O', 1));
      assert.equal(
        toOrderRecord(first!, {
          appId: APP_ID,
          storeKey: STORE_KEY,
          storeId: 's',
          restaurantNo: 'R',
          branchIdentifier: 'B',
        }).orderInnerNo,
        oldNo('O', 1),
      );
    } finally {
      again.close();
    }
  });
});
