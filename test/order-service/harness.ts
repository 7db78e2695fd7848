/** A service wired for tests: keys in a temp dir, config through the real schema, in-memory store. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildApp,
  buildRegistry,
  type CallbackOptions,
  type InstructionPublisher,
  OrderStore,
  parseServiceConfig,
} from '../../src/order-service/index.js';
import { buildEnvelope, generateKeyPair, parseKey, type RsaKey } from '../../src/protocol/index.js';

// Key generation is slow: one set for the whole file.
const dir = mkdtempSync(join(tmpdir(), 'order-service-'));
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
  } = {},
) {
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
    dataAsString: options.dataAsString ?? false,
  });
  const { registry, serviceKey } = buildRegistry(config, dir);
  const store = new OrderStore(':memory:');
  const publisher = new RecordingPublisher();
  const app = buildApp({
    registry,
    store,
    serviceKey,
    publisher,
    dataAsString: config.dataAsString,
    timeZone: options.timeZone ?? 'UTC',
    outboxRetryMs: 0,
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
