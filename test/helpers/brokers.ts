/**
 * A private broker of each kind the agent is checked against (issue 19, docs/brokers.md), owned by
 * the test that starts it: its own free loopback port, its own temp dir for config and storage,
 * stopped by the test. Each can be stopped and started again on the same port with the same
 * storage (`restart`), because what a broker keeps across its own restart is one of the promises
 * under test.
 *
 * - Mosquitto 2 (MQTT 5 and 3.1.1): harness/mosquitto.ts, with persistence on.
 * - aedes (MQTT 3.1.1): in this process, as the demo embeds it (src/mqtt/broker.ts). Its only
 *   storage is in memory (aedes-persistence); a restart hands the same storage object to the new
 *   broker, as a restart with a persistent backend (aedes-persistence-level, -redis) would find
 *   it. `persistence: false` starts each time with empty storage, as a plain aedes process does.
 * - RabbitMQ with `rabbitmq_mqtt` (MQTT 3.1.1): its own node (name, distribution port, Mnesia and
 *   log dirs, config and plugins file all in the temp dir, AMQP listener off), so the machine's
 *   own RabbitMQ on 5672 is never touched. It registers with the machine's epmd, as every node
 *   does; its Erlang cookie lives in the temp dir (HOME).
 * - NATS with JetStream and its MQTT listener (MQTT 3.1.1): `nats-server -c` with server_name,
 *   a JetStream store dir and an `mqtt` block; its client port is any free one.
 *
 * The three programs are children in their own process group, stopped with SIGTERM (a clean
 * shutdown that writes their storage) and killed if this process exits without stopping them.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Aedes } from 'aedes';
import mqtt from 'mqtt';
import { freePort, Mosquitto, reachable, skipWithoutMosquitto } from '../../harness/mosquitto.js';

export type BrokerKind = 'mosquitto' | 'aedes' | 'rabbitmq' | 'nats';

export interface BrokerOptions {
  /**
   * Keep sessions, their queued messages and retained messages across a restart (default true).
   * False: every start begins with empty storage (RabbitMQ and NATS: their storage dir removed).
   */
  persistence?: boolean;
  /** More lines for the broker's config file, in its own syntax (not aedes). */
  extraConfig?: readonly string[];
  /** NATS: more lines inside its `mqtt` block (`ack_wait: "3s"`, `max_ack_pending: 100`). */
  natsMqtt?: readonly string[];
}

export interface TestBroker {
  readonly kind: BrokerKind;
  /** What runs, for test names and failure messages: `RabbitMQ 3.10.8 (rabbitmq_mqtt)`. */
  readonly description: string;
  readonly port: number;
  /** `mqtt://127.0.0.1:PORT` */
  readonly url: string;
  /** The MQTT protocol levels it accepts: 5 is MQTT 5, 4 is MQTT 3.1.1. */
  readonly protocolVersions: ReadonlyArray<4 | 5>;
  /** Its output so far (aedes: the client errors it reported). */
  readonly log: string;
  readonly running: boolean;
  /** Stops it; its storage stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same storage (unless `persistence: false`). */
  start(): Promise<void>;
  /** stop() then start(). */
  restart(): Promise<void>;
}

const RABBITMQ_SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';
const RABBITMQ_LIB = '/usr/lib/rabbitmq/lib';

export const BROKER_SKIP: Record<BrokerKind, string> = {
  mosquitto: 'needs mosquitto (Debian package mosquitto)',
  aedes: 'needs aedes (an npm dependency: npm ci)',
  rabbitmq: 'needs rabbitmq-server with its rabbitmq_mqtt plugin (Debian package rabbitmq-server)',
  nats: 'needs nats-server 2.9 or later (Debian package nats-server)',
};

/** `false` to run, or the skip message naming the Debian package to install. */
export function skipWithoutBroker(kind: BrokerKind): false | string {
  switch (kind) {
    case 'mosquitto':
      return skipWithoutMosquitto() === false ? false : BROKER_SKIP.mosquitto;
    case 'aedes':
      return false;
    case 'rabbitmq':
      return rabbitmqVersion() ? false : BROKER_SKIP.rabbitmq;
    case 'nats':
      return natsVersion() ? false : BROKER_SKIP.nats;
  }
}

