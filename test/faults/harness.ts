/**
 * One store for the fault-injection suite (issue 9, reliability fault matrix): the real processes
 * and nothing of the agent's insides.
 *
 * - the agent as a child process, `printer-agent run --config FILE` (a bundle of the current
 *   sources, harness/child-entry.ts), with a config
 *   file written here through the real config schema, and fault points enabled only through the
 *   environment (`PRINTER_AGENT_FAULT`, src/jobs/fault-points.ts);
 * - a Mosquitto started by the test file (harness/mosquitto.ts), optionally reached by the
 *   agent through our TCP proxy (test/helpers/tcp-proxy.ts) so the link can be held, reset or
 *   throttled;
 * - the emulator on TCP (src/emulator), optionally behind a proxy too, with its fault switches;
 * - an MQTT client playing the order service: publishes signed instructions (for this store,
 *   `storeId` inside the param, created now in the agent's zone, so the anti-replay age passes on
 *   any date), collects the `/job` events (distinct by `eventId`: delivery is at least once) and
 *   the retained `/status`.
 *
 * The agent's clock is trusted by default (`freshness.clock: synchronized`, so the suite behaves
 * the same on synchronized and unsynchronized machines); `configure` can change it.
 *
 * What a test checks comes from the outside: the emulator's paper and the job events.
 * `assertInvariants()` checks the two that hold in every row: every acknowledged instruction
 * printed at least once, and nothing printed twice without a POSSIBLE DUPLICATE or REPRINT
 * marking on the later copies.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { cliEntry } from '../../harness/child-entry.js';
import { storeInstruction, storeJobId, storeOrderNo } from '../../harness/instructions.js';
import { Mosquitto, reachable } from '../../harness/mosquitto.js';
import { type PrintMarking, printsOnTicket } from '../../harness/ticket-prints.js';
import { waitFor } from '../../harness/waiting.js';
import { agentConfigSchema, DEFAULT_CONSOLE_PORT } from '../../src/config/schema.js';
import {
  type Endpoint,
  listenTcp,
  openSerialEndpoint,
  renderText,
  type TcpEndpoint,
  type Ticket,
  VirtualPrinter,
} from '../../src/emulator/index.js';
import { buildEnvelope } from '../../src/protocol/envelope.js';
import { type JobEvent, type JobState, topics } from '../../src/protocol/print-protocol.js';
import { generateKeyPair, parseKey, type RsaKey } from '../../src/protocol/signing.js';
import { deriveStoreId } from '../../src/protocol/store-id.js';
import { ROOT } from '../helpers/cli.js';
import { TcpProxy, type TcpProxyOptions } from '../helpers/tcp-proxy.js';
import type { EmulatedUsbPrinter, UsbStack } from '../usbfs/usb-stack.js';

/** The order service's key pair, shared by every store of a test run. */
export const servicePair = generateKeyPair();
export const serviceKey: RsaKey = parseKey(servicePair.privatePem, 'private');

export type Json = Record<string, unknown>;
type ProxySettings = Omit<TcpProxyOptions, 'targetPort' | 'targetHost'>;

export interface StoreOptions {
  /** Short, unique per test file: it names the topics, the client ids and the dishes. */
  name: string;
  broker: Mosquitto;
  /** Put a proxy between the agent and the broker (the service always talks to the broker). */
  brokerProxy?: boolean | ProxySettings;
  /** Put a proxy between the agent and the emulator (TCP only). */
  printerProxy?: boolean | ProxySettings;
  /**
   * The emulator as a USB printer on this emulated USB stack (test/usbfs/), the agent running
   * under it: reached through the `usb` package (`usb:VID:PID?serial=`, the default) or through
   * the kernel's usblp node (`file:/dev/usb/lpN`, the driver bound to the device).
   */
  usb?: { stack: UsbStack; through?: 'usb' | 'usblp' };
  /** Where the config, keys and state dir go (default a new temp dir): a test's file system. */
  dir?: string;
  /**
   * How the agent reaches the emulator: TCP (default), or a serial port (socat pty pair) at this
   * baud rate, which the agent is configured with (`serial:PATH?baudRate=N`).
   */
  serialBaudRate?: number;
  /** MQTT keepalive of the agent (the schema's minimum is 5). */
  keepaliveSec?: number;
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Printer status poll interval. */
  statusIntervalMs?: number;
  profile?: string;
  /** Changes to the config object before it is validated and written. */
  configure?: (config: Json) => void;
}

