/**
 * Contract tests of the job store on a real SQLite file in a temp dir: durability settings,
 * inserts and dedupe, transitions with their outbox events in the same transaction, reopening,
 * reading APIs, the outbox, the catch-up cursor, recovery of interrupted jobs and retention.
 * Migrations and disk full have their own files.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AgentError } from '../../src/errors.js';
import Database from '../../src/host/sqlite.js';
import { SCHEMA_VERSION } from '../../src/jobs/migrations.js';
import { runRetention } from '../../src/jobs/retention.js';
import { DATABASE_FILE, JobStore } from '../../src/jobs/store.js';
import { type OrderRecord, orderRecordSchema } from '../../src/protocol/order-record.js';
import { type JobEvent, jobEventSchema } from '../../src/protocol/print-protocol.js';
import { ORDERS_DIR } from '../helpers/receipts.js';
import { acknowledged, instruction, openStore, tempDir } from './fixtures.js';

function events(store: JobStore): JobEvent[] {
  return store
    .drainOutbox(10_000)
    .filter((e) => e.kind === 'job')
    .map((e) => jobEventSchema.parse(e.payload));
}

/** Acks everything pending, as the reporter does after publishing. */
function clearOutbox(store: JobStore): void {
  acknowledged(store, store.drainOutbox(10_000));
}

function rejectsWith(code: string) {
  return (e: unknown) => {
    assert.ok(e instanceof AgentError, `expected an AgentError, got ${String(e)}`);
    assert.equal(e.code, code);
    return true;
  };
}

const record: OrderRecord = orderRecordSchema.parse(
  JSON.parse(readFileSync(join(ORDERS_DIR, 'record-options-remark.json'), 'utf8')),
);

