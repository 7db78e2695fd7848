/**
 * `printer-agent jobs ...` as a person runs it, on the same database file the daemon uses:
 * argument validation (exit 2 naming the option), typed failures (exit 1), each subcommand, and
 * reads and writes from the CLI process while a spooler in this process is printing.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { cliEntry } from '../../harness/child-entry.js';
import { waitFor } from '../../harness/waiting.js';
import { renderJob } from '../../src/jobs/render-job.js';
import { Spooler } from '../../src/jobs/spooler.js';
import { JobStore } from '../../src/jobs/store.js';
import { getProfile } from '../../src/receipt/profile.js';
import { fileConfig, workspace } from '../config/fixtures.js';
import { type CliResult, ROOT, runCli, runCliInProcess } from '../helpers/cli.js';
import { emulatedPrinter, instruction, OPTIONS, PROFILE, tempDir } from './fixtures.js';

/**
 * The CLI as a child process, without blocking this process's event loop (the spooler keeps
 * running meanwhile): another process on the same database file is what that test is about.
 */
function runCliAsync(args: readonly string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...cliEntry(), ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString('utf8');
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

const cleanup: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const fn of cleanup.reverse()) await fn();
});

/** A state dir with: 1 printed, 2 failed, 3 queued. */
function seeded(): string {
  const stateDir = tempDir('cli');
  const store = JobStore.open({ stateDir });
  store.enqueueInstruction(instruction(1));
  store.enqueueInstruction(instruction(2));
  store.enqueueInstruction(instruction(3));
  store.markPrinting(1, { markings: {}, warnings: [] });
  store.markPrinted(1);
  store.markFailed(2, { code: 'RENDER_FAILED', message: 'cannot render' });
  store.close();
  return stateDir;
}

