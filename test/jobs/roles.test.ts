/**
 * print-protocol v1.1 §4 in the job store and the spooler (issue 13 item 6): a receipt is one per
 * (orderNo, printer role); migration 3 moves an existing database (unique index and dedupe ledger)
 * to that key; reprints pick the receipt of a role; jobs for a role no printer serves become
 * `waiting` NO_PRINTER_FOR_ROLE (one event each) and print once a printer serves the role; the
 * spooler reports store faults and their end.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { waitFor } from '../../harness/waiting.js';
import { AgentError } from '../../src/errors.js';
import Database from '../../src/host/sqlite.js';
import type { Job } from '../../src/jobs/job.js';
import { MIGRATIONS } from '../../src/jobs/migrations.js';
import { Spooler } from '../../src/jobs/spooler.js';
import { DATABASE_FILE, JobStore } from '../../src/jobs/store.js';
import { type JobEvent, jobEventSchema } from '../../src/protocol/print-protocol.js';
import {
  acknowledged,
  emulatedPrinter,
  instruction,
  OPTIONS,
  openStore,
  PROFILE,
  printedReceipts,
  tempDir,
} from './fixtures.js';

const cleanup: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const fn of cleanup.reverse()) await fn();
});

function events(store: JobStore): JobEvent[] {
  return store
    .drainOutbox(10_000)
    .filter((e) => e.kind === 'job')
    .map((e) => jobEventSchema.parse(e.payload));
}

function clearOutbox(store: JobStore): void {
  acknowledged(store, store.drainOutbox(10_000));
}

describe('job store: one receipt per order and printer role', () => {
  it('a kitchen job does not take the receipt slot; a second receipt for the role is duplicate', () => {
    const store = openStore('roles-dedupe');
    try {
      assert.equal(
        store.enqueueInstruction(instruction(1, { printer: 'kitchen' })).status,
        'inserted',
      );
      assert.equal(store.enqueueInstruction(instruction(1, { jobId: 'P-R' })).status, 'inserted');
      const again = store.enqueueInstruction(instruction(1, { jobId: 'P-K2', printer: 'kitchen' }));
      assert.equal(again.status, 'duplicate');
      assert.equal(again.status === 'duplicate' && again.matchedOn, 'orderNo');
      const receipt = store.enqueueInstruction(instruction(1, { jobId: 'P-R2' }));
      assert.equal(receipt.status, 'duplicate');
    } finally {
      store.close();
    }
  });

  it('the dedupe ledger remembers a pruned receipt per role', () => {
    let clock = Date.UTC(2026, 10, 25, 12);
    const store = openStore('roles-ledger', { now: () => clock });
    try {
      const job = store.enqueueInstruction(instruction(2, { printer: 'kitchen' })).job!;
      store.markPrinting(job.id, { markings: {}, warnings: [] });
      store.markPrinted(job.id);
      clock += 1000;
      assert.equal(store.purgePrinted(clock), 1);
      const kitchen = store.enqueueInstruction(
        instruction(2, { jobId: 'P-again', printer: 'kitchen' }),
      );
      assert.equal(kitchen.status, 'duplicate');
      assert.equal(kitchen.status === 'duplicate' && kitchen.existing.pruned, true);
      assert.equal(
        store.enqueueInstruction(instruction(2, { jobId: 'P-rcpt' })).status,
        'inserted',
      );
    } finally {
      store.close();
    }
  });

  it('migration 3: a version 2 database keeps its jobs, and its ledger keys become per role', () => {
    const dir = tempDir('roles-migration');
    const raw = new Database(join(dir, DATABASE_FILE));
    raw.exec(
      'CREATE TABLE schema_version (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at INTEGER NOT NULL)',
    );
    for (const m of MIGRATIONS.filter((x) => x.version <= 2)) {
      raw.exec(m.sql);
      raw
        .prepare('INSERT INTO schema_version VALUES (?, ?, ?)')
        .run(m.version, m.description, 1000);
    }
    raw
      .prepare(
        `INSERT INTO jobs (source, kind, job_id, order_no, printer, payload_type, payload, state, created_at, updated_at)
         VALUES ('mqtt', 'receipt', 'P-OLD', 'O-OLD', 'receipt', 'instruction', ?, 'queued', 1000, 1000)`,
      )
      .run(JSON.stringify(instruction(9, { jobId: 'P-OLD', orderNo: 'O-OLD' })));
    raw
      .prepare(
        `INSERT INTO dedupe_ledger (key_kind, key, job_row, job_id, order_no, command_id, printer, kind, state, created_at, printed_at, pruned_at)
         VALUES ('orderNo', 'O-GONE', 7, 'P-GONE', 'O-GONE', NULL, 'receipt', 'receipt', 'printed', 1, 2, 3)`,
      )
      .run();
    raw.close();

    const store = JobStore.open({ stateDir: dir });
    try {
      assert.equal(store.getByJobId('P-OLD')?.state, 'queued');
      assert.deepEqual(store.getByJobId('P-OLD')?.notices, []);
      const gone = store.enqueueInstruction(instruction(10, { jobId: 'P-X', orderNo: 'O-GONE' }));
      assert.equal(gone.status, 'duplicate', 'the receipt role still remembers the pruned order');
      const kitchen = store.enqueueInstruction(
        instruction(10, { jobId: 'P-K', orderNo: 'O-GONE', printer: 'kitchen' }),
      );
      assert.equal(kitchen.status, 'inserted', 'another role is another slot');
      assert.equal(
        store.enqueueInstruction(instruction(11, { jobId: 'P-Y', orderNo: 'O-OLD' })).status,
        'duplicate',
      );
    } finally {
      store.close();
    }
  });

  it("a reprint takes the role's receipt; without a role the receipt role's, else the oldest", () => {
    const store = openStore('roles-reprint');
    try {
      const kitchen = store.enqueueInstruction(instruction(3, { printer: 'kitchen' })).job!;
      const bar = store.enqueueInstruction(instruction(3, { jobId: 'P-B', printer: 'bar' })).job!;
      assert.equal(store.getReceipt('O-00003')?.id, kitchen.id, 'no receipt role: the oldest');
      const r1 = store.enqueueReprint('O-00003');
      assert.equal(r1.job?.sourceJob, kitchen.id);
      assert.equal(r1.job?.printer, 'kitchen');
      const receipt = store.enqueueInstruction(instruction(3, { jobId: 'P-R' })).job!;
      assert.equal(store.getReceipt('O-00003')?.id, receipt.id, 'the receipt role first');
      assert.equal(store.getReceipt('O-00003', 'bar')?.id, bar.id);
      const r2 = store.enqueueReprint('O-00003', { printer: 'bar' });
      assert.equal(r2.job?.sourceJob, bar.id);
      const viaCommand = store.enqueueCommand({
        commandId: 'C-1',
        type: 'reprint',
        orderNo: 'O-00003',
      });
      assert.equal(viaCommand.job?.sourceJob, receipt.id);
      // A role without a receipt of its own: the default choice, printed on that printer.
      const r3 = store.enqueueReprint('O-00003', { printer: 'terrace' });
      assert.equal(r3.job?.sourceJob, receipt.id);
      assert.equal(r3.job?.printer, 'terrace');
    } finally {
      store.close();
    }
  });
});

describe('job store: jobs for a role no printer serves', () => {
  it('markUnrouted: waiting NO_PRINTER_FOR_ROLE, one event per job, held jobs left alone', () => {
    const store = openStore('unrouted');
    try {
      store.enqueueInstruction(instruction(1, { printer: 'kitchen' }));
      store.enqueueInstruction(instruction(2, { printer: 'kitchen' }));
      store.enqueueInstruction(instruction(3));
      clearOutbox(store);
      const reason = { code: 'NO_PRINTER_FOR_ROLE', message: 'no printer serves kitchen' };
      const parked = store.markUnrouted('kitchen', reason);
      assert.deepEqual(
        parked.map((j) => [j.jobId, j.state, j.lastError?.code]),
        [
          ['P-00001', 'waiting', 'NO_PRINTER_FOR_ROLE'],
          ['P-00002', 'waiting', 'NO_PRINTER_FOR_ROLE'],
        ],
      );
      assert.deepEqual(store.markUnrouted('kitchen', reason), [], 'a second sweep changes nothing');
      const evs = events(store);
      assert.deepEqual(
        evs.map((e) => [e.jobId, e.state, e.reason?.code]),
        [
          ['P-00001', 'waiting', 'NO_PRINTER_FOR_ROLE'],
          ['P-00002', 'waiting', 'NO_PRINTER_FOR_ROLE'],
        ],
      );
      assert.equal(store.getByJobId('P-00003')?.state, 'queued');
      const stats = store.queueStats(['receipt']);
      assert.deepEqual(
        stats.map((s) => [s.printer, s.pending]),
        [
          ['kitchen', 2],
          ['receipt', 1],
        ],
      );
    } finally {
      store.close();
    }
  });
});

describe('spooler: unserved roles and faults', () => {
  it('parks unserved jobs at start and on insert, and prints them once a printer serves the role', async () => {
    const dir = tempDir('spool-unrouted');
    const store = JobStore.open({ stateDir: dir });
    cleanup.push(() => store.close());
    const rig = await emulatedPrinter();
    cleanup.push(() => rig.close());
    store.enqueueInstruction(instruction(1, { printer: 'kitchen' }));
    const first = new Spooler({
      store,
      printers: [{ id: 'receipt', printer: rig.printer, profile: PROFILE }],
      receiptOptions: OPTIONS,
      pollIntervalMs: 50,
    });
    const unrouted: Array<[string, string[]]> = [];
    first.on('unrouted', (role, jobs) => unrouted.push([role, jobs.map((j: Job) => j.jobId)]));
    first.start();
    assert.deepEqual(unrouted, [['kitchen', ['P-00001']]], 'parked at start');
    store.enqueueInstruction(instruction(2, { printer: 'kitchen' }));
    store.enqueueInstruction(instruction(3));
    await waitFor('the second parked', () => unrouted.length === 2);
    assert.deepEqual(unrouted[1], ['kitchen', ['P-00002']]);
    await waitFor('the receipt printed', () => store.getByJobId('P-00003')?.state === 'printed');
    assert.equal(store.getByJobId('P-00001')?.state, 'waiting');
    await first.stop();

    // "The agent restarted with a new config": the printer now serves kitchen too.
    const second = new Spooler({
      store,
      printers: [
        { id: 'receipt', printer: rig.printer, profile: PROFILE },
        { id: 'kitchen', printer: rig.printer, profile: PROFILE },
      ],
      receiptOptions: OPTIONS,
      pollIntervalMs: 50,
    });
    cleanup.push(() => second.stop());
    second.start();
    await waitFor(
      'both kitchen jobs printed',
      () =>
        store.getByJobId('P-00001')?.state === 'printed' &&
        store.getByJobId('P-00002')?.state === 'printed',
    );
    assert.deepEqual(
      printedReceipts(rig.emulator).map((r) => r.orderNo),
      ['O-00003', 'O-00001', 'O-00002'],
    );
  });

  it('a store fault is reported with printer and jobId, and recovered once the store answers', async () => {
    const real = openStore('spool-fault');
    cleanup.push(() => real.close());
    const rig = await emulatedPrinter();
    cleanup.push(() => rig.close());
    // The database refuses the `printing` write while `failing` (as a broken disk would).
    let failing = true;
    const store = new Proxy(real, {
      get(target, property) {
        if (property === 'markPrinting' && failing)
          return () => {
            throw new AgentError(
              'STORE_FAILED',
              'job database error while moving a job: disk I/O error',
            );
          };
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const s = new Spooler({
      store,
      printers: [{ id: 'receipt', printer: rig.printer, profile: PROFILE }],
      receiptOptions: OPTIONS,
      pollIntervalMs: 20,
      backoff: { initialMs: 20, maxMs: 100 },
    });
    cleanup.push(() => s.stop());
    const faults: Array<{ code: string; printer: string; jobId: string | null }> = [];
    let recovered = 0;
    s.on('fault', (error, context) =>
      faults.push({ code: (error as AgentError).code, ...context }),
    );
    s.on('recovered', () => recovered++);
    real.enqueueInstruction(instruction(1));
    s.start();
    await waitFor('a fault reported', () => faults.length >= 2);
    assert.deepEqual(faults[0], { code: 'STORE_FAILED', printer: 'receipt', jobId: 'P-00001' });
    assert.equal(recovered, 0);
    failing = false;
    await waitFor('printed', () => real.getByJobId('P-00001')?.state === 'printed');
    assert.equal(recovered, 1, 'the fault was cleared once');
    assert.equal(rig.emulator.tickets().length, 1);
  });
});