/** Starts a private broker of `kind` and waits until its MQTT port accepts connections. */
export async function startBroker(
  kind: BrokerKind,
  options: BrokerOptions = {},
): Promise<TestBroker> {
  const skip = skipWithoutBroker(kind);
  if (skip) throw new Error(skip);
  switch (kind) {
    case 'mosquitto':
      return MosquittoBroker.create(options);
    case 'aedes':
      return AedesBroker.create(options);
    case 'rabbitmq':
      return ChildBroker.create(rabbitmqSpec(), options);
    case 'nats':
      return ChildBroker.create(natsSpec(), options);
  }
}

// Mosquitto ---------------------------------------------------------------------------------------

class MosquittoBroker implements TestBroker {
  readonly kind = 'mosquitto';
  readonly protocolVersions = [5, 4] as const;
  running = true;

  private constructor(
    private readonly mosquitto: Mosquitto,
    readonly description: string,
  ) {}

  static async create(options: BrokerOptions): Promise<MosquittoBroker> {
    const help = spawnSync('mosquitto', ['-h'], { encoding: 'utf8' });
    const version = /mosquitto version (\S+)/.exec(`${help.stdout}${help.stderr}`)?.[1] ?? '2';
    const mosquitto = await Mosquitto.start({
      persistence: options.persistence ?? true,
      extraConfig: options.extraConfig ?? [],
    });
    return new MosquittoBroker(mosquitto, `Mosquitto ${version}`);
  }

  get port(): number {
    return this.mosquitto.port;
  }
  get url(): string {
    return this.mosquitto.url;
  }
  get log(): string {
    return this.mosquitto.log;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.mosquitto.stop();
  }

  async start(): Promise<void> {
    // Mosquitto writes its persistence file at a clean stop and reads it at start.
    await this.mosquitto.restart();
    this.running = true;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }
}

// aedes -------------------------------------------------------------------------------------------

/** The storage object an aedes broker is given (aedes-persistence's memory storage by default). */
type AedesPersistence = NonNullable<ConstructorParameters<typeof Aedes>[0]>['persistence'];

class AedesBroker implements TestBroker {
  readonly kind = 'aedes';
  readonly protocolVersions = [4] as const;
  log = '';
  private aedes: Aedes | null = null;
  private server: Server | null = null;
  private persistence: AedesPersistence;

  private constructor(
    readonly port: number,
    private readonly keep: boolean,
    readonly description: string,
  ) {}

  static async create(options: BrokerOptions): Promise<AedesBroker> {
    const version = (Aedes as unknown as { prototype: { version?: string } }).prototype.version;
    const broker = new AedesBroker(
      await freePort(),
      options.persistence ?? true,
      `aedes${version ? ` ${version}` : ''} (in process, memory storage)`,
    );
    await broker.start();
    return broker;
  }

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.server !== null;
  }

  async start(): Promise<void> {
    if (this.aedes) return;
    const aedes = await Aedes.createBroker(
      this.keep && this.persistence ? { persistence: this.persistence } : {},
    );
    // The storage outlives this broker instance: the next start() gets the same one.
    this.persistence = (aedes as unknown as { persistence: AedesPersistence }).persistence;
    // A client that resets its socket must not take the broker down (src/mqtt/broker.ts).
    aedes.on('connectionError', (client, error) => {
      this.log += `connection error ${client?.id ?? '?'}: ${error.message}\n`;
    });
    aedes.on('clientError', (client, error) => {
      this.log += `client error ${client?.id ?? '?'}: ${error.message}\n`;
    });
    const server = createServer(aedes.handle);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.aedes = aedes;
    this.server = server;
  }

  async stop(): Promise<void> {
    const aedes = this.aedes;
    const server = this.server;
    this.aedes = null;
    this.server = null;
    // aedes first: it ends every client connection, so the server's close can complete.
    if (aedes) await new Promise<void>((resolve) => aedes.close(() => resolve()));
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }
}

/**
 * A free port below the kernel's ephemeral range (32768-60999 on Linux). A RabbitMQ node binds
 * its ports seconds after they were chosen; a port from the ephemeral range can meanwhile go to
 * another test's listener or outgoing connection (six test files run at once), and the broker's
 * start then "succeeds" against someone else's socket.
 */
async function quietPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = createServer();
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (free) {
      await new Promise<void>((r) => server.close(() => r()));
      return port;
    }
  }
}

/** One MQTT 3.1.1 CONNECT with a clean session: true when the broker answers it with a CONNACK. */
function answersConnect(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const client = mqtt.connect(url, {
      protocolVersion: 4,
      clean: true,
      clientId: `readiness-${process.pid}-${Date.now()}`,
      reconnectPeriod: 0,
      connectTimeout: 5000,
    });
    const done = (ok: boolean) => {
      client.removeAllListeners();
      client.on('error', () => {});
      client.end(true);
      resolve(ok);
    };
    client.once('connect', () => done(true));
    client.once('error', () => done(false));
    client.once('close', () => done(false));
  });
}

