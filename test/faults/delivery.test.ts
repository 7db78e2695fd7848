/**
 * Delivery guarantees end to end (reliability guarantees 1-3, fault matrix rows 1, 2 and 5):
 * `printer-agent run` as a child process against a real Mosquitto with persistence and the
 * emulator on TCP.
 *
 * - Row 1: the agent dies (fault point `inbox-before-commit`) after receiving an instruction and
 *   before committing it. Nothing was acked: the restarted agent gets it again from the broker and
 *   prints it once.
 * - Row 2: the agent dies (fault point `after-insert`) after the commit, before the PUBACK. The
 *   broker redelivers, the store answers `duplicate`, and it prints once.
 * - Row 5: the broker restarts in the middle of a burst of 200 instructions: every order prints,
 *   and no order prints twice without a POSSIBLE DUPLICATE or REPRINT marking.
 *
 * Each case has its own store identity (topics, client id) and state directory.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import {
  listenTcp,
  renderText,
  type TcpEndpoint,
  VirtualPrinter,
} from '../../src/emulator/index.js';
import { buildEnvelope } from '../../src/protocol/envelope.js';
import { type JobEvent, topics } from '../../src/protocol/print-protocol.js';
import { generateKeyPair, parseKey } from '../../src/protocol/signing.js';
import { deriveStoreId } from '../../src/protocol/store-id.js';
import { ROOT } from '../helpers/cli.js';
import { Mosquitto, skipWithoutMosquitto } from '../helpers/mosquitto.js';
import { waitFor } from '../helpers/waiting.js';

const pair = generateKeyPair();
const serviceKey = parseKey(pair.privatePem, 'private');

const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });

/** One store: its identity, config, emulator, the agent child, and a service-side client. */
class Store {
  readonly appId: string;
  readonly storeKey: string;
  readonly t: ReturnType<typeof topics>;
  readonly emulator = new VirtualPrinter({ columns: 48 });
  endpoint!: TcpEndpoint;
  configPath = '';
  service!: MqttClient;
  agent: ChildProcess | null = null;
  output = '';
  readonly events: JobEvent[] = [];
  readonly statuses: Array<Record<string, unknown>> = [];

  constructor(
    readonly name: string,
    private readonly broker: Mosquitto,
  ) {
    this.appId = `A-${name}`;
    this.storeKey = `sk-${name}-secret-7731`;
    this.t = topics('printer-agent/v1', deriveStoreId(this.appId, this.storeKey));
  }

  async setUp(): Promise<void> {
    this.endpoint = await listenTcp(this.emulator, { port: 0 });
    const dir = mkdtempSync(join(tmpdir(), `pa-delivery-${this.name}-`));
    writeFileSync(join(dir, 'service-public.pem'), pair.publicPem);
    writeFileSync(join(dir, 'store-key'), `${this.storeKey}\n`, { mode: 0o600 });
    this.configPath = join(dir, 'config.json');
    writeFileSync(
      this.configPath,
      JSON.stringify({
        appId: this.appId,
        storeKeyFile: join(dir, 'store-key'),
        mqtt: {
          url: this.broker.url,
          protocolVersion: 5,
          keepaliveSec: 5,
          reconnectMinMs: 200,
          reconnectMaxMs: 1000,
        },
        keys: { servicePublicKeyFile: join(dir, 'service-public.pem') },
        printers: [
          {
            id: 'receipt',
            url: this.endpoint.address,
            profile: 'generic-80mm',
            statusIntervalMs: 1000,
          },
        ],
        stateDir: join(dir, 'state'),
        catchUp: { enabled: false },
        logLevel: 'debug',
      }),
      { mode: 0o600 },
    );
    // The service side survives a broker restart too: fixed client id, persistent session, quick
    // reconnect; mqtt.js resends unacknowledged QoS 1 publishes after it reconnects.
    this.service = mqtt.connect(this.broker.url, {
      protocolVersion: 5,
      clientId: `service-${this.name}`,
      clean: false,
      properties: { sessionExpiryInterval: 600 },
      reconnectPeriod: 100,
    });
    this.service.on('error', () => {});
    this.service.on('message', (topic, payload) => {
      if (topic === this.t.job) this.events.push(JSON.parse(payload.toString()) as JobEvent);
      if (topic === this.t.status)
        this.statuses.push(JSON.parse(payload.toString()) as Record<string, unknown>);
    });
    await new Promise<void>((resolve) => this.service.once('connect', () => resolve()));
    await this.service.subscribeAsync([this.t.job, this.t.status], { qos: 1 });
  }