/** One print of an order found on the emulator's paper. */
export interface Print {
  orderNo: string;
  /** Index of the ticket (0-based); a partial print and its reprint can share one ticket. */
  ticket: number;
  /** The ticket was cut. */
  cut: boolean;
  /** Markings seen above this print's order number line. */
  markings: PrintMarking[];
}

export interface AgentProcess {
  child: ChildProcess;
  pid: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly alive: boolean;
}

const exitOf = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });

/** VmRSS of a process in MB, from /proc (Linux); null when it cannot be read. */
export function rssMb(pid: number): number | null {
  return procStatusMb(pid, 'VmRSS');
}

/** VmHWM (the peak RSS the kernel saw, no sampling gaps) of a process in MB; null if unreadable. */
export function peakRssMb(pid: number): number | null {
  return procStatusMb(pid, 'VmHWM');
}

function procStatusMb(pid: number, field: string): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
    return kb ? Number(kb[1]) / 1024 : null;
  } catch {
    return null;
  }
}

export { nowCreateTime } from '../../harness/instructions.js';

export class FaultStore {
  readonly name: string;
  readonly appId: string;
  readonly storeKey: string;
  readonly storeId: string;
  readonly t: ReturnType<typeof topics>;
  readonly emulator = new VirtualPrinter({ columns: 48 });
  private readonly cutTicketPrints = new WeakMap<Ticket, Array<Omit<Print, 'ticket'>>>();
  /** Where the agent reaches the emulator; tests may replace it (a replugged printer). */
  endpoint!: Pick<Endpoint, 'address' | 'slot' | 'close'> & { kind: Endpoint['kind'] | 'usb' };
  /** The emulated USB device the emulator sits behind (`usb` option). */
  usbDevice: EmulatedUsbPrinter | null = null;
  brokerProxy: TcpProxy | null = null;
  printerProxy: TcpProxy | null = null;
  dir = '';
  configPath = '';
  stateDir = '';
  service!: MqttClient;
  agent: AgentProcess | null = null;
  /** Everything every agent process of this store wrote, stdout and stderr. */
  output = '';
  /**
   * Job events, each once: delivery is at least once (QoS 1), so a redelivered event (same
   * `eventId`, print-protocol v1.1 §6) is kept in `messages` only.
   */
  readonly events: JobEvent[] = [];
  /** Every `/job` message as it arrived, redeliveries included. */
  readonly messages: JobEvent[] = [];
  private readonly eventIds = new Set<string>();
  readonly statuses: Json[] = [];
  /** Order numbers of valid instructions the broker acknowledged to the service. */
  readonly acked = new Set<string>();
  /** Copies asked for, per order number, when more than one. */
  readonly copies = new Map<string, number>();
  /** Highest RSS seen of any agent process of this store, in MB. */
  maxRssMb = 0;
  rssSamples = 0;
  private rssTimer: NodeJS.Timeout | null = null;

  constructor(readonly options: StoreOptions) {
    this.name = options.name;
    this.appId = `A-${options.name}`;
    this.storeKey = `sk-${options.name}-secret-7731`;
    this.storeId = deriveStoreId(this.appId, this.storeKey);
    this.t = topics('printer-agent/v1', this.storeId);
  }

  static async create(options: StoreOptions): Promise<FaultStore> {
    const store = new FaultStore(options);
    try {
      await store.setUp();
    } catch (error) {
      // What was started before the failure (emulator endpoint, proxies) would keep the test
      // process alive after the failure.
      await store.tearDown();
      throw error;
    }
    return store;
  }

