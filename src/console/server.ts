/**
 * The agent's local API (issue 17): what `printer-agent status` and `test-print` ask the running
 * agent, and what the status page will use; Prometheus metrics beside it when configured. Loaded
 * only when `console.enabled` (the agent imports this file then), so an agent without it carries
 * none of fastify.
 *
 * Every request passes, in this order:
 * - the Host check (DNS rebinding): only the listening address, loopback names and the configured
 *   `hostnames`, with the port, are answered; anything else is 421;
 * - the token, when one is configured (required off loopback, and only over HTTPS): `Authorization:
 *   Bearer TOKEN`, compared in constant time; 401 otherwise; after 5 wrong tokens from one address
 *   in a minute, 429 for the rest of that minute (failed-sign-ins.ts);
 * - for requests that change something (POST): a JSON body (a cross-site HTML form cannot send
 *   one without the browser asking first), no `Origin` but our own, and no `Sec-Fetch-Site` other
 *   than same-origin or none (a browser's own word that another site sent it); 403 otherwise.
 * Errors are `{"error": {"code", "message"}}` with the agent's stable codes. Nothing secret is in
 * any answer.
 */
import { timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AgentError, errorMessage, isAgentError } from '../errors.js';
import { isLoopbackAuthority } from '../host/loopback.js';
import { type Job, jobSummary } from '../jobs/job.js';
import type { JobStore } from '../jobs/store.js';
import type { Logger } from '../logging.js';
import { describeIssues, parseWith } from '../protocol/validation.js';
import { FailedSignIns } from './failed-sign-ins.js';
import type { AgentMetrics } from './metrics.js';
import { PAGE_HTML } from './page.js';

export interface ConsoleSettings {
  host: string;
  port: number;
  hostnames: readonly string[];
  certFile?: string;
  keyFile?: string;
  /** SECRET. */
  token?: string;
  metrics: boolean;
}

export interface ConsoleDeps {
  /**
   * The status as the agent publishes it (print-protocol §7), with the broker connection and when
   * each printer was last checked.
   */
  status(): Record<string, unknown>;
  /**
   * The bytes a job sends (or sent) to its printer, and the paper's font A columns; `view` is
   * applied to the job and to the original of a reprint before rendering (masking).
   */
  renderJob(job: Job, view: (job: Job) => Job): Promise<{ bytes: Uint8Array; columns: number }>;
  store: JobStore;
  /** The roles some printer serves: a test print or reprint for another role is refused. */
  roles: readonly string[];
  metrics: AgentMetrics | null;
}

export interface RunningConsole {
  url: string;
  close(): Promise<void>;
}

const roleSchema = z
  .string({ error: 'must be a string' })
  .regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 letters, digits, dot, dash or underscore');
const testPrintBody = z.strictObject({ role: roleSchema.optional() });
const reprintBody = z.strictObject({
  orderNo: z
    .string({ error: 'must be a string' })
    .min(1, 'is required')
    .max(64, 'must be at most 64 characters'),
  printer: roleSchema.optional(),
});
const JOB_REF = /^[A-Za-z0-9:._-]{1,100}$/;

const HTTP_STATUS: Record<string, number> = {
  INPUT_INVALID: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  JOB_NOT_FOUND: 404,
  NOT_FOUND: 404,
  MISDIRECTED: 421,
  TOO_MANY_ATTEMPTS: 429,
  JOB_STATE_CONFLICT: 409,
};

const TOKEN_COOKIE = 'printer_agent_token';

function cookie(request: FastifyRequest, name: string): string {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return decodeURIComponent(value.join('='));
  }
  return '';
}

/** Customers' personal data in a stored instruction or record, masked for the page's previews. */
const PERSONAL_FIELDS = ['userName', 'userPhone', 'userAddress', 'discounterName', 'discountNo'];

function mask(value: unknown): unknown {
  if (typeof value !== 'string' || value === '') return value;
  const first = [...value][0]!;
  return `${first}${'*'.repeat(Math.min(8, Math.max(3, [...value].length - 1)))}`;
}

