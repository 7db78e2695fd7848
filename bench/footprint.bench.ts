/**
 * The production build's footprint on a Pi's terms (issue 16): `node dist/cli.js run --config`,
 * exactly what the unit runs (with the unit's environment: NODE_OPTIONS, MALLOC_ARENA_MAX), in a
 * child process against a real Mosquitto and the emulator.
 *
 * 1. Start: exec -> the agent's `online` status on the broker, median of 5 starts. Baseline, same
 *    run: a bare Node process that loads mqtt.js, connects to the same broker and publishes one
 *    message (what any agent must do before it can say it is online).
 * 2. Memory: the agent's RSS 10 s after start, idle, beside a bare Node process's RSS over the
 *    same 10 s (/proc/PID/status VmRSS; no forced GC: what `ps` shows on the Pi).
 * 3. CPU per printed job: the agent's user + system time (/proc/PID/stat, all its threads) over
 *    10,000 signed instructions (300 with --quick) published at once, each printed on the emulator
 *    and reported `printed`, per job, after 2,000 (200 with --quick) counted apart: the JIT
 *    compiles on its own threads while those print (`WARM_UP_JOBS`). Then the agent's RSS right
 *    after those jobs and 30 s later (idle again), beside its RSS idle after start. Baselines: a bare mqtt.js relay in a child process that parses each message and
 *    writes pre-rendered bytes to a second emulator, per message; and the floor of this design (bench/floor.ts) in a child
 *    process (bench/floor-relay.child.ts): the same commits and printer round trips as the agent.
 * Figures are 1000 / ms or 1000 / MB, so a ratio of 1.0 means as lean as the baseline.
 * `BENCH_AGENT_NODE_ARGS` adds Node options to the agent's command line, e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/agent-prof` to see where its time goes. What a store logo and
 * raster lines add (issue 16 reports them apart from the table): `BENCH_LOGO=1` gives the agent a
 * 400 x 200 PNG logo at the full print width, `BENCH_ITEM_NAME=宫保鸡丁` names every order's item
 * so (a line no code page of the generic profile holds: drawn as an image). Only the agent's
 * figures change with them; compare them with a run without.
 * Skipped, with a message, when mosquitto is not installed.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mqtt from 'mqtt';
import { writeLogoPng } from '../harness/logo.js';
import { freePort, MOSQUITTO_SKIP, Mosquitto, skipWithoutMosquitto } from '../harness/mosquitto.js';
import { unitEnvironment } from '../harness/unit-environment.js';
import { bundle } from '../packaging/bundle.js';
import { buildEnvelope } from '../src/protocol/envelope.js';
import { topics } from '../src/protocol/print-protocol.js';
import { generateKeyPair, parseKey } from '../src/protocol/signing.js';
import { deriveStoreId } from '../src/protocol/store-id.js';
import { receiptOptions } from '../src/receipt/options.js';
import { getProfile } from '../src/receipt/profile.js';
import { renderReceipt } from '../src/receipt/render.js';
import { countingEmulator, instruction, spawnFloor, WARM_UP_JOBS } from './e2e.bench.js';
import { type Comparison, cleanUp, compare } from './harness.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const APP_ID = 'A-bench';
const STORE_KEY = 'sk-bench-e2e';
const PREFIX = 'printer-agent/v1';
const STARTS = 5;
const JOBS = 10_000;
const WAIT_MS = 300_000;
const CLOCK_TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

/**
 * Issue 45: the start measured from outside the agent's code (bench/start-outside.sh: shell
 * timestamps, mosquitto_sub watching the status topic, the config made a store's with the CLI),
 * `runs` starts each of the agent and of bare Node + mqtt.js. Null, with a message, when the
 * script cannot run here (no mosquitto-clients); its own goal check is the bench's, not its exit.
 */