describe('job store: durability settings', () => {
  it('runs in WAL with synchronous=FULL, a busy timeout, incremental auto-vacuum and a 2 MB page cache', () => {
    const store = openStore('pragmas', { busyTimeoutMs: 1234 });
    try {
      assert.deepEqual(store.pragmas(), {
        journalMode: 'wal',
        synchronous: 2,
        busyTimeoutMs: 1234,
        autoVacuum: 2,
        // Not the driver's 16 MB (issue 16): 2,000 KiB, SQLite's own default.
        cacheSize: -2000,
      });
      assert.equal(store.integrityCheck(), 'ok');
      const raw = new Database(store.path, { readonly: true });
      try {
        const version = raw.prepare('SELECT MAX(version) AS v FROM schema_version').get() as {
          v: number;
        };
        assert.equal(version.v, SCHEMA_VERSION);
      } finally {
        raw.close();
      }
    } finally {
      store.close();
    }
  });

  it('removes published outbox entries without an fsync of their own, and stays FULL after', () => {
    // The ack commits with synchronous=NORMAL (a power cut only re-publishes); every other write
    // must still be FULL, so the setting has to come back after each ack.
    const store = openStore('ack-sync');
    try {
      store.enqueueInstruction(instruction(1));
      store.enqueueInstruction(instruction(2));
      const pending = store.drainOutbox(10);
      assert.equal(pending.length, 2);
      acknowledged(store, [pending[0]!]);
      assert.equal(store.pragmas().synchronous, 2);
      assert.deepEqual(
        store.drainOutbox(10).map((e) => e.id),
        [pending[1]!.id],
      );
      acknowledged(store, [pending[1]!]);
      assert.equal(store.pragmas().synchronous, 2);
      assert.equal(store.outboxSize(), 0);
    } finally {
      store.close();
    }
  });

  it('forgets acknowledged entries at once, deletes them with the next commit or the sweep, re-sends them after a crash', () => {
    const dir = tempDir('acknowledge');
    const rows = () => {
      const db = new Database(join(dir, DATABASE_FILE), { readonly: true });
      try {
        return (db.prepare('SELECT id FROM outbox ORDER BY id').all() as Array<{ id: number }>).map(
          (r) => r.id,
        );
      } finally {
        db.close();
      }
    };
    let fourthId = 0;
    let store = JobStore.open({ stateDir: dir });
    try {
      store.enqueueInstruction(instruction(1));
      store.enqueueInstruction(instruction(2));
      const [first, second] = store.drainOutbox(10);
      store.acknowledgeOutbox(first!.id);
      // Not read nor counted again, though the row is still in the file.
      assert.deepEqual(
        store.drainOutbox(10).map((e) => e.id),
        [second!.id],
      );
      assert.equal(store.outboxSize(), 1);
      assert.deepEqual(rows(), [first!.id, second!.id]);
      // The next event's commit deletes it.
      store.enqueueInstruction(instruction(3));
      const third = store.drainOutbox(10)[1]!;
      assert.deepEqual(rows(), [second!.id, third.id]);
      // With no commit after it, the sweep does, without an fsync of its own; FULL after it.
      store.acknowledgeOutbox(third.id);
      assert.equal(store.outboxSize(), 0);
      assert.deepEqual(rows(), [second!.id, third.id]);
      store.sweepOutbox();
      // The highest row stays, marked sent, so that ids keep growing (schema 6: no AUTOINCREMENT).
      assert.deepEqual(rows(), [third.id]);
      assert.equal(store.outboxSize(), 0);
      assert.deepEqual(store.drainOutbox(10), []);
      assert.equal(store.pragmas().synchronous, 2);

      // Acknowledged, then the process dies before any deletion: published again (at-least-once).
      store.enqueueInstruction(instruction(4));
      const fourth = store.drainOutbox(10)[0]!;
      assert.equal(fourth.id, third.id + 1, 'an id is never handed out twice');
      fourthId = fourth.id;
      assert.equal((fourth.payload as { orderNo: string }).orderNo, instruction(4).orderNo);
      store.acknowledgeOutbox(fourth.id);
      assert.equal(store.outboxSize(), 0);
    } finally {
      store.close();
    }
    store = JobStore.open({ stateDir: dir });
    try {
      const again = store.drainOutbox(10);
      assert.deepEqual(
        again.map((e) => e.id),
        [fourthId],
        'the published row kept as sent is not published again',
      );
      assert.equal(again[0]!.json.includes(instruction(4).orderNo), true);
    } finally {
      store.close();
    }
  });

  it('refuses to create a database when told the file must exist (the CLI)', () => {
    const dir = tempDir('missing');
    assert.throws(
      () => JobStore.open({ stateDir: dir, create: false }),
      (e: unknown) => {
        rejectsWith('STORE_FAILED')(e);
        assert.match((e as Error).message, /no job database at .*jobs\.db/);
        return true;
      },
    );
  });
});

