/**
 * The service's configuration: registered apps with their public keys and stores, the service
 * private key that signs print instructions, and switches. Validated with zod so a mistake is
 * reported as `path: message` before the service starts.
 */
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { AgentError } from '../errors.js';
import {
  APP_ID_RULE,
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_SIGNATURE_SCHEME,
  DEFAULT_TOPIC_PREFIX,
  deriveStoreId,
  describeIssues,
  isUnambiguousAppId,
  loadKeyFile,
  parseWith,
  type RsaKey,
  SIGNATURE_SCHEMES,
  STORE_KEY_MAX,
} from '../protocol/index.js';
import { isPostgresUrl } from './database-url.js';

const nonEmpty = (max: number) =>
  z
    .string({ error: 'must be a string' })
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`);

const storeSchema = z.object({
  storeKey: nonEmpty(STORE_KEY_MAX),
  restaurantNo: nonEmpty(64),
  branchIdentifier: nonEmpty(64),
});

const httpUrl = nonEmpty(2048).refine((value) => {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}, 'must be an http:// or https:// URL');

const wholeNumber = (min: number, max: number) =>
  z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(min, `must be ${min} to ${max}`)
    .max(max, `must be ${min} to ${max}`);

/**
 * Slow or abusive clients (print-protocol v1.1 §9): every number bounds how long or how many, so
 * a client that trickles bytes, or opens connections and sends nothing, is cut off. Defaults and
 * their reasons are in docs/decisions.md (125, "Service limits and timeouts").
 */
const httpSchema = z
  .object({
    /** From the first byte of a request until its headers are complete (slowloris). */
    headersTimeoutMs: wholeNumber(100, 120_000).default(10_000),
    /** From the first byte of a request until the whole request, body included, is received. */
    requestTimeoutMs: wholeNumber(100, 600_000).default(30_000),
    /** An idle keep-alive connection is closed this long after its last response. */
    keepAliveTimeoutMs: wholeNumber(100, 120_000).default(5000),
    /** A socket with no traffic either way for this long is closed (a client that stopped reading). */
    idleTimeoutMs: wholeNumber(100, 600_000).default(60_000),
    /** Open connections at most; further ones are closed at once, before any byte is read. */
    maxConnections: wholeNumber(1, 100_000).default(256),
    /**
     * Open connections from one client address at most; further ones from it are closed at once,
     * so one host cannot fill `maxConnections` and lock every other client out. 32 is far above
     * what a store's POS terminals behind one NAT open. Behind a reverse proxy every connection
     * comes from the proxy: raise this to `maxConnections` there and cap clients in the proxy.
     */
    maxConnectionsPerClient: wholeNumber(1, 100_000).default(32),
  })
  .superRefine((h, ctx) => {
    // Node refuses a headers timeout longer than the request timeout, and it would be meaningless.
    if (h.headersTimeoutMs > h.requestTimeoutMs)
      ctx.addIssue({
        code: 'custom',
        path: ['headersTimeoutMs'],
        message: 'must not be longer than requestTimeoutMs',
      });
  });

/** Timeouts and connection caps of the HTTP server (the config's `http` section). */
export type HttpLimits = z.output<typeof httpSchema>;

/** The schema's defaults, for a service built without a config (tests): written once, above. */
export const DEFAULT_HTTP_LIMITS: HttpLimits = httpSchema.parse({});

/**
 * Request bodies larger than this are refused unread (41300). Four times the agents' message
 * limit: a create whose instruction fits the agents always fits, escaped and pretty-printed.
 */
export const DEFAULT_MAX_BODY_BYTES = 4 * DEFAULT_MAX_MESSAGE_BYTES;

/** What is wrong with a postgres:// URL, or null. */
function postgresUrlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be a postgres://user:password@host:port/database URL';
  }
  if (url.hostname === '' && !url.searchParams.has('host'))
    return 'must name the host: postgres://user:password@host:port/database';
  if (url.pathname.length <= 1) return 'must name the database: postgres://host:port/database';
  return null;
}

/** TLS for an mqtts:// broker URL; file paths are relative to the config file. */
const tlsSchema = z.object({
  /** PEM file of the CA that signed the broker certificate (default: the system CAs). */
  caFile: nonEmpty(4096).optional(),
  /** PEM client certificate, for brokers that authenticate clients by certificate. */
  certFile: nonEmpty(4096).optional(),
  /** PEM private key of the client certificate (a secret file: keep it 0600). */
  keyFile: nonEmpty(4096).optional(),
  /** Verify the broker certificate; turn off only for a test broker. */
  rejectUnauthorized: z.boolean({ error: 'must be true or false' }).default(true),
});

const appSchema = z.object({
  // print-protocol v1.2 §10: a `:` would make two stores' ids (and topics) ambiguous.
  appId: nonEmpty(64).refine(isUnambiguousAppId, APP_ID_RULE),
  publicKeyFile: nonEmpty(4096),
  stores: z.array(storeSchema).min(1, 'must list at least one store'),
  /** Order callbacks (order-api §6): each created order is POSTed here, signed. */
  callbackUrl: httpUrl.optional(),
});

export const serviceConfigSchema = z
  .object({
    apps: z.array(appSchema).min(1, 'must list at least one app'),
    servicePrivateKeyFile: nonEmpty(4096),
    /** Send `data` as a JSON-encoded string, as the spec's create sample does (order-api 2.10). */
    dataAsString: z.boolean({ error: 'must be true or false' }).default(false),
    /** IANA zone for createTime; default the host's zone ("service local time"). */
    timeZone: z.string({ error: 'must be a string' }).optional(),
    /**
     * SQLite file of the service, relative to the config file (`:memory:` keeps nothing), or a
     * PostgreSQL URL (postgres://user:password@host:port/database) for several instances.
     */
    database: nonEmpty(4096)
      .superRefine((value, ctx) => {
        const problem = isPostgresUrl(value) ? postgresUrlProblem(value) : null;
        if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
      })
      .default('order-service.sqlite'),
    /** Request bodies larger than this are refused unread (41300); see DEFAULT_MAX_BODY_BYTES. */
    maxBodyBytes: z
      .number({ error: 'must be a number' })
      .int('must be a whole number')
      .min(1024, 'must be at least 1024')
      .max(10_485_760, 'must be at most 10485760')
      .default(DEFAULT_MAX_BODY_BYTES),
    /**
     * The agents' `mqtt.maxMessageBytes`: a create whose signed print instruction would be larger
     * is refused (41301) before anything is stored, since no agent would accept it.
     */
    agentMaxMessageBytes: wholeNumber(1024, 1_048_576).default(DEFAULT_MAX_MESSAGE_BYTES),
    /**
     * Scheme of every signature the service makes and checks (print-protocol §3): creates and
     * queries it verifies, instructions, callbacks and response bodies it signs.
     */
    signatureScheme: z
      .enum(SIGNATURE_SCHEMES, { error: `must be one of ${SIGNATURE_SCHEMES.join(', ')}` })
      .default(DEFAULT_SIGNATURE_SCHEME),
    http: httpSchema.prefault({}),
    listen: z
      .object({
        host: nonEmpty(255).default('127.0.0.1'),
        port: z
          .number({ error: 'must be a number' })
          .int('must be a whole number')
          .min(0, 'must be 0 to 65535')
          .max(65535, 'must be 0 to 65535')
          .default(8080),
      })
      .prefault({}),
    mqtt: z
      .object({
        url: nonEmpty(4096),
        topicPrefix: nonEmpty(200).default(DEFAULT_TOPIC_PREFIX),
        protocolVersion: z
          .union([z.literal(4), z.literal(5)], { error: 'must be 4 (MQTT 3.1.1) or 5' })
          .default(5),
        username: nonEmpty(256).optional(),
        /** SECRET: sent to the broker only. */
        password: nonEmpty(256).optional(),
        /** A file whose first line is the password (relative to the config file), 0600. */
        passwordFile: nonEmpty(4096).optional(),
        tls: tlsSchema.prefault({}),
      })
      .refine((m) => m.password === undefined || m.passwordFile === undefined, {
        message: 'give password or passwordFile, not both',
        path: ['passwordFile'],
      })
      .optional(),
    callbacks: z
      .object({
        /** Attempts per order before it is given up (order-api §6: 4). */
        attempts: z.number().int().min(1).max(10).default(4),
        /** Delay before the second attempt; doubled for each later one. */
        firstRetryMs: z.number().int().min(1).max(3_600_000).default(5000),
        timeoutMs: z.number().int().min(100).max(120_000).default(10_000),
      })
      .prefault({}),
  })
  .superRefine((c, ctx) => {
    const tls = c.mqtt?.tls;
    if (tls && (tls.certFile === undefined) !== (tls.keyFile === undefined))
      ctx.addIssue({
        code: 'custom',
        path: ['mqtt', 'tls', tls.certFile === undefined ? 'certFile' : 'keyFile'],
        message: 'is required with the other half of the client certificate (certFile and keyFile)',
      });
    // A store is addressed by (appId, storeKey) and its MQTT topic by the derived storeId, so
    // duplicates would make both ambiguous.
    const apps = new Set<string>();
    c.apps.forEach((app, i) => {
      if (apps.has(app.appId))
        ctx.addIssue({ code: 'custom', path: ['apps', i, 'appId'], message: 'is a duplicate' });
      apps.add(app.appId);
      const keys = new Set<string>();
      app.stores.forEach((s, j) => {
        if (keys.has(s.storeKey))
          ctx.addIssue({
            code: 'custom',
            path: ['apps', i, 'stores', j, 'storeKey'],
            message: 'is a duplicate within this app',
          });
        keys.add(s.storeKey);
      });
    });
  });

export type ServiceConfigInput = z.input<typeof serviceConfigSchema>;
export type ServiceConfig = z.output<typeof serviceConfigSchema>;

export interface RegisteredStore {
  appId: string;
  storeKey: string;
  storeId: string;
  restaurantNo: string;
  branchIdentifier: string;
  /** The app's order callback URL (order-api §6), if it registered one. */
  callbackUrl?: string;
}

/** Apps and stores with their keys loaded: what the HTTP layer looks up per request. */
export interface Registry {
  appKey(appId: string): RsaKey | undefined;
  store(appId: string, storeKey: string): RegisteredStore | undefined;
}

export function parseServiceConfig(input: unknown): ServiceConfig {
  const parsed = parseWith(serviceConfigSchema, input);
  if (!parsed.ok)
    throw new AgentError('CONFIG_INVALID', describeIssues(parsed.issues), {
      issues: parsed.issues,
    });
  return parsed.value;
}

/** Builds the registry; key file paths are relative to `baseDir` (the config file's folder). */
export function buildRegistry(
  config: ServiceConfig,
  baseDir = process.cwd(),
): { registry: Registry; serviceKey: RsaKey } {
  const keys = new Map<string, RsaKey>();
  const stores = new Map<string, RegisteredStore>();
  for (const app of config.apps) {
    keys.set(app.appId, loadKeyFile(resolve(baseDir, app.publicKeyFile), 'public'));
    for (const s of app.stores) {
      stores.set(storeIndexKey(app.appId, s.storeKey), {
        appId: app.appId,
        storeKey: s.storeKey,
        storeId: deriveStoreId(app.appId, s.storeKey),
        restaurantNo: s.restaurantNo,
        branchIdentifier: s.branchIdentifier,
        ...(app.callbackUrl ? { callbackUrl: app.callbackUrl } : {}),
      });
    }
  }
  const serviceKey = loadKeyFile(resolve(baseDir, config.servicePrivateKeyFile), 'private');
  return {
    serviceKey,
    registry: {
      appKey: (appId) => keys.get(appId),
      store: (appId, storeKey) => stores.get(storeIndexKey(appId, storeKey)),
    },
  };
}

/** Resolves relative key paths against the folder of a config file. */
export function configBaseDir(configFile: string): string {
  return dirname(resolve(configFile));
}

function storeIndexKey(appId: string, storeKey: string): string {
  return JSON.stringify([appId, storeKey]);
}
