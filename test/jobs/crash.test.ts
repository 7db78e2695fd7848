/**
 * Crash tests (reliability fault matrix rows 1-3 and 19): the job path runs in a child process
 * (crash-child.ts) that dies by SIGKILL at a fault point or from outside while the emulator, in
 * this process, keeps the paper. After every kill the database passes `PRAGMA integrity_check`,
 * and a restarted child proves: no acknowledged job lost, an interrupted job printed again with
 * its POSSIBLE DUPLICATE marking, nothing printed twice unmarked.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { scriptEntry } from '../../harness/child-entry.js';
import { waitFor } from '../../harness/waiting.js';
import { listenTcp, type TcpEndpoint, VirtualPrinter } from '../../src/emulator/index.js';
import { JobStore } from '../../src/jobs/store.js';
import { ROOT } from '../helpers/cli.js';
import type { ChildConfig } from './crash-child.js';
import { pad, printedReceipts, tempDir } from './fixtures.js';

const CHILD = join(ROOT, 'test', 'jobs', 'crash-child.ts');

interface Child {
  process: ChildProcess;
  lines: string[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startChild(config: ChildConfig, fault?: string): Child {
  const env = { ...process.env };
  delete env.PRINTER_AGENT_FAULT;
  if (fault) env.PRINTER_AGENT_FAULT = fault;
  const child = spawn(process.execPath, [...scriptEntry(CHILD), JSON.stringify(config)], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let buffered = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      if (code !== 0 && signal === null) process.stderr.write(`crash-child stderr:\n${stderr}\n`);
      resolve({ code, signal });
    });
  });
  return { process: child, lines, exit };
}

async function run(config: ChildConfig, fault?: string) {
  const child = startChild(config, fault);
  const result = await child.exit;
  return { ...result, lines: child.lines };
}

function acked(lines: readonly string[]): string[] {
  return lines.filter((l) => l.startsWith('ack ')).map((l) => l.split(' ')[1]!);
}

/** Opens the store the way a restart would and checks the file first. */
function checkIntegrity(stateDir: string): JobStore {
  const store = JobStore.open({ stateDir });
  assert.equal(store.integrityCheck(), 'ok');
  return store;
}

async function emulator(options: { slowLinkBps?: number } = {}) {
  const printer = new VirtualPrinter({ columns: 48, columnsFontB: 64 });
  const endpoint: TcpEndpoint = await listenTcp(printer, { port: 0, ...options });
  cleanup.push(() => endpoint.close());
  return { printer, endpoint };
}

const cleanup: Array<() => Promise<void>> = [];
after(async () => {
  for (const fn of cleanup) await fn();
});

/** Receipts per order number: how many copies, how many of them marked. */
function copies(printer: VirtualPrinter) {
  const byOrder = new Map<string | null, { unmarked: number; marked: number }>();
  for (const r of printedReceipts(printer)) {
    const entry = byOrder.get(r.orderNo) ?? { unmarked: 0, marked: 0 };
    if (r.possibleDuplicate) entry.marked++;
    else entry.unmarked++;
    byOrder.set(r.orderNo, entry);
  }
  return byOrder;
}

