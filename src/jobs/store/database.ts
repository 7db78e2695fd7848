/**
 * The job database's one connection, shared by every part of the job store (`../store.ts` and the
 * files beside this one): opening it, the pragmas that carry the durability promise, the
 * prepared-statement cache, and the read and write wrappers. Separate so that each part works on
 * the same handle: a statement a part runs inside another part's `write` is in that transaction,
 * which is how a transition and its outbox event, or an insert and the cursor move, commit
 * together.
 *
 * - Durability (reliability guarantee 1): `journal_mode=WAL` and `synchronous=FULL`, set
 *   explicitly and checked, because better-sqlite3 leaves WAL at NORMAL, which can lose the last
 *   commits on power loss; a job is acknowledged to the broker only after its insert committed.
 * - Concurrency: every write is a short `BEGIN IMMEDIATE` transaction (the write lock is taken up
 *   front, so a reader never has to upgrade and fail with SQLITE_BUSY_SNAPSHOT), and
 *   `busy_timeout` makes the CLI and the daemon wait for each other instead of failing. WAL lets
 *   readers run while the spooler writes.
 * - Errors (guarantee 11): SQLITE_FULL becomes STORE_FULL, anything else STORE_FAILED; both tell
 *   the inbox not to ack.
 */

import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AgentError } from '../../errors.js';
import { DEFAULT_STATE_DIR } from '../../host/paths.js';
import { keepDatabasePrivate } from '../../host/private-file.js';
import Database from '../../host/sqlite.js';
import { faultMaxPages, faultStoreFailing } from '../fault-points.js';
import { migrate } from '../migrations.js';
import { storeError } from '../sqlite-errors.js';

export { DEFAULT_STATE_DIR };
export const DATABASE_FILE = 'jobs.db';
/**
 * The page cache of the connection, in SQLite's units (negative: KiB). better-sqlite3 builds
 * SQLite with 16 MB (`SQLITE_DEFAULT_CACHE_SIZE=-16000`), which fills as the job history grows:
 * malloc's heap held 20 MB after 10,000 jobs, 11 MB with this (decision 164; a Pi may have
 * 512 MB, issue 16). The spooler and the reporter work at the tail of the tables and indexes;
 * 2 MB (SQLite's own default) holds it, and older pages (a `jobs list` of last week) come from
 * the OS's file cache.
 */
export const PAGE_CACHE_SIZE = -2000;

/** SQLite's own default page limit: "no limit" for our purposes. */
const NO_PAGE_LIMIT = 4_294_967_294;

export interface JobStoreOptions {
  /** Directory of the database file; default `/var/lib/printer-agent` (systemd StateDirectory=). */
  stateDir?: string;
  /** Create the directory and the database when missing (the daemon); the CLI passes false. */
  create?: boolean;
  /** How long a write waits for the other process's transaction (daemon vs CLI). */
  busyTimeoutMs?: number;
  /** Cap on the database size (`max_page_count`), e.g. to protect a small SD card; null = none. */
  maxSizeBytes?: number | null;
  /** The clock, injectable for tests (late jobs, retention). */
  now?: () => number;
}

/** Job states as an SQL list, `('a','b')`, for `state IN ...` (the states are fixed words). */
export function sqlList(values: readonly string[]): string {
  return `('${values.join("','")}')`;
}

export class JobDatabase {
  readonly path: string;
  /** The store's clock: every part stamps its rows with it. */
  readonly now: () => number;
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  /**
   * One transaction function for every write, made once: `db.transaction(fn)` builds a wrapper
   * per call (a sixth of the store's own CPU per job; issue 16). The driver's nesting rules
   * (a write inside a write becomes a savepoint) are the same.
   */
  private readonly transaction: ((fn: () => unknown) => unknown) & {
    immediate(fn: () => unknown): unknown;
  };

  private constructor(db: Database.Database, path: string, now: () => number) {
    this.db = db;
    this.path = path;
    this.now = now;
    this.transaction = db.transaction((fn: () => unknown) => fn());
  }

