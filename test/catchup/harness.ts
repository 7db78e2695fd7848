/**
 * The reference order service for the catch-up tests, over real HTTP on 127.0.0.1: keys in a temp
 * dir (the store's pair signs creates and queries, the service's pair signs instructions), the
 * config through the real schema, an in-memory order store. Queries are observed from the
 * service's side (a fastify hook), with the time on the test's clock, and the service can be made
 * to hang or to answer with a tampered body.
 *
 * The service signs every answer (`X-Signature`, print-protocol v1.1 §8; bound to the request
 * when it carries a nonce, v1.2 §10). A tampered body is signed again with the service key and
 * the service's own signer, bound to the same request and store, as if the service itself had
 * sent it (a service bug, not an attacker); `signature` rewrites the header after that, for what
 * only a forger would send.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyRequest } from 'fastify';
import type { CatchUpSettings } from '../../src/agent.js';
import {
  buildApp,
  buildRegistry,
  type InstructionPublisher,
  offlinePublisher,
  parseServiceConfig,
  SqliteOrderStore,
} from '../../src/order-service/index.js';
import { ResponseSigner } from '../../src/order-service/response-signature.js';
import {
  buildEnvelope,
  DEFAULT_SIGNATURE_SCHEME,
  generateKeyPair,
  parseKey,
  REQUEST_NONCE_HEADER,
  RESPONSE_SIGNATURE_HEADER,
  type RsaKey,
} from '../../src/protocol/index.js';
import type { VirtualClock } from './virtual-clock.js';

export const APP_ID = 'A-catchup';
export const STORE_KEY = 'sk-catchup-secret-4471';
export const OTHER_STORE_KEY = 'sk-catchup-other-store-9023';

// Key generation is slow: one set per test file.
export const keyDir = mkdtempSync(join(tmpdir(), 'pa-catchup-keys-'));
const storePair = generateKeyPair();
const servicePair = generateKeyPair();
const strangerPair = generateKeyPair();
export const STORE_PRIVATE_KEY_FILE = join(keyDir, 'store-private.pem');
export const SERVICE_PUBLIC_KEY_FILE = join(keyDir, 'service-public.pem');
writeFileSync(STORE_PRIVATE_KEY_FILE, storePair.privatePem, { mode: 0o600 });
writeFileSync(join(keyDir, 'store-public.pem'), storePair.publicPem);
writeFileSync(join(keyDir, 'service-private.pem'), servicePair.privatePem, { mode: 0o600 });
writeFileSync(SERVICE_PUBLIC_KEY_FILE, servicePair.publicPem);
export const storeKey: RsaKey = parseKey(storePair.privatePem, 'private');
export const strangerKey: RsaKey = parseKey(strangerPair.privatePem, 'private');
/** The service's own key, as the service holds it: signs its answers. */
export const serviceSigningKey: RsaKey = parseKey(servicePair.privatePem, 'private');
/** The service's public key, as an agent holds it: verifies the answers. */
export const servicePublicKey: RsaKey = parseKey(servicePair.publicPem, 'public');

/** One list request as the service saw it. */
const MINUTE = 60_000;

/** The catch-up timing the tests run with: 10-minute rounds at most every 10 s, 100 a page. */
export const CATCH_UP_TIMING = {
  intervalMs: 10 * MINUTE,
  minIntervalMs: 10_000,
  pageSize: 100,
  maxAgeMs: 60 * MINUTE,
  windowMs: 5 * MINUTE,
  timeZone: 'UTC',
} as const;

/** An in-process agent's catch-up against the service at `baseUrl`, its spacing on `clock`. */
export function testCatchUp(baseUrl: string, clock: VirtualClock): CatchUpSettings {
  return { baseUrl, storePrivateKeyFile: STORE_PRIVATE_KEY_FILE, ...CATCH_UP_TIMING, clock };
}

export interface ObservedQuery {
  /** The test clock's time when the request arrived. */
  at: number;
  param: Record<string, unknown>;
  /** The response code the service answered with. */
  code: number | null;
}