describe('crash tests (SIGKILL at fault points)', { timeout: 120_000 }, () => {
  it('after insert, before return: committed jobs survive, redelivery is deduped, printed once', async () => {
    const stateDir = tempDir('crash-insert');
    const { printer, endpoint } = await emulator();
    const killed = await run({ stateDir, insert: { from: 1, to: 5 } }, 'after-insert:3');
    assert.equal(killed.signal, 'SIGKILL');
    assert.deepEqual(acked(killed.lines), ['P-00001', 'P-00002'], 'the third never returned');
    const store = checkIntegrity(stateDir);
    assert.ok(store.getByJobId('P-00003'), 'committed before the kill, so stored');
    assert.equal(store.getByJobId('P-00004'), null);
    store.close();

    // The broker redelivers everything not acked (and may repeat acked ones too).
    const restart = await run({
      stateDir,
      insert: { from: 1, to: 5 },
      spool: { address: endpoint.address },
    });
    assert.equal(restart.code, 0);
    assert.deepEqual(
      restart.lines.filter((l) => l.startsWith('ack ')),
      [
        'ack P-00001 duplicate',
        'ack P-00002 duplicate',
        'ack P-00003 duplicate',
        'ack P-00004 inserted',
        'ack P-00005 inserted',
      ],
    );
    assert.deepEqual(
      printedReceipts(printer).map((r) => [r.orderNo, r.possibleDuplicate]),
      [1, 2, 3, 4, 5].map((n) => [`O-${pad(n)}`, false]),
    );
  });

  it('while printing: the interrupted job is printed again marked, nothing twice unmarked', async () => {
    const stateDir = tempDir('crash-printing');
    // A slow link keeps the job on the wire long enough to kill the agent in the middle of it.
    const { printer, endpoint } = await emulator({ slowLinkBps: 4000 });
    const child = startChild({
      stateDir,
      insert: { from: 1, to: 3 },
      spool: { address: endpoint.address },
    });
    await waitFor('all three acked', () => acked(child.lines).length === 3, 15_000);
    await waitFor(
      'part of the first job on the printer',
      () => printer.decoder.received > 200,
      15_000,
    );
    child.process.kill('SIGKILL');
    const killed = await child.exit;
    assert.equal(killed.signal, 'SIGKILL');

    const store = checkIntegrity(stateDir);
    assert.equal(store.getByJobId('P-00001')!.state, 'printing', 'caught in the act');
    store.close();

    const restart = await run({ stateDir, spool: { address: endpoint.address } });
    assert.equal(restart.code, 0);
    assert.ok(restart.lines.includes('recovered P-00001 queued'));
    const seen = copies(printer);
    assert.equal(seen.get('O-00001')?.marked, 1, 'printed again with its marking');
    // The cut-short first copy may or may not have reached the order number line.
    const firstUnmarked = (seen.get('O-00001')?.unmarked ?? 0) + (seen.get(null)?.unmarked ?? 0);
    assert.ok(firstUnmarked <= 1, 'the interrupted copy at most once, unmarked');
    for (const n of [2, 3]) assert.deepEqual(seen.get(`O-${pad(n)}`), { unmarked: 1, marked: 0 });

    const after = checkIntegrity(stateDir);
    const job = after.getByJobId('P-00001')!;
    assert.equal(job.state, 'printed');
    assert.deepEqual(job.markings, { possibleDuplicate: true });
    const events = after
      .drainOutbox(1000)
      .map((e) => e.payload as { jobId: string; state: string; reason: { code: string } | null })
      .filter((e) => e.jobId === 'P-00001');
    assert.ok(events.some((e) => e.state === 'queued' && e.reason?.code === 'JOB_INTERRUPTED'));
    after.close();
  });

  it('between print and commit: printed, then printed again marked, never twice unmarked', async () => {
    const stateDir = tempDir('crash-commit');
    const { printer, endpoint } = await emulator();
    const killed = await run(
      { stateDir, insert: { from: 1, to: 3 }, spool: { address: endpoint.address } },
      'after-print-before-commit:1',
    );
    assert.equal(killed.signal, 'SIGKILL');
    assert.deepEqual(
      printedReceipts(printer).map((r) => r.orderNo),
      ['O-00001'],
    );
    const store = checkIntegrity(stateDir);
    assert.equal(store.getByJobId('P-00001')!.state, 'printing');
    store.close();

    const restart = await run({ stateDir, spool: { address: endpoint.address } });
    assert.equal(restart.code, 0);
    assert.deepEqual(
      printedReceipts(printer).map((r) => [r.orderNo, r.possibleDuplicate]),
      [
        ['O-00001', false],
        ['O-00001', true],
        ['O-00002', false],
        ['O-00003', false],
      ],
    );
  });

  it('after marking printing, before a byte: printed once, marked (a needless mark, never a loss)', async () => {
    const stateDir = tempDir('crash-before-bytes');
    const { printer, endpoint } = await emulator();
    const killed = await run(
      { stateDir, insert: { from: 1, to: 2 }, spool: { address: endpoint.address } },
      'after-mark-printing:1',
    );
    assert.equal(killed.signal, 'SIGKILL');
    checkIntegrity(stateDir).close();
    const restart = await run({ stateDir, spool: { address: endpoint.address } });
    assert.equal(restart.code, 0);
    assert.deepEqual(
      printedReceipts(printer).map((r) => [r.orderNo, r.possibleDuplicate]),
      [
        ['O-00001', true],
        ['O-00002', false],
      ],
    );
  });

  it('power loss during a burst: every acknowledged job is there after each kill (row 19)', async () => {
    const stateDir = tempDir('crash-burst');
    const allAcked: string[] = [];
    let next = 1;
    for (let round = 0; round < 5; round++) {
      const child = startChild({ stateDir, insert: { from: next, to: next + 100_000 } });
      const want = 20 + round * 37;
      await waitFor(`${want} acks`, () => acked(child.lines).length >= want, 20_000);
      child.process.kill('SIGKILL');
      await child.exit;
      const got = acked(child.lines);
      allAcked.push(...got);
      const store = checkIntegrity(stateDir);
      for (const jobId of allAcked) assert.ok(store.getByJobId(jobId), `${jobId} was acked`);
      // Redelivery starts at the first unacked one; a committed-but-unacked job dedupes.
      next += got.length;
      store.close();
    }
    const store = checkIntegrity(stateDir);
    const stored = store.list({ limit: 100_000 });
    assert.ok(stored.length >= allAcked.length);
    assert.equal(new Set(stored.map((j) => j.orderNo)).size, stored.length);
    store.close();
  });
});
