/**
 * The daemon end to end (issue 7): a real Mosquitto, the agent, the emulator on TCP.
 *
 * 1. Latency, publish -> the emulator's `ticket` event (the cut, so the last byte of the receipt
 *    has arrived): signed instructions published one at a time at QoS 1, p50 and p99, twice: over
 *    the first 1,000 jobs after start (the JIT still compiling the agent's code), and again after
 *    `WARM_UP_JOBS` more, the steady state a daemon runs in (decision 214). Baseline,
 *    same broker, same run: a bare mqtt.js subscriber in this process that, for each message,
 *    looks up the jobId and writes that order's receipt bytes (rendered once up front with the
 *    same profile and options) to a second emulator. Second baseline: the floor of this design
 *    (bench/floor.ts, in a process of its own like the agent) on a third emulator: the same relay
 *    plus the durable commits, the status query and the confirmation no correct agent can skip.
 *    The three take turns, a tenth of the jobs each per round, so that the machine's drift during
 *    the run does not decide the ratios. The agent and the floor run bundled with the production
 *    build's options (harness/child-entry.ts): what a store runs, not tsx's transpilation.
 *    Figures are 1000 / ms (higher is better), the milliseconds are in the names.
 * 2. Memory: the agent runs alone in a child process (its RSS is its own, taken after a full GC).
 *    RSS idle after start (baseline) against RSS after 10,000 jobs (2,000 with --quick), the
 *    latency jobs included, printed by the emulator. Figures are 1000 / MB, so the ratio is
 *    idle / after: 1.0 = no growth.
 *
 * Skipped, with a message, when mosquitto is not installed.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mqtt, { type MqttClient } from 'mqtt';
import { scriptEntry } from '../harness/child-entry.js';
import { MOSQUITTO_SKIP, Mosquitto, skipWithoutMosquitto } from '../harness/mosquitto.js';
import { unitEnvironment } from '../harness/unit-environment.js';
import type { AgentSettings } from '../src/agent.js';
import { listenTcp, VirtualPrinter } from '../src/emulator/index.js';
import { buildEnvelope } from '../src/protocol/envelope.js';
import {
  type PrintInstruction,
  printInstructionSchema,
  topics,
} from '../src/protocol/print-protocol.js';
import { generateKeyPair, parseKey } from '../src/protocol/signing.js';
import { deriveStoreId } from '../src/protocol/store-id.js';
import { formatTimestamp } from '../src/protocol/time.js';
import { receiptOptions } from '../src/receipt/options.js';
import { getProfile } from '../src/receipt/profile.js';
import { renderReceipt } from '../src/receipt/render.js';
import { type Comparison, cleanUp, compare } from './harness.js';

const APP_ID = 'A-bench';
const STORE_KEY = 'sk-bench-e2e';
const PREFIX = 'printer-agent/v1';
const PROFILE = 'generic-80mm';
const OPTIONS = receiptOptions({ header: ['BENCH STORE'] });
const RELAY_TOPIC = 'bench/relay/print';
const FLOOR_TOPIC = 'bench/floor/print';
const FLOOR_READY_TOPIC = 'bench/floor/ready';
const WAIT_MS = 180_000;
/** Jobs each subject prints before its latencies count. */
const WARM_JOBS = 20;
/**
 * Jobs printed before the steady-state figures count, by the agent and by each baseline: V8 compiles
 * the agent's per-job code within them (the footprint bench's CPU per job waits as long).
 */
export const WARM_UP_JOBS = { full: 2000, quick: 200 };
/** The latency jobs are measured in this many blocks, the subjects in turn. */
const LATENCY_ROUNDS = 10;

/** For this store (print-protocol v1.1 §4), created now (the agent's anti-replay age passes). */
export function instruction(n: number): PrintInstruction {
  return printInstructionSchema.parse({
    storeId: deriveStoreId(APP_ID, STORE_KEY),
    jobId: `P-${n}`,
    orderNo: `O-${n}`,
    pickUpNo: `A${String(n % 1000).padStart(3, '0')}`,
    createTime: formatTimestamp(new Date()),
    order: {
      productInfo: [{ productName: `Chicken adobo ${n}`, price: 15_000, quantity: 1 }],
      orderType: 1,
      paymentWay: 2,
      paymentTransactionId: `M-${n}`,
    },
  });
}

/** An emulator on TCP that counts its tickets and forgets them (thousands would fill memory). */
export async function countingEmulator() {
  const printer = new VirtualPrinter({ columns: 48, columnsFontB: 64 });
  let tickets = 0;
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  printer.on('ticket', () => {
    tickets++;
    printer.paper.tickets.splice(0);
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (tickets >= waiters[i]!.n) waiters.splice(i, 1)[0]!.resolve();
    }
  });
  const endpoint = await listenTcp(printer, { port: 0 });
  return {
    endpoint,
    get tickets() {
      return tickets;
    },
    /** Resolves when `n` tickets in total have been cut. */
    until(n: number): Promise<void> {
      if (tickets >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`emulator: ${tickets} of ${n} tickets after ${WAIT_MS} ms`)),
          WAIT_MS,
        );
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
  };
}

