/**
 * PostgreSQL for the tests (issue 19): the server this machine runs on 127.0.0.1:5432 (trust
 * authentication; `.ci/run` installs and starts it), a fresh database per test so tests never see
 * each other's orders, dropped afterwards. `PGTEST_URL` points elsewhere (its database is only
 * used to create and drop the test databases).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import pg from 'pg';

// The user is named: node-postgres takes it from $USER otherwise, which a CI shell may not set.
const ADMIN_URL = process.env.PGTEST_URL ?? `postgres://${userInfo().username}@127.0.0.1:5432/test`;

export const POSTGRES_SKIP =
  'PostgreSQL is not accepting connections on 127.0.0.1:5432 (install the Debian package postgresql; .ci/run starts it)';

/** For `describe(..., { skip })`: false when the server answers, else why the tests skip. */
export function skipWithoutPostgres(): false | string {
  const u = new URL(ADMIN_URL);
  const probe = spawnSync('pg_isready', ['-q', '-h', u.hostname, '-p', u.port || '5432'], {
    timeout: 10_000,
  });
  return probe.status === 0 ? false : POSTGRES_SKIP;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  url: string;
  name: string;
  /** Runs SQL on the test database (a connection of its own). */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    sql: string,
    args?: unknown[],
  ): Promise<R[]>;
  /** Drops the database, closing whatever is still connected to it. */
  drop(): Promise<void>;
}

/** A new empty database on the test server. */
export async function freshDatabase(): Promise<TestDatabase> {
  const name = `pa_test_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async query(sql, args = []) {
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      try {
        return (await client.query(sql, args)).rows;
      } finally {
        await client.end();
      }
    },
    drop: () => admin(async (c) => void (await c.query(`DROP DATABASE ${name} WITH (FORCE)`))),
  };
}