  startAgent(fault?: string): ChildProcess {
    const env = { ...process.env };
    delete env.PRINTER_AGENT_FAULT;
    if (fault) env.PRINTER_AGENT_FAULT = fault;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'src', 'cli.ts'), 'run', '--config', this.configPath],
      { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout?.on('data', (d: Buffer) => (this.output += d));
    child.stderr?.on('data', (d: Buffer) => (this.output += d));
    this.agent = child;
    return child;
  }

  /** Starts the agent and waits for its (fresh) online status, so it is subscribed. */
  async startOnline(fault?: string): Promise<ChildProcess> {
    const from = this.statuses.length;
    const child = this.startAgent(fault);
    try {
      await waitFor(
        `${this.name}: online status`,
        () =>
          this.statuses.slice(from).some((s) => s.online === true) ||
          child.exitCode !== null ||
          child.signalCode !== null,
        20_000,
      );
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`${this.name}: the agent exited at start-up`);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${this.output.slice(-3000)}`);
    }
    return child;
  }

  instruction(n: number): string {
    return JSON.stringify(
      buildEnvelope({
        appId: this.appId,
        storeKey: this.storeKey,
        key: serviceKey,
        param: {
          jobId: `P-${this.name}-${n}`,
          orderNo: `O-${this.name}-${n}`,
          createTime: '2026-11-25 12:30:05',
          order: {
            productInfo: [{ productName: `Dish ${this.name} ${n}`, price: 10000, quantity: 1 }],
            orderType: 1,
            paymentWay: 2,
            paymentTransactionId: `M-${this.name}-${n}`,
          },
        },
      }),
    );
  }

  states(n: number): string[] {
    return this.events.filter((e) => e.jobId === `P-${this.name}-${n}`).map((e) => e.state);
  }

  /** Ticket texts, and per order number the texts of the tickets that carry it. */
  ticketsByOrder(): Map<number, string[]> {
    const byOrder = new Map<number, string[]>();
    const pattern = new RegExp(`Dish ${this.name} (\\d+)\\b`, 'g');
    for (const ticket of this.emulator.paper.tickets) {
      const text = renderText(ticket);
      const orders = new Set([...text.matchAll(pattern)].map((m) => Number(m[1])));
      for (const n of orders) byOrder.set(n, [...(byOrder.get(n) ?? []), text]);
    }
    return byOrder;
  }

  async tearDown(): Promise<void> {
    if (this.agent && this.agent.exitCode === null && this.agent.signalCode === null) {
      this.agent.kill('SIGKILL');
      await exited(this.agent);
    }
    await this.service?.endAsync(true);
    await this.endpoint?.close();
  }
}

describe('delivery: ack after commit, broker restart (child process)', {
  skip: skipWithoutMosquitto(),
}, () => {
  let broker: Mosquitto;
  const stores: Store[] = [];

  async function store(name: string): Promise<Store> {
    const s = new Store(name, broker);
    stores.push(s);
    await s.setUp();
    return s;
  }

  before(async () => {
    // Persistence on: the agent's session and its queued messages survive the restart.
    broker = await Mosquitto.start({ persistence: true });
  });

  after(async () => {
    for (const s of stores) await s.tearDown();
    await broker?.stop();
  });

  it('row 1: killed after receiving, before the commit: not acked, redelivered, printed once', async () => {
    const s = await store('r1');
    const killed = await s.startOnline('inbox-before-commit');
    await s.service.publishAsync(s.t.print, s.instruction(1), { qos: 1 });
    const end = await exited(killed);
    assert.equal(end.signal, 'SIGKILL', s.output.slice(-2000));
    assert.deepEqual(s.states(1), [], 'nothing was stored, so no event');
    assert.equal(s.emulator.paper.tickets.length, 0);

    // Same state dir, same config, no fault: only the broker still has the instruction, which it
    // can only have kept because no PUBACK reached it.
    await s.startOnline();
    await waitFor('printed after the restart', () => s.states(1).includes('printed'), 20_000);
    assert.deepEqual(s.states(1), ['queued', 'printing', 'printed']);
    assert.equal(s.ticketsByOrder().get(1)?.length, 1);
    assert.equal(s.emulator.paper.tickets.length, 1);
  });

  it('row 2: killed after the commit, before the ack: redelivered, duplicate, printed once', async () => {
    const s = await store('r2');
    const killed = await s.startOnline('after-insert');
    await s.service.publishAsync(s.t.print, s.instruction(1), { qos: 1 });
    const end = await exited(killed);
    assert.equal(end.signal, 'SIGKILL', s.output.slice(-2000));

    await s.startOnline();
    await waitFor(
      'printed and the redelivery answered duplicate',
      () => s.states(1).includes('printed') && s.states(1).includes('duplicate'),
      20_000,
    );
    const states = s.states(1);
    assert.equal(states.filter((x) => x === 'queued').length, 1, states.join(','));
    assert.equal(states.filter((x) => x === 'printed').length, 1, states.join(','));
    assert.equal(states.filter((x) => x === 'duplicate').length, 1, states.join(','));
    assert.ok(
      states.indexOf('queued') < states.indexOf('printing') &&
        states.indexOf('printing') < states.indexOf('printed'),
      states.join(','),
    );
    assert.equal(s.ticketsByOrder().get(1)?.length, 1);
    assert.equal(s.emulator.paper.tickets.length, 1);
  });

  it('row 5: broker restart during a burst of 200: none lost, none printed twice unmarked', async () => {
    const N = 200;
    const s = await store('r5');
    await s.startOnline();
    const printedOrders = () => s.ticketsByOrder().size;

    // First half: published, acknowledged by the broker, printing under way.
    const publishes: Array<Promise<unknown>> = [];
    for (let n = 1; n <= N / 2; n++)
      publishes.push(s.service.publishAsync(s.t.print, s.instruction(n), { qos: 1 }));
    await waitFor('some of the burst printed', () => printedOrders() >= 10, 30_000);

    // Broker restart in the middle: the second half is published while it is down or coming
    // back (mqtt.js keeps QoS 1 publishes and sends them after reconnecting).
    const restarted = broker.restart();
    for (let n = N / 2 + 1; n <= N; n++)
      publishes.push(s.service.publishAsync(s.t.print, s.instruction(n), { qos: 1 }));
    await restarted;
    await Promise.all(publishes);
    // The broker kept the agent's session (persistence), so no gap for catch-up to fill.
    await waitFor(
      'the agent resumed its session',
      () => s.output.includes('"sessionPresent":true'),
      20_000,
    );

    try {
      await waitFor(`all ${N} orders printed`, () => printedOrders() === N, 50_000);
    } catch (error) {
      const byOrder = s.ticketsByOrder();
      const missing = [];
      for (let n = 1; n <= N; n++) if (!byOrder.has(n)) missing.push(n);
      if (process.env.DELIVERY_DEBUG_DIR) {
        writeFileSync(join(process.env.DELIVERY_DEBUG_DIR, 'agent.log'), s.output);
        writeFileSync(join(process.env.DELIVERY_DEBUG_DIR, 'broker.log'), broker.log);
      }
      const queued = new Set(s.events.filter((e) => e.state === 'queued').map((e) => e.jobId));
      throw new Error(
        `${(error as Error).message}: ${byOrder.size} printed, ${queued.size} queued, missing ${missing.join(' ')}\n${s.output.slice(-3000)}`,
      );
    }
    const byOrder = s.ticketsByOrder();
    for (let n = 1; n <= N; n++) {
      const texts = byOrder.get(n) ?? [];
      assert.ok(texts.length >= 1, `order ${n} printed`);
      for (const again of texts.slice(1))
        assert.match(again, /POSSIBLE DUPLICATE|REPRINT/, `order ${n}: a second print is marked`);
    }
    assert.ok(s.output.length > 0);
    assert.ok(!s.output.includes(s.storeKey), 'the store key is not in the logs');
  });
});
