/**
 * The power-cut loop (issue 39, item 2): one store whose config dir and state dir (job database,
 * WAL) are on forgetfs, the agent a child process (the bundle of the current sources, as shipped),
 * signed instructions from Mosquitto (persistent session: the broker is the cloud, not the card),
 * the emulator on TCP. Each cut lands in a phase of the agent's life and ends the same way: every
 * process on the card killed, its unsynced writes dropped (and sometimes a torn page), the card
 * remounted (the reboot), then checked: the job database opens and passes
 * `PRAGMA integrity_check`, the config parses with the real loader.
 *
 * Phases, in turn: the first start (a migration cut), before the commit of an instruction, during
 * its fsync (with a torn page), after it and before its PUBACK, after the PUBACK, the `printing` and `printed` transitions, the outbox
 * drain, a WAL checkpoint (the one at a graceful stop), retention pruning, a `config set` cut at
 * its rename, a `config set` that answered and then lost the power, and random moments in a
 * burst. Application phases cut at a fault point (src/jobs/fault-points.ts: the process dies
 * there, then the power goes); storage phases at an operation (forgetfs `arm`).
 *
 * After the last cut the agent runs until every instruction the broker acknowledged has printed,
 * and the loop counts: cuts, acknowledged, printed, lost (must be 0), unmarked duplicates (must
 * be 0), stuck jobs (must be 0). The moments and torn pages come from a seed; a failure names it.
 */