describe('printer-agent jobs', () => {
  /** Each test its own seeded database: no test reads what another left behind. */
  const fresh = () => {
    const stateDir = seeded();
    return { stateDir, dir: ['--state-dir', stateDir] };
  };

  it('lists jobs as a table and as JSON, filtered by state', async () => {
    const { dir } = fresh();
    const table = await runCliInProcess(['jobs', 'list', ...dir]);
    assert.equal(table.status, 0, table.stderr);
    const lines = table.stdout.trim().split('\n');
    assert.match(lines[0]!, /^ID\s+STATE\s+PRINTER\s+KIND\s+ORDER\s+JOB/);
    assert.equal(lines.length, 4);
    assert.match(table.stdout, /RENDER_FAILED: cannot render/);
    const json = await runCliInProcess(['jobs', 'list', '--json', '--state', 'failed', ...dir]);
    assert.equal(json.status, 0, json.stderr);
    const jobs = JSON.parse(json.stdout) as Array<{ id: number; state: string; reason: unknown }>;
    assert.deepEqual(
      jobs.map((j) => [j.id, j.state]),
      [[2, 'failed']],
    );
    assert.deepEqual(jobs[0]!.reason, { code: 'RENDER_FAILED', message: 'cannot render' });
    const none = await runCliInProcess(['jobs', 'list', '--state', 'unconfirmed', ...dir]);
    assert.equal(none.stdout, 'no jobs\n');
  });

  it('rejects bad arguments with exit 2, naming the option', async () => {
    const { dir } = fresh();
    const state = await runCliInProcess(['jobs', 'list', '--state', 'lost', ...dir]);
    assert.equal(state.status, 2);
    assert.match(state.stderr, /--state must be one of queued, waiting, printing, printed/);
    const limit = await runCliInProcess(['jobs', 'list', '--limit', '0', ...dir]);
    assert.equal(limit.status, 2);
    assert.match(limit.stderr, /--limit must be a whole number/);
    const date = await runCliInProcess(['jobs', 'purge', '--printed-before', 'yesterday', ...dir]);
    assert.equal(date.status, 2);
    assert.match(date.stderr, /--printed-before must be a date/);
    const missing = await runCliInProcess(['jobs', 'purge', ...dir]);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /--printed-before/);
    const printer = await runCliInProcess([
      'jobs',
      'reprint',
      'O-00001',
      '--printer',
      'a b',
      ...dir,
    ]);
    assert.equal(printer.status, 2);
    assert.match(printer.stderr, /--printer must be/);
    const id = await runCliInProcess(['jobs', 'show', 'x'.repeat(65), ...dir]);
    assert.equal(id.status, 2);
    assert.match(id.stderr, /ID must be 1 to 64 characters/);
  });

  it('fails with exit 1 and a code when there is no database or no such job', async () => {
    const { dir } = fresh();
    const nowhere = await runCliInProcess([
      'jobs',
      'list',
      '--state-dir',
      join(tempDir('cli-empty'), 'none'),
    ]);
    assert.equal(nowhere.status, 1);
    assert.match(nowhere.stderr, /^STORE_FAILED: no job database at .*--state-dir/);
    const unknown = await runCliInProcess(['jobs', 'show', 'P-99999', ...dir]);
    assert.equal(unknown.status, 1);
    assert.match(unknown.stderr, /^JOB_NOT_FOUND: /);
  });

  it('reads the queue of the config $PRINTER_AGENT_CONFIG names, as status and config do (bundle)', async () => {
    // Issue 42 item 11: without --config or --state-dir, jobs read the default state dir even
    // when the variable named the agent's config.
    const { stateDir } = fresh();
    const ws = workspace();
    cleanup.push(() => ws.cleanup());
    ws.writeConfig({ ...fileConfig(), stateDir });
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('PRINTER_AGENT_')),
    );
    const listed = runCli(['jobs', 'list', '--json'], {
      env: { ...env, PRINTER_AGENT_CONFIG: ws.configPath },
    });
    assert.equal(listed.status, 0, listed.stderr);
    assert.deepEqual(
      (JSON.parse(listed.stdout) as Array<{ jobId: string }>).map((j) => j.jobId),
      ['P-00003', 'P-00002', 'P-00001'],
    );
    // --state-dir still wins over the variable.
    const other = await runCliInProcess(['jobs', 'list', '--state-dir', fresh().stateDir], {
      env: { ...env, PRINTER_AGENT_CONFIG: join(ws.dir, 'no-such-config.json') },
    });
    assert.equal(other.status, 0, other.stderr);
  });

  it('shows one job by id or jobId, with its payload', async () => {
    const { dir } = fresh();
    const byId = await runCliInProcess(['jobs', 'show', '3', ...dir]);
    assert.equal(byId.status, 0, byId.stderr);
    const job = JSON.parse(byId.stdout) as { jobId: string; payload: { orderNo: string } };
    assert.equal(job.jobId, 'P-00003');
    assert.equal(job.payload.orderNo, 'O-00003');
    const byJobId = await runCliInProcess(['jobs', 'show', 'P-00001', ...dir]);
    assert.equal((JSON.parse(byJobId.stdout) as { state: string }).state, 'printed');
  });

  it('retries a failed job and refuses to retry a printed one', async () => {
    const { stateDir, dir } = fresh();
    const retried = await runCliInProcess(['jobs', 'retry', '2', ...dir]);
    assert.equal(retried.status, 0, retried.stderr);
    assert.match(retried.stdout, /job 2 \(P-00002\) queued again on receipt/);
    const printed = await runCliInProcess(['jobs', 'retry', 'P-00001', ...dir]);
    assert.equal(printed.status, 1);
    assert.match(printed.stderr, /^JOB_STATE_CONFLICT: job 1 is printed/);
    const store = JobStore.open({ stateDir });
    assert.equal(store.get(2)!.state, 'queued');
    // The CLI's change went through the outbox like the daemon's own.
    const events = store.drainOutbox(100).map((e) => e.payload as { jobId: string; state: string });
    assert.deepEqual(events.at(-1), { ...events.at(-1), jobId: 'P-00002', state: 'queued' });
    store.close();
  });

  it('queues a reprint marked REPRINT, and refuses an order it never stored', async () => {
    const { dir } = fresh();
    const reprint = await runCliInProcess(['jobs', 'reprint', 'O-00001', ...dir]);
    assert.equal(reprint.status, 0, reprint.stderr);
    assert.match(
      reprint.stdout,
      /REPRINT #1 of order O-00001 \(original \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\)/,
    );
    const again = await runCliInProcess(['jobs', 'reprint', 'O-00001', ...dir]);
    assert.match(again.stdout, /REPRINT #2/);
    const unknown = await runCliInProcess(['jobs', 'reprint', 'O-77777', ...dir]);
    assert.equal(unknown.status, 1);
    assert.match(unknown.stderr, /^JOB_NOT_FOUND: no stored receipt for order O-77777/);
  });

  it('reprints the kitchen ticket with --printer kitchen: a reprint job on kitchen, marked REPRINT', async () => {
    // O-00005 went to the counter and the kitchen (issue 18 routing), both printed.
    const stateDir = tempDir('cli-kitchen');
    const dir = ['--state-dir', stateDir];
    const seed = JobStore.open({ stateDir });
    const [receiptJob, kitchenJob] = seed
      .enqueueOrder({ kind: 'instruction', instruction: instruction(5) }, [
        { role: 'receipt', layout: 'receipt', items: null },
        { role: 'kitchen', layout: 'kitchen', items: null },
      ])
      .map((r) => r.result.job!);
    for (const job of [receiptJob!, kitchenJob!]) {
      seed.markPrinting(job.id, { markings: {}, warnings: [] });
      seed.markPrinted(job.id);
    }
    seed.close();
    assert.equal(kitchenJob!.printer, 'kitchen');

    const run = await runCliInProcess([
      'jobs',
      'reprint',
      'O-00005',
      '--printer',
      'kitchen',
      ...dir,
    ]);
    assert.equal(run.status, 0, run.stderr);
    const m =
      /^job (\d+) queued on kitchen: REPRINT #1 of order O-00005 \(original [\d: -]+\)\n$/.exec(
        run.stdout,
      );
    assert.ok(m, run.stdout);
    const id = Number(m[1]);
    const shown = await runCliInProcess(['jobs', 'show', String(id), ...dir]);
    assert.equal(shown.status, 0, shown.stderr);
    const summary = JSON.parse(shown.stdout) as Record<string, unknown>;
    assert.deepEqual(
      [summary.kind, summary.printer, summary.orderNo, summary.state, summary.markings],
      ['reprint', 'kitchen', 'O-00005', 'queued', ['REPRINT']],
    );

    const store = JobStore.open({ stateDir });
    try {
      const job = store.get(id)!;
      assert.equal(job.sourceJob, kitchenJob!.id, "the kitchen's ticket, not the receipt");
      assert.equal(job.markings.reprint?.count, 1);
      // What it prints: the kitchen ticket again (no amounts), marked REPRINT #1.
      const rendered = await renderJob(job, {
        profile: getProfile(PROFILE),
        options: OPTIONS,
        late: false,
        original: (j) => (j.sourceJob === null ? null : store.get(j.sourceJob)),
      });
      assert.match(rendered.text, /^ +KITCHEN *$/m);
      assert.match(rendered.text, /REPRINT #1/);
      assert.doesNotMatch(rendered.text, /TOTAL|\d+\.\d\d/);
    } finally {
      store.close();
    }

    // Without --printer the reprint is the receipt role's, on the receipt printer.
    const receipt = await runCliInProcess(['jobs', 'reprint', 'O-00005', ...dir]);
    assert.equal(receipt.status, 0, receipt.stderr);
    assert.match(receipt.stdout, /^job \d+ queued on receipt: REPRINT #1 of order O-00005/);
  });

  it('purges printed jobs printed before a date', async () => {
    const { stateDir, dir } = fresh();
    const none = await runCliInProcess(['jobs', 'purge', '--printed-before', '2000-01-01', ...dir]);
    assert.equal(none.status, 0, none.stderr);
    assert.match(none.stdout, /^purged 0 printed jobs/);
    // While a reprint of O-00001 is pending, its receipt is kept; once it is done, it goes.
    assert.equal((await runCliInProcess(['jobs', 'reprint', 'O-00001', ...dir])).status, 0);
    const kept = await runCliInProcess([
      'jobs',
      'purge',
      '--printed-before',
      '2999-01-01T00:00:00Z',
      ...dir,
    ]);
    assert.match(kept.stdout, /^purged 0 printed jobs/);
    const done = JobStore.open({ stateDir });
    for (const j of done.list({ state: 'queued' }).filter((j) => j.kind === 'reprint'))
      done.markFailed(j.id, { code: 'RENDER_FAILED', message: 'test' });
    done.close();
    const all = await runCliInProcess([
      'jobs',
      'purge',
      '--printed-before',
      '2999-01-01T00:00:00Z',
      ...dir,
    ]);
    assert.match(all.stdout, /^purged 1 printed job printed before 2999-01-01T00:00:00.000Z/);
    // Its dedupe keys live on: a replay is still a duplicate.
    const store = JobStore.open({ stateDir });
    assert.equal(store.enqueueInstruction(instruction(1)).status, 'duplicate');
    store.close();
  });
});