// RabbitMQ and NATS: a program in its own process group ------------------------------------------

/** How to run one broker program: what ChildBroker needs to know of it. */
interface ChildSpec {
  kind: 'rabbitmq' | 'nats';
  description: string;
  dirPrefix: string;
  /** Cold boots of RabbitMQ take ~10 s on a 2-core machine (restarts ~4 s): generous. */
  startMs: number;
  /** Writes the config files into `dir`; returns the command, its arguments and environment. */
  prepare(
    dir: string,
    ports: { mqtt: number; extra: number },
    options: BrokerOptions,
  ): { command: string; args: string[]; env: NodeJS.ProcessEnv };
  /** The storage a start without persistence begins without. */
  storage(dir: string): string;
}

function rabbitmqVersion(): string | null {
  if (!existsSync(RABBITMQ_SERVER) || !existsSync(RABBITMQ_LIB)) return null;
  const server = readdirSync(RABBITMQ_LIB).find((d) => d.startsWith('rabbitmq_server-'));
  if (!server) return null;
  const plugins = join(RABBITMQ_LIB, server, 'plugins');
  if (!existsSync(plugins) || !readdirSync(plugins).some((p) => p.startsWith('rabbitmq_mqtt-')))
    return null;
  return server.slice('rabbitmq_server-'.length);
}

function rabbitmqSpec(): ChildSpec {
  return {
    kind: 'rabbitmq',
    description: `RabbitMQ ${rabbitmqVersion()} (rabbitmq_mqtt)`,
    dirPrefix: 'pa-rabbitmq-',
    startMs: 90_000,
    storage: (dir) => join(dir, 'mnesia'),
    prepare(dir, ports, options) {
      const config = join(dir, 'rabbitmq.conf');
      writeFileSync(
        config,
        [
          // No AMQP listener: nothing of this node competes with the machine's RabbitMQ on 5672.
          'listeners.tcp = none',
          `mqtt.listeners.tcp.default = 127.0.0.1:${ports.mqtt}`,
          'mqtt.allow_anonymous = true',
          'log.console = true',
          'log.console.level = warning',
          'log.file.level = info',
          ...(options.extraConfig ?? []),
          '',
        ].join('\n'),
      );
      writeFileSync(join(dir, 'enabled_plugins'), '[rabbitmq_mqtt].\n');
      // Read instead of /etc/rabbitmq/rabbitmq-env.conf, whose NODENAME is the machine's node.
      writeFileSync(join(dir, 'rabbitmq-env.conf'), '');
      return {
        command: RABBITMQ_SERVER,
        args: [],
        env: {
          ...process.env,
          // The Erlang cookie is created here, not in the real HOME.
          HOME: dir,
          RABBITMQ_CONF_ENV_FILE: join(dir, 'rabbitmq-env.conf'),
          RABBITMQ_NODENAME: `pa-test-${ports.mqtt}@localhost`,
          RABBITMQ_DIST_PORT: String(ports.extra),
          RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
          RABBITMQ_LOG_BASE: join(dir, 'log'),
          RABBITMQ_CONFIG_FILE: config,
          RABBITMQ_ADVANCED_CONFIG_FILE: join(dir, 'advanced.config'),
          RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
          // If no epmd runs yet, the one Erlang starts listens on loopback only.
          ERL_EPMD_ADDRESS: '127.0.0.1',
          // One Erlang scheduler instead of one per core: a test's few clients need no more, and
          // the file's nodes took 17 CPU-seconds instead of 20 here (the rest is Erlang's boot),
          // CPU the suite's other files run on meanwhile.
          RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '+S 1:1',
        },
      };
    },
  };
}