import { spawn } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliEntry, fileClockNow } from '../../harness/child-entry.js';
import type { Mosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { openConfigFile } from '../../src/config/config-file.js';
import { loadConfig } from '../../src/config/load.js';
import Database from '../../src/host/sqlite.js';
import { MIGRATIONS } from '../../src/jobs/migrations.js';
import { FaultStore, type Json } from '../faults/harness.js';
import { ROOT } from '../helpers/cli.js';
import { ForgetFs } from './forgetfs.js';

export const PHASES = [
  'first-start',
  'inbox-before-commit',
  'commit-fsync',
  'after-insert',
  'after-ack',
  'after-mark-printing',
  'after-print-before-commit',
  'outbox-after-publish',
  'wal-checkpoint',
  'retention',
  'config-set-cut',
  'config-set-answered',
  'random',
] as const;
export type Phase = (typeof PHASES)[number];

export interface LoopSummary {
  seed: number;
  cuts: number;
  tornCuts: number;
  /** Per phase: cuts, and how many landed where they were aimed (the fault or the armed op). */
  phases: Record<string, { cuts: number; landed: number }>;
  acknowledged: number;
  printed: number;
  lost: number;
  unmarkedDuplicates: number;
  stuck: number;
  integrityChecks: number;
  configChecks: number;
  /** fsync calls on the card per job printed in the final drain. */
  fsyncsPerPrintedJob: number | null;
}

export interface LoopOptions {
  cuts: number;
  seed: number;
  broker: Mosquitto;
  log?: (line: string) => void;
}

/** mulberry32: small and seeded. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** libfaketime, for the retention phase (the agent two days ahead), or null. */
function libfaketime(): string | null {
  for (const dir of ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib']) {
    const path = join(dir, 'faketime', 'libfaketime.so.1');
    if (existsSync(path)) return path;
  }
  return null;
}

/**
 * libfaketime's offset for a child two days ahead of THIS process's clock. libfaketime offsets
 * count from the kernel's clock, and this process may itself run moved (CI's date guard runs the
 * suite at +400 d): a bare '+2d' put the agent 398 days behind the jobs it was to prune.
 */
function twoDaysAheadOfUs(): string {
  const seconds = Math.round((Date.now() - fileClockNow()) / 1000) + 2 * 86_400;
  return seconds >= 0 ? `+${seconds}` : `${seconds}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class Failure extends Error {}

export async function runPowerCutLoop(options: LoopOptions): Promise<LoopSummary> {
  const next = random(options.seed);
  const log = options.log ?? (() => {});
  const fs = await ForgetFs.mount();
  fs.seed(options.seed);
  const storeDir = fs.path('etc');
  mkdirSync(storeDir);
  const summary: LoopSummary = {
    seed: options.seed,
    cuts: 0,
    tornCuts: 0,
    phases: Object.fromEntries(PHASES.map((p) => [p, { cuts: 0, landed: 0 }])),
    acknowledged: 0,
    printed: 0,
    lost: 0,
    unmarkedDuplicates: 0,
    stuck: 0,
    integrityChecks: 0,
    configChecks: 0,
    fsyncsPerPrintedJob: null,
  };
  let store: FaultStore | undefined;
  try {
    store = await FaultStore.create({
      name: 'powercut',
      broker: options.broker,
      dir: storeDir,
      statusIntervalMs: 1000,
      configure: (c: Json) => {
        c.retention = { printedDays: 1 };
        c.logLevel = 'info';
      },
    });
    const s = store;
    // What an installer leaves: the config and keys on the card, synced.
    syncTree(fs.mountpoint);
    const dbPath = join(s.stateDir, 'jobs.db');
    const configPath = s.configPath;
    let n = 0;
    let sessionExists = false;
    let statusInterval = 1000;

    /** Processes the loop itself killed: their death is not a fault point's. */
    const killedByUs = new Set<number>();
    /** Waits for the agent to die by itself, killing it after `ms` (a deadline, not a moment). */
    const agentDead = async (ms: number) => {
      const agent = s.agent;
      if (!agent) return;
      const timer = setTimeout(() => {
        killedByUs.add(agent.pid);
        agent.child.kill('SIGKILL');
      }, ms);
      await agent.exited;
      clearTimeout(timer);
    };
    const diedOfItsFault = async () => {
      const agent = s.agent!;
      return (await agent.exited).signal === 'SIGKILL' && !killedByUs.has(agent.pid);
    };
    const online = async (from: number) =>
      waitFor(
        'the agent online',
        () => s.statuses.slice(from).some((x) => x.online === true) || !s.agent?.alive,
        30_000,
      );
    const publish = async (count: number) => {
      const sent: Promise<void>[] = [];
      for (let i = 0; i < count; i++) sent.push(s.publish(++n));
      await Promise.all(sent);
    };
    const printedCount = () => s.printedOrders().length;
    /**
     * Runs the agent until every acknowledged order is printed (and `then`, when given), then
     * stops it gracefully.
     */
    const drain = async (then?: () => Promise<void>) => {
      const from = s.statuses.length;
      s.startAgent();
      await online(from);
      sessionExists = true;
      await waitFor(
        'every acknowledged order printed',
        () =>
          [...s.acked].every((o) =>
            s
              .printsByOrder()
              .get(o)
              ?.some((p) => p.cut),
          ),
        60_000,
      ).catch((error: Error) => {
        throw new Failure(`${error.message}\n${s.tail()}`);
      });
      await then?.();
      s.agent!.child.kill('SIGTERM');
      await agentDead(20_000);
    };
    /** Starts the agent with a fault point armed, waits until it is online, then publishes. */
    const appFault = async (point: string, count: number): Promise<boolean> => {
      const from = s.statuses.length;
      const agent = s.startAgent({ PRINTER_AGENT_FAULT: point });
      await online(from);
      sessionExists = true;
      if (agent.alive) await publish(count);
      // Printing and the outbox follow the commit: give the fault its moment, with a deadline.
      await agentDead(20_000);
      return diedOfItsFault();
    };

    const phaseRun: Record<Phase, () => Promise<boolean>> = {
      'first-start': async () => {
        // A fresh install's first start: the state dir empty, a cut between two migrations.
        if (sessionExists) await drain();
        rmSync(s.stateDir, { recursive: true, force: true });
        syncTree(storeDir);
        const k = 1 + Math.floor(next() * MIGRATIONS.length);
        s.startAgent({ PRINTER_AGENT_FAULT: `after-migration:${k}` });
        await agentDead(30_000);
        return diedOfItsFault();
      },
      'inbox-before-commit': () => appFault('inbox-before-commit', 3),
      'commit-fsync': async () => {
        // The power fails while a commit is being made durable: its WAL frames are written, the
        // fsync never happens, and the last page is torn.
        const from = s.statuses.length;
        const agent = s.startAgent();
        await online(from);
        sessionExists = true;
        fs.arm('fsync', '/state/jobs.db-wal', 1 + Math.floor(next() * 3), { torn: true });
        const burst = publish(5);
        await waitFor(
          'the armed fsync',
          () => fs.stats().fired === 1 || !agent.alive,
          20_000,
        ).catch(() => undefined);
        await burst;
        await agentDead(5000);
        return fs.stats().fired === 1;
      },
      'after-insert': () => appFault('after-insert', 3),
      'after-ack': () => appFault('after-ack', 3),
      'after-mark-printing': () => appFault('after-mark-printing', 2),
      'after-print-before-commit': () => appFault('after-print-before-commit', 2),
      'outbox-after-publish': () => appFault('outbox-after-publish', 2),
      'wal-checkpoint': async () => {
        // The checkpoint of a graceful stop (systemctl stop at closing time) meets the cut: the
        // first write to the main database file is a checkpoint's (WAL mode).
        const from = s.statuses.length;
        const agent = s.startAgent();
        await online(from);
        sessionExists = true;
        const before = printedCount();
        await publish(3);
        await waitFor('printed before the stop', () => printedCount() >= before + 3, 30_000);
        fs.arm('write', '/state/jobs.db', 1, { torn: next() < 0.5 });
        agent.child.kill('SIGTERM');
        await agentDead(20_000);
        return fs.stats().fired === 1;
      },
      retention: async () => {
        // Two days later (libfaketime on the agent alone), retention prunes the printed jobs
        // (printedDays 1) and is cut after its first batch.
        const lib = libfaketime();
        if (!lib) return false;
        const from = s.statuses.length;
        s.startAgent({
          PRINTER_AGENT_FAULT: 'retention-batch',
          LD_PRELOAD: lib,
          FAKETIME: twoDaysAheadOfUs(),
          FAKETIME_DONT_FAKE_MONOTONIC: '1',
        });
        await online(from);
        await agentDead(20_000);
        return diedOfItsFault();
      },
      'config-set-cut': async () => {
        statusInterval += 10; // a value the file never had: a revert shows
        fs.arm('rename', '/etc/config.json', 1);
        await configSet(configPath, statusInterval);
        return fs.stats().fired === 1;
      },
      'config-set-answered': async () => {
        // Answered: the change must survive the cut that follows (no process to kill).
        statusInterval += 10;
        const code = await configSet(configPath, statusInterval);
        if (code !== 0) throw new Failure(`config set exited ${code}`);
        fs.cut();
        const value = (openConfigFile(configPath).read().printers as Json[])[0]!.statusIntervalMs;
        if (value !== statusInterval)
          throw new Failure(
            `config set answered, then a cut took it back: ${value} instead of ${statusInterval}`,
          );
        return true;
      },
      random: async () => {
        const from = s.statuses.length;
        const agent = s.startAgent();
        await online(from);
        sessionExists = true;
        const burst = publish(10);
        await sleep(Math.floor(next() * 1500));
        killedByUs.add(agent.pid);
        agent.child.kill('SIGKILL');
        await burst;
        await agentDead(5000);
        return true;
      },
    };

    for (let cut = 0; cut < options.cuts; cut++) {
      const phase = PHASES[cut % PHASES.length]!;
      const tornBefore = fs.stats().torn;
      const landed = await phaseRun[phase]();
      // The power goes: whatever still runs on the card dies, the unsynced is dropped.
      if (s.agent?.alive) {
        killedByUs.add(s.agent.pid);
        s.agent.child.kill('SIGKILL');
      }
      await s.agent?.exited;
      fs.cut({ torn: next() < 0.5 });
      fs.disarm();
      if (fs.stats().torn > tornBefore) summary.tornCuts++;
      await fs.remount();
      summary.cuts++;
      summary.phases[phase]!.cuts++;
      if (landed) summary.phases[phase]!.landed++;
      checkDatabase(dbPath);
      summary.integrityChecks++;
      checkConfig(configPath);
      summary.configChecks++;
      log(
        `cut ${cut + 1}/${options.cuts}: ${phase}${landed ? '' : ' (did not land)'}, ${s.acked.size} acknowledged, ${printedCount()} printed`,
      );
    }

    // The last boot: everything acknowledged prints; then a burst of 20 more, whose fsyncs on
    // the card are counted per printed job (the benchmarks' figure, measured on the card).
    await drain(async () => {
      const fsyncsBefore = fs.stats().fsyncs;
      const printedBefore = printedCount();
      await publish(20);
      await waitFor('the last burst printed', () => printedCount() >= printedBefore + 20, 60_000);
      summary.fsyncsPerPrintedJob = (fs.stats().fsyncs - fsyncsBefore) / 20;
    });
    const by = s.printsByOrder();
    summary.acknowledged = s.acked.size;
    summary.printed = [...s.acked].filter((o) => by.get(o)?.some((p) => p.cut)).length;
    summary.lost = summary.acknowledged - summary.printed;
    for (const prints of by.values()) {
      const unmarked = prints.filter(
        (p) => !p.markings.includes('POSSIBLE DUPLICATE') && !p.markings.includes('REPRINT'),
      );
      summary.unmarkedDuplicates += Math.max(0, unmarked.length - 1);
    }
    summary.stuck = stuckJobs(dbPath);
    return summary;
  } catch (error) {
    if (error instanceof Failure) throw new Error(`${error.message} (seed ${options.seed})`);
    throw new Error(`${(error as Error).message} (seed ${options.seed})\n${store?.tail() ?? ''}`, {
      cause: error,
    });
  } finally {
    await store?.tearDown();
    await fs.destroy();
  }
}

/** fsync of every file and directory under `dir`: what an installer leaves is on the card. */
export function syncTree(dir: string): void {
  if (statSync(dir).isDirectory()) for (const entry of readdirSync(dir)) syncTree(join(dir, entry));
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** `printer-agent config set` as a person runs it (the bundle), its exit code. */
function configSet(configPath: string, statusIntervalMs: number): Promise<number | null> {
  const child = spawn(
    process.execPath,
    [
      ...cliEntry(),
      'config',
      'set',
      'printers[0].statusIntervalMs',
      String(statusIntervalMs),
      '--config',
      configPath,
    ],
    { cwd: ROOT, stdio: 'ignore' },
  );
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

/** A copy of the database (and its WAL) checked off the card: opening it in place would change it. */
function withCopy<T>(dbPath: string, check: (db: Database.Database) => T): T | null {
  if (!existsSync(dbPath)) return null;
  const dir = mkdtempSync(join(tmpdir(), 'pa-powercut-check-'));
  try {
    const copy = join(dir, 'jobs.db');
    copyFileSync(dbPath, copy);
    if (existsSync(`${dbPath}-wal`)) copyFileSync(`${dbPath}-wal`, `${copy}-wal`);
    const db = new Database(copy);
    try {
      return check(db);
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function checkDatabase(dbPath: string): void {
  withCopy(dbPath, (db) => {
    const result = db.pragma('integrity_check', { simple: true });
    if (result !== 'ok') throw new Failure(`integrity_check after a cut: ${String(result)}`);
  });
}

function checkConfig(configPath: string): void {
  loadConfig({ configPath, env: {} });
}

/** Jobs neither finished nor in a state that needs a person, after the last drain. */
function stuckJobs(dbPath: string): number {
  return (
    withCopy(dbPath, (db) => {
      const row = db
        .prepare("SELECT count(*) AS n FROM jobs WHERE state IN ('queued', 'waiting', 'printing')")
        .get() as { n: number };
      return row.n;
    }) ?? 0
  );
}