describe('job store: inserts and dedupe (reliability guarantee 3)', () => {
  it('stores an instruction as queued, with its queued event in the outbox', () => {
    const store = openStore('insert');
    try {
      const raw = JSON.stringify(instruction(1));
      const result = store.enqueueInstruction(instruction(1), { raw });
      assert.equal(result.status, 'inserted');
      const job = result.job!;
      assert.equal(job.state, 'queued');
      assert.equal(job.kind, 'receipt');
      assert.equal(job.source, 'mqtt');
      assert.equal(job.jobId, 'P-00001');
      assert.equal(job.orderNo, 'O-00001');
      assert.equal(job.printer, 'receipt');
      assert.equal(job.attempts, 0);
      assert.deepEqual(job.payload, JSON.parse(raw));
      const [event, ...rest] = events(store);
      assert.equal(rest.length, 0);
      assert.equal(event!.state, 'queued');
      assert.equal(event!.jobId, 'P-00001');
      assert.equal(event!.orderNo, 'O-00001');
      assert.equal(event!.attempt, 0);
      assert.equal(event!.reason, null);
    } finally {
      store.close();
    }
  });

  it('returns duplicate for the same jobId and leaves the stored job and the outbox unchanged', () => {
    const store = openStore('dup-job');
    try {
      const first = store.enqueueInstruction(instruction(1));
      assert.equal(first.status, 'inserted');
      store.markPrinting(first.job!.id, { markings: {}, warnings: [] });
      const before = store.get(first.job!.id);
      clearOutbox(store);
      const again = store.enqueueInstruction(instruction(1, { printer: 'kitchen' }));
      assert.equal(again.status, 'duplicate');
      assert.equal(again.status === 'duplicate' && again.matchedOn, 'jobId');
      assert.deepEqual(again.job, before);
      assert.deepEqual(store.get(first.job!.id), before);
      assert.equal(store.list().length, 1);
      assert.equal(again.status === 'duplicate' && again.existing.state, 'printing');
      // Nothing written: answering the duplicate is the caller's decision (the inbox does).
      assert.equal(store.outboxSize(), 0);
    } finally {
      store.close();
    }
  });

  it('allows one payment receipt per orderNo, whichever path brought it (fault matrix 13)', () => {
    const store = openStore('dup-order');
    try {
      const mqtt = store.enqueueInstruction(instruction(7));
      const before = store.get(mqtt.job!.id);
      const other = store.enqueueInstruction(instruction(8, { orderNo: 'O-00007' }));
      assert.equal(other.status, 'duplicate');
      assert.equal(other.status === 'duplicate' && other.matchedOn, 'orderNo');
      const catchUp = store.enqueueRecord({ ...record, orderInnerNo: 'O-00007' });
      assert.equal(catchUp.status, 'duplicate');
      assert.deepEqual(store.get(mqtt.job!.id), before);
      assert.equal(store.list().length, 1);
      // The catch-up path inserts its own orders, deduped by orderNo and by its derived jobId.
      const fresh = store.enqueueRecord(record);
      assert.equal(fresh.status, 'inserted');
      assert.equal(fresh.job!.jobId, `catch-up:${record.orderInnerNo}`);
      assert.equal(fresh.job!.payloadType, 'record');
      assert.equal(store.enqueueRecord(record).status, 'duplicate');
    } finally {
      store.close();
    }
  });

  it('allows one job per commandId; reprints and test pages do not take the receipt slot', () => {
    const store = openStore('dup-command');
    try {
      store.enqueueInstruction(instruction(3));
      const reprint = store.enqueueCommand({
        commandId: 'C-1',
        type: 'reprint',
        orderNo: 'O-00003',
      });
      assert.equal(reprint.status, 'inserted');
      assert.equal(reprint.job!.kind, 'reprint');
      assert.equal(reprint.job!.commandId, 'C-1');
      const before = store.get(reprint.job!.id);
      const again = store.enqueueCommand({ commandId: 'C-1', type: 'reprint', orderNo: 'O-00003' });
      assert.equal(again.status, 'duplicate');
      assert.equal(again.status === 'duplicate' && again.matchedOn, 'jobId');
      // Same commandId, different type: still the same command.
      const sameId = store.enqueueCommand({ commandId: 'C-1', type: 'test-print' });
      assert.equal(sameId.status, 'duplicate');
      assert.deepEqual(store.get(reprint.job!.id), before);
      const test = store.enqueueCommand({ commandId: 'C-2', type: 'test-print', printer: 'bar' });
      assert.equal(test.status, 'inserted');
      assert.equal(test.job!.kind, 'test');
      assert.equal(test.job!.printer, 'bar');
      assert.equal(events(store).filter((e) => e.state === 'duplicate').length, 0);
    } finally {
      store.close();
    }
  });

  it('numbers reprints and gives the original print time; an unknown order is JOB_NOT_FOUND', () => {
    let clock = Date.UTC(2026, 10, 25, 4, 2, 15);
    const store = openStore('reprint', { now: () => clock });
    try {
      const original = store.enqueueInstruction(instruction(4)).job!;
      store.markPrinting(original.id, { markings: {}, warnings: [] });
      store.markPrinted(original.id);
      clock += 60_000;
      const one = store.enqueueReprint('O-00004');
      const two = store.enqueueReprint('O-00004', { printer: 'bar' });
      assert.equal(one.status, 'inserted');
      assert.equal(two.status, 'inserted');
      const printedLocal = new Date(Date.UTC(2026, 10, 25, 4, 2, 15));
      const p = (n: number) => String(n).padStart(2, '0');
      const expected = `${printedLocal.getFullYear()}-${p(printedLocal.getMonth() + 1)}-${p(printedLocal.getDate())} ${p(printedLocal.getHours())}:${p(printedLocal.getMinutes())}:${p(printedLocal.getSeconds())}`;
      assert.deepEqual(one.job!.markings, { reprint: { count: 1, originalTime: expected } });
      assert.deepEqual(two.job!.markings, { reprint: { count: 2, originalTime: expected } });
      assert.equal(one.job!.printer, 'receipt');
      assert.equal(two.job!.printer, 'bar');
      assert.equal(one.job!.sourceJob, original.id);
      const count = store.list().length;
      assert.throws(() => store.enqueueReprint('O-99999'), rejectsWith('JOB_NOT_FOUND'));
      assert.equal(store.list().length, count, 'nothing stored for the unknown order');
    } finally {
      store.close();
    }
  });
});

