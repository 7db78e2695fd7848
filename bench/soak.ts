/**
 * `npm run soak -- --minutes N`: the agent as a child process under mixed load with rotating
 * faults (reliability fault matrix row 20, faults of rows 5-12), then a report.
 *
 * Load: orders at a store's peak rate (`--rate`, default 1 per second) plus a burst of
 * `--burst` orders (default 25) every 40 s, published by an MQTT client playing the order
 * service. Faults, one at a time, rotating every 11 s, each held for 6 s: broker restart
 * (5), silent partition through our TCP proxy (7), flapping link (8), paper out, cover open,
 * offline (9), printer unplugged (10), mute printer (11), a 9600-baud link (12). A few forged
 * messages ride along (rejections).
 *
 * After N minutes the faults are cleared and the agent drains. The run fails (exit 1) when an
 * invariant breaks: an acknowledged order never printed, an order printed twice without a
 * marking, the daemon exiting, or RSS above --max-rss-mb. The report (`bench/soak-report.json`
 * unless --out) has jobs, prints, duplicates, rejections, latency percentiles (publish -> the
 * `printed` event) and samples every 5 s of RSS, open file descriptors and WAL size.
 *
 * Needs Mosquitto (Debian package mosquitto), like the fault suite it shares its harness with.
 */
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { MOSQUITTO_SKIP, Mosquitto, skipWithoutMosquitto } from '../harness/mosquitto.js';
import { generateKeyPair, parseKey } from '../src/protocol/signing.js';
import { type FaultStore, rssMb, Stores } from '../test/faults/harness.js';
import { positiveArg } from './harness.js';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '2' },
    rate: { type: 'string', default: '1' },
    burst: { type: 'string', default: '25' },
    'max-rss-mb': { type: 'string', default: '300' },
    out: { type: 'string' },
  },
});

const minutes = positiveArg('minutes', args.minutes);
const ratePerSec = positiveArg('rate', args.rate);
const burst = Math.floor(positiveArg('burst', args.burst));
const maxRssMb = positiveArg('max-rss-mb', args['max-rss-mb']);
const out = args.out ?? join(dirname(fileURLToPath(import.meta.url)), 'soak-report.json');

if (skipWithoutMosquitto()) {
  process.stderr.write(`soak: ${MOSQUITTO_SKIP}\n`);
  process.exit(1);
}

interface Sample {
  atSec: number;
  rssMb: number | null;
  fds: number | null;
  walBytes: number;
  dbBytes: number;
  published: number;
  printed: number;
  fault: string;
}

const fileSize = (path: string) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};
const openFds = (pid: number) => {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return null;
  }
};
const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

type Fault = {
  name: string;
  row: number;
  on(s: FaultStore): Promise<void>;
  off(s: FaultStore): Promise<void>;
};

function faults(broker: Mosquitto): Fault[] {
  const printer = (name: 'paper-out' | 'cover-open' | 'offline' | 'mute', row: number): Fault => ({
    name,
    row,
    on: async (s) => s.emulator.setFault(name, true),
    off: async (s) => s.emulator.setFault(name, false),
  });
  let flapping: NodeJS.Timeout | undefined;
  return [
    { name: 'broker restart', row: 5, on: () => broker.stop(), off: () => broker.restart() },
    {
      name: 'silent partition',
      row: 7,
      on: async (s) => s.brokerProxy!.setMode('hold'),
      off: async (s) => s.brokerProxy!.setMode('pass'),
    },
    {
      name: 'flapping link',
      row: 8,
      on: async (s) => {
        flapping = setInterval(() => s.brokerProxy!.reset(), 1500);
      },
      off: async () => clearInterval(flapping),
    },
    printer('paper-out', 9),
    printer('cover-open', 9),
    printer('offline', 9),
    {
      name: 'printer unplugged',
      row: 10,
      on: async (s) => {
        s.printerProxy!.setMode('refuse');
        s.printerProxy!.reset();
      },
      off: async (s) => s.printerProxy!.setMode('pass'),
    },
    printer('mute', 11),
    {
      name: '9600 baud link',
      row: 12,
      on: async (s) => {
        s.printerProxy!.throttleBps = 960; // 9600 baud, 8N1
      },
      off: async (s) => {
        s.printerProxy!.throttleBps = null;
      },
    },
  ];
}