function startFromOutside(runs: number, dir: string): { agent: number[]; bare: number[] } | null {
  const result = join(dir, 'start-outside.json');
  const run = spawnSync('bash', [join(ROOT, 'bench', 'start-outside.sh')], {
    cwd: ROOT,
    env: { ...process.env, START_RUNS: String(runs), START_OUTSIDE_RESULT: result },
    encoding: 'utf8',
  });
  if (run.status === 2) {
    console.log(`start from outside skipped: ${run.stderr.trim()}`);
    return null;
  }
  if (!existsSync(result)) {
    throw new Error(`bench/start-outside.sh failed (exit ${run.status}):\n${run.stderr}`);
  }
  process.stdout.write(run.stdout);
  return JSON.parse(readFileSync(result, 'utf8')) as { agent: number[]; bare: number[] };
}

/** The bench's instruction, its item named by `BENCH_ITEM_NAME` when set. */
function benchInstruction(n: number): ReturnType<typeof instruction> {
  const base = instruction(n);
  const name = process.env.BENCH_ITEM_NAME;
  if (!name) return base;
  const items = base.order.productInfo.map((item) => ({ ...item, productName: name }));
  return { ...base, order: { ...base.order, productInfo: items } };
}

const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
/** User + system CPU time of a process so far, in ms. */
function cpuMs(pid: number): number {
  // Fields after the command name (which may hold spaces, inside parentheses): utime is the 14th
  // field of the line, stime the 15th.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MS;
}
const agentNodeArgs = (process.env.BENCH_AGENT_NODE_ARGS ?? '').split(' ').filter(Boolean);
/** An RSS reading as a measurement: 1000 / MB, so that leaner is higher like every other figure. */
const megabytes = (name: string, mb: number) => ({
  name: `${name}: ${mb.toFixed(1)} MB`,
  opsPerSec: 1000 / mb,
  samples: 1,
});
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

/** A connected MQTT client for one publish. */
async function publisherOf(url: string) {
  return mqtt.connectAsync(url, { protocolVersion: 5 });
}

/**
 * The package's template (config/config.example.json) as a store gets it, pointed at this run's
 * broker, emulators and files: everything else (console, logs, clock, printers' settings,
 * session, money, markings) as installed.
 */
export function installedConfig(o: {
  dir: string;
  brokerUrl: string;
  receiptUrl: string;
  kitchenUrl: string;
  consolePort: number;
}): Record<string, unknown> {
  const template = JSON.parse(
    readFileSync(join(ROOT, 'config', 'config.example.json'), 'utf8'),
  ) as Record<string, unknown> & {
    mqtt: Record<string, unknown>;
    keys: Record<string, unknown>;
    printers: Array<Record<string, unknown>>;
    catchUp: Record<string, unknown>;
  };
  const { tls: _tls, username: _user, passwordFile: _password, ...mqttRest } = template.mqtt;
  const [receipt, kitchen] = template.printers;
  return {
    ...template,
    $schema: undefined,
    appId: APP_ID,
    storeKeyFile: join(o.dir, 'store-key'),
    mqtt: { ...mqttRest, url: o.brokerUrl },
    keys: {
      ...template.keys,
      servicePublicKeyFile: join(o.dir, 'service-public.pem'),
      storePrivateKeyFile: join(o.dir, 'store-private.pem'),
    },
    printers: [
      { ...receipt, url: o.receiptUrl },
      { ...kitchen, url: o.kitchenUrl },
    ],
    stateDir: join(o.dir, 'state-installed'),
    catchUp: { ...template.catchUp, enabled: false },
    // 8631 may be another agent's on this machine; the port is the only change.
    console: { port: o.consolePort },
  };
}