describe('job store: transitions and their events (print-protocol §6)', () => {
  it('writes one event per transition, with the attempt number and the markings', () => {
    const store = openStore('transitions');
    try {
      const { job } = store.enqueueInstruction(instruction(1));
      const id = job!.id;
      store.markPrinting(id, { markings: {}, warnings: ['w1'] });
      store.markWaiting(
        id,
        { code: 'PRINTER_DISCONNECTED', message: 'link dropped' },
        Date.now() + 1000,
        { possibleDuplicate: true },
      );
      store.markPrinting(id, { markings: { possibleDuplicate: true }, warnings: [] });
      const printed = store.markPrinted(id);
      assert.equal(printed.state, 'printed');
      assert.equal(printed.attempts, 2);
      assert.notEqual(printed.printedAt, null);
      assert.equal(printed.lastError, null);
      const list = events(store);
      assert.deepEqual(
        list.map((e) => [e.state, e.attempt, e.reason?.code ?? null, e.markings ?? []]),
        [
          ['queued', 0, null, []],
          ['printing', 1, null, []],
          ['waiting', 1, 'PRINTER_DISCONNECTED', ['POSSIBLE DUPLICATE']],
          ['printing', 2, null, ['POSSIBLE DUPLICATE']],
          ['printed', 2, null, ['POSSIBLE DUPLICATE']],
        ],
      );
    } finally {
      store.close();
    }
  });

  it('reports a retry that fails for the same reason once, and a new reason again', () => {
    const store = openStore('waiting');
    try {
      const id = store.enqueueInstruction(instruction(1)).job!.id;
      clearOutbox(store);
      store.markWaiting(id, { code: 'PAPER_OUT', message: 'a' }, 1);
      store.markWaiting(id, { code: 'PAPER_OUT', message: 'b' }, 2);
      store.markWaiting(id, { code: 'COVER_OPEN', message: 'c' }, 3);
      const job = store.get(id)!;
      assert.equal(job.nextAttemptAt, 3);
      assert.deepEqual(job.lastError, { code: 'COVER_OPEN', message: 'c' });
      assert.deepEqual(
        events(store).map((e) => e.reason?.code),
        ['PAPER_OUT', 'COVER_OPEN'],
      );
    } finally {
      store.close();
    }
  });

  it('refuses transitions the state machine does not allow, without an event', () => {
    const store = openStore('conflict');
    try {
      const id = store.enqueueInstruction(instruction(1)).job!.id;
      assert.throws(() => store.markPrinted(id), rejectsWith('JOB_STATE_CONFLICT'));
      store.markPrinting(id, { markings: {}, warnings: [] });
      store.markPrinted(id);
      assert.throws(() => store.retry(id), rejectsWith('JOB_STATE_CONFLICT'));
      assert.throws(
        () => store.markPrinting(id, { markings: {}, warnings: [] }),
        rejectsWith('JOB_STATE_CONFLICT'),
      );
      assert.throws(() => store.markPrinted(9999), rejectsWith('JOB_NOT_FOUND'));
      assert.deepEqual(
        events(store).map((e) => e.state),
        ['queued', 'printing', 'printed'],
      );
    } finally {
      store.close();
    }
  });

  it('commits the state change and its outbox event together, or neither', () => {
    const store = openStore('atomic');
    try {
      const id = store.enqueueInstruction(instruction(1)).job!.id;
      clearOutbox(store);
      const outboxBefore = store.outboxSize();
      // A second connection makes every outbox insert fail, as a full or broken table would.
      const other = new Database(store.path);
      other.exec(
        "CREATE TRIGGER outbox_fails BEFORE INSERT ON outbox BEGIN SELECT RAISE(ABORT, 'outbox refused'); END",
      );
      try {
        assert.throws(
          () => store.markPrinting(id, { markings: {}, warnings: [] }),
          rejectsWith('STORE_FAILED'),
        );
        assert.equal(store.get(id)!.state, 'queued', 'the transition rolled back with its event');
        assert.equal(store.get(id)!.attempts, 0);
        assert.throws(() => store.enqueueInstruction(instruction(2)), rejectsWith('STORE_FAILED'));
        assert.equal(store.getByJobId('P-00002'), null, 'no job without its queued event');
        assert.equal(store.outboxSize(), outboxBefore);
      } finally {
        other.exec('DROP TRIGGER outbox_fails');
        other.close();
      }
      store.markPrinting(id, { markings: {}, warnings: [] });
      assert.deepEqual(
        events(store).map((e) => e.state),
        ['printing'],
      );
    } finally {
      store.close();
    }
  });

  it('retry puts failed, unconfirmed and held jobs back in the queue; unconfirmed ones marked', () => {
    const store = openStore('retry');
    try {
      const failed = store.enqueueInstruction(instruction(1)).job!.id;
      store.markFailed(failed, { code: 'RENDER_FAILED', message: 'x' });
      const unconfirmed = store.enqueueInstruction(instruction(2)).job!.id;
      store.markPrinting(unconfirmed, { markings: {}, warnings: [] });
      store.markUnconfirmed(unconfirmed, { code: 'UNCONFIRMED', message: 'no reply' });
      const a = store.retry(failed);
      assert.equal(a.state, 'queued');
      assert.equal(a.lastError, null);
      assert.equal(a.finishedAt, null);
      assert.deepEqual(a.markings, {});
      const b = store.retry(unconfirmed);
      assert.equal(b.state, 'queued');
      assert.deepEqual(b.markings, { possibleDuplicate: true });
    } finally {
      store.close();
    }
  });
});

