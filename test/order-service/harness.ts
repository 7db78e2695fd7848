/**
 * A service wired for tests: keys in a temp dir, config through the real schema, in-memory store
 * (`makeService`); or the service as it runs, from its composition root with a SQLite file and
 * its MQTT publisher, with what it publishes collected from a real broker (`startRealService`).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningService, startOrderService } from '../../src/cli/order-service.js';
import { createLogger } from '../../src/logging.js';
import { type TopicWatch, watchTopics } from '../../src/mqtt/watch.js';
import {
  buildApp,
  buildRegistry,
  type CallbackOptions,
  type InstructionPublisher,
  type OrderStore,
  parseServiceConfig,
  SqliteOrderStore,
} from '../../src/order-service/index.js';
import {
  buildEnvelope,
  generateKeyPair,
  parseKey,
  RESPONSE_SIGNATURE_HEADER,
  type RsaKey,
  verifyBytes,
} from '../../src/protocol/index.js';

// Key generation is slow: one set for the whole file.
export const dir = mkdtempSync(join(tmpdir(), 'order-service-'));
const client = generateKeyPair();
const service = generateKeyPair();
const stranger = generateKeyPair();
writeFileSync(join(dir, 'client.pub'), client.publicPem);
writeFileSync(join(dir, 'service.key'), service.privatePem, { mode: 0o600 });

export const APP_ID = 'A1';
export const STORE_KEY = 'K1';
export const OTHER_STORE_KEY = 'K2';
export const clientKey: RsaKey = parseKey(client.privatePem, 'private');
export const strangerKey: RsaKey = parseKey(stranger.privatePem, 'private');
export const servicePublicKey: RsaKey = parseKey(service.publicPem, 'public');

/** Records what would go to the broker, with the envelope opened up for assertions. */
export class RecordingPublisher implements InstructionPublisher {
  calls: {
    storeId: string;
    body: string;
    appId: string;
    storeKey: string;
    param: string;
    sign: string;
  }[] = [];
  down = false;
  async publish(storeId: string, body: string): Promise<void> {
    if (this.down) throw new Error('broker unreachable');
    this.calls.push({ storeId, body, ...JSON.parse(body) });
  }
}

