/**
 * The agent in this process, for the end-to-end tests: `startAgentRig` starts a real Mosquitto
 * (harness/mosquitto.ts) unless the test brings its own, an emulator on TCP per printer, the
 * agent's settings (./agent-settings.ts's broker settings and store basics, and what the test
 * adds), a logger whose lines are kept, the agent itself, and an MQTT client playing the order
 * service's side: it collects the job events (each once: delivery is at least once, an event is
 * known by its `eventId`) and the statuses. `stop()` undoes it all.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { freePort, Mosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { Agent, type AgentSettings } from '../../src/agent.js';
import { listenTcp, type TcpEndpoint, VirtualPrinter } from '../../src/emulator/index.js';
import { createLogger, type LogLevel } from '../../src/logging.js';
import {
  type AgentStatus,
  DEFAULT_TOPIC_PREFIX,
  type JobEvent,
  type JobState,
  topics,
} from '../../src/protocol/print-protocol.js';
import { deriveStoreId } from '../../src/protocol/store-id.js';
import { type ReceiptOptions, receiptOptions } from '../../src/receipt/options.js';
import { testAgentBasics, testMqtt } from './agent-settings.js';

/** One printer of the rig: an emulator on TCP. */
export interface RigPrinter {
  id: string;
  /** Default a new one of 48 columns. */
  emulator?: VirtualPrinter;
  /** Default `generic-80mm`. */
  profile?: string;
  /** Default the printer's id. */
  roles?: string[];
  /** Default 200 ms. */
  statusIntervalMs?: number;
}

export interface AgentRigOptions {
  appId: string;
  storeKey: string;
  /** The receipt's header line (the one thing of the receipt every test sets). */
  header: string;
  /** A broker the test started (left running by `stop()`); default a Mosquitto of the rig's own. */
  broker?: { readonly url: string };
  /** The agent's MQTT version; default 5. */
  protocolVersion?: 4 | 5;
  /** Added to the agent's broker settings (`testMqtt`): credentials. */
  mqtt?: Partial<AgentSettings['mqtt']>;
  /** The order service's public key: PEM the rig writes into its folder, or a file. */
  servicePublicPem?: string;
  servicePublicKeyFile?: string;
  /** Default one printer, `receipt`. */
  printers?: RigPrinter[];
  /** Over `receiptOptions({ header: [header] })`. */
  receipt?: Partial<ReceiptOptions>;
  /** More settings (routing, logo, catch-up...), made knowing the rig's folder. */
  settings?: (dir: string) => Partial<AgentSettings>;
  /**
   * The local API on a free port (these settings over the defaults: no token, no metrics), and a
   * config file naming the same agent (`configPath`): what `printer-agent status --config` reads
   * to find it.
   */
  console?: boolean | Partial<NonNullable<AgentSettings['console']>>;
  /** Default `debug`. Every line is kept in `logLines`. */
  logLevel?: LogLevel;
  /** The logger scrubs these besides the store key. */
  secrets?: string[];
  /** The service side's client; default MQTT 5, anonymous, the store's job and status topics. */
  observer?: {
    clientId?: string;
    protocolVersion?: 4 | 5;
    username?: string;
    password?: string;
    topics?: string[];
  };
  /** Called with each agent as soon as `Agent.start` returns, before the wait for it online. */
  onStart?: (agent: Agent) => void;
}

export interface AgentRig {
  readonly storeId: string;
  readonly t: ReturnType<typeof topics>;
  readonly settings: AgentSettings;
  /** The first printer's emulator. */
  readonly emulator: VirtualPrinter;
  /** `printer-agent status --config` finds the agent with it (throws without `console`). */
  readonly configPath: string;
  /** The running agent (throws between `stopAgent` and `startAgent`). */
  readonly agent: Agent;
  /** The service side's client: the test publishes with it, and may subscribe to more. */
  readonly observer: MqttClient;
  /** Job events on the store's topic, each once (by eventId), in arrival order. */
  readonly events: JobEvent[];
  /** Every status message on the store's topic, in arrival order. */
  readonly statuses: AgentStatus[];
  readonly logLines: string[];
  /** The latest status, null before any. */
  status(): AgentStatus | null;
  /** The states of a job's events, in arrival order. */
  statesOf(jobId: string): JobState[];
  /** Publishes at QoS 1 (an object as JSON). */
  publish(topic: string, body: string | object): Promise<void>;
  /** Starts the agent again (after `stopAgent`) and waits for a new online status. */
  startAgent(): Promise<Agent>;
  /** Stops the agent (nothing when stopped). */
  stopAgent(): Promise<void>;
  /** Stops everything it started, and removes its folder. */
  stop(): Promise<void>;
}

/** Broker, emulators, settings, logger, observer and a started agent, seen online. */
export async function startAgentRig(options: AgentRigOptions): Promise<AgentRig> {
  const cleanups: Array<() => Promise<void> | void> = [];
  const stop = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  };
  try {
    return await build(options, cleanups, stop);
  } catch (error) {
    // What started before the failure would keep the test process alive after it.
    await stop();
    throw error;
  }
}