  private async setUp(): Promise<void> {
    const o = this.options;
    this.dir = o.dir ?? mkdtempSync(join(tmpdir(), `pa-faults-${this.name}-`));
    let printerUrl: string;
    if (o.usb) {
      const through = o.usb.through ?? 'usb';
      const device = o.usb.stack.plug({
        printer: this.emulator,
        serial: `FAULTS-${this.name}`,
        kernelDriver: through === 'usblp',
      });
      this.usbDevice = device;
      printerUrl = through === 'usblp' ? `file:${device.lpPath}` : device.url;
      this.endpoint = {
        kind: 'usb',
        address: printerUrl,
        slot: device.slot,
        close: async () => device.unplug(),
      };
    } else if (o.serialBaudRate) {
      this.endpoint = await openSerialEndpoint(this.emulator, { dir: join(this.dir, 'pty') });
      printerUrl = `${this.endpoint.address}?baudRate=${o.serialBaudRate}`;
    } else {
      const tcp = await listenTcp(this.emulator, { port: 0 });
      this.endpoint = tcp;
      printerUrl = tcp.address;
      if (o.printerProxy) {
        this.printerProxy = await TcpProxy.start({
          ...(typeof o.printerProxy === 'object' ? o.printerProxy : {}),
          targetPort: tcp.port,
        });
        printerUrl = `tcp://${this.printerProxy.address}`;
      }
    }
    let brokerUrl = o.broker.url;
    if (o.brokerProxy) {
      this.brokerProxy = await TcpProxy.start({
        ...(typeof o.brokerProxy === 'object' ? o.brokerProxy : {}),
        targetPort: o.broker.port,
      });
      brokerUrl = `mqtt://${this.brokerProxy.address}`;
    }

    this.stateDir = join(this.dir, 'state');
    writeFileSync(join(this.dir, 'service-public.pem'), servicePair.publicPem);
    writeFileSync(join(this.dir, 'store-key'), `${this.storeKey}\n`, { mode: 0o600 });
    const config: Json = {
      appId: this.appId,
      storeKeyFile: join(this.dir, 'store-key'),
      mqtt: {
        url: brokerUrl,
        protocolVersion: 5,
        keepaliveSec: o.keepaliveSec ?? 5,
        reconnectMinMs: o.reconnectMinMs ?? 200,
        reconnectMaxMs: o.reconnectMaxMs ?? 1000,
      },
      keys: { servicePublicKeyFile: join(this.dir, 'service-public.pem') },
      printers: [
        {
          id: 'receipt',
          url: printerUrl,
          profile: o.profile ?? 'generic-80mm',
          statusIntervalMs: o.statusIntervalMs ?? 1000,
        },
      ],
      stateDir: this.stateDir,
      catchUp: { enabled: false },
      // Trusted, so that the suite does not depend on the machine's NTP state.
      freshness: { clock: 'synchronized' },
      logLevel: 'debug',
      // Off unless a test turns it on with a port of its own: many agents run side by side.
      console: { enabled: false },
    };
    o.configure?.(config);
    // The real schema: a config the agent would refuse fails here, with its own message.
    const checked = agentConfigSchema.safeParse(config);
    if (!checked.success) throw new Error(`fault harness config invalid: ${checked.error.message}`);
    this.configPath = join(this.dir, 'config.json');
    writeFileSync(this.configPath, JSON.stringify(config, null, 2), { mode: 0o600 });

    // The service survives broker restarts too: fixed client id, persistent session, quick
    // reconnect; mqtt.js resends unacknowledged QoS 1 publishes after it reconnects.
    this.service = mqtt.connect(o.broker.url, {
      protocolVersion: 5,
      clientId: `service-${this.name}`,
      clean: false,
      properties: { sessionExpiryInterval: 600 },
      reconnectPeriod: 100,
    });
    this.service.on('error', () => {});
    this.service.on('message', (topic, payload) => {
      if (topic === this.t.job) {
        const event = JSON.parse(payload.toString()) as JobEvent;
        this.messages.push(event);
        if (!this.eventIds.has(event.eventId)) {
          this.eventIds.add(event.eventId);
          this.events.push(event);
        }
      }
      if (topic === this.t.status) this.statuses.push(JSON.parse(payload.toString()) as Json);
    });
    await new Promise<void>((resolve) => this.service.once('connect', () => resolve()));
    await this.service.subscribeAsync([this.t.job, this.t.status], { qos: 1 });
  }