const broker = await Mosquitto.start({ persistence: true });
const stores = new Stores();
const store = await stores.create({
  name: 'soak',
  broker,
  brokerProxy: true,
  printerProxy: true,
  keepaliveSec: 5,
});
const started = performance.now();
const elapsedSec = () => (performance.now() - started) / 1000;
const publishedAt = new Map<string, number>();
const latencies: number[] = [];
store.service.on('message', (topic, payload) => {
  if (topic !== store.t.job) return;
  const event = JSON.parse(payload.toString()) as { jobId?: string; state?: string };
  const at = event.jobId ? publishedAt.get(event.jobId) : undefined;
  if (event.state === 'printed' && at !== undefined) {
    latencies.push(performance.now() - at);
    publishedAt.delete(event.jobId!);
  }
});

const wrongKey = parseKey(generateKeyPair().privatePem, 'private');
const agent = await store.startOnline();
let n = 0;
let published = 0;
let forged = 0;
let currentFault = 'none';
const publishFailures: string[] = [];
const publishOne = () => {
  const k = ++n;
  publishedAt.set(store.jobId(k), performance.now());
  published++;
  store.publish(k).catch((e: Error) => publishFailures.push(`${k}: ${e.message}`));
  // One in 50 is followed by a forged copy: signed with the wrong key, never to be printed.
  if (k % 50 === 0) {
    forged++;
    void store
      .publishRaw(store.envelope(store.instruction(100_000 + k), { key: wrongKey }))
      .catch(() => {});
  }
};

const samples: Sample[] = [];
const sample = () => {
  samples.push({
    atSec: Math.round(elapsedSec()),
    rssMb: agent.alive ? rssMb(agent.pid) : null,
    fds: agent.alive ? openFds(agent.pid) : null,
    walBytes: fileSize(join(store.stateDir, 'jobs.db-wal')),
    dbBytes: fileSize(join(store.stateDir, 'jobs.db')),
    published,
    printed: store.printedOrders().length,
    fault: currentFault,
  });
};

const endAt = performance.now() + minutes * 60_000;
const timers = [
  setInterval(publishOne, 1000 / ratePerSec),
  setInterval(() => {
    for (let i = 0; i < burst; i++) publishOne();
  }, 40_000),
  setInterval(sample, 5000),
];
sample();

const injected: Record<string, number> = {};
const rotation = faults(broker);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// A fault every 11 s (5 s clear, 6 s on): a 2-minute run goes once through all ten.
for (let i = 0; performance.now() + 11_000 <= endAt; i++) {
  await sleep(5000);
  const fault = rotation[i % rotation.length]!;
  currentFault = fault.name;
  injected[fault.name] = (injected[fault.name] ?? 0) + 1;
  process.stdout.write(`${Math.round(elapsedSec())}s: ${fault.name} (row ${fault.row})\n`);
  await fault.on(store);
  await sleep(6000);
  await fault.off(store);
  currentFault = 'none';
  if (!agent.alive) break;
}
await sleep(Math.max(0, endAt - performance.now()));
for (const t of timers) clearInterval(t);

// Drain: every acknowledged order must come out once the faults are gone.
const drainStart = performance.now();
let drained = false;
while (performance.now() - drainStart < 180_000 && agent.alive) {
  const printed = new Set(store.printedOrders());
  if ([...store.acked].every((o) => printed.has(o)) && store.acked.size === published) {
    drained = true;
    break;
  }
  await sleep(250);
}
sample();

const violations: string[] = [];
if (!agent.alive) violations.push(`the agent exited: ${JSON.stringify(await agent.exited)}`);
if (!drained) violations.push('not every acknowledged order printed within 180 s after the faults');
try {
  store.assertInvariants();
} catch (error) {
  violations.push((error as Error).message);
}
const peakRss = Math.max(...samples.map((s) => s.rssMb ?? 0));
if (peakRss > maxRssMb) violations.push(`RSS ${peakRss.toFixed(0)} MB > ${maxRssMb} MB`);