async function build(
  o: AgentRigOptions,
  cleanups: Array<() => Promise<void> | void>,
  stop: () => Promise<void>,
): Promise<AgentRig> {
  const dir = mkdtempSync(join(tmpdir(), 'pa-agent-rig-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const storeId = deriveStoreId(o.appId, o.storeKey);
  const t = topics(DEFAULT_TOPIC_PREFIX, storeId);
  let broker: { readonly url: string } | undefined = o.broker;
  if (!broker) {
    const own = await Mosquitto.start();
    cleanups.push(() => own.stop());
    broker = own;
  }

  const emulators: VirtualPrinter[] = [];
  const printers: AgentSettings['printers'] = [];
  for (const p of o.printers ?? [{ id: 'receipt' }]) {
    const emulator = p.emulator ?? new VirtualPrinter({ columns: 48 });
    const endpoint: TcpEndpoint = await listenTcp(emulator, { port: 0 });
    cleanups.push(() => endpoint.close());
    emulators.push(emulator);
    printers.push({
      id: p.id,
      url: endpoint.address,
      profile: p.profile ?? 'generic-80mm',
      roles: p.roles ?? [p.id],
      statusIntervalMs: p.statusIntervalMs ?? 200,
    });
  }

  let servicePublicKeyFile = o.servicePublicKeyFile;
  if (o.servicePublicPem !== undefined) {
    servicePublicKeyFile = join(dir, 'service-public.pem');
    writeFileSync(servicePublicKeyFile, o.servicePublicPem);
  }
  if (!servicePublicKeyFile)
    throw new Error('startAgentRig: give servicePublicPem or servicePublicKeyFile');
  const consolePort = o.console ? await freePort() : null;
  const consoleSettings = typeof o.console === 'object' ? o.console : {};
  const settings: AgentSettings = {
    appId: o.appId,
    storeKey: o.storeKey,
    storeId,
    mqtt: { ...testMqtt(broker.url, storeId, o.protocolVersion), ...o.mqtt },
    keys: { servicePublicKeyFile, scheme: 'RSA-SHA256' },
    printers,
    receipt: { ...receiptOptions({ header: [o.header] }), ...o.receipt },
    ...testAgentBasics(join(dir, 'state')),
    ...(consolePort === null
      ? {}
      : {
          console: {
            host: '127.0.0.1',
            port: consolePort,
            hostnames: [],
            metrics: false,
            ...consoleSettings,
          },
        }),
    ...o.settings?.(dir),
  };
  let configPath: string | null = null;
  if (consolePort !== null) {
    configPath = join(dir, 'config.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        appId: o.appId,
        storeKey: o.storeKey,
        mqtt: { url: broker.url },
        keys: { servicePublicKeyFile },
        printers: printers.map(({ id, url, profile, roles }) => ({ id, url, profile, roles })),
        ...(settings.routing ? { routing: settings.routing.map((r) => ({ role: r.role })) } : {}),
        ...(settings.logo ? { receipt: { logo: settings.logo } } : {}),
        stateDir: settings.stateDir,
        catchUp: { enabled: false },
        console: { port: settings.console?.port },
      }),
      { mode: 0o600 },
    );
  }

  const events: JobEvent[] = [];
  const eventIds = new Set<string>();
  const statuses: AgentStatus[] = [];
  const observer = mqtt.connect(broker.url, {
    protocolVersion: o.observer?.protocolVersion ?? 5,
    ...(o.observer?.clientId ? { clientId: o.observer.clientId } : {}),
    ...(o.observer?.username ? { username: o.observer.username } : {}),
    ...(o.observer?.password ? { password: o.observer.password } : {}),
  });
  cleanups.push(() => observer.endAsync(true));
  observer.on('message', (topic, payload) => {
    if (topic === t.job) {
      const event = JSON.parse(payload.toString()) as JobEvent;
      if (!eventIds.has(event.eventId)) {
        eventIds.add(event.eventId);
        events.push(event);
      }
    }
    if (topic === t.status) statuses.push(JSON.parse(payload.toString()) as AgentStatus);
  });
  await new Promise<void>((resolve, reject) => {
    observer.once('connect', () => resolve());
    observer.once('error', reject);
  });
  observer.on('error', () => {});
  await observer.subscribeAsync(o.observer?.topics ?? [t.job, t.status], { qos: 1 });

  const logLines: string[] = [];
  const log = createLogger({
    level: o.logLevel ?? 'debug',
    secrets: [o.storeKey, ...(o.secrets ?? [])],
    destination: { write: (line: string) => void logLines.push(line) },
  });
  let agent: Agent | null = null;
  const stopAgent = async () => {
    const running = agent;
    agent = null;
    await running?.stop();
  };
  cleanups.push(stopAgent);
  const startAgent = async () => {
    if (agent) throw new Error('startAgentRig: the agent runs already');
    const from = statuses.length;
    const started = await Agent.start(settings, log);
    agent = started;
    o.onStart?.(started);
    // Agent.start returns before the broker connection is up: until the agent subscribed, an
    // instruction would find no session to wait in. Its online status comes after the SUBSCRIBE.
    await waitFor('the agent online', () => statuses.slice(from).some((s) => s.online), 20_000);
    return started;
  };
  await startAgent();

  return {
    storeId,
    t,
    settings,
    emulator: emulators[0]!,
    get configPath() {
      if (configPath === null) throw new Error('startAgentRig: no config file without console');
      return configPath;
    },
    get agent() {
      if (!agent) throw new Error('startAgentRig: the agent is stopped');
      return agent;
    },
    observer,
    events,
    statuses,
    logLines,
    status: () => statuses.at(-1) ?? null,
    statesOf: (jobId) => events.filter((e) => e.jobId === jobId).map((e) => e.state),
    publish: async (topic, body) => {
      await observer.publishAsync(topic, typeof body === 'string' ? body : JSON.stringify(body), {
        qos: 1,
      });
    },
    startAgent,
    stopAgent,
    stop,
  };
}
