/**
 * Migrations: a database written by the first released schema (version 1), built here by hand
 * with that schema's SQL as it shipped, opens in today's agent with its jobs, outbox and cursor
 * intact and working; a database from a newer agent is refused.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AgentError } from '../../src/errors.js';
import Database from '../../src/host/sqlite.js';
import { SCHEMA_VERSION } from '../../src/jobs/migrations.js';
import { DATABASE_FILE, JobStore } from '../../src/jobs/store.js';
import { instruction, tempDir } from './fixtures.js';

/** Schema version 1 exactly as released: do not "fix" it, it is what databases in the field hold. */
const V1_SQL = `
  CREATE TABLE schema_version (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at INTEGER NOT NULL);
  CREATE TABLE jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    source TEXT NOT NULL CHECK (source IN ('mqtt', 'catch-up', 'command', 'local')),
    kind TEXT NOT NULL CHECK (kind IN ('receipt', 'reprint', 'test')),
    job_id TEXT NOT NULL,
    order_no TEXT,
    command_id TEXT,
    printer TEXT NOT NULL,
    payload_type TEXT NOT NULL CHECK (payload_type IN ('instruction', 'record', 'command')),
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
  INSERT INTO schema_version VALUES (1, 'jobs with dedupe keys, outbox, meta', 1000);
`;

function v1Database(dir: string): void {
  const db = new Database(join(dir, DATABASE_FILE));
  try {
    db.exec(V1_SQL);
    const insert = db.prepare(
      `INSERT INTO jobs (source, kind, job_id, order_no, printer, payload_type, payload, state,
         attempts, last_error_code, last_error_message, created_at, updated_at)
       VALUES ('mqtt', 'receipt', ?, ?, 'receipt', 'instruction', ?, ?, ?, ?, ?, ?, ?)`,
    );
    insert.run(
      'P-00001',
      'O-00001',
      JSON.stringify(instruction(1)),
      'printed',
      1,
      null,
      null,
      5000,
      6000,
    );
    insert.run(
      'P-00002',
      'O-00002',
      JSON.stringify(instruction(2)),
      'waiting',
      1,
      'PAPER_OUT',
      'paper out',
      7000,
      8000,
    );
    insert.run(
      'P-00003',
      'O-00003',
      JSON.stringify(instruction(3)),
      'queued',
      0,
      null,
      null,
      9000,
      9000,
    );
    db.prepare("INSERT INTO outbox (kind, payload, created_at) VALUES ('job', ?, 9000)").run(
      JSON.stringify({ jobId: 'P-00003', state: 'queued' }),
    );
    db.prepare("INSERT INTO meta VALUES ('catch-up.lastOrderNo', 'O-00003')").run();
  } finally {
    db.close();
  }
}