type Emulator = Awaited<ReturnType<typeof countingEmulator>>;

/**
 * The floor in a process of its own, as the agent runs (bench/floor-relay.child.ts): subscribed
 * to `topic`, printing to the emulator on `printerPort` the receipts of `receiptsFile` (jobId ->
 * base64 bytes), its database in `dir`; it publishes to `readyTopic` once subscribed and stops on
 * SIGTERM.
 */
export function spawnFloor(options: {
  brokerUrl: string;
  topic: string;
  printerPort: number;
  receiptsFile: string;
  dir: string;
  readyTopic: string;
}): ChildProcess {
  const here = dirname(fileURLToPath(import.meta.url));
  // Bundled like the agent's child below (and the footprint bench's agent, the production
  // build): both sides of each ratio run compiled code.
  return spawn(
    process.execPath,
    [
      ...scriptEntry(join(here, 'floor-relay.child.ts')),
      options.brokerUrl,
      options.topic,
      String(options.printerPort),
      options.receiptsFile,
      options.dir,
      options.readyTopic,
    ],
    { cwd: dirname(here), stdio: 'inherit', env: { ...process.env, ...unitEnvironment() } },
  );
}

/** The agent in a child process, driven over IPC (bench/e2e-agent.child.ts). */
class AgentChild {
  private constructor(private readonly child: ChildProcess) {}

