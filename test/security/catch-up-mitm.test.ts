/**
 * Issue 13, item 1 (critical): catch-up must not trust whoever answers in the order service's
 * place (print-protocol v1.1 §8). Real processes only: the agent as a child process
 * (test/faults/harness.ts), Mosquitto, the emulator, the reference order service (which signs every
 * answer, `X-Signature`) behind an https front with certificates from a test CA made with openssl,
 * and a man-in-the-middle proxy of this file's own between the agent and the service.
 *
 * The attacks of the issue, each refused now:
 * - a forged record carrying the next order number (unsigned, with the genuine answer's signature
 *   kept, or signed with the attacker's key) is not printed, the cursor does not move, and the
 *   genuine signed MQTT instruction for that order then prints (it is not answered `duplicate`);
 * - a 300 MiB answer is refused at 4 MiB, the connection dropped, the agent's peak RSS bounded;
 * - https with the service CA pinned prints the service's orders, while a certificate from another
 *   CA is refused before the query (and its storeKey) is sent;
 * - http to a host other than loopback is refused by `config check` and `run`, and accepted with
 *   the lab switch, which is then warned about at every round; a genuine signed page of another
 *   store, fetched under the agent's nonce (issue 40 item 5, print-protocol v1.2 §10), is refused
 *   there and nothing of it prints;
 * - a record for another restaurant (the agent knows its own) is reported `rejected`, not printed.
 *
 * Observed from outside the agent: the emulator's paper, the `/job` events, the agent's log lines,
 * and what the proxy saw and sent.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { clockAwayFromMidnight } from '../../harness/instructions.js';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { MqttPublisher } from '../../src/mqtt/publisher.js';
import {
  buildApp,
  buildRegistry,
  type InstructionPublisher,
  parseServiceConfig,
  SqliteOrderStore,
} from '../../src/order-service/index.js';
import { buildEnvelope } from '../../src/protocol/envelope.js';
import type { JobEvent } from '../../src/protocol/print-protocol.js';
import {
  REQUEST_NONCE_HEADER,
  RESPONSE_SIGNATURE_VERSION_HEADER,
} from '../../src/protocol/response-binding.js';
import {
  generateKeyPair,
  parseKey,
  RESPONSE_SIGNATURE_HEADER,
  signBytes,
} from '../../src/protocol/signing.js';
import { deriveStoreId } from '../../src/protocol/store-id.js';
import { formatTimestamp } from '../../src/protocol/time.js';
import { nonLoopbackAddress } from '../catchup/harness.js';
import { LOCAL_NAMES, TlsFront } from '../catchup/tls-front.js';
import { type FaultStore, faultSuite, type Json, servicePair } from '../faults/harness.js';
import { runCli, runCliInProcess } from '../helpers/cli.js';
import { JsonLog, type LogRecord } from '../helpers/json-log.js';
import { type IssuedCertificate, skipWithoutOpenssl, TestCa } from '../helpers/test-ca.js';

const MiB = 1024 * 1024;
const PAD_BYTES = 300 * MiB;
const FORGED_DISH = 'FORGED BY THE PROXY';
const skip = skipWithoutMosquitto() || skipWithoutOpenssl();

/** The store key pair all stores of this file sign creates and queries with. */
const storePair = generateKeyPair();
const storeKey = parseKey(storePair.privatePem, 'private');
const attackerKey = parseKey(generateKeyPair().privatePem, 'private');

/** Peak RSS (VmHWM) of a process in MB: no sampling gap can miss a spike. */
function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+)\s+kB/m.exec(status)![1]) / 1024;
}

type Mode =
  | 'pass'
  | 'forge-unsigned'
  | 'forge-genuine-signature'
  | 'forge-attacker-signed'
  | 'pad'
  | 'other-store';

interface Seen {
  mode: Mode;
  /** The query's param as the agent sent it (readable: this leg is plain http). */
  param: Json | null;
  /** Order numbers the genuine answer listed (what the agent's cursor can have come from). */
  listed: string[];
  /** Body bytes the proxy sent, and whether the agent hung up before the end. */
  written: number;
  clientClosed: boolean;
  done: boolean;
}