/** A copy of `job` whose payload shows no personal data (the order's own fields and a record's). */
function maskedJob(job: Job): Job {
  const payload = job.payload as Record<string, unknown> | null;
  if (payload === null || typeof payload !== 'object') return job;
  const maskIn = (o: unknown) => {
    if (o === null || typeof o !== 'object') return o;
    const out: Record<string, unknown> = { ...(o as Record<string, unknown>) };
    for (const field of PERSONAL_FIELDS) if (field in out) out[field] = mask(out[field]);
    return out;
  };
  return {
    ...job,
    payload: {
      ...(maskIn(payload) as object),
      ...('order' in payload ? { order: maskIn(payload.order) } : {}),
    },
  };
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Whether a `Host` header names this server: a loopback authority with our port (host/loopback.ts,
 * the rule the emulator's control server uses), or the listening address or a configured name with
 * our port (or without it, on the scheme's default port).
 */
function hostChecker(settings: ConsoleSettings): (authority: string) => boolean {
  const names = [...settings.hostnames];
  if (!['0.0.0.0', '::'].includes(settings.host))
    names.push(settings.host.includes(':') ? `[${settings.host}]` : settings.host);
  const named = new Set<string>();
  for (const name of names) {
    named.add(`${name.toLowerCase()}:${settings.port}`);
    if (settings.port === (settings.certFile ? 443 : 80)) named.add(name.toLowerCase());
  }
  return (authority) =>
    named.has(authority.toLowerCase()) || isLoopbackAuthority(authority, settings.port);
}

/** The origins a page of this server has (for the `Origin` check of changes). */
function ownOrigin(
  origin: string,
  scheme: string,
  isOurs: (authority: string) => boolean,
): boolean {
  const prefix = `${scheme}://`;
  return origin.toLowerCase().startsWith(prefix) && isOurs(origin.slice(prefix.length));
}

class Refusal extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** Seconds for a Retry-After header. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

export async function startConsole(
  settings: ConsoleSettings,
  deps: ConsoleDeps,
  log: Logger,
): Promise<RunningConsole> {
  const https =
    settings.certFile && settings.keyFile
      ? { cert: readFileSync(settings.certFile), key: readFileSync(settings.keyFile) }
      : null;
  const scheme = https ? 'https' : 'http';
  const isOurs = hostChecker(settings);
  const signIns = new FailedSignIns();
  /** Whether `given` is the token; a wrong one counts against the client's address. */
  const rightToken = (token: string, given: string, request: FastifyRequest): boolean => {
    const wait = signIns.waitMs(request.ip);
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      throw new Refusal(
        'TOO_MANY_ATTEMPTS',
        `too many wrong tokens from this address; try again in ${seconds} s`,
        seconds,
      );
    }
    if (sameSecret(given, token)) {
      signIns.succeeded(request.ip);
      return true;
    }
    if (given !== '' && signIns.failed(request.ip))
      log.warn({ from: request.ip }, 'wrong tokens from one address: refused for a minute');
    return false;
  };
  const app = Fastify({
    ...(https ? { https } : {}),
    logger: false,
    bodyLimit: 4096,
    // Slow or idle clients do not hold a Pi's sockets (as the order service, print-protocol §9).
    requestTimeout: 10_000,
    connectionTimeout: 10_000,
  });

  app.addHook('onRequest', async (request) => {
    const host = request.headers.host ?? '';
    if (!isOurs(host))
      throw new Refusal(
        'MISDIRECTED',
        `Host ${JSON.stringify(host.slice(0, 100))} is not this agent's address`,
      );
    // The page itself and the sign-in are open; everything else needs the token when one is set.
    const open = request.url === '/' || request.url === '/api/login';
    if (settings.token !== undefined && !open) {
      const auth = request.headers.authorization ?? '';
      const given = auth.startsWith('Bearer ') ? auth.slice(7) : cookie(request, TOKEN_COOKIE);
      if (!rightToken(settings.token, given, request))
        throw new Refusal('UNAUTHORIZED', 'a valid token is required (Authorization: Bearer)');
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const site = request.headers['sec-fetch-site'];
      if (site !== undefined && site !== 'same-origin' && site !== 'none')
        throw new Refusal('FORBIDDEN', `a request from another site (${String(site)}) is refused`);
      const origin = request.headers.origin;
      if (origin !== undefined && !ownOrigin(origin, scheme, isOurs))
        throw new Refusal('FORBIDDEN', 'a request from another origin is refused');
      const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/json')
        throw new Refusal('FORBIDDEN', 'changes need a JSON body (Content-Type: application/json)');
    }
  });

  app.setErrorHandler((error: unknown, _request: FastifyRequest, reply: FastifyReply) => {
    let code = 'INTERNAL_ERROR';
    let message = 'internal error';
    if (error instanceof Refusal || isAgentError(error)) {
      code = error.code;
      message = error.message;
    } else if (typeof (error as { statusCode?: unknown }).statusCode === 'number') {
      // fastify's own: a body too large or not JSON.
      code = 'INPUT_INVALID';
      message = errorMessage(error);
    } else log.error({ err: errorMessage(error) }, 'local API request failed');
    const status = HTTP_STATUS[code] ?? (code.startsWith('STORE_') ? 503 : 500);
    if (status === 401) void reply.header('www-authenticate', 'Bearer');
    if (error instanceof Refusal && error.retryAfter !== undefined)
      void reply.header('retry-after', String(error.retryAfter));
    void reply.code(status).send({ error: { code, message } });
  });
  app.setNotFoundHandler((_request, reply) => {
    void reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'no such page' } });
  });

  const body = <S extends z.ZodType>(schema: S, value: unknown): z.output<S> => {
    const parsed = parseWith(schema, value ?? {});
    if (!parsed.ok) throw new AgentError('INPUT_INVALID', describeIssues(parsed.issues));
    return parsed.value;
  };
  const findJob = (ref: string): Job => {
    if (!JOB_REF.test(ref)) throw new AgentError('INPUT_INVALID', 'job: must be a job id');
    const found = deps.store.find(ref);
    if (!found)
      throw new AgentError('JOB_NOT_FOUND', `no job with id or jobId ${JSON.stringify(ref)}`);
    return found;
  };
  const served = (role: string) => {
    if (!deps.roles.includes(role))
      throw new AgentError('INPUT_INVALID', `role: no configured printer serves role ${role}`);
  };
  const inserted = (result: ReturnType<JobStore['enqueueTestPrint']>): Job => {
    // Local jobs get fresh ids: a duplicate here is a bug, not a user error.
    if (result.status !== 'inserted')
      throw new AgentError('STORE_FAILED', 'the job was not stored');
    return result.job;
  };

  const pageHeaders = {
    'content-security-policy':
      "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
  };
  app.get('/', async (_request, reply) =>
    reply.headers(pageHeaders).type('text/html; charset=utf-8').send(PAGE_HTML),
  );
  app.post('/api/login', async (request, reply) => {
    const { token } = body(
      z.strictObject({ token: z.string({ error: 'must be a string' }).max(1024) }),
      request.body,
    );
    if (settings.token === undefined) return reply.code(204).send();
    if (!rightToken(settings.token, token, request)) {
      log.warn({ from: request.ip }, 'sign-in to the status page with a wrong token');
      throw new Refusal('UNAUTHORIZED', 'wrong token');
    }
    // HttpOnly: no script reads it; Secure: a token is only configured with HTTPS; Strict: never
    // sent with another site's request.
    void reply.header(
      'set-cookie',
      `${TOKEN_COOKIE}=${encodeURIComponent(token)}; Path=/; HttpOnly; Secure; SameSite=Strict`,
    );
    return reply.code(204).send();
  });
  app.get<{ Params: { ref: string }; Querystring: { reveal?: string } }>(
    '/api/jobs/:ref/preview.svg',
    async (request, reply) => {
      const found = findJob(request.params.ref);
      const reveal = request.query.reveal === '1';
      if (reveal) log.info({ jobId: found.jobId }, 'personal data of a receipt shown on the page');
      const { bytes, columns } = await deps.renderJob(found, reveal ? (j) => j : maskedJob);
      // The emulator's decoder and the symbol library: loaded on the first preview only.
      const { bytesToSvg } = await import('../emulator/index.js');
      return reply
        .headers({
          'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
          'cache-control': 'no-store',
        })
        .type('image/svg+xml')
        .send(bytesToSvg(bytes, { columns }));
    },
  );
  app.get('/api/status', async () => ({
    ...deps.status(),
    jobs: deps.store.countByState(),
    recent: deps.store.list({ limit: 20 }).map(jobSummary),
  }));
  app.post('/api/test-print', async (request, reply) => {
    const { role = deps.roles.includes('receipt') ? 'receipt' : deps.roles[0]! } = body(
      testPrintBody,
      request.body,
    );
    served(role);
    const job = inserted(deps.store.enqueueTestPrint(role));
    log.info({ jobId: job.jobId, printer: role }, 'test print asked for locally');
    return reply.code(202).send({ job: jobSummary(job) });
  });
  app.post('/api/reprint', async (request, reply) => {
    const { orderNo, printer } = body(reprintBody, request.body);
    if (printer !== undefined) served(printer);
    const job = inserted(deps.store.enqueueReprint(orderNo, { printer }));
    log.info({ jobId: job.jobId, orderNo, printer: job.printer }, 'reprint asked for locally');
    return reply.code(202).send({ job: jobSummary(job) });
  });
  app.post<{ Params: { ref: string } }>('/api/jobs/:ref/retry', async (request, reply) => {
    const ref = request.params.ref;
    if (!JOB_REF.test(ref)) throw new AgentError('INPUT_INVALID', 'job: must be a job id');
    const found = deps.store.find(ref);
    if (!found)
      throw new AgentError('JOB_NOT_FOUND', `no job with id or jobId ${JSON.stringify(ref)}`);
    const job = deps.store.retry(found.id);
    log.info({ jobId: job.jobId, printer: job.printer }, 'retry asked for locally');
    return reply.code(202).send({ job: jobSummary(job) });
  });
  const metrics = deps.metrics;
  if (settings.metrics && metrics) {
    app.get('/metrics', async (_request, reply) =>
      reply.header('content-type', metrics.contentType).send(await metrics.text()),
    );
  }

  await app.listen({ host: settings.host, port: settings.port });
  const shown = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  const url = `${scheme}://${shown}:${settings.port}`;
  log.info(
    { url, metrics: settings.metrics, token: settings.token !== undefined },
    'local API listening',
  );
  return { url, close: () => app.close() };
}