  /** The emulator's TCP endpoint (throws for another kind). */
  get tcp(): TcpEndpoint {
    if (this.endpoint.kind !== 'tcp') throw new Error(`${this.name}: the emulator is not on TCP`);
    return this.endpoint as TcpEndpoint;
  }

  /**
   * Calls `onBytes(total)` with the number of bytes delivered to the emulator from now on, through
   * whichever link; returns a function that stops counting. Follows a replaced endpoint only if
   * called again.
   */
  countDelivered(onBytes: (total: number) => void): () => void {
    let total = 0;
    const slot = this.endpoint.slot;
    const listener = (bytes: Uint8Array) => {
      total += bytes.length;
      onBytes(total);
    };
    slot.on('deliver', listener);
    return () => slot.off('deliver', listener);
  }

  // The agent process ---------------------------------------------------------------------------

  /**
   * Starts `printer-agent run`. `env` adds variables (e.g. PRINTER_AGENT_FAULT); every other
   * PRINTER_AGENT_* variable of the test process is removed, so only the config file counts.
   */
  startAgent(env: Record<string, string> = {}, options: { stdoutFd?: number } = {}): AgentProcess {
    const childEnv: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env))
      if (!k.startsWith('PRINTER_AGENT_') && k !== 'JOURNAL_STREAM') childEnv[k] = v;
    Object.assign(childEnv, env);
    // `stdoutFd`: the agent's stdout goes there (a file the test reads) instead of `output`.
    let argv = [process.execPath, ...cliEntry(), 'run', '--config', this.configPath];
    if (this.options.usb) argv = this.options.usb.stack.command(argv);
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: ROOT,
      env: childEnv,
      stdio: ['ignore', options.stdoutFd ?? 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (this.output += d));
    child.stderr?.on('data', (d: Buffer) => (this.output += d));
    const agent: AgentProcess = {
      child,
      pid: child.pid ?? -1,
      exited: exitOf(child),
      get alive() {
        return child.exitCode === null && child.signalCode === null;
      },
    };
    this.agent = agent;
    this.sampleRss();
    return agent;
  }

  /** Starts the agent and waits for a fresh online status (it is connected and subscribed). */
  async startOnline(
    env: Record<string, string> = {},
    ms = 20_000,
    options: { stdoutFd?: number } = {},
  ): Promise<AgentProcess> {
    const from = this.statuses.length;
    const agent = this.startAgent(env, options);
    try {
      await waitFor(
        `${this.name}: online status`,
        () => this.statuses.slice(from).some((s) => s.online === true) || !agent.alive,
        ms,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${this.tail()}`);
    }
    if (!agent.alive) throw new Error(`${this.name}: the agent exited at start-up\n${this.tail()}`);
    // The local API opens once the online status is out (issue 45): started means both.
    const local = (JSON.parse(readFileSync(this.configPath, 'utf8')) as { console?: Json }).console;
    if (local && local.enabled !== false) {
      const port = typeof local.port === 'number' ? local.port : DEFAULT_CONSOLE_PORT;
      await waitFor(`${this.name}: the local API listening`, () => reachable(port), ms).catch(
        (error: Error) => {
          throw new Error(`${error.message}\n${this.tail()}`);
        },
      );
    }
    return agent;
  }

  /** Kills the agent (SIGKILL by default) and waits for it to be gone. */
  async stopAgent(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const agent = this.agent;
    if (!agent) return;
    if (agent.alive) agent.child.kill(signal);
    await agent.exited;
  }

  /** The last lines of the agents' output, for failure messages. */
  tail(chars = 3000): string {
    return this.output.slice(-chars);
  }

  private sampleRss(): void {
    if (this.rssTimer) return;
    this.rssTimer = setInterval(() => {
      const agent = this.agent;
      if (!agent?.alive) return;
      const mb = rssMb(agent.pid);
      if (mb === null) return;
      this.rssSamples++;
      this.maxRssMb = Math.max(this.maxRssMb, mb);
    }, 250);
    this.rssTimer.unref();
  }

  // The order service ---------------------------------------------------------------------------

  jobId(n: number): string {
    return storeJobId(this.name, n);
  }

  orderNo(n: number): string {
    return storeOrderNo(this.name, n);
  }

  /** A valid print instruction for order `n` of this store (harness/instructions.ts). */
  instruction(n: number, order: Json = {}, extra: Json = {}): Json {
    return storeInstruction(this, n, order, extra);
  }

  /** A command (print-protocol §5) for this store: `storeId` added unless given. */
  command(param: Json): Json {
    return { storeId: this.storeId, ...param };
  }

  /** A signed envelope as JSON text; identity and key can be changed to forge one. */
  envelope(
    param: Json | string,
    options: { key?: RsaKey; appId?: string; storeKey?: string } = {},
  ): string {
    return JSON.stringify(
      buildEnvelope({
        appId: options.appId ?? this.appId,
        storeKey: options.storeKey ?? this.storeKey,
        key: options.key ?? serviceKey,
        param,
      }),
    );
  }

  /**
   * Publishes a valid signed instruction for order `n` at QoS 1; once the broker acknowledges it,
   * the order is one the agent must print (`acked`).
   */
  async publish(n: number, order: Json = {}, extra: Json = {}): Promise<void> {
    if (typeof extra.copies === 'number') this.copies.set(this.orderNo(n), extra.copies);
    await this.service.publishAsync(
      this.t.print,
      this.envelope(this.instruction(n, order, extra)),
      {
        qos: 1,
      },
    );
    this.acked.add(this.orderNo(n));
  }

  /** Publishes any body on a topic (default `/print`), for forged and malformed messages. */
  async publishRaw(body: string | Buffer, topic: string = this.t.print): Promise<void> {
    await this.service.publishAsync(topic, body, { qos: 1 });
  }

  /** Job events of order `n` (or of a job id). */
  eventsOf(n: number | string): JobEvent[] {
    const jobId = typeof n === 'number' ? this.jobId(n) : n;
    return this.events.filter((e) => e.jobId === jobId);
  }

  states(n: number | string): JobState[] {
    return this.eventsOf(n).map((e) => e.state);
  }

  async waitForState(n: number | string, state: JobState, ms = 20_000): Promise<JobEvent> {
    try {
      await waitFor(`${n}: ${state}`, () => this.states(n).includes(state), ms);
    } catch (error) {
      throw new Error(
        `${(error as Error).message}; states ${this.states(n).join(',')}\n${this.tail()}`,
      );
    }
    return this.eventsOf(n).find((e) => e.state === state)!;
  }

  /** The latest status message (online or the last will). */
  lastStatus(): Json | undefined {
    return this.statuses.at(-1);
  }

  /** State of the receipt printer in the latest online status. */
  printerState(): string | undefined {
    const s = this.statuses.findLast((x) => x.online === true);
    const printers = s?.printers as Array<{ state: string }> | undefined;
    return printers?.[0]?.state;
  }

  // The paper -----------------------------------------------------------------------------------

  /** Every ticket on the emulator's paper, the open one included, as text. */
  ticketTexts(): string[] {
    return this.emulator.tickets().map((t: Ticket) => renderText(t));
  }

  /**
   * Every print of every order on the paper, in paper order. A print is found by its
   * `Order no.` line; its markings are the ones printed above that line (after the previous
   * print's line on the same ticket), where the layout puts them.
   */
  prints(): Print[] {
    const prints: Print[] = [];
    this.emulator.tickets().forEach((ticket, index) => {
      for (const p of this.printsOn(ticket)) prints.push({ ...p, ticket: index });
    });
    return prints;
  }

  /**
   * The prints on one ticket. A cut ticket never changes, so its prints are read once: tests poll
   * these while hundreds of tickets pile up, and re-rendering them all every poll would take the
   * CPU the agent under test needs.
   */
  private printsOn(ticket: Ticket): Array<Omit<Print, 'ticket'>> {
    const cached = this.cutTicketPrints.get(ticket);
    if (cached) return cached;
    const found = printsOnTicket(renderText(ticket)).map((p) => ({ ...p, cut: ticket.cut }));
    if (ticket.cut) this.cutTicketPrints.set(ticket, found);
    return found;
  }

  /** Prints per order number. */
  printsByOrder(): Map<string, Print[]> {
    const by = new Map<string, Print[]>();
    for (const p of this.prints()) by.set(p.orderNo, [...(by.get(p.orderNo) ?? []), p]);
    return by;
  }

  /** Order numbers printed on a cut ticket, in paper order (each once). */
  printedOrders(): string[] {
    return [
      ...new Set(
        this.prints()
          .filter((p) => p.cut)
          .map((p) => p.orderNo),
      ),
    ];
  }

  /**
   * The invariants of every row (reliability.md): every instruction the broker acknowledged, or
   * the agent reported `queued`, printed at least once on a cut ticket; no order printed more often
   * than the copies it asked for unless every extra print is marked POSSIBLE DUPLICATE or REPRINT;
   * nothing printed
   * that is not one of our orders (`notPrinted` lists orders that must not appear at all).
   */
  assertInvariants(options: { expected?: Iterable<string>; notPrinted?: Iterable<string> } = {}) {
    const by = this.printsByOrder();
    const expected = new Set(options.expected ?? this.acked);
    for (const e of this.events)
      if (e.state === 'queued' && e.orderNo && e.jobId?.startsWith('P-')) expected.add(e.orderNo);
    const missing = [...expected].filter((o) => !(by.get(o) ?? []).some((p) => p.cut));
    assert.deepEqual(missing, [], `acknowledged orders never printed: ${missing.join(' ')}`);
    for (const [orderNo, prints] of by) {
      const unmarked = prints.filter(
        (p) => !p.markings.includes('POSSIBLE DUPLICATE') && !p.markings.includes('REPRINT'),
      );
      const copies = this.copies.get(orderNo) ?? 1;
      assert.ok(
        unmarked.length <= copies,
        `${orderNo} printed ${unmarked.length} times without a marking (${prints.length} prints, ${copies} asked)`,
      );
      assert.ok(orderNo.startsWith(`O-${this.name}-`), `${orderNo} is not an order of this store`);
    }
    for (const o of options.notPrinted ?? [])
      assert.ok(!by.has(o), `${o} must never print, but it did`);
  }

  async tearDown(): Promise<void> {
    if (this.rssTimer) clearInterval(this.rssTimer);
    await this.stopAgent('SIGKILL');
    await this.service?.endAsync(true);
    await this.brokerProxy?.close();
    await this.printerProxy?.close();
    await this.endpoint?.close();
  }
}

/** Stores created in a test file, torn down together in its `after`. */
export class Stores {
  private readonly all: FaultStore[] = [];

  async create(options: StoreOptions): Promise<FaultStore> {
    const store = await FaultStore.create(options);
    this.all.push(store);
    return store;
  }

  async tearDown(): Promise<void> {
    for (const s of this.all.splice(0)) await s.tearDown();
  }
}

/**
 * The setting of one fault test file: a Mosquitto started before its tests and the stores they
 * create, all torn down after them. Call it inside the `describe`.
 */
export function faultSuite(options: { persistence?: boolean } = {}): {
  readonly broker: Mosquitto;
  readonly stores: Stores;
} {
  let broker: Mosquitto | undefined;
  const stores = new Stores();
  before(async () => {
    broker = await Mosquitto.start(options);
  });
  after(async () => {
    await stores.tearDown();
    await broker?.stop();
  });
  return {
    get broker() {
      if (!broker) throw new Error('faultSuite: the broker starts in before()');
      return broker;
    },
    stores,
  };
}