describe('job store migrations', () => {
  it('upgrades a version 1 database, keeping every job, the outbox and the cursor', () => {
    const dir = tempDir('migrate');
    v1Database(dir);
    const store = JobStore.open({ stateDir: dir });
    try {
      const raw = new Database(store.path, { readonly: true });
      const versions = raw.prepare('SELECT version FROM schema_version ORDER BY version').all();
      raw.close();
      assert.deepEqual(
        versions.map((v) => (v as { version: number }).version),
        Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
      );
      // The old file was in rollback-journal mode: opening switched it to WAL + FULL.
      assert.equal(store.pragmas().journalMode, 'wal');
      assert.equal(store.pragmas().synchronous, 2);

      const [printed, waiting, queued] = [store.get(1)!, store.get(2)!, store.get(3)!];
      assert.equal(printed.state, 'printed');
      assert.equal(printed.printedAt, 6000, 'printed_at filled from updated_at');
      assert.equal(printed.finishedAt, 6000);
      assert.equal(waiting.queuedAt, 7000, 'queued_at filled from created_at');
      assert.deepEqual(waiting.lastError, { code: 'PAPER_OUT', message: 'paper out' });
      assert.deepEqual(queued.markings, {});
      assert.deepEqual(queued.warnings, []);
      assert.equal(queued.held, false);
      assert.equal(store.getCatchUpCursor(), 'O-00003');
      assert.equal(store.drainOutbox().length, 1);

      // The queue works on the migrated rows: FIFO head, transitions, dedupe, retention.
      assert.equal(store.head('receipt')!.id, 2);
      assert.equal(store.enqueueInstruction(instruction(1)).status, 'duplicate');
      assert.equal(
        store.enqueueInstruction(instruction(9, { orderNo: 'O-00003' })).status,
        'duplicate',
      );
      store.markPrinting(2, { markings: {}, warnings: [] });
      store.markPrinted(2);
      assert.equal(store.pruneFinished(Number.MAX_SAFE_INTEGER), 2);
      assert.equal(store.enqueueInstruction(instruction(1)).status, 'duplicate');
      assert.equal(store.enqueueInstruction(instruction(4)).status, 'inserted');
      assert.equal(store.integrityCheck(), 'ok');
    } finally {
      store.close();
    }
    // Opening again applies nothing more.
    const again = JobStore.open({ stateDir: dir });
    assert.equal(again.get(4)!.jobId, 'P-00004');
    again.close();
  });

  it('keeps outbox ids growing past the highest one AUTOINCREMENT handed out (schema 6)', () => {
    const dir = tempDir('migrate-outbox');
    v1Database(dir);
    // Published and deleted under AUTOINCREMENT: the rows are gone, sqlite_sequence remembers 41.
    const db = new Database(join(dir, DATABASE_FILE));
    const insert = db.prepare(
      "INSERT INTO outbox (kind, payload, created_at) VALUES ('job', '{}', 9000)",
    );
    for (let i = 0; i < 40; i++) insert.run();
    db.prepare('DELETE FROM outbox WHERE id > 1').run();
    assert.deepEqual(db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'outbox'").get(), {
      seq: 41,
    });
    db.close();
    const store = JobStore.open({ stateDir: dir });
    try {
      // The unpublished row of version 1 is still there, and nothing else is read.
      assert.deepEqual(
        store.drainOutbox().map((e) => e.id),
        [1],
      );
      store.enqueueInstruction(instruction(4));
      assert.deepEqual(
        store.drainOutbox().map((e) => e.id),
        [1, 42],
        'the next event takes 42: a reader that saw 41 before the upgrade misses nothing',
      );
      assert.equal(store.integrityCheck(), 'ok');
    } finally {
      store.close();
    }
  });

  it("keeps each printer's last print when retention prunes its jobs (schema 7)", () => {
    const dir = tempDir('migrate-activity');
    v1Database(dir);
    const store = JobStore.open({ stateDir: dir });
    try {
      // Migrated from the printed job of version 1 (printed_at filled from updated_at, 6000).
      const lastPrint = () => store.queueStats(['receipt'])[0]!.lastPrintedAt;
      assert.equal(lastPrint(), 6000);
      // Every printed job pruned: the last print is still known (it used to become null).
      assert.equal(store.purgePrinted(Number.MAX_SAFE_INTEGER), 1);
      assert.equal(store.get(1), null);
      assert.equal(lastPrint(), 6000);
      // A newer print wins over the remembered one, pruned or not.
      store.markPrinting(2, { markings: {}, warnings: [] });
      store.markPrinted(2);
      const printedAt = store.get(2)!.printedAt!;
      assert.ok(printedAt > 6000);
      assert.equal(lastPrint(), printedAt);
      assert.equal(store.pruneFinished(Number.MAX_SAFE_INTEGER), 1);
      assert.equal(lastPrint(), printedAt);
    } finally {
      store.close();
    }
  });

  it('refuses a database written by a newer agent', () => {
    const dir = tempDir('newer');
    JobStore.open({ stateDir: dir }).close();
    const db = new Database(join(dir, DATABASE_FILE));
    db.prepare('INSERT INTO schema_version VALUES (?, ?, ?)').run(
      SCHEMA_VERSION + 1,
      'from the future',
      0,
    );
    db.close();
    assert.throws(
      () => JobStore.open({ stateDir: dir }),
      (e: unknown) =>
        e instanceof AgentError &&
        e.code === 'STORE_FAILED' &&
        !e.retryable &&
        /newer than this agent/.test(e.message),
    );
  });
});