  /** Opens (and creates or migrates) the database; throws STORE_FAILED / STORE_FULL. */
  static open(options: JobStoreOptions = {}): JobDatabase {
    const stateDir = options.stateDir ?? DEFAULT_STATE_DIR;
    const path = join(stateDir, DATABASE_FILE);
    const create = options.create ?? true;
    const now = options.now ?? Date.now;
    if (!create && !existsSync(path)) {
      throw new AgentError(
        'STORE_FAILED',
        `no job database at ${path}: check --state-dir (the agent creates it on its first start)`,
        { retryable: false },
      );
    }
    let db: Database.Database | undefined;
    try {
      if (create) {
        mkdirSync(stateDir, { recursive: true, mode: 0o750 });
        keepDatabasePrivate(path, { create: true });
      }
      db = new Database(path, { timeout: options.busyTimeoutMs ?? 5000 });
      configure(db, options.busyTimeoutMs ?? 5000);
      migrate(db, now());
      const database = new JobDatabase(db, path, now);
      if (options.maxSizeBytes != null) database.setSizeLimit(options.maxSizeBytes);
      // Disk-full test only (fault matrix row 14); inert unless PRINTER_AGENT_FAULT=max-pages:N.
      const faultPages = faultMaxPages();
      if (faultPages !== null) db.pragma(`max_page_count = ${faultPages}`);
      return database;
    } catch (error) {
      db?.close();
      throw storeError(error, `opening ${path}`);
    }
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  get isOpen(): boolean {
    return this.db.open;
  }

  /** Inside `read`/`write`'s function: what is written commits with the outermost one. */
  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  /** A prepared statement, prepared once per connection and SQL text. */
  statement(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  /**
   * A new prepared statement whose rows come as arrays, in its columns' order (better-sqlite3's
   * raw mode; the mode is the statement's, so it is not one of `statement`'s). The caller keeps it.
   */
  prepareRaw(sql: string): Database.Statement {
    return this.db.prepare(sql).raw(true);
  }

  /** A pragma's single value (`PRAGMA name` or `PRAGMA name(argument)`); inside `read`/`write`. */
  pragma(source: string): unknown {
    return this.db.pragma(source, { simple: true });
  }

  /**
   * A write transaction, `BEGIN IMMEDIATE`, with driver errors mapped to catalogue codes. Every
   * part's "inside a write transaction" method runs in the `fn` of one of these.
   */
  write<T>(doing: string, fn: () => T): T {
    try {
      failIfInjected();
      return this.transaction.immediate(fn) as T;
    } catch (error) {
      throw storeError(error, doing);
    }
  }

  /**
   * Inside `write`'s function: `fn` in a savepoint, undone alone when it throws. Its error goes on
   * unchanged (the store's own calls inside it name their errors already; anything else is a bug
   * of the caller's, not the database's).
   */
  savepoint<T>(fn: () => T): T {
    if (!this.db.inTransaction) throw new Error('savepoint outside a write transaction');
    return this.transaction(fn) as T;
  }

  /**
   * A write whose loss at a power cut costs nothing but a repeat: committed with
   * `synchronous=NORMAL`, so without its own fsync (issue 16). In WAL mode its frames precede every
   * later commit's, so the next `write` (FULL) makes it durable too; a power cut before that undoes
   * only this write. For removing published outbox entries: undone, they are published again
   * (at-least-once). Never for a write another promise rests on.
   */
  writeUnsynced<T>(doing: string, fn: () => T): T {
    if (this.db.inTransaction) return this.write(doing, fn);
    try {
      failIfInjected();
      // Prepared once, like every statement: `db.pragma` compiles its SQL on each call.
      this.statement('PRAGMA synchronous = NORMAL').run();
      try {
        return this.transaction.immediate(fn) as T;
      } finally {
        this.statement('PRAGMA synchronous = FULL').run();
      }
    } catch (error) {
      throw storeError(error, doing);
    }
  }

  read<T>(doing: string, fn: () => T): T {
    try {
      failIfInjected();
      return fn();
    } catch (error) {
      throw storeError(error, doing);
    }
  }

  // Health -------------------------------------------------------------------------------------

  /** The settings that carry the durability promise and bound the memory, as SQLite reports them. */
  pragmas(): {
    journalMode: string;
    synchronous: number;
    busyTimeoutMs: number;
    autoVacuum: number;
    cacheSize: number;
  } {
    return this.read('reading settings', () => ({
      journalMode: String(this.pragma('journal_mode')),
      synchronous: Number(this.pragma('synchronous')),
      busyTimeoutMs: Number(this.pragma('busy_timeout')),
      autoVacuum: Number(this.pragma('auto_vacuum')),
      cacheSize: Number(this.pragma('cache_size')),
    }));
  }

  /** `PRAGMA integrity_check`: `ok`, or the problems found, one per line. */
  integrityCheck(): string {
    return this.read('checking integrity', () =>
      (this.db.pragma('integrity_check') as Array<{ integrity_check: string }>)
        .map((r) => r.integrity_check)
        .join('\n'),
    );
  }

  /**
   * Caps the file size (`max_page_count`, per connection). Also how the disk-full test makes
   * SQLite report SQLITE_FULL without filling a disk. A limit below the current size holds the
   * database at its current size.
   */
  setSizeLimit(bytes: number | null): void {
    this.read('setting the size limit', () => {
      const pageSize = Number(this.pragma('page_size'));
      const pages = bytes === null ? NO_PAGE_LIMIT : Math.max(1, Math.floor(bytes / pageSize));
      this.db.pragma(`max_page_count = ${pages}`);
    });
  }
}

function configure(db: Database.Database, busyTimeoutMs: number): void {
  // auto_vacuum takes effect only before the first table exists: new files get INCREMENTAL so
  // retention can hand pages back without a VACUUM; older files keep what they have.
  const pages = Number(db.pragma('page_count', { simple: true }));
  if (pages === 0) db.pragma('auto_vacuum = INCREMENTAL');
  const mode = String(db.pragma('journal_mode = WAL', { simple: true }));
  db.pragma('synchronous = FULL');
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  // Truncate the WAL after checkpoints: its size stays bounded under continuous load.
  db.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
  db.pragma(`cache_size = ${PAGE_CACHE_SIZE}`);
  const synchronous = Number(db.pragma('synchronous', { simple: true }));
  if (mode !== 'wal' || synchronous !== 2) {
    throw new AgentError(
      'STORE_FAILED',
      `the job database refused WAL with synchronous=FULL (journal_mode=${mode}, synchronous=${synchronous}): it would not be durable`,
      { retryable: false },
    );
  }
}

/**
 * Fault test only (guarantee 11 with the agent as a child process): while the file named by
 * `PRINTER_AGENT_FAULT=store-fails-while:PATH` exists, every read and write fails like an I/O
 * error. Inert unless that variable is set (src/jobs/fault-points.ts).
 */
function failIfInjected(): void {
  if (faultStoreFailing()) {
    throw Object.assign(new Error('disk I/O error (injected: PRINTER_AGENT_FAULT)'), {
      code: 'SQLITE_IOERR',
    });
  }
}
