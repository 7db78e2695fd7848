/**
 * `npm run fleet -- --stores N --minutes M` (issue 19 item 4): a chain at lunch time.
 *
 * - N real agents in a few worker processes (bench/fleet-agents.child.ts), each with its own job
 *   database, broker session and virtual printer on a loopback TCP port;
 * - two instances of the reference order service (the compiled `printer-agent order-service`, as
 *   production runs it) on one PostgreSQL database, behind no balancer: the POS side sends each
 *   create to the next live instance and, when an instance does not answer, repeats the same
 *   signed request on the other (idempotent create);
 * - one Mosquitto with persistence;
 * - orders created through the HTTP API across all stores, Poisson arrivals at `--rate` orders per
 *   store and minute (default 1: a busy counter at lunch);
 * - midway (a timer at half the run, whatever the arrivals), one service instance is killed
 *   (SIGKILL, confirmed by its exit) and the broker restarts.
 *
 * Then the creates stop and the fleet drains (up to --drain-seconds). Report (stdout and JSON,
 * bench/fleet-report.json unless --out): when the faults happened, orders created, printed,
 * printed twice (marked and unmarked), lost, the same for the orders created after the faults,
 * create-to-printed latency p50/p99/max (from the first send of the create to the cut on the
 * store's printer), and CPU seconds and peak RSS of each part. Exit 1 when an order was lost or
 * printed twice unmarked, a create failed, or a midway fault did not happen (the instance not
 * killed, the broker not restarted). Needs Mosquitto, PostgreSQL and `npm run build`.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort, MOSQUITTO_SKIP, Mosquitto, skipWithoutMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, POSTGRES_SKIP, skipWithoutPostgres } from '../harness/postgres.js';
import { buildEnvelope } from '../src/protocol/envelope.js';
import { generateKeyPair, parseKey } from '../src/protocol/signing.js';
import type { FleetWorkerMessage, FleetWorkerStart } from './fleet-agents.child.js';
import { positiveArg } from './harness.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist', 'cli.js');

const { values: args } = parseArgs({
  options: {
    stores: { type: 'string', default: '50' },
    minutes: { type: 'string', default: '1' },
    rate: { type: 'string', default: '1' },
    workers: { type: 'string' },
    'drain-seconds': { type: 'string', default: '180' },
    out: { type: 'string' },
  },
});

const stores = Math.floor(positiveArg('stores', args.stores));
const minutes = positiveArg('minutes', args.minutes);
const ratePerStoreMin = positiveArg('rate', args.rate);
const workerCount = Math.min(
  stores,
  Math.floor(positiveArg('workers', args.workers ?? String(Math.ceil(stores / 250)))),
);
const drainMs = positiveArg('drain-seconds', args['drain-seconds']) * 1000;
const out = args.out ?? join(ROOT, 'bench', 'fleet-report.json');

for (const skip of [
  skipWithoutMosquitto() && MOSQUITTO_SKIP,
  skipWithoutPostgres() && POSTGRES_SKIP,
])
  if (skip) {
    process.stderr.write(`fleet: ${skip}\n`);
    process.exit(1);
  }
try {
  readFileSync(CLI);
} catch {
  process.stderr.write('fleet: dist/cli.js is missing: run `npm run build` first\n');
  process.exit(1);
}

const say = (line: string) =>
  process.stdout.write(`[fleet ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

// --- the parts --------------------------------------------------------------------------------

const dir = mkdtempSync(join(tmpdir(), 'pa-fleet-'));
const APP_ID = 'fleet-app';
const app = generateKeyPair();
const service = generateKeyPair();
const files = {
  appPublic: join(dir, 'app.pub'),
  appPrivate: join(dir, 'app.key'),
  servicePublic: join(dir, 'service.pub'),
  servicePrivate: join(dir, 'service.key'),
};
writeFileSync(files.appPublic, app.publicPem);
writeFileSync(files.appPrivate, app.privatePem, { mode: 0o600 });
writeFileSync(files.servicePublic, service.publicPem);
writeFileSync(files.servicePrivate, service.privatePem, { mode: 0o600 });
const appKey = parseKey(app.privatePem, 'private');
const storeKeys = Array.from({ length: stores }, () => randomBytes(12).toString('hex'));

/** CPU seconds (user + system) and RSS of a process, from /proc. */
function usage(pid: number): { cpuSec: number; rssMb: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return { cpuSec: ticks / 100, rssMb: rss ? Number(rss[1]) / 1024 : 0 };
  } catch {
    return null;
  }
}