function natsVersion(): string | null {
  const r = spawnSync('nats-server', ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return null;
  const version = /v?(\d+)\.(\d+)\.(\d+)/.exec(r.stdout);
  // The MQTT listener came with 2.2; the suite was written against 2.9.
  if (!version || Number(version[1]) < 2 || (Number(version[1]) === 2 && Number(version[2]) < 9))
    return null;
  return version.slice(1).join('.');
}

function natsSpec(): ChildSpec {
  return {
    kind: 'nats',
    description: `NATS ${natsVersion()} (JetStream, MQTT listener)`,
    dirPrefix: 'pa-nats-',
    startMs: 30_000,
    storage: (dir) => join(dir, 'jetstream'),
    prepare(dir, ports, options) {
      const config = join(dir, 'nats.conf');
      writeFileSync(
        config,
        [
          // JetStream (which keeps MQTT sessions, QoS 1 messages and retained messages) needs a
          // server name that stays the same across restarts.
          `server_name: pa_test_${ports.mqtt}`,
          'host: 127.0.0.1',
          `port: ${ports.extra}`,
          `jetstream { store_dir: "${join(dir, 'jetstream')}" }`,
          'mqtt {',
          '  host: 127.0.0.1',
          `  port: ${ports.mqtt}`,
          ...(options.natsMqtt ?? []).map((line) => `  ${line}`),
          '}',
          ...(options.extraConfig ?? []),
          '',
        ].join('\n'),
      );
      return { command: 'nats-server', args: ['-c', config], env: process.env };
    },
  };
}

class ChildBroker implements TestBroker {
  readonly kind: 'rabbitmq' | 'nats';
  readonly protocolVersions = [4] as const;
  log = '';
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private readonly killOnExit = () => {
    if (this.child?.pid) killGroup(this.child.pid, 'SIGKILL');
  };

  private constructor(
    private readonly spec: ChildSpec,
    readonly dir: string,
    readonly port: number,
    private readonly extraPort: number,
    private readonly options: BrokerOptions,
  ) {
    this.kind = spec.kind;
  }

  static async create(spec: ChildSpec, options: BrokerOptions): Promise<ChildBroker> {
    let last: unknown;
    // A free port can be taken between our probe and the broker's bind: try other ones.
    for (let attempt = 0; attempt < 3; attempt++) {
      const dir = mkdtempSync(join(tmpdir(), spec.dirPrefix));
      // Its storage outlives stop() (for restart), not the test process.
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
      const broker = new ChildBroker(spec, dir, await quietPort(), await quietPort(), options);
      try {
        await broker.start();
        return broker;
      } catch (error) {
        last = error;
        await broker.stop();
        if (!/address already in use|eaddrinuse|port_already_used/i.test(broker.log)) break;
      }
    }
    throw last;
  }

  get description(): string {
    return this.spec.description;
  }

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== null;
  }

  async start(): Promise<void> {
    if (this.child) return;
    if (this.options.persistence === false)
      rmSync(this.spec.storage(this.dir), { recursive: true, force: true });
    mkdirSync(join(this.dir, 'log'), { recursive: true });
    const { command, args, env } = this.spec.prepare(
      this.dir,
      { mqtt: this.port, extra: this.extraPort },
      this.options,
    );
    // Its own process group: stop() and the exit guard reach the program and its helpers
    // (RabbitMQ's wrapper script, beam, erl_child_setup, inet_gethost).
    const child = spawn(command, args, {
      cwd: this.dir,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (this.log += d));
    child.stderr?.on('data', (d: Buffer) => (this.log += d));
    child.once('error', (error) => (this.log += `spawn failed: ${error.message}\n`));
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    this.child = child;
    process.once('exit', this.killOnExit);
    const end = Date.now() + this.spec.startMs;
    // Ready is a CONNACK, not an open port: an open port may be another process's (a CI run saw
    // every RabbitMQ case closed before CONNACK, the suite's broker "up" within seconds of a cold
    // boot that takes 11-13 s), and a listener may accept before its broker serves.
    while (!(await reachable(this.port)) || !(await answersConnect(this.url))) {
      if (child.exitCode !== null || child.signalCode !== null || Date.now() > end) {
        const reason =
          child.exitCode !== null || child.signalCode !== null ? 'exited' : 'timed out';
        await this.stop();
        throw new Error(`${this.description} did not start (${reason}):\n${this.log.slice(-4000)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    process.off('exit', this.killOnExit);
    if (!child?.pid) return;
    if (child.exitCode === null && child.signalCode === null) {
      // SIGTERM: RabbitMQ's script and NATS both shut down cleanly on it, writing their storage.
      killGroup(child.pid, 'SIGTERM');
      const timer = setTimeout(() => killGroup(child.pid!, 'SIGKILL'), 30_000);
      await this.exited;
      clearTimeout(timer);
    }
    // The wrapper script can exit before beam is gone; the group must be empty before a restart
    // binds the same ports again.
    const end = Date.now() + 30_000;
    while (groupAlive(child.pid)) {
      if (Date.now() > end) killGroup(child.pid, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}
