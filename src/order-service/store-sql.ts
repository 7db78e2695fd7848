/**
 * What both order stores run the same, written once (store.ts has the rules they keep): the
 * create with the store's lock held (`createInTransaction`), the SQL both databases speak (`?`
 * placeholders; PostgreSQL's store numbers them) and the mapping of their rows to records.
 */

import type { QueryMode } from '../protocol/index.js';
import type {
  CallbackEntry,
  CallbackFor,
  CreateOutcome,
  InstructionFor,
  ListResult,
  NewOrder,
  StoredOrder,
} from './store.js';

/** Our choice, since order-api §3 does not state the initial state: created = paid and accepted. */
export const INITIAL_ORDER_STATUS = 2; // Accepted
export const INITIAL_PAYMENT_STATUS = 2; // Paid

/** The statements a create runs inside one database's transaction, holding the store's lock. */
export interface CreateTransaction {
  findByCreateIdentity(
    appId: string,
    storeKey: string,
    paymentTransactionId: string,
  ): Promise<StoredOrder | undefined>;
  /** The createTime of the store's latest order, or null for its first. */
  latestCreateTime(appId: string, storeKey: string): Promise<string | null>;
  /** Counter `scope` of `day`, plus one; 1 for the first. */
  next(scope: string, day: string): Promise<number>;
  /** Inserts the order (every field but seq) and answers its seq. */
  insertOrder(order: Omit<StoredOrder, 'seq'>): Promise<number>;
  insertOutbox(entry: { jobId: string; storeId: string; body: string }): Promise<void>;
  insertCallback(entry: {
    orderNo: string;
    url: string;
    body: string;
    nextAt: number;
  }): Promise<void>;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Short codes cycle 001..999 per store and day, the way a counter screen shows them. */
const shortCode = (prefix: string, n: number) => `${prefix}${pad(((n - 1) % 999) + 1, 3)}`;

/** The create, the same on every database: run with the store's lock held (module comment). */
export async function createInTransaction(
  tx: CreateTransaction,
  order: NewOrder,
  instruction: InstructionFor,
  callback?: CallbackFor,
): Promise<CreateOutcome> {
  const existing = await tx.findByCreateIdentity(
    order.appId,
    order.storeKey,
    order.paymentTransactionId,
  );
  if (existing !== undefined) return { created: false, order: existing };
  // Fixed-width local timestamps compare as text. Never before the store's latest order: a clock
  // stepped back (NTP, another instance's clock behind this one's, the hour repeated when
  // daylight saving time ends) must not give a new order a place before orders already listed.
  const now = order.now();
  const latest = await tx.latestCreateTime(order.appId, order.storeKey);
  const createTime = latest !== null && latest > now ? latest : now;
  const day = createTime.slice(0, 10).replaceAll('-', '');
  const storeScope = JSON.stringify([order.appId, order.storeKey]);
  // orderNo: O + yyyyMMdd + daily sequence of the whole service; unique across instances because
  // the counter row is locked by each increment until its transaction ends.
  const n = await tx.next('order', day);
  const serial = await tx.next(`serial:${storeScope}`, day);
  const pickUpNo =
    order.orderType === 2
      ? (order.pickUpNum ?? shortCode('A', await tx.next(`pickup:${storeScope}`, day)))
      : null;
  const takeoutNo =
    order.orderType === 3 ? shortCode('T', await tx.next(`takeout:${storeScope}`, day)) : null;
  const fields: Omit<StoredOrder, 'seq'> = {
    orderNo: `O${day}${pad(n, 6)}`,
    receiptNo: `R${day}${pad(n, 6)}`,
    appId: order.appId,
    storeKey: order.storeKey,
    serial,
    createTime,
    pickUpNo,
    takeoutNo,
    paymentTransactionId: order.paymentTransactionId,
    rawParam: order.rawParam,
    orderStatus: INITIAL_ORDER_STATUS,
    paymentStatus: INITIAL_PAYMENT_STATUS,
  };
  // The unique index still refuses a second order for the identity, whatever writes the
  // database: under the lock that cannot happen, and if it did the insert would fail, not double.
  const stored: StoredOrder = { seq: await tx.insertOrder(fields), ...fields };
  await tx.insertOutbox(instruction(stored));
  const cb = callback?.(stored);
  if (cb) await tx.insertCallback({ orderNo: stored.orderNo, ...cb });
  return { created: true, order: stored };
}

/** An orders row as both databases return it (PostgreSQL answers BIGINT columns as text). */
export interface OrderRow {
  seq: number | string;
  order_no: string;
  receipt_no: string;
  app_id: string;
  store_key: string;
  serial: number | string;
  create_time: string;
  pick_up_no: string | null;
  takeout_no: string | null;
  raw_param: string;
  order_status: number;
  payment_status: number;
  payment_transaction_id: string | null;
}

export function fromRow(r: OrderRow): StoredOrder {
  return {
    seq: Number(r.seq),
    orderNo: r.order_no,
    receiptNo: r.receipt_no,
    appId: r.app_id,
    storeKey: r.store_key,
    serial: Number(r.serial),
    createTime: r.create_time,
    pickUpNo: r.pick_up_no,
    takeoutNo: r.takeout_no,
    paymentTransactionId: r.payment_transaction_id,
    rawParam: r.raw_param,
    orderStatus: r.order_status,
    paymentStatus: r.payment_status,
  };
}

/** The columns of a callback entry, named as CallbackEntry names them. */
export const CALLBACK_COLUMNS = `id, order_no AS "orderNo", url, body, state, attempts,
  next_at AS "nextAt", last_error AS "lastError"`;
/** The columns of an outbox entry, named as OutboxEntry names them. */
export const OUTBOX_COLUMNS = 'id, job_id AS "jobId", store_id AS "storeId", body, attempts';

/** The state a callback attempt leaves: delivered, pending a retry, or given up. */
export function callbackState(outcome: {
  error: string | null;
  nextAt: number | null;
}): CallbackEntry['state'] {
  return outcome.error === null ? 'delivered' : outcome.nextAt === null ? 'given-up' : 'pending';
}

/** Runs one SQL statement with `?` placeholders and answers its rows. */
export type Select = (sql: string, args: readonly (string | number | null)[]) => Promise<unknown[]>;

/**
 * The create's statements, the same SQL on both databases (`?` placeholders; PostgreSQL's store
 * numbers them), run through `select` on the connection that holds the transaction.
 */
export function sqlCreateTransaction(select: Select): CreateTransaction {
  const one = async <T>(sql: string, ...args: (string | number | null)[]) =>
    (await select(sql, args))[0] as T;
  return {
    findByCreateIdentity: async (appId, storeKey, paymentTransactionId) => {
      const row = await one<OrderRow | undefined>(
        'SELECT * FROM orders WHERE app_id = ? AND store_key = ? AND payment_transaction_id = ?',
        appId,
        storeKey,
        paymentTransactionId,
      );
      return row ? fromRow(row) : undefined;
    },
    latestCreateTime: async (appId, storeKey) =>
      (
        await one<{ t: string | null }>(
          'SELECT max(create_time) AS t FROM orders WHERE app_id = ? AND store_key = ?',
          appId,
          storeKey,
        )
      ).t,
    next: async (scope, day) =>
      Number(
        (
          await one<{ value: number }>(
            `INSERT INTO counters (scope, day, value) VALUES (?, ?, 1)
             ON CONFLICT (scope, day) DO UPDATE SET value = counters.value + 1 RETURNING value`,
            scope,
            day,
          )
        ).value,
      ),
    insertOrder: async (o) =>
      Number(
        (
          await one<{ seq: number }>(
            `INSERT INTO orders (order_no, receipt_no, app_id, store_key, serial, create_time,
               pick_up_no, takeout_no, raw_param, order_status, payment_status,
               payment_transaction_id)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
             RETURNING seq`,
            o.orderNo,
            o.receiptNo,
            o.appId,
            o.storeKey,
            o.serial,
            o.createTime,
            o.pickUpNo,
            o.takeoutNo,
            o.rawParam,
            o.orderStatus,
            o.paymentStatus,
            o.paymentTransactionId,
          )
        ).seq,
      ),
    insertOutbox: async (e) => {
      await select('INSERT INTO outbox (job_id, store_id, body) VALUES (?, ?, ?)', [
        e.jobId,
        e.storeId,
        e.body,
      ]);
    },
    insertCallback: async (e) => {
      await select('INSERT INTO callbacks (order_no, url, body, next_at) VALUES (?, ?, ?, ?)', [
        e.orderNo,
        e.url,
        e.body,
        e.nextAt,
      ]);
    },
  };
}

/**
 * One page of a store's orders (order-api 4.1), the same SQL on both databases: listed by
 * (create_time, seq), the cursor modes continuing strictly after the start order's place.
 */
export async function listOrdersWith(
  select: Select,
  appId: string,
  storeKey: string,
  mode: QueryMode,
  pageNum: number,
  pageSize: number,
): Promise<ListResult> {
  let where = 'app_id = ? AND store_key = ?';
  const args: (string | number)[] = [appId, storeKey];
  if (mode.mode === 'time-range') {
    // Fixed-width timestamps compare correctly as text; both ends inclusive.
    where += ' AND create_time >= ? AND create_time <= ?';
    args.push(mode.startTime, mode.endTime);
  } else {
    const column = mode.mode === 'after-order' ? 'order_no' : 'receipt_no';
    const value = mode.mode === 'after-order' ? mode.orderInnerNo : mode.receiptNo;
    const [start] = (await select(
      `SELECT seq, create_time FROM orders WHERE ${where} AND ${column} = ?`,
      [...args, value],
    )) as { seq: number | string; create_time: string }[];
    if (start === undefined) return { ok: false };
    where += ' AND (create_time > ? OR (create_time = ? AND seq > ?))';
    args.push(start.create_time, start.create_time, Number(start.seq));
  }
  const [count] = (await select(`SELECT count(*) AS n FROM orders WHERE ${where}`, args)) as {
    n: number | string;
  }[];
  const total = Number(count!.n);
  // A page beyond the end is simply empty; checked first so a huge pageNum cannot overflow.
  if (pageNum - 1 > total / pageSize) return { ok: true, total, orders: [] };
  const rows = (await select(
    `SELECT * FROM orders WHERE ${where} ORDER BY create_time, seq LIMIT ? OFFSET ?`,
    [...args, pageSize, (pageNum - 1) * pageSize],
  )) as OrderRow[];
  return { ok: true, total, orders: rows.map(fromRow) };
}