describe('job store: printed and the next printing in one commit (decision 206)', () => {
  it('moves both, their events in that order, or neither when the second is refused', () => {
    const store = openStore('printed-then-printing');
    try {
      const first = store.enqueueInstruction(instruction(1)).job!.id;
      const second = store.enqueueInstruction(instruction(2)).job!.id;
      const third = store.enqueueInstruction(instruction(3)).job!.id;
      store.markPrinting(first, { markings: {}, warnings: [] });
      const both = store.markPrintedThenPrinting(first, second, {
        markings: { late: true },
        warnings: [],
      });
      assert.equal(both.printed.state, 'printed');
      assert.equal(both.printing.state, 'printing');
      assert.deepEqual(both.printing.markings, { late: true });
      assert.deepEqual(
        [store.get(first)!.state, store.get(second)!.state],
        ['printed', 'printing'],
      );
      // The third failed meanwhile: its printing is refused, and the second's printed is not
      // written either; the caller records it on its own.
      store.markFailed(third, { code: 'RENDER_FAILED', message: 'x' });
      const eventsBefore = events(store).length;
      assert.throws(
        () => store.markPrintedThenPrinting(second, third, { markings: {}, warnings: [] }),
        rejectsWith('JOB_STATE_CONFLICT'),
      );
      assert.equal(store.get(second)!.state, 'printing');
      assert.equal(events(store).length, eventsBefore);
      assert.equal(store.markPrinted(second).state, 'printed');
      assert.deepEqual(
        events(store)
          .filter((e) => e.jobId !== 'P-00003' && e.state !== 'queued')
          .map((e) => `${e.jobId} ${e.state}`)
          .slice(0, 3),
        ['P-00001 printing', 'P-00001 printed', 'P-00002 printing'],
      );
    } finally {
      store.close();
    }
  });
});

