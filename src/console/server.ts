/**
 * The agent's local API (issue 17): what `printer-agent status`, `test-print` and `drawer open`
 * (issue 41) ask the running agent, and what the status page will use; Prometheus metrics beside
 * it when configured. Loaded only when `console.enabled` (the agent imports this file then), so an
 * agent without it carries none of fastify.
 *
 * Every request passes, in this order:
 * - the Host check (DNS rebinding): only the listening address, loopback names and the configured
 *   `hostnames`, with the port, are answered; anything else is 421;
 * - a credential (`Authorization: Bearer`, or the page's cookie), compared in constant time, 401
 *   otherwise: the agent's local token (local-token.ts: the file in the state dir the commands on
 *   the Pi read) or the configured token (required off loopback, and only over HTTPS). Without a
 *   configured token, only the page, a masked read-only view (status, masked previews, metrics)
 *   and the sign-in are open: loopback is every user and process on the Pi (issue 40 item 4); with
 *   one, only the page and the sign-in. After 5 wrong tokens from one address in a minute, 429 for
 *   the rest of that minute (failed-sign-ins.ts), except for the local token and, on /metrics
 *   only, the metrics token (a scraper's own: others' wrong tokens from its address, a NAT or a
 *   proxy, must not blind the monitoring);
 * - for requests that change something (POST): a JSON body (a cross-site HTML form cannot send
 *   one without the browser asking first), no `Origin` but our own, and no `Sec-Fetch-Site` other
 *   than same-origin or none (a browser's own word that another site sent it); 403 otherwise.
 * Errors are `{"error": {"code", "message"}}` with the agent's stable codes. Nothing secret is in
 * any answer.
 */
import { timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AgentError, errorMessage, isAgentError } from '../errors.js';
import {
  type HttpLimits,
  httpLimits,
  limitHttpServer,
  serverOptions,
} from '../host/http-limits.js';
import { isLoopbackAuthority } from '../host/loopback.js';
import { type Job, jobSummary } from '../jobs/job.js';
import type { JobStore } from '../jobs/store.js';
import type { Logger } from '../logging.js';
import { describeIssues, parseWith } from '../protocol/validation.js';
import { attentionOf } from './attention.js';
import { FailedSignIns } from './failed-sign-ins.js';
import { firstView, type PageStatus } from './first-view.js';
import type { AgentMetrics } from './metrics.js';
import { pageHtml } from './page.js';

export interface ConsoleSettings {
  host: string;
  port: number;
  hostnames: readonly string[];
  certFile?: string;
  keyFile?: string;
  /** SECRET: the configured token. */
  token?: string;
  /** SECRET: the local token of this run (local-token.ts). */
  localToken: string;
  /**
   * SECRET: the metrics token (config `console.metricsTokenFile`, 32 characters or more): opens
   * GET /metrics only, and is never locked out, like the local token.
   */
  metricsToken?: string;
  metrics: boolean;
  /**
   * The store's IANA zone (config `catchUp.timeZone`, the zone the order service writes the
   * store's times in): the page shows times in it. Default: the host's.
   */
  timeZone?: string;
  /** Shorter timeouts or another cap than host/http-limits.ts's (tests). */
  httpLimits?: Partial<HttpLimits>;
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
  /**
   * Pulses the cash drawer on the printer serving `role` (issue 41: `printer-agent drawer open`),
   * outside any job; throws INPUT_INVALID (no such printer, no drawer connector) or
   * PRINTER_NOT_READY (the pulse would wait in its buffer).
   */
  openDrawer?(role: string): Promise<{ printer: string; pin: number }>;
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
const drawerBody = z.strictObject({ printer: roleSchema.optional() });
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
  PRINTER_NOT_READY: 409,
};

const TOKEN_COOKIE = 'printer_agent_token';
/**
 * How long the page's cookie keeps the token: "asks once" for a store's phone or till, within
 * reason (issue 42 item 5). Renewed at each visit, so a device in use is not asked again; one
 * left unused for this long is.
 */
export const SIGN_IN_MAX_AGE_SEC = 30 * 24 * 60 * 60;