function until<T>(what: string, subscribe: (resolve: (value: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`footprint: no ${what} in ${WAIT_MS} ms`)),
      WAIT_MS,
    );
    subscribe((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

export async function benchFootprint(quick: boolean): Promise<Comparison[]> {
  if (skipWithoutMosquitto()) {
    console.log(`footprint benchmark skipped: ${MOSQUITTO_SKIP}`);
    return [];
  }
  // The production build, current: what `npm run build` makes.
  await bundle();
  const cli = join(ROOT, 'dist', 'cli.js');
  const dir = mkdtempSync(join(tmpdir(), 'pa-bench-footprint-'));
  // First, on a machine nothing of this bench loads yet.
  const outside = startFromOutside(quick ? 3 : STARTS, dir);
  const broker = await Mosquitto.start();
  const cleanup: Array<() => Promise<unknown> | unknown> = [() => broker.stop()];
  try {
    const pair = generateKeyPair();
    const serviceKey = parseKey(pair.privatePem, 'private');
    writeFileSync(join(dir, 'service-public.pem'), pair.publicPem);
    writeFileSync(join(dir, 'store-key'), `${STORE_KEY}\n`, { mode: 0o600 });
    const storeId = deriveStoreId(APP_ID, STORE_KEY);
    const t = topics(PREFIX, storeId);
    const emulator = await countingEmulator();
    cleanup.push(() => emulator.endpoint.close());
    const config = join(dir, 'config.json');
    const options = { header: ['BENCH STORE'] };
    const logo =
      process.env.BENCH_LOGO === '1' ? { file: writeLogoPng(join(dir, 'logo.png')) } : {};
    writeFileSync(
      config,
      JSON.stringify({
        appId: APP_ID,
        storeKeyFile: join(dir, 'store-key'),
        mqtt: { url: broker.url },
        keys: { servicePublicKeyFile: join(dir, 'service-public.pem') },
        printers: [{ id: 'receipt', url: emulator.endpoint.address, profile: 'generic-80mm' }],
        receipt: { ...options, ...(logo.file ? { logo } : {}) },
        stateDir: join(dir, 'state'),
        catchUp: { enabled: false },
        freshness: { clock: 'synchronized' },
        logLevel: 'warn',
        // Issue 16's figures are for the agent without its local API and metrics.
        console: { enabled: false },
      }),
    );

    // The config a package installs (config/config.example.json, issue 45): console on at its
    // defaults, info logs, the clock detected, two printers, a persistent session; only what
    // points at the store's world changes (the broker here in plain MQTT, emulators as its
    // printers, the files in `dir`), and catch-up is off: it needs the store's order service.
    const kitchen = await countingEmulator();
    cleanup.push(() => kitchen.endpoint.close());
    writeFileSync(join(dir, 'store-private.pem'), generateKeyPair().privatePem, { mode: 0o600 });
    const defaultConfig = join(dir, 'default.json');
    writeFileSync(
      defaultConfig,
      JSON.stringify(
        installedConfig({
          dir,
          brokerUrl: broker.url,
          receiptUrl: emulator.endpoint.address,
          kitchenUrl: kitchen.endpoint.address,
          consolePort: await freePort(),
        }),
      ),
    );

    const observer = mqtt.connect(broker.url, { protocolVersion: 5, clientId: 'bench-observer' });
    cleanup.push(() => observer.endAsync());
    await observer.subscribeAsync([t.status, t.job, 'bench/footprint/+'], { qos: 1 });
    const listeners = new Set<(topic: string, payload: string) => void>();
    observer.on('message', (topic, payload) => {
      for (const listener of listeners) listener(topic, payload.toString());
    });
    const message = (what: string, match: (topic: string, payload: string) => boolean) =>
      until<void>(what, (resolve) => {
        const listener = (topic: string, payload: string) => {
          if (!match(topic, payload)) return;
          listeners.delete(listener);
          resolve();
        };
        listeners.add(listener);
      });

    // --- 1. start, agent (narrow and installed config) and bare Node; the first receipt ---
    const narrowStarts: number[] = [];
    const defaultStarts: number[] = [];
    const firstReceipts: number[] = [];
    const bareStarts: number[] = [];
    const bareScript = `import mqtt from 'mqtt';
      const c = mqtt.connect(${JSON.stringify(broker.url)}, { protocolVersion: 5 });
      c.on('connect', () => c.publish('bench/footprint/up', String(process.pid), { qos: 1 }, () => c.end()));`;
    /** exec -> the retained `online` reached the observer; `until` as well, when given. */
    const startAgent = async (file: string, until?: Promise<void>) => {
      const online = message(
        'online status',
        (topic, p) => topic === t.status && p.includes('"online":true'),
      );
      const started = performance.now();
      const child = spawn(process.execPath, [...agentNodeArgs, cli, 'run', '--config', file], {
        stdio: 'inherit',
        env: { ...process.env, ...unitEnvironment() },
      });
      await online;
      const onlineMs = performance.now() - started;
      await until;
      return { child, onlineMs, untilMs: performance.now() - started };
    };
    const stopAgent = async (child: ChildProcess) => {
      const offline = message(
        'offline status',
        (topic, p) => topic === t.status && p.includes('"online":false'),
      );
      await stop(child);
      await offline;
    };
    let agent: ChildProcess | null = null;
    for (let i = 0; i < STARTS; i++) {
      const installed = await startAgent(defaultConfig);
      defaultStarts.push(installed.onlineMs);
      await stopAgent(installed.child);

      // A store after a power cut: an order waits on the broker (the agent's persistent session
      // holds it) when the agent starts. exec -> the receipt's cut, its last command.
      const cut = emulator.until(emulator.tickets + 1);
      await publisherOf(broker.url).then(async (c) => {
        const body = buildEnvelope({
          appId: APP_ID,
          storeKey: STORE_KEY,
          param: benchInstruction(900_000 + i),
          key: serviceKey,
        });
        await c.publishAsync(t.print, JSON.stringify(body), { qos: 1 });
        await c.endAsync();
      });
      const waiting = await startAgent(defaultConfig, cut);
      firstReceipts.push(waiting.untilMs);
      await stopAgent(waiting.child);

      const narrow = await startAgent(config);
      narrowStarts.push(narrow.onlineMs);
      agent = narrow.child;
      if (i < STARTS - 1) await stopAgent(narrow.child);

      const up = message('bare publish', (topic) => topic === 'bench/footprint/up');
      const bareStarted = performance.now();
      const bare = spawn(process.execPath, ['--input-type=module', '-e', bareScript], {
        cwd: ROOT,
        stdio: 'inherit',
      });
      await up;
      bareStarts.push(performance.now() - bareStarted);
      await new Promise((resolve) => bare.once('exit', resolve));
    }
    cleanup.push(() => agent && stop(agent));

    // --- 2. memory: the running agent and a bare Node process, 10 s idle ---
    const idle = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
      stdio: 'ignore',
    });
    cleanup.push(() => stop(idle));
    await new Promise((resolve) => setTimeout(resolve, quick ? 3000 : 10_000));
    const agentRss = rssMb(agent!.pid!);
    const bareRss = rssMb(idle.pid!);

    // --- 3. CPU per printed job (after a warm-up batch) ---
    const jobs = quick ? 300 : JOBS;
    // Printed before CPU is counted: V8 compiles the hot paths on its own threads first. 200 were
    // too few: its compiler threads went on for 25 s into a 10,000-job burst after them, 0.06 ms
    // per counted job (perf, 2026-11-28). The warm-up's own CPU per job is reported beside.
    const warmJobs = quick ? WARM_UP_JOBS.quick : WARM_UP_JOBS.full;
    const envelopes = Array.from({ length: warmJobs + jobs }, (_, i) =>
      JSON.stringify(
        buildEnvelope({
          appId: APP_ID,
          storeKey: STORE_KEY,
          param: benchInstruction(100_000 + i),
          key: serviceKey,
        }),
      ),
    );
    let printed = 0;
    const printedUpTo = (n: number) =>
      until<void>(`${n} printed events`, (resolve) => {
        const listener = (topic: string, payload: string) => {
          if (topic === t.job && payload.includes('"printed"') && ++printed >= n) {
            listeners.delete(listener);
            resolve();
          }
        };
        listeners.add(listener);
      });
    const publisher = mqtt.connect(broker.url, { protocolVersion: 5, clientId: 'bench-publisher' });
    cleanup.push(() => publisher.endAsync());
    const publishAll = (bodies: string[], topic: string) =>
      Promise.all(bodies.map((body) => publisher.publishAsync(topic, body, { qos: 1 })));
    const warmed = printedUpTo(warmJobs);
    const agentWarmCpuBefore = cpuMs(agent!.pid!);
    await publishAll(envelopes.slice(0, warmJobs), t.print);
    await warmed;
    const agentWarmCpu = (cpuMs(agent!.pid!) - agentWarmCpuBefore) / warmJobs;
    const allPrinted = printedUpTo(warmJobs + jobs);
    const agentCpuBefore = cpuMs(agent!.pid!);
    await publishAll(envelopes.slice(warmJobs), t.print);
    await allPrinted;
    const agentCpu = (cpuMs(agent!.pid!) - agentCpuBefore) / jobs;
    const agentRssAfter = rssMb(agent!.pid!);
    // And once idle again: V8 gives back the heap the burst grew only when its memory reducer
    // runs, some seconds after the work stops (measured: unchanged 10 s after, 10 MB less at 20 s).
    const settleMs = quick ? 3000 : 30_000;
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    const agentRssSettled = rssMb(agent!.pid!);

    const relayEmulator = await countingEmulator();
    cleanup.push(() => relayEmulator.endpoint.close());
    const receipts = Object.fromEntries(
      Array.from({ length: warmJobs + jobs }, (_, i) => {
        const rendered = renderReceipt({
          source: { kind: 'instruction', instruction: benchInstruction(100_000 + i) },
          profile: getProfile('generic-80mm'),
          options: receiptOptions(options),
        });
        return [`P-${100_000 + i}`, Buffer.from(rendered.bytes).toString('base64')];
      }),
    );
    writeFileSync(join(dir, 'receipts.json'), JSON.stringify(receipts));
    const relayScript = `import mqtt from 'mqtt'; import { connect } from 'node:net'; import { readFileSync } from 'node:fs';
      const receipts = JSON.parse(readFileSync(${JSON.stringify(join(dir, 'receipts.json'))}, 'utf8'));
      const socket = connect({ port: ${relayEmulator.endpoint.port}, host: '127.0.0.1' });
      const c = mqtt.connect(${JSON.stringify(broker.url)}, { protocolVersion: 5, clientId: 'bench-relay', clean: true });
      c.on('message', (_t, payload) => {
        const jobId = JSON.parse(JSON.parse(payload.toString()).param).jobId;
        socket.write(Buffer.from(receipts[jobId], 'base64'));
      });
      c.on('connect', () => c.subscribe('bench/footprint/relay', { qos: 1 }, () => c.publish('bench/footprint/ready', '1')));`;
    const ready = message('relay ready', (topic) => topic === 'bench/footprint/ready');
    const relay = spawn(process.execPath, ['--input-type=module', '-e', relayScript], {
      cwd: ROOT,
      stdio: 'inherit',
    });
    cleanup.push(() => stop(relay));
    await ready;
    /** A baseline process's CPU per job: the warm-up batch, then the counted ones, each cut. */
    const cpuPerJob = async (
      pid: number,
      emulator: Awaited<ReturnType<typeof countingEmulator>>,
      topic: string,
    ) => {
      const warmed = emulator.until(warmJobs);
      const warmBefore = cpuMs(pid);
      await publishAll(envelopes.slice(0, warmJobs), topic);
      await warmed;
      const warm = (cpuMs(pid) - warmBefore) / warmJobs;
      const cut = emulator.until(warmJobs + jobs);
      const before = cpuMs(pid);
      await publishAll(envelopes.slice(warmJobs), topic);
      await cut;
      return { warm, counted: (cpuMs(pid) - before) / jobs };
    };
    const { counted: relayCpu } = await cpuPerJob(
      relay.pid!,
      relayEmulator,
      'bench/footprint/relay',
    );

    // The floor of this design in its own process (bench/floor-relay.child.ts), same receipts.
    const floorEmulator = await countingEmulator();
    cleanup.push(() => floorEmulator.endpoint.close());
    const floorReady = message('floor ready', (topic) => topic === 'bench/footprint/floor-ready');
    const floor = spawnFloor({
      brokerUrl: broker.url,
      topic: 'bench/footprint/floor',
      printerPort: floorEmulator.endpoint.port,
      receiptsFile: join(dir, 'receipts.json'),
      dir,
      readyTopic: 'bench/footprint/floor-ready',
    });
    cleanup.push(() => stop(floor));
    await floorReady;
    const { warm: floorWarmCpu, counted: floorCpu } = await cpuPerJob(
      floor.pid!,
      floorEmulator,
      'bench/footprint/floor',
    );

    const bareStart = median(bareStarts);
    const bareFigure = {
      name: `bare Node + mqtt.js publish: ${bareStart.toFixed(0)} ms`,
      opsPerSec: 1000 / bareStart,
      samples: STARTS,
    };
    const startFigure = (name: string, ms: number) => ({
      name: `${name}: ${ms.toFixed(0)} ms`,
      opsPerSec: 1000 / ms,
      samples: STARTS,
    });
    return [
      compare(
        `start: exec -> online, installed config, median of ${STARTS} (1000/ms)`,
        startFigure('agent', median(defaultStarts)),
        bareFigure,
      ),
      compare(
        `start: exec -> online, narrow config, median of ${STARTS} (1000/ms)`,
        startFigure('agent', median(narrowStarts)),
        bareFigure,
      ),
      compare(
        `first receipt: exec -> the cut of an order waiting on the broker, installed config, median of ${STARTS} (1000/ms)`,
        startFigure('agent', median(firstReceipts)),
        bareFigure,
      ),
      ...(outside
        ? [
            compare(
              `start from outside (bench/start-outside.sh): exec -> online seen by mosquitto_sub, installed config set up with the CLI, median of ${outside.agent.length} (1000/ms)`,
              { ...startFigure('agent', median(outside.agent)), samples: outside.agent.length },
              {
                ...startFigure('bare Node + mqtt.js publish', median(outside.bare)),
                samples: outside.bare.length,
              },
            ),
          ]
        : []),
      compare(
        `RSS ${quick ? 3 : 10} s after start, idle (1000/MB)`,
        megabytes('agent', agentRss),
        megabytes('bare Node', bareRss),
      ),
      compare(
        `agent RSS after ${(warmJobs + jobs).toLocaleString('en-US')} jobs (1000/MB)`,
        megabytes('after', agentRssAfter),
        megabytes('idle after start', agentRss),
      ),
      compare(
        `agent RSS ${settleMs / 1000} s after those jobs, idle (1000/MB)`,
        megabytes('settled', agentRssSettled),
        megabytes('idle after start', agentRss),
      ),
      compare(
        `CPU per printed job, ${jobs} jobs after ${warmJobs} (1000/ms)`,
        { name: `agent: ${agentCpu.toFixed(2)} ms`, opsPerSec: 1000 / agentCpu, samples: jobs },
        {
          name: `bare mqtt.js relay: ${relayCpu.toFixed(2)} ms`,
          opsPerSec: 1000 / relayCpu,
          samples: jobs,
        },
      ),
      compare(
        `CPU per printed job vs the floor of this design, ${jobs} jobs (1000/ms)`,
        { name: `agent: ${agentCpu.toFixed(2)} ms`, opsPerSec: 1000 / agentCpu, samples: jobs },
        {
          name: `the floor, own process: ${floorCpu.toFixed(2)} ms`,
          opsPerSec: 1000 / floorCpu,
          samples: jobs,
        },
      ),
      compare(
        `CPU per printed job of the first ${warmJobs}, the JIT warming up, vs the floor's (1000/ms)`,
        {
          name: `agent: ${agentWarmCpu.toFixed(2)} ms`,
          opsPerSec: 1000 / agentWarmCpu,
          samples: warmJobs,
        },
        {
          name: `the floor: ${floorWarmCpu.toFixed(2)} ms`,
          opsPerSec: 1000 / floorWarmCpu,
          samples: warmJobs,
        },
      ),
    ];
  } finally {
    await cleanUp(cleanup);
    rmSync(dir, { recursive: true, force: true });
  }
}
