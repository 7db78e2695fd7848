/**
 * The job store's part of issue 13 (print-protocol v1.1): the database files are the service
 * user's only (0600), a stale instruction is stored `failed` with one event, the `queued` event
 * carries warnings and an arrival-time LATE marking, an attempt's notices (CONTENT_CUT) travel
 * with its `printing`/`printed`/`unconfirmed` events, every event has its own `eventId` that a
 * re-read of the outbox does not change, and a payload nested too deep (written by an older
 * agent) never crashes a reader.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isAgentError } from '../../src/errors.js';
import Database from '../../src/host/sqlite.js';
import { renderJob } from '../../src/jobs/render-job.js';
import { DATABASE_FILE, JobStore } from '../../src/jobs/store.js';
import { type JobEvent, jobEventSchema } from '../../src/protocol/print-protocol.js';
import { getProfile } from '../../src/receipt/profile.js';
import { runCliInProcess } from '../helpers/cli.js';
import { instruction, OPTIONS, PROFILE, tempDir } from './fixtures.js';

function events(store: JobStore): JobEvent[] {
  return store
    .drainOutbox(10_000)
    .filter((e) => e.kind === 'job')
    .map((e) => jobEventSchema.parse(e.payload));
}

const mode = (path: string) => statSync(path).mode & 0o777;

describe('job store files are 0600 (issue 13 item 9)', () => {
  it('a new database, its WAL and its shared-memory file are created 0600, whatever the umask', () => {
    const dir = tempDir('mode-new');
    const old = process.umask(0o022);
    try {
      const store = JobStore.open({ stateDir: dir });
      store.enqueueInstruction(instruction(1));
      const path = join(dir, DATABASE_FILE);
      assert.equal(mode(path), 0o600);
      assert.ok(existsSync(`${path}-wal`), 'WAL file present while open');
      assert.equal(mode(`${path}-wal`), 0o600);
      assert.equal(mode(`${path}-shm`), 0o600);
      store.close();
    } finally {
      process.umask(old);
    }
  });

  it('an existing database (an older agent made it 0644) is tightened when the daemon opens it', () => {
    const dir = tempDir('mode-old');
    const path = join(dir, DATABASE_FILE);
    JobStore.open({ stateDir: dir }).close();
    chmodSync(path, 0o644);
    writeFileSync(`${path}-shm`, '');
    chmodSync(`${path}-shm`, 0o644);
    const store = JobStore.open({ stateDir: dir });
    try {
      assert.equal(mode(path), 0o600);
      assert.equal(mode(`${path}-shm`), 0o600);
    } finally {
      store.close();
    }
  });
});

describe('job store: freshness options, warnings and notices (print-protocol v1.1)', () => {
  it('enqueueInstruction failed: one failed event, no queued, not pending; `retry` queues it', () => {
    const store = JobStore.open({ stateDir: tempDir('stale') });
    try {
      const stale = { code: 'STALE_ORDER', message: 'createTime is 8.0 days old' };
      const r = store.enqueueInstruction(instruction(1), {
        failed: stale,
        markings: { late: true },
      });
      assert.equal(r.status, 'inserted');
      assert.equal(r.job?.state, 'failed');
      assert.deepEqual(
        events(store).map((e) => [e.state, e.reason?.code, e.markings]),
        [['failed', 'STALE_ORDER', ['LATE']]],
      );
      assert.equal(store.head('receipt'), null);
      assert.equal(store.retry(r.job!.id).state, 'queued');
      assert.equal(store.head('receipt')?.markings.late, true, 'retried: printed marked LATE');
      // A duplicate stays a duplicate, stale or not.
      assert.equal(store.enqueueInstruction(instruction(1), { failed: stale }).status, 'duplicate');
    } finally {
      store.close();
    }
  });

  it('warnings ride on the queued event only', () => {
    const store = JobStore.open({ stateDir: tempDir('warnings') });
    try {
      const w = { code: 'CLOCK_UNSYNCHRONIZED', message: 'the age was not checked' };
      store.enqueueInstruction(instruction(1), { warnings: [w] });
      const [queued] = events(store);
      assert.deepEqual(queued?.warnings, [w]);
    } finally {
      store.close();
    }
  });

  it("an attempt's notices are stored with it and reported by its printing, printed and unconfirmed events", () => {
    const store = JobStore.open({ stateDir: tempDir('notices') });
    try {
      const cut = {
        code: 'CONTENT_CUT',
        message: 'order.customPrintContext: 90 lines; 40 printed',
      };
      const a = store.enqueueInstruction(instruction(1)).job!;
      const b = store.enqueueInstruction(instruction(2)).job!;
      store.markPrinting(a.id, { markings: {}, warnings: [], notices: [cut] });
      store.markPrinted(a.id);
      store.markPrinting(b.id, { markings: {}, warnings: [], notices: [cut] });
      store.markUnconfirmed(b.id, { code: 'UNCONFIRMED', message: 'no reply' });
      assert.deepEqual(store.get(a.id)?.notices, [cut]);
      const byState = events(store).map((e) => [e.jobId, e.state, e.warnings?.[0]?.code ?? null]);
      assert.deepEqual(byState, [
        ['P-00001', 'queued', null],
        ['P-00002', 'queued', null],
        ['P-00001', 'printing', 'CONTENT_CUT'],
        ['P-00001', 'printed', 'CONTENT_CUT'],
        ['P-00002', 'printing', 'CONTENT_CUT'],
        ['P-00002', 'unconfirmed', 'CONTENT_CUT'],
      ]);
      // A new attempt without notices reports none.
      store.retry(b.id);
      store.markPrinting(b.id, { markings: {}, warnings: [] });
      store.markPrinted(b.id);
      const later = events(store)
        .filter((e) => e.jobId === 'P-00002')
        .slice(-2);
      assert.deepEqual(
        later.map((e) => e.warnings),
        [undefined, undefined],
      );
    } finally {
      store.close();
    }
  });

  it('renderJob carries the receipt notices (CONTENT_CUT) of a long custom print content', async () => {
    const store = JobStore.open({ stateDir: tempDir('render-notices') });
    try {
      const lines = Array.from({ length: 90 }, (_, i) => `line ${i + 1}`).join('\n');
      const job = store.enqueueInstruction(
        instruction(1, {
          order: { ...instruction(1).order, customPrintContext: lines },
        }),
      ).job!;
      const rendered = await renderJob(job, {
        profile: getProfile(PROFILE),
        options: OPTIONS,
        late: false,
        original: () => null,
      });
      assert.deepEqual(
        rendered.notices.map((n) => n.code),
        ['CONTENT_CUT'],
      );
      assert.match(rendered.notices[0]!.message, /customPrintContext/);
    } finally {
      store.close();
    }
  });
});

describe('job store: eventId (print-protocol v1.1 §6)', () => {
  it('every event gets its own id; reading the outbox again (a redelivery) gives the same ids', () => {
    const store = JobStore.open({ stateDir: tempDir('event-ids') });
    try {
      for (let i = 1; i <= 5; i++) store.enqueueInstruction(instruction(i));
      store.markPrinting(1, { markings: {}, warnings: [] });
      store.markPrinted(1);
      const first = events(store);
      const ids = first.map((e) => e.eventId);
      assert.equal(new Set(ids).size, ids.length, 'distinct events, distinct ids');
      for (const id of ids) assert.match(id, /^[0-9a-f-]{36}$/);
      // Not acked (no PUBACK): the next drain publishes the very same events again.
      assert.deepEqual(events(store), first);
    } finally {
      store.close();
    }
  });
});

describe('a stored payload nested too deep (issue 13 item 5)', () => {
  function deepStore(): { stateDir: string; id: number } {
    const stateDir = tempDir('deep');
    const store = JobStore.open({ stateDir });
    const id = store.enqueueInstruction(instruction(1)).job!.id;
    store.close();
    // What an agent without the nesting limit could have stored.
    const db = new Database(join(stateDir, DATABASE_FILE));
    const deep = `{"jobId":"P-00001","x":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    db.prepare('UPDATE jobs SET payload = ? WHERE id = ?').run(deep, id);
    db.close();
    return { stateDir, id };
  }

  it('is not parsed: the job reads with payloadProblem, and rendering fails it cleanly', async () => {
    const { stateDir, id } = deepStore();
    const store = JobStore.open({ stateDir });
    try {
      const job = store.get(id)!;
      assert.equal(job.payload, null);
      assert.match(job.payloadProblem ?? '', /nested deeper than 32 levels/);
      await assert.rejects(
        () =>
          renderJob(job, {
            profile: getProfile(PROFILE),
            options: OPTIONS,
            late: false,
            original: () => null,
          }),
        (e: unknown) => isAgentError(e) && e.code === 'PARAM_INVALID',
      );
    } finally {
      store.close();
    }
  });

  it('`jobs show` prints the job and the reason instead of crashing', async () => {
    const { stateDir, id } = deepStore();
    const shown = await runCliInProcess(['jobs', 'show', String(id), '--state-dir', stateDir]);
    assert.equal(shown.status, 0, shown.stderr);
    const job = JSON.parse(shown.stdout) as { payload: unknown; payloadProblem: string };
    assert.equal(job.payload, null);
    assert.match(job.payloadProblem, /nested deeper than 32 levels/);
    const listed = await runCliInProcess(['jobs', 'list', '--json', '--state-dir', stateDir]);
    assert.equal(listed.status, 0, listed.stderr);
  });
});