export function makeService(
  options: {
    dataAsString?: boolean;
    now?: () => Date;
    timeZone?: string;
    callbackUrl?: string;
    callbacks?: CallbackOptions;
    /** More service config (http limits, signatureScheme, agentMaxMessageBytes...). */
    config?: Record<string, unknown>;
    /** A SQLite file instead of an in-memory database. */
    database?: string;
    /** An order store of the test's (PostgreSQL, shared by several instances). */
    store?: OrderStore;
    /** Instructions published this long after they were handed over (default 5 s). */
    publishTimeoutMs?: number;
  } = {},
) {
  const config = parseServiceConfig({
    ...options.config,
    apps: [
      {
        appId: APP_ID,
        publicKeyFile: 'client.pub',
        ...(options.callbackUrl ? { callbackUrl: options.callbackUrl } : {}),
        stores: [
          { storeKey: STORE_KEY, restaurantNo: 'R100', branchIdentifier: 'B-1' },
          { storeKey: OTHER_STORE_KEY, restaurantNo: 'R200', branchIdentifier: 'B-2' },
        ],
      },
    ],
    servicePrivateKeyFile: 'service.key',
    dataAsString: options.dataAsString ?? false,
  });
  const { registry, serviceKey } = buildRegistry(config, dir);
  const store: OrderStore = options.store ?? new SqliteOrderStore(options.database ?? ':memory:');
  const publisher = new RecordingPublisher();
  const app = buildApp({
    registry,
    store,
    serviceKey,
    scheme: config.signatureScheme,
    publisher,
    dataAsString: config.dataAsString,
    maxBodyBytes: config.maxBodyBytes,
    agentMaxMessageBytes: config.agentMaxMessageBytes,
    http: config.http,
    timeZone: options.timeZone ?? 'UTC',
    outboxRetryMs: 0,
    ...(options.publishTimeoutMs ? { publishTimeoutMs: options.publishTimeoutMs } : {}),
    ...(options.callbacks ? { callbacks: options.callbacks } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  return { app, store, publisher };
}

/** A clock that starts at `start` (UTC) and moves `stepMs` on every reading. */
export function steppingClock(start: string, stepMs = 0) {
  let t = Date.parse(`${start.replace(' ', 'T')}Z`);
  const clock = () => {
    const d = new Date(t);
    t += stepMs;
    return d;
  };
  clock.set = (ts: string) => {
    t = Date.parse(`${ts.replace(' ', 'T')}Z`);
  };
  return clock;
}

export const baseOrder = {
  productInfo: [
    { productName: 'Beef noodles', price: 12_000, quantity: 2 },
    { productName: 'Iced tea', price: 3_500, quantity: 1 },
  ],
  orderType: 1,
  paymentWay: '2',
  paymentTransactionId: 'M-0001',
};

let transactions = 0;
/**
 * `baseOrder` with `patch` under a paymentTransactionId not used before in this test file: a
 * create is identified by its paymentTransactionId (print-protocol v1.1 §9), so two different
 * orders need two ids, as two payments at a real POS have.
 */
export function newOrder(patch: object = {}) {
  transactions++;
  return { ...baseOrder, paymentTransactionId: `M-new-${transactions}`, ...patch };
}

export function signed(
  param: object | string,
  options: { key?: RsaKey; storeKey?: string; appId?: string } = {},
) {
  return buildEnvelope({
    appId: options.appId ?? APP_ID,
    storeKey: options.storeKey ?? STORE_KEY,
    param,
    key: options.key ?? clientKey,
  });
}

// biome-ignore lint/suspicious/noExplicitAny: tests read response fields ad hoc and assert each one
type Reply = { code: number; message: string; data: any };

type App = ReturnType<typeof makeService>['app'];

/** The service's base URL; the app starts listening on a random port at its first request. */
export async function baseUrl(app: App): Promise<string> {
  if (!app.server.listening) await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

/** A real HTTP request over a socket (not fastify's inject), as a client would send it. */
export async function request(
  app: App,
  path: string,
  body: string,
  headers: Record<string, string> = { 'content-type': 'application/json' },
) {
  const res = await fetch(`${await baseUrl(app)}${path}`, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as Reply };
}

export function post(app: App, path: 'create' | 'list', body: unknown) {
  return request(app, `/open-api/order/${path}`, JSON.stringify(body));
}

/** An answer as received over HTTP: status, the exact body bytes and the signature header. */
export interface RawAnswer {
  status: number;
  bytes: Uint8Array;
  signature: string | null;
  // biome-ignore lint/suspicious/noExplicitAny: tests read response fields ad hoc
  body: any;
}

/** POSTs `body` (sent as is when a string) to `url` and keeps the answer's exact bytes. */
export async function postRaw(
  url: string,
  body: string | object,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<RawAnswer> {
  const res = await fetch(url, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  return {
    status: res.status,
    bytes,
    signature: res.headers.get(RESPONSE_SIGNATURE_HEADER),
    body: JSON.parse(Buffer.from(bytes).toString('utf8')),
  };
}

/** True when the answer carries a signature by the service key over exactly its bytes. */
export function signedByService(answer: { bytes: Uint8Array; signature: string | null }): boolean {
  return answer.signature !== null && verifyBytes(answer.bytes, answer.signature, servicePublicKey);
}

/** One print instruction the service published, as a subscriber on the broker received it. */
export interface Published {
  topic: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read instruction fields ad hoc
  param: any;
}

export interface RealService {
  url: string;
  running: RunningService;
  /** The service's SQLite file. */
  database: string;
  /** Every instruction published on `{prefix}/+/print`, in arrival order. */
  published: Published[];
  create(param: object | string, options?: { storeKey?: string }): Promise<RawAnswer>;
  list(param: object, options?: { storeKey?: string }): Promise<RawAnswer>;
  /** Instructions published for `orderNo`. */
  instructionsFor(orderNo: string): Published[];
  close(): Promise<void>;
}

/**
 * The service from its composition root (`startOrderService`, as `printer-agent order-service`
 * runs it): config through the real schema, a SQLite file in a fresh directory, the MQTT
 * publisher to `brokerUrl`, and a subscriber collecting everything it publishes.
 */
export async function startRealService(options: {
  brokerUrl: string;
  /** The app's order callback URL (order-api §6). */
  callbackUrl?: string;
  config?: Record<string, unknown>;
}): Promise<RealService> {
  const database = join(mkdtempSync(join(tmpdir(), 'order-service-db-')), 'orders.sqlite');
  const config = parseServiceConfig({
    apps: [
      {
        appId: APP_ID,
        publicKeyFile: 'client.pub',
        ...(options.callbackUrl ? { callbackUrl: options.callbackUrl } : {}),
        stores: [
          { storeKey: STORE_KEY, restaurantNo: 'R100', branchIdentifier: 'B-1' },
          { storeKey: OTHER_STORE_KEY, restaurantNo: 'R200', branchIdentifier: 'B-2' },
        ],
      },
    ],
    servicePrivateKeyFile: 'service.key',
    timeZone: 'UTC',
    database,
    listen: { host: '127.0.0.1', port: 0 },
    mqtt: { url: options.brokerUrl },
    ...options.config,
  });
  const published: Published[] = [];
  const watch: TopicWatch = await watchTopics(
    { url: options.brokerUrl, protocolVersion: 5, topics: ['printer-agent/v1/+/print'] },
    (topic, payload) => {
      const envelope = JSON.parse(payload.toString('utf8')) as { param: string };
      published.push({ topic, param: JSON.parse(envelope.param) });
    },
  );
  const running = await startOrderService(config, dir, createLogger({ level: 'silent' }));
  const at = (path: string) => `${running.url}/open-api/order/${path}`;
  return {
    url: running.url,
    running,
    database,
    published,
    create: (param, o = {}) => postRaw(at('create'), signed(param, o)),
    list: (param, o = {}) => postRaw(at('list'), signed(param, o)),
    instructionsFor: (orderNo) => published.filter((p) => p.param.orderNo === orderNo),
    async close() {
      await running.close();
      await watch.close();
    },
  };
}