export interface TestService {
  app: ReturnType<typeof buildApp>;
  orders: SqliteOrderStore;
  url: string;
  queries: ObservedQuery[];
  /** Hold list requests unanswered (a service that does not answer). */
  hang: boolean;
  /**
   * Answer as a service older than print-protocol v1.2 §10: it ignores `X-Request-Nonce`, so
   * every answer is signed version 1 (the body alone).
   */
  v1Only: boolean;
  /** Rewrites the body of list answers (signed again with the service key, as the service would). */
  tamper: ((body: string) => string) | null;
  /** Rewrites the X-Signature of list answers last (`undefined`: no header), as a forger could. */
  signature: ((body: string, signature: string | undefined) => string | undefined) | null;
  /** List requests held unanswered so far. */
  held(): number;
  /**
   * Creates an order (signed like a merchant's POS) named `name`, a table order of one product
   * unless `param` overrides create parameters; returns its orderNo.
   */
  create(name: string, param?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export async function startService(
  options: {
    clock?: VirtualClock;
    dataAsString?: boolean;
    publisher?: InstructionPublisher;
    /** Where to listen (default 127.0.0.1); `url` names this host, or 127.0.0.1 for 0.0.0.0. */
    host?: string;
  } = {},
): Promise<TestService> {
  const config = parseServiceConfig({
    apps: [
      {
        appId: APP_ID,
        publicKeyFile: 'store-public.pem',
        stores: [
          { storeKey: STORE_KEY, restaurantNo: 'R100', branchIdentifier: 'B-1' },
          { storeKey: OTHER_STORE_KEY, restaurantNo: 'R200', branchIdentifier: 'B-2' },
        ],
      },
    ],
    servicePrivateKeyFile: 'service-private.pem',
    dataAsString: options.dataAsString ?? false,
  });
  const { registry, serviceKey } = buildRegistry(config, keyDir);
  const orders = new SqliteOrderStore(':memory:');
  const clock = options.clock;
  const app = buildApp({
    registry,
    store: orders,
    serviceKey,
    publisher: options.publisher ?? offlinePublisher,
    dataAsString: config.dataAsString,
    timeZone: 'UTC',
    outboxRetryMs: 0,
    ...(clock ? { now: () => clock.date() } : {}),
  });

  const signer = new ResponseSigner(serviceSigningKey, DEFAULT_SIGNATURE_SCHEME);
  const held: Array<() => void> = [];
  const seen = new WeakMap<FastifyRequest, ObservedQuery>();
  const isList = (request: FastifyRequest) => request.url.endsWith('/open-api/order/list');
  const service: TestService = {
    app,
    orders,
    url: '',
    queries: [],
    hang: false,
    v1Only: false,
    tamper: null,
    signature: null,
    held: () => held.length,
    async create(name: string, extra: Record<string, unknown> = {}) {
      const res = await fetch(`${service.url}/open-api/order/create`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(
          buildEnvelope({
            appId: APP_ID,
            storeKey: STORE_KEY,
            key: storeKey,
            param: {
              productInfo: [{ productName: name, price: 10_000, quantity: 1 }],
              orderType: 1,
              paymentWay: '2',
              paymentTransactionId: `M-${name}`.slice(0, 50),
              ...extra,
            },
          }),
        ),
      });
      const body = (await res.json()) as { code: number; message: string; data: unknown };
      if (body.code !== 10000) throw new Error(`create failed: ${body.code} ${body.message}`);
      const data = (typeof body.data === 'string' ? JSON.parse(body.data) : body.data) as {
        orderNo: string;
      };
      return data.orderNo;
    },
    async close() {
      for (const release of held.splice(0)) release();
      await app.close();
      orders.close();
    },
  };

  app.addHook('onRequest', (request, _reply, done) => {
    if (service.v1Only) delete request.headers[REQUEST_NONCE_HEADER];
    if (service.hang && isList(request)) held.push(() => done());
    else done();
  });
  app.addHook('preHandler', async (request) => {
    if (!isList(request)) return;
    const body = request.body as { param?: unknown } | null;
    let param: Record<string, unknown> = {};
    try {
      param = JSON.parse(String(body?.param)) as Record<string, unknown>;
    } catch {
      // Recorded as an empty param: the test asserts on what it expected to see.
    }
    const query: ObservedQuery = { at: clock ? clock.now() : Date.now(), param, code: null };
    seen.set(request, query);
    service.queries.push(query);
  });
  // Runs after the service's own signing hook (registered in buildApp, so first).
  app.addHook('onSend', async (request, reply, payload) => {
    if (!isList(request) || typeof payload !== 'string') return payload;
    const query = seen.get(request);
    if (query) query.code = (JSON.parse(payload) as { code: number }).code;
    let body = payload;
    if (service.tamper) {
      body = service.tamper(payload);
      const envelope = request.body as { appId?: string; storeKey?: string } | null;
      const store = registry.store(String(envelope?.appId), String(envelope?.storeKey));
      reply.headers(
        signer.headers(body, {
          method: request.method,
          url: request.raw.url ?? request.url,
          nonce: request.headers[REQUEST_NONCE_HEADER],
          storeId: store?.storeId ?? '',
        }),
      );
    }
    if (service.signature) {
      const header = reply.getHeader(RESPONSE_SIGNATURE_HEADER);
      const next = service.signature(body, typeof header === 'string' ? header : undefined);
      if (next === undefined) reply.removeHeader(RESPONSE_SIGNATURE_HEADER);
      else reply.header(RESPONSE_SIGNATURE_HEADER, next);
    }
    return body;
  });

  const host = options.host ?? '127.0.0.1';
  await app.listen({ port: 0, host });
  const port = (app.server.address() as AddressInfo).port;
  service.url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  return service;
}

/** Accepts every instruction while open; while closed, the service's outbox keeps them. */
export class GatedPublisher implements InstructionPublisher {
  open = true;
  constructor(private readonly inner: InstructionPublisher) {}
  publish(storeId: string, body: string): Promise<void> {
    return this.open
      ? this.inner.publish(storeId, body)
      : Promise.reject(new Error('held back by the test'));
  }
}

/** An IPv4 address of this machine that is not loopback (for the http lab switch), or null. */
export function nonLoopbackAddress(): string | null {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return null;
}