function cookie(request: FastifyRequest, name: string): string {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key !== name) continue;
    try {
      return decodeURIComponent(value.join('='));
    } catch {
      // `%` without two hex digits: the client's mistake (400), not the agent's (issue 40 item 8).
      throw new Refusal('INPUT_INVALID', `cookie ${name}: must be URL-encoded`);
    }
  }
  return '';
}

/** A scrape: what the metrics token opens, and nothing else. */
function isMetricsRead(request: FastifyRequest): boolean {
  return (
    (request.method === 'GET' || request.method === 'HEAD') &&
    request.url.split('?', 1)[0] === '/metrics'
  );
}

/**
 * What a request needs: `open` (the page, the sign-in), `read` (a masked, read-only view: a
 * credential only when a token is configured) or `act` (a change, or customer data unmasked: a
 * credential always).
 */
function accessOf(request: FastifyRequest): 'open' | 'read' | 'act' {
  const [path = '', query = ''] = request.url.split('?', 2);
  // Sign-out only removes this browser's cookie: it needs no credential (an expired one too).
  if (path === '/' || path === '/api/login' || path === '/api/logout') return 'open';
  if (request.method !== 'GET' && request.method !== 'HEAD') return 'act';
  return new URLSearchParams(query).has('reveal') ? 'act' : 'read';
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
  /**
   * Whether `given` is a credential: the local token (256 random bits: never locked out, so wrong
   * tries of the configured token from anywhere cannot lock the commands on the Pi out), or the
   * configured token, whose wrong tries count against the client's address.
   */
  const credential = (given: string, request: FastifyRequest): boolean => {
    if (given !== '' && sameSecret(given, settings.localToken)) return true;
    if (
      given !== '' &&
      settings.metricsToken !== undefined &&
      isMetricsRead(request) &&
      sameSecret(given, settings.metricsToken)
    )
      return true;
    const wait = signIns.waitMs(request.ip);
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      throw new Refusal(
        'TOO_MANY_ATTEMPTS',
        `too many wrong tokens from this address; try again in ${seconds} s`,
        seconds,
      );
    }
    if (settings.token !== undefined && sameSecret(given, settings.token)) {
      signIns.succeeded(request.ip);
      return true;
    }
    if (given !== '' && signIns.failed(request.ip))
      log.warn({ from: request.ip }, 'wrong tokens from one address: refused for a minute');
    return false;
  };
  // Slow or idle clients do not hold a Pi's sockets (issue 40 item 7, host/http-limits.ts): the
  // timeouts go to every server fastify makes (a second one for `localhost`), the cap to the main.
  const limits = httpLimits(settings.httpLimits);
  const app = Fastify({
    ...(https
      ? { https: { ...https, ...serverOptions(limits) } }
      : { http: serverOptions(limits) }),
    logger: false,
    bodyLimit: 4096,
    // Node's own refusals (a timeout, malformed HTTP) in this API's error format, then closed.
    clientErrorHandler: (error: NodeJS.ErrnoException, socket: Socket) => {
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      const timeout = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
      const [status, text, code, message] = timeout
        ? [408, 'Request Timeout', 'REQUEST_TIMEOUT', 'the request did not arrive in time']
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? [431, 'Request Header Fields Too Large', 'INPUT_INVALID', 'headers too large']
          : [400, 'Bad Request', 'INPUT_INVALID', 'not an HTTP request'];
      const body = JSON.stringify({ error: { code, message } });
      if (socket.writable)
        socket.write(
          `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json; charset=utf-8\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
      socket.destroy();
    },
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
  });
  limitHttpServer(app.server, limits);

  app.addHook('onRequest', async (request) => {
    const host = request.headers.host ?? '';
    if (!isOurs(host))
      throw new Refusal(
        'MISDIRECTED',
        `Host ${JSON.stringify(host.slice(0, 100))} is not this agent's address`,
      );
    const access = accessOf(request);
    if (access === 'act' || (access === 'read' && settings.token !== undefined)) {
      const auth = request.headers.authorization ?? '';
      const given = auth.startsWith('Bearer ') ? auth.slice(7) : cookie(request, TOKEN_COOKIE);
      if (!credential(given, request))
        throw new Refusal(
          'UNAUTHORIZED',
          settings.token === undefined
            ? "a valid token is required (Authorization: Bearer): the commands on this machine read the agent's local token as root or as the service user"
            : 'a valid token is required (Authorization: Bearer)',
        );
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
  /** What `/api/status` answers and the page's first view draws: one object, one masking. */
  const pageStatus = (): PageStatus => {
    const status = deps.status() as Partial<PageStatus> & { at?: string };
    const base = { ...status, printers: status.printers ?? [] };
    const unconfirmed = deps.store.list({ state: 'unconfirmed', limit: 20 }).map(jobSummary);
    return {
      ...base,
      broker: status.broker ?? { connected: false },
      jobs: deps.store.countByState(),
      recent: deps.store.list({ limit: 20 }).map(jobSummary),
      attention: attentionOf(base, unconfirmed, status.at ? Date.parse(status.at) : Date.now()),
    };
  };
  let hostZone: string | undefined;
  /**
   * The zone the page's script formats times in. The host's zone is named through Intl only here,
   * when a page is served: its locale data costs 8 MB of RSS, which the agent does not otherwise
   * load without a configured zone (decision 159).
   */
  const pageZone = (): string => {
    if (settings.timeZone !== undefined) return settings.timeZone;
    hostZone ??= Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
    return hostZone;
  };
  // HttpOnly: no script reads it; Secure over HTTPS (plain HTTP is loopback only); Strict: never
  // sent with another site's request; Max-Age: kept across browser restarts, for so long.
  const tokenCookie = (token: string, maxAge: number) =>
    `${TOKEN_COOKIE}=${encodeURIComponent(token)}; Path=/; Max-Age=${maxAge}; HttpOnly;${https ? ' Secure;' : ''} SameSite=Strict`;
  app.get('/', async (request, reply) => {
    // Signed in: the page's cookie holds a credential (then renewed). A wrong one counts as a
    // wrong token like anywhere else; locked out or malformed, the page is signed out.
    let signedIn = false;
    try {
      const given = cookie(request, TOKEN_COOKIE);
      signedIn = given !== '' && credential(given, request);
      if (signedIn) void reply.header('set-cookie', tokenCookie(given, SIGN_IN_MAX_AGE_SEC));
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
    }
    // Signed out where reading needs a token: the sign-in only, no status drawn.
    const status = signedIn || settings.token === undefined ? pageStatus() : null;
    const html = pageHtml({
      signedIn,
      tokenRequired: settings.token !== undefined,
      timeZone: pageZone(),
      view: status ? firstView(status, settings.timeZone) : null,
    });
    return reply.headers(pageHeaders).type('text/html; charset=utf-8').send(html);
  });
  app.post('/api/login', async (request, reply) => {
    const { token } = body(
      z.strictObject({ token: z.string({ error: 'must be a string' }).max(1024) }),
      request.body,
    );
    if (!credential(token, request)) {
      log.warn({ from: request.ip }, 'sign-in to the status page with a wrong token');
      throw new Refusal('UNAUTHORIZED', 'wrong token');
    }
    void reply.header('set-cookie', tokenCookie(token, SIGN_IN_MAX_AGE_SEC));
    return reply.code(204).send();
  });
  app.post('/api/logout', async (request, reply) => {
    body(z.strictObject({}), request.body);
    void reply.header('set-cookie', tokenCookie('', 0));
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
  app.get('/api/status', async () => pageStatus());
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
  app.post('/api/drawer/open', async (request) => {
    // A change like any other (a credential, a JSON body, our origin): the drawer holds the cash.
    const { printer = 'receipt' } = body(drawerBody, request.body);
    served(printer);
    if (!deps.openDrawer) throw new Refusal('NOT_FOUND', 'this agent cannot open a drawer');
    const opened = await deps.openDrawer(printer);
    log.info({ printer: opened.printer, pin: opened.pin }, 'cash drawer opened locally');
    return { drawer: { ...opened, opened: true } };
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
