/**
 * The service's orders on PostgreSQL (issue 19), for several instances on several hosts behaving
 * as one service; store.ts has the rules every order store keeps, and this is how PostgreSQL
 * keeps them:
 *
 * - The store's lock is a transaction-level advisory lock on (STORE_LOCK_SPACE, hash of the
 *   store), taken first in every create: creates of one store take turns across instances, those
 *   of different stores run side by side (two stores whose hashes collide only share turns).
 *   Order numbers come from a counter row, locked by its increment until the create commits.
 * - Outbox entries and callbacks are claimed with `FOR UPDATE SKIP LOCKED` in a transaction that
 *   stays open while they are sent: an instance never sends what another holds, and one that dies
 *   mid-send has its connection closed by the server, its transaction rolled back and its claim
 *   released to the others. A send that succeeded just before such a death is sent again by
 *   another instance: at-least-once, as MQTT QoS 1 is; the agent dedupes.
 * - Migrations run at start inside one transaction holding an advisory lock: two instances
 *   starting together take turns, and the second finds the work done.
 *
 * The client is node-postgres (`pg`, decision 184): the most used PostgreSQL client for Node,
 * maintained since 2010, pure JavaScript (nothing to build for arm64 or per Node version), a pool,
 * parameterized queries. BIGINT columns are read as numbers (ids and millisecond times stay far
 * below 2^53).
 */
import pg from 'pg';
import { AgentError, isAgentError } from '../errors.js';
import type { QueryMode } from '../protocol/index.js';
import { describeDatabase } from './database-url.js';
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

/** Advisory lock keys: the schema's (one bigint), and the stores' space (int4 pairs). */
const SCHEMA_LOCK = 7_411_019;
const STORE_LOCK_SPACE = 7411;

/**
 * Each entry brings the schema from the previous version to its own (index + 1). Timestamps are
 * compared as text in byte order (COLLATE "C"), as on SQLite: a locale's collation may not.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE orders (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    order_no TEXT NOT NULL UNIQUE,
    receipt_no TEXT NOT NULL UNIQUE,
    app_id TEXT NOT NULL,
    store_key TEXT NOT NULL,
    serial INTEGER NOT NULL,
    create_time TEXT COLLATE "C" NOT NULL,
    pick_up_no TEXT,
    takeout_no TEXT,
    raw_param TEXT NOT NULL,
    order_status INTEGER NOT NULL,
    payment_status INTEGER NOT NULL,
    payment_transaction_id TEXT
  );
  CREATE INDEX orders_by_store_time ON orders (app_id, store_key, create_time, seq);
  CREATE UNIQUE INDEX orders_by_create_identity
    ON orders (app_id, store_key, payment_transaction_id);
  CREATE TABLE counters (
    scope TEXT NOT NULL,
    day TEXT NOT NULL,
    value INTEGER NOT NULL,
    PRIMARY KEY (scope, day)
  );
  CREATE TABLE outbox (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id TEXT NOT NULL UNIQUE,
    store_id TEXT NOT NULL,
    body TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT
  );
  CREATE TABLE callbacks (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    order_no TEXT NOT NULL,
    url TEXT NOT NULL,
    body TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'given-up')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at BIGINT NOT NULL,
    last_error TEXT
  );
  CREATE INDEX callbacks_due ON callbacks (state, next_at);
  `,
];

/** The schema version this code writes. */
export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;

/** `?` placeholders (the SQL store.ts shares with SQLite) as PostgreSQL's `$1, $2...`. */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** BIGINT (oid 20) as a number; every other type as pg reads it. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * A driver error in the catalogue's terms: STORE_FULL for a full disk (SQLSTATE 53100),
 * STORE_FAILED otherwise (connection lost or refused, a constraint, a timeout); both retryable,
 * answered 21000. Our own AgentErrors (an instruction too large) pass through unchanged.
 */
function orderDatabaseError(error: unknown, doing: string, where: string): unknown {
  if (isAgentError(error)) return error;
  const e = error as { code?: string; message?: string };
  return new AgentError(
    e.code === '53100' ? 'STORE_FULL' : 'STORE_FAILED',
    `order database error while ${doing} (${where}): ${e.message ?? String(error)}`,
    { cause: error, details: { postgres: e.code ?? null } },
  );
}

export class PostgresOrderStore implements OrderStore {
  readonly kind = 'postgres';

  private constructor(
    private readonly pool: pg.Pool,
    private readonly where: string,
  ) {}

