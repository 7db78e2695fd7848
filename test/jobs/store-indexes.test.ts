/**
 * The job store's indexes (migration 5, issue 16): every index a commit changes is one more page
 * written to the WAL and synced, so the store keeps few, and every query it runs must still find
 * its rows through one of them, never by reading the whole table (a store keeps thousands of
 * finished jobs, with their payloads, on a Pi's SD card).
 *
 * 1. Each statement the store prepared while its read and write paths ran is checked with
 *    EXPLAIN QUERY PLAN: no full scan of `jobs`, except the unfiltered newest-first listing
 *    (`jobs list`), which reads the table backwards and stops at its limit.
 * 2. WAL pages written per printed job (enqueue, printing, printed, with the outbox as the
 *    reporter leaves it), counted from the WAL file with checkpoints off: 17.6 with the indexes of
 *    schema 4, 15.5 with those of schema 5, 13.5 with schema 6's outbox without AUTOINCREMENT
 *    (whose sqlite_sequence page every commit with an event wrote). A new index on `jobs` or the
 *    outbox, or a sequence page, shows here.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { Database as SqliteDatabase, Statement } from 'better-sqlite3';
import type { JobStore } from '../../src/jobs/store.js';
import { instruction, openStore } from './fixtures.js';

/** The store's SQLite handle and its prepared statements (internals, read for this test only). */
function internals(store: JobStore): { raw: SqliteDatabase; sql: string[] } {
  const db = (
    store as unknown as { db: { db: SqliteDatabase; statements: Map<string, Statement> } }
  ).db;
  return { raw: db.db, sql: [...db.statements.keys()] };
}

const RENDERED = { markings: {}, warnings: [], notices: [] };

/** A store with jobs in every state, through the same calls the agent makes. */
function busyStore(prefix: string, jobs: number): JobStore {
  const store = openStore(prefix, { memory: true });
  for (let i = 0; i < jobs; i++) {
    const inserted = store.enqueueInstruction(instruction(i));
    assert.equal(inserted.status, 'inserted');
    const id = inserted.job.id;
    if (i % 4 === 0) continue; // queued
    store.markPrinting(id, RENDERED);
    if (i % 4 === 1) store.markPrinted(id);
    else if (i % 4 === 2) store.markFailed(id, { code: 'PRINTER_ERROR', message: 'cover open' });
    // i % 4 === 3: left printing, recovered below
  }
  return store;
}

describe('job store indexes (issue 16)', () => {
  it('every query the store runs finds its jobs through an index', () => {
    const store = busyStore('plans', 400);
    try {
      store.head('receipt');
      store.countByState();
      store.queueStats(['receipt', 'kitchen']);
      store.pendingPrinters();
      store.list({});
      store.list({ state: 'printed' });
      store.list({ state: 'queued', printer: 'receipt' });
      store.recoverInterrupted('reprint-marked');
      store.markUnrouted('receipt', { code: 'PRINTER_UNKNOWN', message: 'no printer' });
      store.pruneFinished(Date.now() + 1, 10);
      store.purgePrinted(Date.now() + 1, 10);

      const { raw, sql } = internals(store);
      const onJobs = sql.filter((s) => /\bFROM jobs\b|^\s*UPDATE jobs\b/.test(s));
      assert.ok(onJobs.length >= 12, `${onJobs.length} statements on jobs ran`);
      for (const text of onJobs) {
        // Positional (`?`) or named (`@name`) parameters, all bound to null.
        const named = [...text.matchAll(/@(\w+)/g)].map((m) => m[1] as string);
        const args = named.length
          ? [Object.fromEntries(named.map((name) => [name, null]))]
          : Array((text.match(/\?/g) ?? []).length).fill(null);
        const plan = (
          raw.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...args) as Array<{ detail: string }>
        ).map((row) => row.detail);
        const oneLine = text.replace(/\s+/g, ' ').trim();
        const fullScan = plan.some((step) => /^SCAN jobs$/.test(step));
        if (oneLine === 'SELECT * FROM jobs ORDER BY id DESC LIMIT ?') continue;
        assert.ok(!fullScan, `${oneLine}\n  reads the whole table: ${plan.join(' | ')}`);
      }
    } finally {
      store.close();
    }
  });

  it('counts every state through the two partial indexes', () => {
    const store = busyStore('counts', 40);
    try {
      // 40 jobs: 10 queued, 10 printed, 10 failed, 10 printing.
      assert.deepEqual(store.countByState(), {
        queued: 10,
        waiting: 0,
        printing: 10,
        printed: 10,
        unconfirmed: 0,
        failed: 10,
      });
    } finally {
      store.close();
    }
  });

  it('a printed job writes at most 14 WAL pages (15.5 with the AUTOINCREMENT outbox of schema 5, 17.6 with the indexes of schema 4)', () => {
    const store = openStore('wal-pages', { memory: true });
    try {
      const { raw } = internals(store);
      raw.pragma('wal_autocheckpoint = 0');
      const pageSize = Number(raw.pragma('page_size', { simple: true }));
      const walFrames = () => (statSync(`${store.path}-wal`).size - 32) / (pageSize + 24);
      const printOne = (n: number) => {
        const inserted = store.enqueueInstruction(instruction(n));
        assert.equal(inserted.status, 'inserted');
        store.markPrinting(inserted.job.id, RENDERED);
        store.markPrinted(inserted.job.id);
        // As the reporter does after the PUBACKs: the rows go with the next event's commit.
        const published = store.drainOutbox(100).at(-1);
        if (published) store.acknowledgeOutbox(published.id);
      };
      // The first jobs grow the tables' trees; count once they are there.
      for (let i = 0; i < 100; i++) printOne(i);
      const before = walFrames();
      const jobs = 300;
      for (let i = 100; i < 100 + jobs; i++) printOne(i);
      const perJob = (walFrames() - before) / jobs;
      assert.ok(perJob <= 14, `${perJob.toFixed(2)} WAL pages per printed job`);
      assert.ok(perJob >= 3, `${perJob.toFixed(2)}: three commits write at least a page each`);
    } finally {
      store.close();
    }
  });
});
