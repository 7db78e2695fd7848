/**
 * The job database's schema, as an ordered list of migrations. A database records the versions
 * applied in `schema_version`; opening it applies the missing ones, each in its own transaction,
 * so a crash mid-upgrade leaves the previous version intact and the next start tries again.
 *
 * Never edit a released migration: databases in the field were built by it. Add a new version.
 * `test/jobs/store-migration.test.ts` builds a version 1 database by hand and upgrades it.
 */
import type { Database } from 'better-sqlite3';
import { AgentError } from '../errors.js';
import { faultPoint } from './fault-points.js';

export interface Migration {
  version: number;
  /** What the version brought, for the record in `schema_version`. */
  description: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'jobs with dedupe keys, outbox, meta',
    sql: `
      CREATE TABLE jobs (
        -- AUTOINCREMENT: ids are never reused after pruning, so an id a person noted down (or a
        -- CLI command names) never points at a different job later.
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        source TEXT NOT NULL CHECK (source IN ('mqtt', 'catch-up', 'command', 'local')),
        kind TEXT NOT NULL CHECK (kind IN ('receipt', 'reprint', 'test')),
        job_id TEXT NOT NULL,
        order_no TEXT,
        command_id TEXT,
        printer TEXT NOT NULL,
        payload_type TEXT NOT NULL CHECK (payload_type IN ('instruction', 'record', 'command')),
        -- The verified instruction, record or command JSON as received.
        payload TEXT NOT NULL,
        state TEXT NOT NULL
          CHECK (state IN ('queued', 'waiting', 'printing', 'printed', 'unconfirmed', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER,
        last_error_code TEXT,
        last_error_message TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      -- Reliability guarantee 3: dedupe by business key. One job per jobId, one payment receipt
      -- per orderNo (reprints and test pages are not receipts), one job per commandId.
      CREATE UNIQUE INDEX jobs_job_id ON jobs (job_id);
      CREATE UNIQUE INDEX jobs_receipt_order_no ON jobs (order_no) WHERE kind = 'receipt';
      CREATE UNIQUE INDEX jobs_command_id ON jobs (command_id) WHERE command_id IS NOT NULL;
      CREATE INDEX jobs_by_state ON jobs (state, id);

      CREATE TABLE outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL CHECK (kind IN ('job', 'status')),
        payload TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );

      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    `,
  },
  {
    version: 2,
    description:
      'per-transition timestamps, warnings, markings, hold, reprint link, pending index, dedupe ledger',
    sql: `
      ALTER TABLE jobs ADD COLUMN warnings TEXT NOT NULL DEFAULT '[]';
      ALTER TABLE jobs ADD COLUMN markings TEXT NOT NULL DEFAULT '{}';
      -- Held for a person (interrupted job under the 'hold' policy): never picked automatically.
      ALTER TABLE jobs ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
      -- A reprint's original receipt job.
      ALTER TABLE jobs ADD COLUMN source_job INTEGER;
      ALTER TABLE jobs ADD COLUMN queued_at INTEGER;
      ALTER TABLE jobs ADD COLUMN printing_at INTEGER;
      ALTER TABLE jobs ADD COLUMN printed_at INTEGER;
      ALTER TABLE jobs ADD COLUMN finished_at INTEGER;
      UPDATE jobs SET queued_at = created_at;
      UPDATE jobs SET finished_at = updated_at WHERE state IN ('printed', 'unconfirmed', 'failed');
      UPDATE jobs SET printed_at = updated_at WHERE state = 'printed';

      -- The spooler's head-of-queue lookup: FIFO per printer over pending jobs only.
      DROP INDEX jobs_by_state;
      CREATE INDEX jobs_pending ON jobs (printer, id) WHERE state IN ('queued', 'waiting');
      CREATE INDEX jobs_state ON jobs (state, id);
      CREATE INDEX jobs_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL;
      CREATE INDEX jobs_source_job ON jobs (source_job) WHERE source_job IS NOT NULL;

      -- Dedupe keys of pruned jobs: a replay days later (fault matrix row 16) is still a
      -- duplicate after retention deleted the job itself. Small rows, kept longer than jobs.
      CREATE TABLE dedupe_ledger (
        key_kind TEXT NOT NULL CHECK (key_kind IN ('orderNo', 'jobId', 'commandId')),
        key TEXT NOT NULL,
        job_row INTEGER NOT NULL,
        job_id TEXT NOT NULL,
        order_no TEXT,
        command_id TEXT,
        printer TEXT NOT NULL,
        kind TEXT NOT NULL,
        state TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        printed_at INTEGER,
        pruned_at INTEGER NOT NULL,
        PRIMARY KEY (key_kind, key)
      ) WITHOUT ROWID;
      CREATE INDEX dedupe_ledger_pruned ON dedupe_ledger (pruned_at);
    `,
  },
  {
    version: 3,
    description: 'receipt dedupe per order and printer role; notices of the latest attempt',
    sql: `
      -- print-protocol v1.1 §4: one payment receipt per (orderNo, printer role). An order may
      -- rightly have a receipt job and a kitchen job; never two receipt jobs.
      DROP INDEX jobs_receipt_order_no;
      CREATE UNIQUE INDEX jobs_receipt_order_role ON jobs (order_no, printer) WHERE kind = 'receipt';
      -- The ledger's orderNo keys become per role too: '<role>/<orderNo>' (a role has no '/').
      UPDATE dedupe_ledger SET key = printer || '/' || key WHERE key_kind = 'orderNo';
      -- Notices of the latest attempt (CONTENT_CUT...), reported as warnings by its events.
      ALTER TABLE jobs ADD COLUMN notices TEXT NOT NULL DEFAULT '[]';
    `,
  },
  {
    version: 4,
    description: 'routing: the layout of an order job and the items a ticket lists',
    sql: `
      -- Issue 18: an order becomes one job per routed role; the receipt role prints the payment
      -- receipt, a kitchen role a ticket without prices. Both are kind 'receipt' (one per order
      -- and role, the dedupe index above); the layout says which paper it is.
      ALTER TABLE jobs ADD COLUMN layout TEXT NOT NULL DEFAULT 'receipt'
        CHECK (layout IN ('receipt', 'kitchen'));
      -- JSON list of the order's item indexes the ticket lists (a rule's item filter); NULL: all.
      ALTER TABLE jobs ADD COLUMN items TEXT;
    `,
  },
  {
    version: 5,
    description: 'one index over the jobs still to print, one over the finished ones',
    sql: `
      -- Issue 16: every index a commit changes is one more page written to the WAL and synced.
      -- jobs_state (state, id) changed in all three commits of a printed job and jobs_pending in
      -- two: 17.6 pages per job. One partial index over the pending and printing jobs answers the
      -- spooler's head-of-queue lookup and the counts of those states (15.5 pages per job); the
      -- finished ones are counted and pruned through an index that holds their state. Queries
      -- repeat an index's WHERE term (state IN ...) so that SQLite can use it.
      DROP INDEX jobs_state;
      DROP INDEX jobs_pending;
      DROP INDEX jobs_finished;
      CREATE INDEX jobs_active ON jobs (printer, id, state)
        WHERE state IN ('queued','waiting','printing');
      CREATE INDEX jobs_done ON jobs (state, finished_at)
        WHERE state IN ('printed','unconfirmed','failed');
    `,
  },
  {
    version: 6,
    description: 'outbox ids without AUTOINCREMENT; a published row can be kept as sent',
    sql: `
      -- Issue 16: AUTOINCREMENT writes the sqlite_sequence page in every commit that adds an
      -- event, one of the 15.5 WAL pages of a printed job in each of its three commits. Plain
      -- rowids are max(id) + 1, as unique and as ordered as long as the row with the highest id
      -- is never deleted: store/outbox.ts keeps it, marked 'sent' once published, so no id is
      -- ever handed out twice (a reader's "up to which id" stays true across processes).
      CREATE TABLE outbox_v6 (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('job', 'status', 'sent')),
        payload TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      INSERT INTO outbox_v6 (id, kind, payload, created_at)
        SELECT id, kind, payload, created_at FROM outbox;
      -- The highest id AUTOINCREMENT handed out, when its row is gone already: kept as sent.
      INSERT INTO outbox_v6 (id, kind, payload, created_at)
        SELECT seq, 'sent', '', 0 FROM sqlite_sequence
        WHERE name = 'outbox' AND seq > (SELECT coalesce(max(id), 0) FROM outbox);
      DROP TABLE outbox;
      ALTER TABLE outbox_v6 RENAME TO outbox;
    `,
  },
  {
    version: 7,
    description: "each printer's last print, kept when retention prunes its jobs",
    sql: `
      -- Issue 43: the last successful print per printer role (status, metrics, the page) was read
      -- from the printed jobs, so a printer unused for longer than the retention (a bar printer
      -- over the holidays) showed "never printed" once its jobs were pruned. Written only when
      -- jobs are pruned, never on the print path (one more page per printed job, issue 16).
      CREATE TABLE printer_activity (
        printer TEXT PRIMARY KEY,
        last_printed_at INTEGER NOT NULL
      ) WITHOUT ROWID;
      INSERT INTO printer_activity (printer, last_printed_at)
        SELECT printer, MAX(printed_at) FROM jobs
        WHERE state = 'printed' AND printed_at IS NOT NULL GROUP BY printer;
    `,
  },
];