  /** Connects, brings the schema up to date (safely beside other instances) and answers. */
  static async open(
    url: string,
    options: { applicationName?: string; poolSize?: number } = {},
  ): Promise<PostgresOrderStore> {
    const where = describeDatabase(url);
    const pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      application_name: options.applicationName ?? 'printer-agent-order-service',
      connectionTimeoutMillis: 10_000,
      types,
    });
    // An idle connection the server closed (a restart, an instance killed by an operator) is an
    // event on the pool; left unhandled it would end the process. The next query reconnects.
    pool.on('error', () => {});
    const store = new PostgresOrderStore(pool, where);
    try {
      await store.transaction(async (c) => {
        await c.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
        await c.query('CREATE TABLE IF NOT EXISTS order_service_schema (version INTEGER NOT NULL)');
        const { rows } = await c.query<{ version: number }>(
          'SELECT version FROM order_service_schema',
        );
        const current = rows[0]?.version ?? 0;
        if (current > MIGRATIONS.length)
          throw new AgentError(
            'STORE_FAILED',
            `the order database (${where}) has schema version ${current}, newer than this service's ${MIGRATIONS.length}: upgrade the service`,
          );
        for (let v = current; v < MIGRATIONS.length; v++) await c.query(MIGRATIONS[v]!);
        if (rows.length === 0)
          await c.query('INSERT INTO order_service_schema (version) VALUES ($1)', [
            MIGRATIONS.length,
          ]);
        else await c.query('UPDATE order_service_schema SET version = $1', [MIGRATIONS.length]);
      });
    } catch (error) {
      await pool.end();
      throw orderDatabaseError(error, 'opening it', where);
    }
    return store;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /** `work` in one transaction on one connection; a connection left unusable is thrown away. */
  private async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken = false;
    // A connection the server ends while checked out (an instance terminated, a database restart)
    // is an 'error' event on it besides the query that fails; unheard, it would end the process.
    const lost = () => {
      broken = true;
    };
    client.on('error', lost);
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw error;
    } finally {
      client.off('error', lost);
      client.release(broken);
    }
  }

  private async select(
    sql: string,
    args: readonly (string | number | null)[],
    client: pg.Pool | pg.PoolClient = this.pool,
  ): Promise<unknown[]> {
    return (await client.query(numbered(sql), [...args])).rows;
  }

  private async guarded<T>(doing: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw orderDatabaseError(error, doing, this.where);
    }
  }

  createOrder(
    order: NewOrder,
    instruction: InstructionFor,
    callback?: CallbackFor,
  ): Promise<CreateOutcome> {
    return this.guarded('creating an order', () =>
      this.transaction(async (c) => {
        await c.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [
          STORE_LOCK_SPACE,
          JSON.stringify([order.appId, order.storeKey]),
        ]);
        const tx = sqlCreateTransaction((sql, args) => this.select(sql, args, c));
        return createInTransaction(tx, order, instruction, callback);
      }),
    );
  }

  findByCreateIdentity(
    appId: string,
    storeKey: string,
    paymentTransactionId: string,
  ): Promise<StoredOrder | undefined> {
    return this.guarded('looking up a create', () =>
      sqlCreateTransaction((sql, args) => this.select(sql, args)).findByCreateIdentity(
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
    // One transaction, REPEATABLE READ: the count and the page see the same orders.
    return this.guarded('listing orders', () =>
      this.transaction(async (c) => {
        await c.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
        return listOrdersWith(
          (sql, args) => this.select(sql, args, c),
          appId,
          storeKey,
          mode,
          pageNum,
          pageSize,
        );
      }),
    );
  }

  outboxSize(): Promise<number> {
    return this.guarded('counting the outbox', async () => {
      const [row] = (await this.select('SELECT count(*) AS n FROM outbox', [])) as { n: number }[];
      return row!.n;
    });
  }

  claimOutbox(
    limit: number,
    send: (entries: OutboxEntry[]) => Promise<OutboxResults>,
  ): Promise<number> {
    return this.guarded('publishing the outbox', () =>
      this.transaction(async (c) => {
        const entries = (await this.select(
          `SELECT ${OUTBOX_COLUMNS} FROM outbox ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
          [limit],
          c,
        )) as OutboxEntry[];
        if (entries.length === 0) return 0;
        const results = await send(entries);
        for (const [id, error] of results) {
          if (error === null) await c.query('DELETE FROM outbox WHERE id = $1', [id]);
          else
            await c.query(
              'UPDATE outbox SET attempts = attempts + 1, last_error = $1 WHERE id = $2',
              [error.slice(0, 500), id],
            );
        }
        return entries.length;
      }),
    );
  }

  claimDueCallbacks(
    now: number,
    limit: number,
    deliver: (entries: CallbackEntry[]) => Promise<CallbackResults>,
  ): Promise<number> {
    return this.guarded('sending callbacks', () =>
      this.transaction(async (c) => {
        const due = (await this.select(
          `SELECT ${CALLBACK_COLUMNS} FROM callbacks WHERE state = 'pending' AND next_at <= ?
           ORDER BY next_at, id LIMIT ? FOR UPDATE SKIP LOCKED`,
          [now, limit],
          c,
        )) as CallbackEntry[];
        if (due.length === 0) return 0;
        const results = await deliver(due);
        for (const [id, outcome] of results) {
          await c.query(
            `UPDATE callbacks SET attempts = attempts + 1, state = $1, last_error = $2,
               next_at = coalesce($3, next_at) WHERE id = $4`,
            [callbackState(outcome), outcome.error?.slice(0, 500) ?? null, outcome.nextAt, id],
          );
        }
        return due.length;
      }),
    );
  }

  callbacksFor(orderNo: string): Promise<CallbackEntry[]> {
    return this.guarded(
      'reading callbacks',
      async () =>
        (await this.select(
          `SELECT ${CALLBACK_COLUMNS} FROM callbacks WHERE order_no = ? ORDER BY id`,
          [orderNo],
        )) as CallbackEntry[],
    );
  }
}