describe('printer-agent jobs while the daemon prints', () => {
  it('reads and writes the live database while the spooler writes to it', async () => {
    const stateDir = tempDir('cli-live');
    const store = JobStore.open({ stateDir });
    cleanup.push(() => store.close());
    const rig = await emulatedPrinter();
    cleanup.push(() => rig.close());
    const total = 1000;
    for (let i = 1; i <= total; i++) store.enqueueInstruction(instruction(i));
    const spooler = new Spooler({
      store,
      printers: [{ id: 'receipt', printer: rig.printer, profile: PROFILE }],
      receiptOptions: OPTIONS,
      pollIntervalMs: 50,
    });
    cleanup.push(() => spooler.stop());
    spooler.start();
    await waitFor('printing under way', () => store.countByState().printed > 20);

    const printedBefore = store.countByState().printed;
    const [list, queued, show] = await Promise.all([
      runCliAsync(['jobs', 'list', '--json', '--limit', '5000', '--state-dir', stateDir]),
      runCliAsync(['jobs', 'list', '--state', 'queued', '--state-dir', stateDir]),
      runCliAsync(['jobs', 'show', 'P-00001', '--state-dir', stateDir]),
    ]);
    const printedAfter = store.countByState().printed;
    assert.ok(printedAfter > printedBefore, 'the spooler kept writing while the CLI ran');
    for (const r of [list, queued, show]) assert.equal(r.status, 0, r.stderr);
    const listed = JSON.parse(list.stdout) as Array<{ state: string }>;
    assert.equal(listed.length, total);
    const seenPrinted = listed.filter((j) => j.state === 'printed').length;
    assert.ok(seenPrinted >= printedBefore && seenPrinted <= printedAfter, 'a consistent snapshot');

    // A write from the CLI during printing: the reprint joins the queue and is printed.
    const reprint = await runCliAsync(['jobs', 'reprint', 'O-00001', '--state-dir', stateDir]);
    assert.equal(reprint.status, 0, reprint.stderr);
    await waitFor('all printed', () => store.countByState().printed === total + 1, 50_000);
    assert.equal(store.list({ limit: 1 })[0]!.kind, 'reprint');
    assert.equal(store.integrityCheck(), 'ok');
  });
});