describe('job store: what a transition returns', () => {
  it('is the job as a re-read finds it, for every transition', () => {
    // Transitions build the job they return from the row they read and the columns they set,
    // without reading it back (issue 16); a re-read must agree on every field.
    let clock = 1_700_000_000_000;
    const store = openStore('returned', { now: () => clock++ });
    try {
      const same = (job: { id: number }) => assert.deepEqual(job, store.find(String(job.id)));
      for (let i = 1; i <= 4; i++) store.enqueueInstruction(instruction(i));
      const reason = { code: 'PRINTER_OFFLINE', message: 'offline' };
      same(store.markPrinting(1, { markings: { late: true }, warnings: ['w'], notices: [reason] }));
      same(store.markWaiting(1, reason, clock + 5000, { possibleDuplicate: true }));
      same(store.markPrinting(1, { markings: {}, warnings: [] }));
      same(store.markPrinted(1));
      same(store.markPrinting(2, { markings: {}, warnings: [] }));
      same(store.markUnconfirmed(2, { code: 'PRINT_UNCONFIRMED', message: 'no reply' }));
      same(store.markFailed(3, { code: 'RENDER_FAILED', message: 'x' }));
      same(store.retry(3));
      store.markPrinting(4, { markings: {}, warnings: [] });
      for (const job of store.recoverInterrupted('hold')) same(job);
      for (const job of store.markUnrouted('receipt', { code: 'NO_PRINTER', message: 'none' }))
        same(job);
    } finally {
      store.close();
    }
  });
});

describe('job store: interrupted jobs at start-up (reliability guarantee 4)', () => {
  it('reprint-marked: back at the head of the queue with POSSIBLE DUPLICATE', () => {
    const store = openStore('recover');
    try {
      const first = store.enqueueInstruction(instruction(1)).job!.id;
      store.enqueueInstruction(instruction(2));
      store.markPrinting(first, { markings: {}, warnings: [] });
      clearOutbox(store);
      const recovered = store.recoverInterrupted('reprint-marked');
      assert.deepEqual(
        recovered.map((j) => [j.id, j.state, j.markings]),
        [[first, 'queued', { possibleDuplicate: true }]],
      );
      assert.equal(store.head('receipt')!.id, first);
      const [event] = events(store);
      assert.equal(event!.state, 'queued');
      assert.equal(event!.reason?.code, 'JOB_INTERRUPTED');
      assert.deepEqual(event!.markings, ['POSSIBLE DUPLICATE']);
    } finally {
      store.close();
    }
  });

  it('hold: waiting for a person, skipped by the queue until retried', () => {
    const store = openStore('hold');
    try {
      const first = store.enqueueInstruction(instruction(1)).job!.id;
      const second = store.enqueueInstruction(instruction(2)).job!.id;
      store.markPrinting(first, { markings: {}, warnings: [] });
      const [held] = store.recoverInterrupted('hold');
      assert.equal(held!.state, 'waiting');
      assert.equal(held!.held, true);
      assert.equal(held!.lastError?.code, 'NEEDS_ATTENTION');
      assert.equal(store.head('receipt')!.id, second, 'the held job does not block the queue');
      assert.throws(
        () => store.markPrinting(first, { markings: {}, warnings: [] }),
        rejectsWith('JOB_STATE_CONFLICT'),
      );
      assert.equal(store.queueStats(['receipt'])[0]!.held, 1);
      const released = store.retry(first);
      assert.equal(released.held, false);
      assert.deepEqual(released.markings, { possibleDuplicate: true });
      assert.equal(store.head('receipt')!.id, first);
    } finally {
      store.close();
    }
  });
});