interface Part {
  name: string;
  pid: () => number | null;
  cpuSec: number;
  peakRssMb: number;
}
const parts: Part[] = [];
function track(name: string, pid: () => number | null): void {
  parts.push({ name, pid, cpuSec: 0, peakRssMb: 0 });
}
function sample(): void {
  for (const part of parts) {
    const pid = part.pid();
    const u = pid === null ? null : usage(pid);
    if (!u) continue;
    // CPU is cumulative per process: a restarted broker adds its new process's time.
    part.cpuSec = Math.max(part.cpuSec, u.cpuSec + (part.name === 'broker' ? brokerCpuBefore : 0));
    part.peakRssMb = Math.max(part.peakRssMb, u.rssMb);
  }
}
let brokerCpuBefore = 0;

const db = await freshDatabase();
say(`PostgreSQL database ${db.name}`);
const broker = await Mosquitto.start({
  persistence: true,
  extraConfig: ['autosave_interval 1', 'max_connections -1'],
});
track('broker', () => broker.pid);
say(`Mosquitto at ${broker.url}`);

/** A service instance: the compiled command, its own config (its own port), one database. */
interface Instance {
  name: string;
  url: string;
  child: ChildProcess;
  alive: boolean;
  log: string;
}

async function startInstance(name: string): Promise<Instance> {
  const port = await freePort();
  const config = join(dir, `${name}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      apps: [
        {
          appId: APP_ID,
          publicKeyFile: files.appPublic,
          stores: storeKeys.map((storeKey, i) => ({
            storeKey,
            restaurantNo: `R${i}`,
            branchIdentifier: `B-${i}`,
          })),
        },
      ],
      servicePrivateKeyFile: files.servicePrivate,
      timeZone: 'UTC',
      database: db.url,
      listen: { host: '127.0.0.1', port },
      mqtt: { url: broker.url },
      // Every POS of the chain and every agent's catch-up come from this one host here.
      http: { maxConnections: 20_000, maxConnectionsPerClient: 20_000 },
    }),
  );
  const child = spawn(process.execPath, [CLI, 'order-service', '--config', config], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const instance: Instance = { name, url: `http://127.0.0.1:${port}`, child, alive: true, log: '' };
  const keep = (d: Buffer) => {
    instance.log = (instance.log + d.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.on('exit', () => {
    instance.alive = false;
  });
  const end = Date.now() + 30_000;
  for (;;) {
    try {
      await fetch(`${instance.url}/`);
      break;
    } catch {
      if (Date.now() > end || !instance.alive)
        throw new Error(`service ${name} did not start:\n${instance.log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  track(`service ${name}`, () => (instance.alive ? (child.pid ?? null) : null));
  return instance;
}

const instances = [await startInstance('a'), await startInstance('b')];
say(`order service instances ${instances.map((i) => i.url).join(', ')}`);

// --- the agents --------------------------------------------------------------------------------

interface Printed {
  at: number;
  markings: string[];
}
/** Prints per order number (an order is unique to its store). */
const printed = new Map<string, Printed[]>();
const workers: ChildProcess[] = [];
const ready: Promise<number>[] = [];
const perWorker = Math.ceil(stores / workerCount);
for (let w = 0; w < workerCount; w++) {
  const keys = storeKeys.slice(w * perWorker, (w + 1) * perWorker);
  const child = fork(join(ROOT, 'bench', 'fleet-agents.child.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-20_000);
  });
  workers.push(child);
  track(`agents ${w + 1}`, () => (child.exitCode === null ? (child.pid ?? null) : null));
  ready.push(
    new Promise((resolve, reject) => {
      child.on('message', (m: FleetWorkerMessage) => {
        if (m.type === 'ready') resolve(m.startMs);
        if (m.type === 'print')
          printed.set(m.orderNo, [
            ...(printed.get(m.orderNo) ?? []),
            { at: m.at, markings: m.markings },
          ]);
      });
      child.once('exit', (code) =>
        reject(new Error(`worker ${w + 1} exited (${code}):\n${stderr}`)),
      );
    }),
  );
  const workDir = join(dir, `agents-${w + 1}`);
  mkdirSync(workDir);
  const start: FleetWorkerStart = {
    type: 'start',
    dir: workDir,
    appId: APP_ID,
    storeKeys: keys,
    brokerUrl: broker.url,
    servicePublicKeyFile: files.servicePublic,
    storePrivateKeyFile: files.appPrivate,
    // The survivor: the instance killed midway is a; agents catch up through b.
    catchUpUrl: instances[1]!.url,
  };
  child.send(start);
}
track('orchestrator (POS clients)', () => process.pid);
const startMs = await Promise.all(ready);
say(`${stores} agents started in ${workerCount} worker(s) (${Math.max(...startMs)} ms)`);
// PostgreSQL serves the instances from one backend process per connection: their CPU, summed
// over every backend seen on this database, and the peak of their summed memory (PSS).
const pgCpu = new Map<number, number>();
let pgPeakRssMb = 0;
async function samplePostgres(): Promise<void> {
  const rows = await db
    .query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [db.name])
    .catch(() => []);
  let rss = 0;
  for (const { pid } of rows) {
    const u = usage(pid);
    if (!u) continue;
    pgCpu.set(pid, Math.max(pgCpu.get(pid) ?? 0, u.cpuSec));
    // PSS, not RSS: each backend maps the shared buffers, and RSS would count them per backend.
    try {
      const pss = /^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
      rss += pss ? Number(pss[1]) / 1024 : u.rssMb;
    } catch {
      rss += u.rssMb;
    }
  }
  pgPeakRssMb = Math.max(pgPeakRssMb, rss);
}
const sampler = setInterval(() => {
  sample();
  void samplePostgres();
}, 2000);

// --- the lunch rush ----------------------------------------------------------------------------

interface Created {
  orderNo: string;
  sentAt: number;
}
const created: Created[] = [];
let createFailures = 0;
/** Why create attempts failed: a response code, or the connection error. */
const failureCodes = new Map<number | string, number>();
let retriedOnOtherInstance = 0;
let next = 0;
const PRODUCTS = ['Beef noodles', 'Chicken adobo', 'Iced tea', 'Halo-halo', 'Pork buns', 'Rice'];

/** One POS create: the next live instance; on no answer, the same request on the other. */
async function createOrder(n: number): Promise<void> {
  const storeKey = storeKeys[Math.floor(Math.random() * stores)]!;
  const param = {
    productInfo: Array.from({ length: 1 + (n % 4) }, (_, i) => ({
      productName: PRODUCTS[(n + i) % PRODUCTS.length]!,
      price: 5_000 + ((n * 37 + i * 11) % 20) * 500,
      quantity: 1 + (i % 2),
    })),
    orderType: 1 + (n % 3),
    // Takeout orders (3) carry their fees (order-api 4.2).
    ...(n % 3 === 2 ? { deliveryFee: 4_900, packingFee: 1_000 } : {}),
    paymentWay: '2',
    paymentTransactionId: `FLEET-${n}`,
  };
  const body = JSON.stringify(buildEnvelope({ appId: APP_ID, storeKey, param, key: appKey }));
  const sentAt = Date.now();
  for (let attempt = 0; attempt < 6; attempt++) {
    const live = instances.filter((i) => i.alive);
    const instance = live[(next++ + attempt) % live.length];
    if (!instance) break;
    try {
      const res = await fetch(`${instance.url}/open-api/order/create`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      const answer = (await res.json()) as { code: number; data: { orderNo: string } | null };
      if (answer.code === 10000 && answer.data) {
        created.push({ orderNo: answer.data.orderNo, sentAt });
        return;
      }
      // 21000: the service's own failure (its database, its broker): retry as a POS would.
      failureCodes.set(answer.code, (failureCodes.get(answer.code) ?? 0) + 1);
    } catch (error) {
      const code = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      failureCodes.set(code, (failureCodes.get(code) ?? 0) + 1);
      // No answer: the instance is gone or hung; the same request goes to the other.
    }
    if (attempt > 0 || live.length > 1) retriedOnOtherInstance++;
    await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
  }
  createFailures++;
}

const totalPerSec = (stores * ratePerStoreMin) / 60;
const loadMs = minutes * 60_000;
const loadStart = Date.now();
const pending = new Set<Promise<void>>();
/** The midway faults: when each happened (ms after the load started), or why it did not. */
let killedAt: number | null = null;
let brokerRestartedAt: number | null = null;
const faultErrors: string[] = [];

/** Resolves when `child` has exited, or rejects after `ms`. */
function exited(child: ChildProcess, ms: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still running after ${ms} ms`)), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Kills instance a, then restarts the broker; records when each was done, or why not. */
async function midwayFaults(): Promise<void> {
  const victim = instances[0]!;
  try {
    if (!victim.child.kill('SIGKILL')) throw new Error('kill(SIGKILL) was not delivered');
    await exited(victim.child, 10_000);
    killedAt = Date.now() - loadStart;
    say('service instance a killed (SIGKILL)');
  } catch (error) {
    faultErrors.push(`service instance a not killed: ${(error as Error).message}`);
    say(faultErrors.at(-1)!);
  }
  sample();
  brokerCpuBefore = parts.find((p) => p.name === 'broker')!.cpuSec;
  try {
    await broker.restart();
    brokerRestartedAt = Date.now() - loadStart;
    say('broker restarted');
  } catch (error) {
    faultErrors.push(`broker not restarted: ${(error as Error).message}`);
    say(faultErrors.at(-1)!);
  }
}

// On a timer, not at an arrival: with few stores the first order after half-time may come late.
let faults: Promise<void> | null = null;
const faultTimer = setTimeout(() => {
  faults = midwayFaults();
}, loadMs / 2);
say(`creating orders: ${totalPerSec.toFixed(1)}/s for ${minutes} min`);
let n = 0;
while (Date.now() - loadStart < loadMs) {
  // Poisson arrivals: exponential gaps at the chain's total rate, cut at the end of the load.
  const gap = -Math.log(1 - Math.random()) * (1000 / totalPerSec);
  const left = loadMs - (Date.now() - loadStart);
  await new Promise((r) => setTimeout(r, Math.min(gap, left)));
  if (gap > left) break;
  const p = createOrder(n++).finally(() => pending.delete(p));
  pending.add(p);
}
clearTimeout(faultTimer);
if (faults === null) faultErrors.push('the midway faults never started (the load ended first)');
await faults;
await Promise.all(pending);
say(`${created.length} orders created (${createFailures} failed); draining`);

// --- drain and report --------------------------------------------------------------------------

const drainEnd = Date.now() + drainMs;
while (Date.now() < drainEnd && created.some((c) => !printed.has(c.orderNo)))
  await new Promise((r) => setTimeout(r, 500));
sample();
await samplePostgres();
clearInterval(sampler);

const latencies = created
  .filter((c) => printed.has(c.orderNo))
  .map((c) => Math.max(0, printed.get(c.orderNo)![0]!.at - c.sentAt))
  .sort((a, b) => a - b);
const pct = (q: number) =>
  latencies.length === 0
    ? null
    : latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
let twiceMarked = 0;
let twiceUnmarked = 0;
for (const prints of printed.values()) {
  const extra = prints.slice(1);
  twiceMarked += extra.filter((p) => p.markings.some((m) => m !== 'LATE')).length;
  twiceUnmarked += extra.filter((p) => !p.markings.some((m) => m !== 'LATE')).length;
}
const lost = created.filter((c) => !printed.has(c.orderNo)).map((c) => c.orderNo);
/** Orders whose create was first sent after a fault: what the fleet did once it had happened. */
function after(atMs: number | null) {
  if (atMs === null) return null;
  const these = created.filter((c) => c.sentAt - loadStart >= atMs);
  const twice = these.filter((c) => (printed.get(c.orderNo)?.length ?? 0) > 1).length;
  return {
    created: these.length,
    printed: these.filter((c) => printed.has(c.orderNo)).length,
    printedTwice: twice,
    lost: these.filter((c) => !printed.has(c.orderNo)).length,
  };
}
const afterKill = after(killedAt);
const afterBrokerRestart = after(brokerRestartedAt);
const report = {
  at: new Date().toISOString(),
  machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
  stores,
  minutes,
  ratePerStoreMinute: ratePerStoreMin,
  workers: workerCount,
  agentsStartMs: Math.max(...startMs),
  events: {
    serviceInstanceKilledAtMs: killedAt,
    brokerRestartedAtMs: brokerRestartedAt,
    faultErrors,
  },
  orders: {
    created: created.length,
    createFailures,
    retriedOnOtherInstance,
    failedAttempts: Object.fromEntries(failureCodes),
    printed: created.filter((c) => printed.has(c.orderNo)).length,
    printedTwiceMarked: twiceMarked,
    printedTwiceUnmarked: twiceUnmarked,
    lost: lost.length,
    lostOrderNos: lost.slice(0, 50),
    afterServiceInstanceKilled: afterKill,
    afterBrokerRestarted: afterBrokerRestart,
  },
  createToPrintedMs: { p50: pct(0.5), p99: pct(0.99), max: latencies.at(-1) ?? null },
  parts: [
    ...parts.map((p) => ({
      name: p.name,
      cpuSeconds: Math.round(p.cpuSec * 10) / 10,
      peakRssMb: Math.round(p.peakRssMb),
    })),
    {
      name: 'postgresql (backends)',
      cpuSeconds: Math.round([...pgCpu.values()].reduce((a, b) => a + b, 0) * 10) / 10,
      peakRssMb: Math.round(pgPeakRssMb),
    },
  ],
};
writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);

say(
  `orders   created ${report.orders.created}, printed ${report.orders.printed}, lost ${report.orders.lost}, create failures ${createFailures}`,
);
say(`twice    marked ${twiceMarked}, unmarked ${twiceUnmarked}`);
const faultLine = (what: string, atMs: number | null, a: ReturnType<typeof after>) =>
  atMs === null || a === null
    ? `${what}: did not happen`
    : `${what} at ${(atMs / 1000).toFixed(1)} s; after it: created ${a.created}, printed ${a.printed}, twice ${a.printedTwice}, lost ${a.lost}`;
say(`faults   ${faultLine('instance a killed', killedAt, afterKill)}`);
say(`faults   ${faultLine('broker restarted', brokerRestartedAt, afterBrokerRestart)}`);
say(
  `latency  create -> printed p50 ${report.createToPrintedMs.p50} ms, p99 ${report.createToPrintedMs.p99} ms, max ${report.createToPrintedMs.max} ms`,
);
for (const p of report.parts)
  say(
    `part     ${p.name.padEnd(28)} CPU ${String(p.cpuSeconds).padStart(7)} s   peak RSS ${String(p.peakRssMb).padStart(5)} MB`,
  );
say(`report   ${out}`);

// --- stop ----------------------------------------------------------------------------------------

await Promise.all(
  workers.map(
    (w) =>
      new Promise<void>((resolve) => {
        if (w.exitCode !== null) return resolve();
        w.once('exit', () => resolve());
        w.send({ type: 'stop' });
      }),
  ),
);
for (const i of instances) if (i.alive) i.child.kill('SIGTERM');
await Promise.all(
  instances.map((i) => (i.alive ? new Promise((r) => i.child.once('exit', r)) : null)),
);
await broker.stop();
await db.drop();
rmSync(dir, { recursive: true, force: true });
// The run proves nothing about the faults unless they happened.
const faultsMissing = killedAt === null || brokerRestartedAt === null;
if (faultsMissing)
  process.stderr.write(
    `fleet: FAILED: the midway faults did not all happen (serviceInstanceKilledAtMs ${killedAt}, brokerRestartedAtMs ${brokerRestartedAt})${faultErrors.length > 0 ? `: ${faultErrors.join('; ')}` : ''}\n`,
  );
process.exit(lost.length > 0 || twiceUnmarked > 0 || createFailures > 0 || faultsMissing ? 1 : 0);