  static async start(settings: AgentSettings): Promise<AgentChild> {
    const here = dirname(fileURLToPath(import.meta.url));
    // The child's bundle, built with the production build's options: the agent's code runs as
    // `npm run build` ships it, not transpiled by tsx (whose kept function names cost a call per
    // closure made; a store runs the bundle).
    const entry = scriptEntry(join(here, 'e2e-agent.child.ts'));
    const child = fork(entry[entry.length - 1]!, [], {
      cwd: dirname(here),
      execArgv: [...entry.slice(0, -1), '--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, ...unitEnvironment() },
    });
    const agent = new AgentChild(child);
    await agent.request({ type: 'start', settings }, 'started');
    return agent;
  }

  private request(message: object, reply: string): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const onMessage = (m: Record<string, unknown>) => {
        if (m.type === reply) done(() => resolve(m));
        else if (m.type === 'error') done(() => reject(new Error(`agent child: ${m.message}`)));
      };
      const onExit = (code: number | null) =>
        done(() => reject(new Error(`agent child exited (${code})`)));
      const done = (then: () => void) => {
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
        then();
      };
      this.child.on('message', onMessage);
      this.child.once('exit', onExit);
      this.child.send(message);
    });
  }

  async rss(): Promise<number> {
    return (await this.request({ type: 'rss' }, 'rss')).rss as number;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.child.send({ type: 'stop' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

async function connectClient(url: string, clientId: string): Promise<MqttClient> {
  const client = mqtt.connect(url, { protocolVersion: 5, clientId });
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve());
    client.once('error', reject);
  });
  return client;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Publishes instructions `first` to `last` to every topic, at most 100 unacknowledged. */
async function burst(
  client: MqttClient,
  topics: readonly string[],
  first: number,
  last: number,
  body: (n: number) => string,
): Promise<void> {
  let inFlight: Promise<unknown>[] = [];
  for (let n = first; n <= last; n++) {
    const payload = body(n);
    for (const topic of topics) inFlight.push(client.publishAsync(topic, payload, { qos: 1 }));
    if (inFlight.length >= 100) {
      await Promise.all(inFlight);
      inFlight = [];
    }
  }
  await Promise.all(inFlight);
}

/** Publishes `count` instructions from `first`, one at a time; ms from publish to each cut. */
async function latencies(
  client: MqttClient,
  topic: string,
  emulator: Emulator,
  first: number,
  count: number,
  body: (n: number) => string,
): Promise<number[]> {
  const ms: number[] = [];
  for (let n = first; n < first + count; n++) {
    const payload = body(n);
    const cut = emulator.until(emulator.tickets + 1);
    const start = performance.now();
    await Promise.all([client.publishAsync(topic, payload, { qos: 1 }), cut]);
    ms.push(performance.now() - start);
  }
  return ms;
}

function latencyComparisons(
  agent: number[],
  baseline: number[],
  baselineName: string,
  phase = '',
): Comparison[] {
  return [50, 99].map((p) => {
    const a = percentile(agent, p);
    const b = percentile(baseline, p);
    return compare(
      `e2e latency p${p}, publish -> cut${phase}, vs ${baselineName} (1000/ms)`,
      { name: `agent: ${a.toFixed(2)} ms`, opsPerSec: 1000 / a, samples: agent.length },
      {
        name: `${baselineName}: ${b.toFixed(2)} ms`,
        opsPerSec: 1000 / b,
        samples: baseline.length,
      },
    );
  });
}

export async function benchEndToEnd(quick: boolean): Promise<Comparison[]> {
  if (skipWithoutMosquitto()) {
    console.log(`e2e benchmark skipped: ${MOSQUITTO_SKIP}`);
    return [];
  }
  const latencyJobs = quick ? 200 : 1000;
  const warmUpJobs = quick ? WARM_UP_JOBS.quick : WARM_UP_JOBS.full;
  // Numbered in the order they are published: the first latencies' jobs, the warm-up's, the
  // steady state's; the agent alone then prints the rest (the memory figure).
  const coldLast = WARM_JOBS + latencyJobs;
  const steadyFirst = coldLast + warmUpJobs + 1;
  const relayed = steadyFirst + latencyJobs - 1;
  const totalJobs = quick ? 2000 : 10_000;
  const dir = mkdtempSync(join(tmpdir(), 'pa-bench-e2e-'));
  const pair = generateKeyPair();
  const serviceKey = parseKey(pair.privatePem, 'private');
  writeFileSync(join(dir, 'service-public.pem'), pair.publicPem);
  const storeId = deriveStoreId(APP_ID, STORE_KEY);
  const t = topics(PREFIX, storeId);
  const envelope = (n: number) =>
    JSON.stringify(
      buildEnvelope({ appId: APP_ID, storeKey: STORE_KEY, param: instruction(n), key: serviceKey }),
    );

  const broker = await Mosquitto.start();
  const cleanup: Array<() => Promise<unknown> | unknown> = [() => broker.stop()];
  try {
    // --- the agent, in its own process ---
    const emulator = await countingEmulator();
    cleanup.push(() => emulator.endpoint.close());
    const settings: AgentSettings = {
      appId: APP_ID,
      storeKey: STORE_KEY,
      storeId,
      mqtt: {
        url: broker.url,
        protocolVersion: 5,
        prefix: PREFIX,
        clientId: `printer-agent-${storeId}`,
        keepaliveSec: 30,
        sessionExpirySec: 3600,
        reconnectMinMs: 100,
        reconnectMaxMs: 1000,
        maxMessageBytes: 64 * 1024,
      },
      keys: { servicePublicKeyFile: join(dir, 'service-public.pem'), scheme: 'RSA-SHA256' },
      printers: [
        {
          id: 'receipt',
          url: emulator.endpoint.address,
          profile: PROFILE,
          roles: ['receipt'],
          statusIntervalMs: 1000,
        },
      ],
      receipt: OPTIONS,
      lateAfterMinutes: null,
      interruptedPolicy: 'reprint-marked',
      stateDir: join(dir, 'state'),
      statusIntervalMs: 5000,
      retentionDays: 14,
      freshness: { maxAgeMs: 7 * 86_400_000, clock: 'synchronized' },
    };
    const agent = await AgentChild.start(settings);
    cleanup.push(() => agent.stop());
    const publisher = await connectClient(broker.url, 'bench-service');
    cleanup.push(() => publisher.endAsync());
    // Let the agent settle (subscriptions, first status poll) before the idle figure.
    await new Promise((r) => setTimeout(r, 1000));
    const idleRss = await agent.rss();

    // --- the baseline relay, same broker, a second emulator ---
    const relayEmulator = await countingEmulator();
    cleanup.push(() => relayEmulator.endpoint.close());
    const bytes = new Map<string, Uint8Array>();
    for (let n = 1; n <= relayed; n++) {
      const rendered = renderReceipt({
        source: { kind: 'instruction', instruction: instruction(n) },
        profile: getProfile(PROFILE),
        options: OPTIONS,
      });
      bytes.set(`P-${n}`, rendered.bytes);
    }
    const { connect } = await import('node:net');
    const socket = connect({ port: relayEmulator.endpoint.port, host: '127.0.0.1' });
    await new Promise((resolve) => socket.once('connect', resolve));
    cleanup.push(() => socket.destroy());
    const relay = await connectClient(broker.url, 'bench-relay');
    cleanup.push(() => relay.endAsync());
    relay.on('message', (_topic, payload) => {
      const env = JSON.parse(payload.toString()) as { param: string };
      const jobId = (JSON.parse(env.param) as { jobId: string }).jobId;
      const receipt = bytes.get(jobId);
      if (receipt) socket.write(receipt);
    });
    await relay.subscribeAsync(RELAY_TOPIC, { qos: 1 });
    // --- the floor of this design (bench/floor.ts), same broker, a third emulator: the job
    // committed before the PUBACK, then, one job at a time, committed as printing, status
    // queried, its pre-rendered bytes sent, GS r 1 confirmed (the profile's mode), committed as
    // printed. In its own process, as the agent is: next to the emulators, in this process, its
    // five printer round trips per job would not wait for another process to wake up (p50 1.19 to
    // 1.23 ms in this process, 1.38 ms in its own, measured here on 2026-11-26) ---
    const floorEmulator = await countingEmulator();
    cleanup.push(() => floorEmulator.endpoint.close());
    const receiptsFile = join(dir, 'receipts.json');
    writeFileSync(
      receiptsFile,
      JSON.stringify(
        Object.fromEntries([...bytes].map(([id, b]) => [id, Buffer.from(b).toString('base64')])),
      ),
    );
    await publisher.subscribeAsync(FLOOR_READY_TOPIC, { qos: 1 });
    const floorReady = new Promise<void>((resolve) => {
      const onMessage = (topic: string) => {
        if (topic !== FLOOR_READY_TOPIC) return;
        publisher.off('message', onMessage);
        resolve();
      };
      publisher.on('message', onMessage);
    });
    const floor = spawnFloor({
      brokerUrl: broker.url,
      topic: FLOOR_TOPIC,
      printerPort: floorEmulator.endpoint.port,
      receiptsFile,
      dir,
      readyTopic: FLOOR_READY_TOPIC,
    });
    cleanup.push(async () => {
      if (floor.exitCode !== null || floor.signalCode !== null) return;
      const exited = new Promise((resolve) => floor.once('exit', resolve));
      floor.kill('SIGTERM');
      await exited;
    });
    await floorReady;
    // --- the latencies: a few jobs each not counted, then the three subjects in turn, a block of
    // jobs each per round, the same jobs for every subject: a machine that slows down or speeds
    // up during the run (other work, its CPU's clock) weighs on all three alike, where one
    // subject measured after the other would carry the drift into the ratio ---
    const subjects = [
      { topic: t.print, target: emulator },
      { topic: RELAY_TOPIC, target: relayEmulator },
      { topic: FLOOR_TOPIC, target: floorEmulator },
    ];
    const measure = async (first: number) => {
      const ms = subjects.map(() => [] as number[]);
      const block = latencyJobs / LATENCY_ROUNDS;
      for (let round = 0; round < LATENCY_ROUNDS; round++) {
        for (const [i, s] of subjects.entries())
          ms[i]!.push(
            ...(await latencies(
              publisher,
              s.topic,
              s.target,
              first + round * block,
              block,
              envelope,
            )),
          );
      }
      return ms.map((m) => m.sort((x, y) => x - y)) as [number[], number[], number[]];
    };
    for (const s of subjects) await latencies(publisher, s.topic, s.target, 1, WARM_JOBS, envelope);
    const [coldAgent, , coldFloor] = await measure(WARM_JOBS + 1);
    // The warm-up, every subject the same jobs at once, then the steady state's latencies.
    await burst(
      publisher,
      subjects.map((s) => s.topic),
      coldLast + 1,
      steadyFirst - 1,
      envelope,
    );
    await Promise.all(subjects.map((s) => s.target.until(steadyFirst - 1)));
    const [agentMs, relayMs, floorMs] = await measure(steadyFirst);

    // The rest of the jobs as fast as they can be signed and published; the agent queues them.
    const cut = emulator.until(totalJobs);
    await burst(publisher, [t.print], relayed + 1, totalJobs, envelope);
    await cut;
    await new Promise((r) => setTimeout(r, 500));
    const afterRss = await agent.rss();

    const mb = (rss: number) => rss / 1024 / 1024;
    const count = (n: number) => n.toLocaleString('en-US');
    const steadyPhase = ` after ${count(steadyFirst - 1)} jobs`;
    const coldPhase = `, jobs ${WARM_JOBS + 1}-${count(coldLast)} after start (JIT warming up)`;
    const memory = compare(
      'agent RSS, child process (1000/MB; ratio = idle / after)',
      {
        name: `after ${totalJobs.toLocaleString('en-US')} jobs: ${mb(afterRss).toFixed(1)} MB`,
        opsPerSec: 1000 / mb(afterRss),
        samples: totalJobs,
      },
      {
        name: `idle after start: ${mb(idleRss).toFixed(1)} MB`,
        opsPerSec: 1000 / mb(idleRss),
        samples: 1,
      },
    );
    return [
      ...latencyComparisons(agentMs, relayMs, 'bare mqtt relay', steadyPhase),
      ...latencyComparisons(agentMs, floorMs, 'the floor of this design', steadyPhase),
      ...latencyComparisons(coldAgent, coldFloor, "the floor's", coldPhase),
      memory,
    ];
  } finally {
    await cleanUp(cleanup);
    rmSync(dir, { recursive: true, force: true });
  }
}