const prints = store.prints();
const byOrder = store.printsByOrder();
const extra = [...byOrder.values()].flatMap((p) => p.slice(1));
const states = (s: string) => store.events.filter((e) => e.state === s).length;
const sorted = latencies.sort((a, b) => a - b);
const ms = (v: number | null) => (v === null ? null : Math.round(v));
const half = Math.floor(samples.length / 2);
const range = (key: 'rssMb' | 'fds' | 'walBytes', from: number, to: number) => {
  const v = samples.slice(from, to).map((s) => s[key] ?? 0);
  return v.length ? { min: Math.min(...v), max: Math.max(...v) } : null;
};
const report = {
  minutes,
  ratePerSec,
  burst,
  node: process.version,
  at: new Date().toISOString(),
  ok: violations.length === 0,
  violations,
  orders: { published, acknowledged: store.acked.size, printed: store.printedOrders().length },
  prints: {
    total: prints.length,
    duplicatesMarked: extra.filter((p) => p.markings.length > 0).length,
    duplicatesUnmarked: extra.filter((p) => p.markings.length === 0).length,
  },
  events: {
    printed: states('printed'),
    unconfirmed: states('unconfirmed'),
    waiting: states('waiting'),
    rejected: states('rejected'),
    duplicate: states('duplicate'),
    failed: states('failed'),
  },
  forgedSent: forged,
  publishFailures: publishFailures.slice(0, 20),
  faultsInjected: injected,
  latencyMs: {
    samples: sorted.length,
    p50: ms(percentile(sorted, 0.5)),
    p90: ms(percentile(sorted, 0.9)),
    p99: ms(percentile(sorted, 0.99)),
    max: ms(sorted.at(-1) ?? null),
  },
  resources: {
    rssMb: { firstHalf: range('rssMb', 0, half), secondHalf: range('rssMb', half, samples.length) },
    fds: { firstHalf: range('fds', 0, half), secondHalf: range('fds', half, samples.length) },
    walBytes: {
      firstHalf: range('walBytes', 0, half),
      secondHalf: range('walBytes', half, samples.length),
    },
  },
  samples,
};
writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);

const r = report;
const lines = [
  `soak: ${minutes} min, ${ratePerSec}/s + bursts of ${burst}: ${r.ok ? 'OK' : 'FAILED'}`,
  `orders   published ${r.orders.published}, acknowledged ${r.orders.acknowledged}, printed ${r.orders.printed}`,
  `prints   ${r.prints.total} (extra copies marked ${r.prints.duplicatesMarked}, unmarked ${r.prints.duplicatesUnmarked})`,
  `events   unconfirmed ${r.events.unconfirmed}, waiting ${r.events.waiting}, rejected ${r.events.rejected} (forged sent ${forged}), duplicate ${r.events.duplicate}`,
  `latency  p50 ${r.latencyMs.p50} ms, p90 ${r.latencyMs.p90} ms, p99 ${r.latencyMs.p99} ms, max ${r.latencyMs.max} ms (publish -> printed event, faults included)`,
  `rss MB   first half ${JSON.stringify(r.resources.rssMb.firstHalf)}, second half ${JSON.stringify(r.resources.rssMb.secondHalf)}`,
  `fds      first half ${JSON.stringify(r.resources.fds.firstHalf)}, second half ${JSON.stringify(r.resources.fds.secondHalf)}`,
  `WAL B    first half ${JSON.stringify(r.resources.walBytes.firstHalf)}, second half ${JSON.stringify(r.resources.walBytes.secondHalf)}`,
  `faults   ${Object.entries(injected)
    .map(([k, v]) => `${k} x${v}`)
    .join(', ')}`,
  ...violations.map((v) => `VIOLATION ${v}`),
  `report   ${out}`,
];
process.stdout.write(`${lines.join('\n')}\n`);

await stores.tearDown();
await broker.stop();
process.exit(r.ok ? 0 : 1);