/**
 * The attacker: an HTTP (or HTTPS, with a certificate of its own) proxy that relays each query
 * to the real service over https and answers with what the script says: the genuine answer, a
 * forged one, or 300 MiB.
 */
class Mitm {
  /** Modes for the next requests, in order; `pass` when empty. */
  readonly script: Mode[] = [];
  readonly seen: Seen[] = [];
  /** TLS handshakes the agent refused (https proxy only). */
  tlsRefused = 0;
  /** The order number the forger puts on its record. */
  forgeOrderNo = '';
  /** The last genuine record that went through: the forger's template. */
  template: Json | null = null;
  /**
   * `other-store`: the signed query of another store (the attacker's own, in the demo's setup),
   * sent to the service in place of the agent's, under the agent's nonce.
   */
  otherStoreQuery: Buffer | null = null;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(options: {
    upstream: string;
    upstreamCa: string;
    host?: string;
    urlHost?: string;
    cert?: IssuedCertificate;
  }): Promise<Mitm> {
    const box: { mitm?: Mitm } = {};
    const handler = (req: IncomingMessage, res: ServerResponse) =>
      void box.mitm!.handle(req, res, options.upstream, options.upstreamCa);
    const server = options.cert
      ? createHttpsServer(
          { cert: readFileSync(options.cert.certFile), key: readFileSync(options.cert.keyFile) },
          handler,
        )
      : createHttpServer(handler);
    const host = options.host ?? '127.0.0.1';
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    const port = (server.address() as AddressInfo).port;
    const scheme = options.cert ? 'https' : 'http';
    box.mitm = new Mitm(server, `${scheme}://${options.urlHost ?? host}:${port}`);
    server.on('tlsClientError', () => box.mitm!.tlsRefused++);
    return box.mitm;
  }

  /** Requests answered in `mode`. */
  answered(mode: Mode): Seen[] {
    return this.seen.filter((s) => s.mode === mode && s.done);
  }

  private async handle(
    req: IncomingMessage,
    res: ServerResponse,
    upstream: string,
    upstreamCa: string,
  ): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    let param: Json | null = null;
    try {
      param = JSON.parse(String((JSON.parse(body.toString()) as Json).param)) as Json;
    } catch {
      // not a query (a probe): relayed as it is
    }
    const mode = (param ? this.script.shift() : undefined) ?? 'pass';
    const seen: Seen = { mode, param, listed: [], written: 0, clientClosed: false, done: false };
    this.seen.push(seen);
    res.on('close', () => {
      if (!res.writableFinished) seen.clientClosed = true;
      seen.done = true;
    });
    if (mode === 'pad') return this.pad(res, seen);