describe('job store: reading, outbox, cursor, reopening', () => {
  it('lists by state, finds by id or jobId, counts per printer for the status', () => {
    let clock = 1_000_000;
    const store = openStore('reads', { now: () => clock });
    try {
      for (let i = 1; i <= 5; i++) {
        store.enqueueInstruction(instruction(i, { printer: i % 2 ? 'receipt' : 'kitchen' }));
        clock += 1000;
      }
      store.markPrinting(1, { markings: {}, warnings: [] });
      store.markPrinted(1);
      store.markFailed(2, { code: 'RENDER_FAILED', message: 'x' });
      clock += 10_000;
      assert.deepEqual(
        store.list({ state: 'queued' }).map((j) => j.id),
        [5, 4, 3],
      );
      assert.deepEqual(
        store.list({ printer: 'kitchen' }).map((j) => j.id),
        [4, 2],
      );
      assert.equal(store.list({ limit: 2 }).length, 2);
      assert.equal(store.find('3')!.jobId, 'P-00003');
      assert.equal(store.find('P-00004')!.id, 4);
      assert.equal(store.find('nope'), null);
      assert.equal(store.getReceipt('O-00005')!.id, 5);
      assert.deepEqual(store.countByState(), {
        queued: 3,
        waiting: 0,
        printing: 0,
        printed: 1,
        unconfirmed: 0,
        failed: 1,
      });
      assert.deepEqual(store.queueStats(['receipt', 'kitchen', 'bar']), [
        { printer: 'bar', pending: 0, held: 0, oldestPendingSec: 0, lastPrintedAt: null },
        { printer: 'kitchen', pending: 1, held: 0, oldestPendingSec: 12, lastPrintedAt: null },
        {
          printer: 'receipt',
          pending: 2,
          held: 0,
          oldestPendingSec: 13,
          lastPrintedAt: 1_005_000 + 10_000 - 10_000,
        },
      ]);
      assert.deepEqual(store.pendingPrinters(), ['kitchen', 'receipt']);
    } finally {
      store.close();
    }
  });

  it('drains the outbox in order, forgets acked entries and keeps one pending status', () => {
    const store = openStore('outbox');
    try {
      store.enqueueInstruction(instruction(1));
      const status = (at: string) => ({
        online: true as const,
        storeId: 'abcdef0123456789',
        agent: { version: '0.1.0', startedAt: at },
        printers: [],
        at,
      });
      store.appendStatus(status('2026-11-25T00:00:00.000Z'));
      store.appendStatus(status('2026-11-25T00:00:01.000Z'));
      store.recordEvent({
        jobId: null,
        orderNo: null,
        state: 'rejected',
        printer: null,
        attempt: 0,
        at: '2026-11-25T00:00:02.000Z',
        reason: { code: 'SIGNATURE_INVALID', message: 'bad' },
      });
      const entries = store.drainOutbox();
      assert.deepEqual(
        entries.map((e) => e.kind),
        ['job', 'status', 'job'],
      );
      assert.equal((entries[1]!.payload as { at: string }).at, '2026-11-25T00:00:01.000Z');
      // A limit takes the oldest ones (the reporter reads 50 at a time).
      assert.deepEqual(
        store.drainOutbox(2).map((e) => e.id),
        entries.slice(0, 2).map((e) => e.id),
      );
      acknowledged(store, entries.slice(0, 2));
      assert.deepEqual(
        store.drainOutbox().map((e) => e.id),
        [entries[2]!.id],
      );
      assert.equal(store.drainOutbox(0).length, 0);
    } finally {
      store.close();
    }
  });

  it('keeps jobs, outbox, cursor and dedupe keys across close and reopen', () => {
    const dir = tempDir('reopen');
    const a = JobStore.open({ stateDir: dir });
    a.enqueueInstruction(instruction(1));
    a.enqueueInstruction(instruction(2));
    a.markPrinting(1, { markings: { late: true }, warnings: ['w'] });
    a.markPrinted(1);
    a.setCatchUpCursor('O-00002');
    const jobs = a.list();
    const outbox = a.drainOutbox();
    a.close();
    assert.equal(a.isOpen, false);
    const b = JobStore.open({ stateDir: dir });
    try {
      assert.equal(b.path, join(dir, DATABASE_FILE));
      assert.deepEqual(b.list(), jobs);
      assert.deepEqual(b.drainOutbox(), outbox);
      assert.equal(b.getCatchUpCursor(), 'O-00002');
      assert.equal(b.enqueueInstruction(instruction(2)).status, 'duplicate');
      assert.equal(b.integrityCheck(), 'ok');
    } finally {
      b.close();
    }
  });
});