export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

/** The highest version applied, 0 for an empty database. */
export function currentVersion(db: Database): number {
  const table = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'")
    .get();
  if (!table) return 0;
  const row = db.prepare('SELECT MAX(version) AS v FROM schema_version').get() as {
    v: number | null;
  };
  return row.v ?? 0;
}

/**
 * Brings the database to `SCHEMA_VERSION`. Refuses a database from a newer agent: running old
 * code on a newer schema could misread it, and a downgrade is a person's decision.
 */
export function migrate(db: Database, now: number): { from: number; to: number } {
  const from = currentVersion(db);
  if (from > SCHEMA_VERSION) {
    throw new AgentError(
      'STORE_FAILED',
      `the job database has schema version ${from}, newer than this agent's ${SCHEMA_VERSION}: upgrade the agent`,
      { retryable: false },
    );
  }
  for (const migration of MIGRATIONS) {
    if (migration.version <= from) continue;
    db.transaction(() => {
      db.exec(
        'CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at INTEGER NOT NULL)',
      );
      db.exec(migration.sql);
      db.prepare(
        'INSERT INTO schema_version (version, description, applied_at) VALUES (?, ?, ?)',
      ).run(migration.version, migration.description, now);
    }).immediate();
    faultPoint('after-migration');
  }
  return { from, to: SCHEMA_VERSION };
}