    const answer = await relay(
      upstream,
      upstreamCa,
      req,
      mode === 'other-store' ? this.otherStoreQuery! : body,
    );
    const genuine = answer.body.toString();
    seen.listed = this.learn(genuine);
    let out = genuine;
    let signature = answer.signature;
    // other-store: the service's genuine answer, as it came (signed for another store's query).
    if (mode !== 'pass' && mode !== 'other-store') {
      out = this.forge(genuine);
      if (mode === 'forge-unsigned') signature = undefined;
      if (mode === 'forge-attacker-signed') signature = signBytes(Buffer.from(out), attackerKey);
      // forge-genuine-signature: the service's signature of the genuine body, kept.
    }
    res.writeHead(answer.status, {
      'content-type': 'application/json; charset=utf-8',
      ...(signature ? { [RESPONSE_SIGNATURE_HEADER]: signature } : {}),
      // Kept in every mode: a forger says "version 2" as the service did (v1.2 §10).
      ...(answer.version ? { [RESPONSE_SIGNATURE_VERSION_HEADER]: answer.version } : {}),
    });
    seen.written = Buffer.byteLength(out);
    res.end(out);
  }

  /** Keeps the last record of a genuine answer as the template; returns the order numbers. */
  private learn(body: string): string[] {
    try {
      const list = (JSON.parse(body) as { data?: { list?: Json[] } }).data?.list;
      if (list && list.length > 0) this.template = list.at(-1)!;
      return (list ?? []).map((r) => String(r.orderInnerNo));
    } catch {
      return []; // an error answer
    }
  }

  /** The genuine page plus a record of the attacker's making, for the next order number. */
  private forge(genuine: string): string {
    const answer = JSON.parse(genuine) as { data?: { list?: Json[] } | null };
    const template = this.template;
    assert.ok(template, 'the forger needs a genuine record to copy');
    const sku = (template.skuList as Json[])[0]!;
    const forged = {
      ...template,
      orderInnerNo: this.forgeOrderNo,
      realAmount: 999_900,
      totalAmount: 999_900,
      skuList: [{ ...sku, productName: FORGED_DISH, skuName: FORGED_DISH, price: 999_900 }],
    };
    const list = [...(answer.data?.list ?? []), forged];
    return JSON.stringify({
      code: 10000,
      message: 'success',
      data: { total: list.length, pageNum: 1, pageSize: 100, list },
    });
  }

  /** 300 MiB of a JSON-looking answer, chunked, with flow control, until the agent hangs up. */
  private pad(res: ServerResponse, seen: Seen): void {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"code":10000,"message":"success","data":{"total":1,"pageNum":1,"list":["');
    const chunk = Buffer.alloc(MiB, 0x41);
    const pump = () => {
      while (!seen.done && seen.written < PAD_BYTES) {
        seen.written += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      if (!seen.done) res.end('"]}}');
    };
    pump();
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * One request to the real service over https (CA verified), the answer read whole. The agent's
 * `X-Request-Nonce` goes with it, so the service binds its answer to the agent's request.
 */
function relay(
  upstream: string,
  ca: string,
  req: IncomingMessage,
  body: Buffer,
): Promise<{
  status: number;
  signature: string | undefined;
  version: string | undefined;
  body: Buffer;
}> {
  const nonce = req.headers[REQUEST_NONCE_HEADER];
  return new Promise((resolve, reject) => {
    const out = httpsRequest(
      new URL(req.url ?? '/', upstream),
      {
        method: req.method,
        ca,
        headers: {
          'content-type': req.headers['content-type'] ?? 'application/json',
          'content-length': body.length,
          ...(typeof nonce === 'string' ? { [REQUEST_NONCE_HEADER]: nonce } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const sig = res.headers[RESPONSE_SIGNATURE_HEADER];
          const version = res.headers[RESPONSE_SIGNATURE_VERSION_HEADER];
          resolve({
            status: res.statusCode ?? 0,
            signature: typeof sig === 'string' ? sig : undefined,
            version: typeof version === 'string' ? version : undefined,
            body: Buffer.concat(chunks),
          });
        });
        res.on('error', reject);
      },
    );
    out.on('error', reject);
    out.end(body);
  });
}

/** Holds back the instructions of some stores, so that only catch-up can bring their orders. */
class HoldingPublisher implements InstructionPublisher {
  readonly held = new Set<string>();
  constructor(private readonly inner: InstructionPublisher) {}
  publish(storeId: string, body: string): Promise<void> {
    return this.held.has(storeId)
      ? Promise.reject(new Error('held back by the test: catch-up must bring this order'))
      : this.inner.publish(storeId, body);
  }
}

describe('catch-up against a man in the middle (issue 13, item 1)', {
  skip,
  timeout: 600_000,
  // The tests run side by side: each has its own store, agent and proxy (the broker, the service
  // and its https front are shared and keep nothing between tests), and each spends most of its
  // time waiting out the 10 s between catch-up queries, which one after another took 100 s.
  concurrency: true,
}, () => {
  const suite = faultSuite();
  const dir = mkdtempSync(join(tmpdir(), 'pa-mitm-'));
  const lan = nonLoopbackAddress();
  let ca: TestCa;
  let caPem: string;
  /** The reference service as deployed: its listener, and https in front of it. */
  interface Service {
    app: ReturnType<typeof buildApp>;
    orders: SqliteOrderStore;
    front: TlsFront;
    /** The https front's URL. */
    url: string;
    /** The service's own listener on loopback (plain http). */
    port: number;
  }
  /** What most tests use; `forgery` is the forged-record test's alone (see there). */
  let shared: Service;
  let forgery: Service;
  let publisher: MqttPublisher;
  let holding: HoldingPublisher;
  const proxies: Mitm[] = [];

  /** The stores of this file: name, and the restaurant the service lists its orders under. */
  const STORES = [
    ['mitm-lab', 'R100'],
    ['mitm-pad', 'R100'],
    ['mitm-tls', 'R100'],
    ['mitm-impostor', 'R100'],
    ['mitm-lan', 'R100'],
    ['mitm-foreign', 'R999'],
    // No agent: the store whose owner attacks another store's catch-up (the lab switch test).
    ['mitm-attacker', 'R100'],
  ] as const;
  const appId = (name: string) => `A-${name}`;
  const storeKeyOf = (name: string) => `sk-${name}-secret-7731`;

  before(async () => {
    ca = TestCa.create('order-service');
    caPem = readFileSync(ca.certFile, 'utf8');
    writeFileSync(join(dir, 'service-private.pem'), servicePair.privatePem, { mode: 0o600 });
    writeFileSync(join(dir, 'store-public.pem'), storePair.publicPem);
    writeFileSync(join(dir, 'store-private.pem'), storePair.privatePem, { mode: 0o600 });
    const config = parseServiceConfig({
      apps: STORES.map(([name, restaurantNo]) => ({
        appId: appId(name),
        publicKeyFile: 'store-public.pem',
        stores: [
          {
            storeKey: storeKeyOf(name),
            restaurantNo,
            branchIdentifier: restaurantNo === 'R100' ? 'B-1' : 'B-9',
          },
        ],
      })),
      servicePrivateKeyFile: 'service-private.pem',
    });
    const { registry, serviceKey } = buildRegistry(config, dir);
    publisher = new MqttPublisher({
      url: suite.broker.url,
      topicPrefix: 'printer-agent/v1',
      clientId: 'order-service-mitm',
      onConnect: () => {
        void shared?.app.outbox.drain();
        void forgery?.app.outbox.drain();
      },
    });
    holding = new HoldingPublisher(publisher);
    // The forgery test predicts the next order number, which holds only within one day.
    const now = clockAwayFromMidnight();
    const startService = async (): Promise<Service> => {
      const orders = new SqliteOrderStore(':memory:');
      const app = buildApp({
        now,
        registry,
        store: orders,
        serviceKey,
        publisher: holding,
        outboxRetryMs: 0,
        // This process's creates reuse keep-alive connections (fetch closes an idle one after
        // 4 s, from the service's `timeout=5` hint). While the 300 MiB test's proxy, in this
        // process, keeps the event loop busy, that 4 s timer fires late and a create can go out
        // on a connection the service closed at 5 s ("fetch failed": a POST is not retried).
        // The service keeps idle connections longer here, so the client always closes first.
        http: { keepAliveTimeoutMs: 60_000 },
      });
      await app.listen({ port: 0, host: '127.0.0.1' });
      const port = (app.server.address() as AddressInfo).port;
      // The service as deployed: https in front (its certificate from the service's CA).
      const front = await TlsFront.start(ca.issue({ name: 'order-service', ...LOCAL_NAMES }), port);
      return { app, orders, front, url: `https://localhost:${front.port}`, port };
    };
    shared = await startService();
    forgery = await startService();
    await waitFor('the service on the broker', () => publisher.connected, 10_000);
  });

  after(async () => {
    for (const p of proxies) await p.close();
    for (const service of [shared, forgery]) {
      await service?.front.close();
      await service?.app.close();
      service?.orders.close();
    }
    await publisher?.close();
  });

  async function mitm(
    options: Omit<Parameters<typeof Mitm.start>[0], 'upstream' | 'upstreamCa'>,
    service = shared,
  ) {
    const proxy = await Mitm.start({ ...options, upstream: service.url, upstreamCa: caPem });
    proxies.push(proxy);
    return proxy;
  }

  /**
   * Each store's agent log, parsed once as it arrives, with live selections: the waits below poll
   * them every few milliseconds for up to two minutes.
   */
  const logs = new Map<
    FaultStore,
    { all: JsonLog; failed: () => readonly LogRecord[]; rounds: () => readonly LogRecord[] }
  >();
  const logOf = (s: FaultStore) => logs.get(s)!;

  /**
   * A store whose agent reads catch-up from `catchUp`, the store's key, queries as often as the
   * agent's schema allows (order-api §8: every 10 s at most, so each query below is ~10 s after
   * the one before: what most of this file's time goes to). Its agent is stopped when the test
   * `t` ends: the agents of earlier tests would only take CPU from the later ones.
   */
  async function store(t: TestContext, name: string, catchUp: Json): Promise<FaultStore> {
    const s = await suite.stores.create({
      name,
      broker: suite.broker,
      configure: (c) => {
        c.catchUp = { intervalSec: 10, minIntervalSec: 10, ...catchUp };
        (c.keys as Json).storePrivateKeyFile = join(dir, 'store-private.pem');
      },
    });
    const all = new JsonLog(() => s.output);
    logs.set(s, {
      all,
      failed: all.select((r) => r.msg === 'catch-up round failed; the next round tries again'),
      rounds: all.select((r) => String(r.msg).startsWith('catch-up round')),
    });
    t.after(() => s.stopAgent());
    return s;
  }

  /**
   * Creates an order as the merchant's POS would (signed), straight at the service's listener
   * (the POS's path is not what this file attacks); returns its orderNo.
   */
  async function create(name: string, dish: string, service = shared): Promise<string> {
    const url = `http://127.0.0.1:${service.port}/open-api/order/create`;
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(
        buildEnvelope({
          appId: appId(name),
          storeKey: storeKeyOf(name),
          key: storeKey,
          param: {
            productInfo: [{ productName: dish, price: 10_000, quantity: 1 }],
            orderType: 1,
            paymentWay: '2',
            paymentTransactionId: `M-${dish}`.replace(/\s/g, '-').slice(0, 50),
          },
        }),
      ),
    }).catch((error: Error) => {
      // fetch says only "fetch failed"; what failed is in its cause.
      throw new Error(
        `create ${dish}: ${url}: ${String((error.cause as Error)?.message ?? error)}`,
        {
          cause: error,
        },
      );
    });
    const body = (await res.json()) as { code: number; message: string; data: { orderNo: string } };
    assert.equal(body.code, 10000, `create: ${body.code} ${body.message}`);
    return body.data.orderNo;
  }

  /** The agent's JSON log records; its failed rounds; its round summaries (failed ones too). */
  const log = (s: FaultStore) => logOf(s).all.records();
  const failedRounds = (s: FaultStore) => logOf(s).failed();
  const rounds = (s: FaultStore) => logOf(s).rounds();
  const eventsOf = (s: FaultStore, orderNo: string): JobEvent[] =>
    s.events.filter((e) => e.orderNo === orderNo);
  const paper = (s: FaultStore) => s.ticketTexts().join('\n');

  it('a forged record for the next order number never prints; the genuine instruction then does', async (t) => {
    // A service of its own: the attacker guesses the number the service gives next, which the
    // orders the other tests create meanwhile would take on a shared one.
    const proxy = await mitm({}, forgery);
    const s = await store(t, 'mitm-lab', { baseUrl: proxy.url });
    // An order of the day, before the agent runs: its first round (a genuine answer) prints it
    // and sets the cursor on it. Waiting for a later round to pick it up would cost 10 s or 20 s.
    const first = await create('mitm-lab', 'Genuine first dish', forgery);
    await s.startOnline();
    await waitFor(
      `${first} printed`,
      () => eventsOf(s, first).some((e) => e.state === 'printed'),
      60_000,
    );
    await waitFor(
      'the genuine answer listing it',
      () => proxy.seen.some((x) => x.done && x.listed.includes(first)),
      30_000,
    );
    assert.ok(s.printedOrders().includes(first), `${first} printed\n${s.tail()}`);

    // The attacker knows the numbering: O + day + a daily sequence.
    const next = `${first.slice(0, -6)}${String(Number(first.slice(-6)) + 1).padStart(6, '0')}`;
    proxy.forgeOrderNo = next;
    const from = proxy.seen.length;
    const failedFrom = failedRounds(s).length;
    proxy.script.push('forge-unsigned', 'forge-genuine-signature', 'forge-attacker-signed');
    // Three forged answers, then a genuine one: each forged answer ended its round.
    await waitFor(
      'three forged answers and the query after them',
      () => proxy.seen.length >= from + 4 && proxy.seen[from + 3]!.done,
      120_000,
    );
    assert.deepEqual(
      proxy.seen.slice(from, from + 3).map((x) => x.mode),
      ['forge-unsigned', 'forge-genuine-signature', 'forge-attacker-signed'],
    );
    assert.equal(proxy.seen[from]!.param?.orderInnerNo, first, 'the cursor was on the first order');
    // Nothing of the forged record was stored, printed or reported.
    assert.deepEqual(eventsOf(s, next), [], `events of the forged ${next}`);
    assert.ok(!paper(s).includes(FORGED_DISH), 'the forged receipt printed');
    await waitFor('three refused rounds', () => failedRounds(s).length >= failedFrom + 3, 30_000);
    const refused = failedRounds(s).slice(failedFrom, failedFrom + 3);
    assert.deepEqual(
      refused.map((r) => r.code),
      ['QUERY_REJECTED', 'QUERY_REJECTED', 'QUERY_REJECTED'],
    );
    assert.match(String(refused[0]!.err), /carries no X-Signature: refused unread/);
    assert.match(String(refused[1]!.err), /X-Signature does not verify/);
    assert.match(String(refused[2]!.err), /X-Signature does not verify/);
    // The cursor did not move: every incremental query still starts after the first order.
    for (const x of proxy.seen.slice(from))
      if (x.param?.orderInnerNo !== undefined) assert.equal(x.param.orderInnerNo, first);
    assert.ok(!proxy.seen.some((x) => x.param?.orderInnerNo === next));

    // The real order with that number: its signed MQTT instruction prints, not `duplicate`.
    const genuine = await create('mitm-lab', 'Genuine next dish', forgery);
    assert.equal(genuine, next, 'the attacker guessed the number right');
    await waitFor(
      `${next} printed`,
      () => eventsOf(s, next).some((e) => e.state === 'printed'),
      30_000,
    );
    assert.ok(!eventsOf(s, next).some((e) => e.state === 'duplicate'));
    assert.ok(paper(s).includes('Genuine next dish'));
    assert.ok(!paper(s).includes(FORGED_DISH));
    assert.equal(s.printsByOrder().get(next)?.length, 1);
  });

  it('a 300 MiB answer is refused at 4 MiB: connection dropped, agent memory bounded', async (t) => {
    const proxy = await mitm({});
    const s = await store(t, 'mitm-pad', { baseUrl: proxy.url });
    const { pid } = await s.startOnline();
    // The agent's peak so far, its start and a round read whole included.
    await waitFor('a genuine answer read', () => proxy.answered('pass').length > 0, 60_000);
    const peakBefore = peakRssMb(pid);
    const failedFrom = failedRounds(s).length;
    const from = proxy.seen.length;
    proxy.script.push('pad');
    await waitFor(
      'the padded answer to end',
      () => proxy.seen.slice(from).some((x) => x.mode === 'pad' && x.done),
      120_000,
    );
    const pad = proxy.seen.slice(from).find((x) => x.mode === 'pad')!;
    // The round ends with the refusal: by then a reader of the whole body would have reached its
    // peak (the issue measured 1.1 GB).
    await waitFor('the padded round refused', () => failedRounds(s).length > failedFrom, 30_000);
    const peakAfter = peakRssMb(pid);
    assert.ok(
      peakAfter < peakBefore + 64,
      `peak RSS ${peakBefore.toFixed(0)} -> ${peakAfter.toFixed(0)} MB`,
    );
    assert.ok(pad.clientClosed, 'the agent hung up');
    assert.ok(pad.written < 32 * MiB, `${pad.written / MiB} MiB sent before the agent hung up`);
    const refused = failedRounds(s)[failedFrom];
    assert.equal(refused?.code, 'QUERY_REJECTED');
    assert.match(String(refused.err), /larger than 4194304 bytes: refused, connection closed/);
    assert.ok(s.agent!.alive, 'the agent is still running');
    // And the next round reads the genuine service again.
    await waitFor(
      'a genuine answer after it',
      () => proxy.seen.slice(from).some((x) => x.mode === 'pass' && x.done),
      60_000,
    );
  });

  it("https: the service's pinned CA prints its orders; another CA's certificate is refused before the query is sent", async (t) => {
    for (const name of ['mitm-tls', 'mitm-impostor'])
      holding.held.add(deriveStoreId(appId(name), storeKeyOf(name)));
    const otherCa = TestCa.create('impostor');
    const impostor = await mitm({
      cert: otherCa.issue({ name: 'impostor', ...LOCAL_NAMES }),
      urlHost: 'localhost',
    });
    const tls = await store(t, 'mitm-tls', { baseUrl: shared.url, caFile: ca.certFile });
    const imp = await store(t, 'mitm-impostor', { baseUrl: impostor.url, caFile: ca.certFile });
    // Orders whose instructions the service holds back: only catch-up can bring them.
    const tlsOrder = await create('mitm-tls', 'Dish over https');
    const impOrder = await create('mitm-impostor', 'Dish behind an impostor');
    await tls.startOnline();
    await imp.startOnline();

    await waitFor(
      `${tlsOrder} printed by catch-up over https`,
      () => eventsOf(tls, tlsOrder).some((e) => e.state === 'printed'),
      60_000,
    );
    assert.ok(paper(tls).includes('Dish over https'));
    assert.equal(eventsOf(tls, tlsOrder)[0]?.jobId, `catch-up:${tlsOrder}`);

    await waitFor('two refused rounds', () => failedRounds(imp).length >= 2, 60_000);
    for (const round of failedRounds(imp)) {
      assert.equal(round.code, 'QUERY_FAILED');
      assert.match(String(round.err), /TLS check failed \(unknown-ca\): .*catchUp\.caFile/);
    }
    assert.equal(impostor.seen.length, 0, 'no query (and no storeKey) ever reached the impostor');
    assert.ok(impostor.tlsRefused >= 2, `${impostor.tlsRefused} refused handshakes`);
    assert.deepEqual(eventsOf(imp, impOrder), []);
    assert.deepEqual(imp.printedOrders(), []);
  });

  it('a record for another restaurant is rejected, reported and never printed', async (t) => {
    holding.held.add(deriveStoreId(appId('mitm-foreign'), storeKeyOf('mitm-foreign')));
    // The service lists this store's orders under R999 / B-9; the agent knows it is R100 / B-1.
    // Straight to the service on loopback (signed answers): only the restaurant rule is at stake.
    const s = await store(t, 'mitm-foreign', {
      baseUrl: `http://127.0.0.1:${shared.port}`,
      restaurantNo: 'R100',
      branchIdentifier: 'B-1',
    });
    const orderNo = await create('mitm-foreign', 'Dish of another restaurant');
    await s.startOnline();
    await waitFor(`catch-up to report ${orderNo}`, () => eventsOf(s, orderNo).length > 0, 60_000);
    assert.deepEqual(
      eventsOf(s, orderNo).map((e) => e.state),
      ['rejected'],
    );
    const rejected = eventsOf(s, orderNo).find((e) => e.state === 'rejected')!;
    assert.equal(rejected.jobId, `catch-up:${orderNo}`);
    assert.equal(rejected.reason?.code, 'IDENTITY_MISMATCH');
    assert.match(rejected.reason!.message, /restaurantNo "R999" is not this store's R100/);
    // The log comes through the child's stdout, which may trail its MQTT events.
    await waitFor('the rejection log line', () =>
      log(s).some(
        (r) => r.msg === 'order record from the query API rejected' && r.orderNo === orderNo,
      ),
    );
    // Another whole round later, it is still neither queued nor printed (nor reported again).
    await waitFor('the round after the one that reported it', () => rounds(s).length >= 2, 60_000);
    assert.deepEqual(
      eventsOf(s, orderNo).map((e) => e.state),
      ['rejected'],
    );
    assert.ok(!paper(s).includes('Dish of another restaurant'));
  });

  it('http to a host other than loopback: refused by `config check` and `run`, saying why', async (t) => {
    // A valid config (loopback http) whose agent never runs, then the address changed.
    const s = await store(t, 'mitm-insecure', { baseUrl: 'http://127.0.0.1:9' });
    const config = JSON.parse(readFileSync(s.configPath, 'utf8')) as Json;
    config.catchUp = { ...(config.catchUp as Json), baseUrl: 'http://192.0.2.10:8080' };
    config.stateDir = join(dir, 'refused-state');
    const path = join(dir, 'insecure.json');
    writeFileSync(path, JSON.stringify(config), { mode: 0o600 });
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith('PRINTER_AGENT_')),
    );
    // `run` through its own process, as it always runs; `config check` in this one.
    const check = await runCliInProcess(['config', 'check', '--config', path], { env });
    // `run` exits 78 (EX_CONFIG), which the unit does not restart on.
    for (const [command, r, code] of [
      ['config check', check, 1],
      ['run', runCli(['run', '--config', path], { env }), 78],
    ] as const) {
      assert.equal(r.status, code, `${command}: ${r.stdout}${r.stderr}`);
      assert.match(
        r.stderr,
        /catchUp\.baseUrl: must be https:\/\/ for a host other than loopback \(print-protocol §8\): over http anyone on the network path can answer in the service's place/,
      );
      assert.match(r.stderr, /catchUp\.allowInsecureHttp to true/);
    }
  });

  it('the lab switch: http to a LAN address works, answers still verified, a warning every round', {
    skip: lan === null ? 'no non-loopback IPv4 address on this machine' : false,
  }, async (t) => {
    holding.held.add(deriveStoreId(appId('mitm-lan'), storeKeyOf('mitm-lan')));
    const proxy = await mitm({ host: lan!, urlHost: lan! });
    const s = await store(t, 'mitm-lan', { baseUrl: proxy.url, allowInsecureHttp: true });
    const check = await runCliInProcess(['config', 'check', '--config', s.configPath]);
    assert.equal(check.status, 0, check.stderr);
    assert.match(
      check.stderr,
      new RegExp(
        `^WARNING: catchUp\\.allowInsecureHttp is true: catch-up talks plain http to ${lan!.replace(/\./g, '\\.')}:\\d+, so the storeKey travels in clear text`,
        'm',
      ),
    );

    const orderNo = await create('mitm-lan', 'Dish over the lab switch');
    await s.startOnline();
    await waitFor(
      `${orderNo} printed by catch-up`,
      () => eventsOf(s, orderNo).some((e) => e.state === 'printed'),
      60_000,
    );
    // Signatures still hold over the lab switch: a forged answer is refused. So is a genuine page
    // of another store (R100 / B-1 too, and this agent knows neither anyway, as in the demo):
    // the attacker's own store's query sent under this agent's nonce (issue 40 item 5).
    proxy.forgeOrderNo = 'O29991231999999';
    const theirs = await create('mitm-attacker', 'Dish of the attacking store');
    const day = (ms: number) => formatTimestamp(new Date(Date.now() + ms));
    proxy.otherStoreQuery = Buffer.from(
      JSON.stringify(
        buildEnvelope({
          appId: appId('mitm-attacker'),
          storeKey: storeKeyOf('mitm-attacker'),
          key: storeKey,
          param: {
            startTime: day(-86_400_000),
            endTime: day(86_400_000),
            pageNum: 1,
            pageSize: 100,
          },
        }),
      ),
    );
    const from = failedRounds(s).length;
    const seenFrom = proxy.seen.length;
    proxy.script.push('forge-unsigned', 'other-store');
    await waitFor('the two refused rounds', () => failedRounds(s).length > from + 1, 60_000);
    assert.match(String(failedRounds(s)[from]!.err), /carries no X-Signature/);
    const other = proxy.seen.slice(seenFrom).find((x) => x.mode === 'other-store')!;
    assert.deepEqual(other.listed, [theirs], "the service's genuine page of the other store");
    assert.equal(failedRounds(s)[from + 1]!.code, 'QUERY_REJECTED');
    assert.match(
      String(failedRounds(s)[from + 1]!.err),
      /X-Signature does not verify .*for this request \(its nonce, target and store/,
    );
    assert.ok(!paper(s).includes(FORGED_DISH));
    assert.deepEqual(eventsOf(s, theirs), [], "the other store's order: no event, no job");
    assert.ok(!paper(s).includes('Dish of the attacking store'));
    // One warning per round, each at its start: as many as rounds begun, at least.
    const summaries = rounds(s);
    const warnings = log(s).filter(
      (r) => r.level === 40 && String(r.msg).includes('allowInsecureHttp is true'),
    );
    assert.ok(summaries.length >= 2, `${summaries.length} rounds`);
    assert.ok(
      warnings.length >= summaries.length,
      `${warnings.length} warnings for ${summaries.length} rounds`,
    );
  });
});