describe('job store: retention', () => {
  const DAY = 24 * 60 * 60 * 1000;

  it('prunes finished jobs in batches and remembers their keys, so replays stay duplicates', async () => {
    let clock = Date.UTC(2026, 0, 1);
    const store = openStore('retention', { now: () => clock });
    try {
      for (let i = 1; i <= 25; i++) {
        const id = store.enqueueInstruction(instruction(i)).job!.id;
        if (i <= 20) {
          store.markPrinting(id, { markings: {}, warnings: [] });
          store.markPrinted(id);
        }
      }
      // The original of a pending reprint is kept until the reprint is done.
      store.enqueueCommand({ commandId: 'C-9', type: 'reprint', orderNo: 'O-00001' });
      clock += 20 * DAY;
      assert.equal(store.pruneFinished(clock - 14 * DAY, 8), 8);
      const run = await runRetention(store, {
        keepDays: 14,
        ledgerDays: 90,
        batchSize: 4,
        now: () => clock,
      });
      assert.equal(run.jobs, 11, '20 printed, 1 kept for the pending reprint, 8 pruned before');
      assert.deepEqual(
        store
          .list()
          .map((j) => j.id)
          .sort((a, b) => a - b),
        [1, 21, 22, 23, 24, 25, 26],
      );
      const replay = store.enqueueInstruction(instruction(5));
      assert.equal(replay.status, 'duplicate');
      if (replay.status === 'duplicate') {
        assert.equal(replay.job, null);
        assert.equal(replay.existing.pruned, true);
        assert.equal(replay.existing.state, 'printed');
        assert.equal(replay.existing.jobId, 'P-00005');
      }
      assert.equal(
        store.enqueueInstruction(instruction(99, { orderNo: 'O-00006' })).status,
        'duplicate',
      );
      // Reprinting a pruned order is refused: its receipt is gone.
      assert.throws(() => store.enqueueReprint('O-00007'), rejectsWith('JOB_NOT_FOUND'));
      clock += 91 * DAY;
      await runRetention(store, { keepDays: 14, ledgerDays: 90, now: () => clock });
      assert.equal(store.enqueueInstruction(instruction(5)).status, 'inserted');
    } finally {
      store.close();
    }
  });

  it('purges printed jobs printed before a date, leaving other states alone', () => {
    let clock = Date.UTC(2026, 0, 1);
    const store = openStore('purge', { now: () => clock });
    try {
      for (let i = 1; i <= 6; i++) {
        const id = store.enqueueInstruction(instruction(i)).job!.id;
        if (i <= 4) {
          store.markPrinting(id, { markings: {}, warnings: [] });
          if (i <= 3) store.markPrinted(id);
          else store.markUnconfirmed(id, { code: 'UNCONFIRMED', message: 'x' });
        }
        clock += DAY;
      }
      assert.equal(store.purgePrinted(Date.UTC(2026, 0, 3), 1), 2);
      assert.deepEqual(
        store
          .list()
          .map((j) => j.id)
          .sort(),
        [3, 4, 5, 6],
      );
    } finally {
      store.close();
    }
  });

  it('stays bounded under continuous load: pruned pages are reused, the file does not grow', async () => {
    let clock = Date.UTC(2026, 0, 1);
    // 7,200 commits: on tmpfs, where fsync is free (page reuse is tested here, not durability).
    const store = openStore('bounded', { now: () => clock, memory: true });
    try {
      const sizes: number[] = [];
      let n = 0;
      for (let round = 0; round < 9; round++) {
        for (let i = 0; i < 200; i++) {
          const id = store.enqueueInstruction(instruction(++n)).job!.id;
          store.markPrinting(id, { markings: {}, warnings: [] });
          store.markPrinted(id);
          acknowledged(store, store.drainOutbox());
        }
        clock += DAY;
        await runRetention(store, { keepDays: 1, ledgerDays: 2, now: () => clock });
        sizes.push(store.spaceStats().pages);
      }
      // Jobs are kept a day and their keys two more: from the fourth day on, every day prunes as
      // much as it adds, and the new rows reuse the freed pages.
      const steady = Math.max(...sizes.slice(3, 6));
      assert.ok(
        sizes.slice(6).every((s) => s <= steady * 1.1),
        `page counts per round: ${sizes.join(', ')}`,
      );
      assert.equal(store.integrityCheck(), 'ok');
    } finally {
      store.close();
    }
  });
});
