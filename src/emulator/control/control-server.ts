/**
 * The emulator's HTTP control interface (JSON over node:http), for tests and scripts:
 *
 *   GET  /status        EmulatorStatus
 *   POST /faults        {"fault":"paper-out","on":true}            -> EmulatorStatus
 *   POST /link          {"slowLinkBps":960} | {"slowPrintMmPerSec":60} | {"disconnect":true}
 *                                                                   -> {disconnected, status}
 *   GET  /tickets       {"tickets":[{number, summary, cut, byteStart, byteEnd}]}
 *   GET  /tickets/N     ticket N (1-based) as ticketToJson
 *
 * Errors are `{"error": "field: message"}` with 400 (bad request), 403, 404, 405, 413 or 415. A
 * request whose headers or body come too slowly gets node's bare 408 and is closed, and connections
 * are capped (host/http-limits.ts, shared with the agent's console).
 *
 * It has no authentication, so it only listens on a loopback address: anyone who can reach it can
 * switch the printer's faults and read every ticket. Loopback alone does not keep out a web page
 * open in a browser on the same machine (issue 13, item 9), so two more rules hold:
 * - the `Host` header must name a loopback host and the control port (`127.0.0.1:9101`,
 *   `localhost:9101`, `[::1]:9101`), else 403: a DNS-rebinding page reaches us under its own name;
 *   a non-loopback `Origin` header is refused the same way;
 * - a POST must say `Content-Type: application/json`, else 415: a cross-site form or `text/plain`
 *   fetch is sent by a browser without asking first, a JSON one only after a CORS preflight this
 *   server never grants.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { errorMessage } from '../../errors.js';
import { type HttpLimits, httpLimits, limitHttpServer } from '../../host/http-limits.js';
import { isLoopbackAuthority, isLoopbackHost } from '../../host/loopback.js';
import { listenOn } from '../link/endpoints.js';
import type { ControlResult, EmulatorControl } from './control.js';

const MAX_BODY = 64 * 1024;

export interface ControlServerOptions {
  /** A loopback address. Default 127.0.0.1. */
  host?: string;
  /** Default 9101; 0 picks a free port. */
  port?: number;
  /** Shorter timeouts or another cap than host/http-limits.ts's (tests). */
  limits?: Partial<HttpLimits>;
}

export interface ControlServer {
  readonly host: string;
  readonly port: number;
  /** `http://127.0.0.1:9101` */
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const text = `${JSON.stringify(body, null, 2)}\n`;
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function reply<T>(res: ServerResponse, result: ControlResult<T>): void {
  if (result.ok) send(res, 200, result.value);
  else send(res, result.status, { error: result.error });
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new HttpError(413, `body: larger than ${MAX_BODY} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new HttpError(400, 'body: empty; send a JSON object');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, `body: not valid JSON (${errorMessage(err)})`);
  }
}

const ROUTES = 'GET /status, POST /faults, POST /link, GET /tickets, GET /tickets/N';

/** The Host and Origin rules of the module comment; throws 403 with what to send instead. */
function checkCaller(req: IncomingMessage, port: number): void {
  const host = req.headers.host;
  const expected = `127.0.0.1:${port}, localhost:${port} or [::1]:${port}`;
  if (host === undefined || !isLoopbackAuthority(host, port)) {
    throw new HttpError(
      403,
      `host: ${host === undefined ? 'missing' : JSON.stringify(host)}; the control server answers only to ${expected}`,
    );
  }
  const origin = req.headers.origin;
  if (origin === undefined) return;
  let authority: string | null = null;
  try {
    const url = new URL(origin);
    authority = url.protocol === 'http:' || url.protocol === 'https:' ? url.host : null;
  } catch {
    authority = null;
  }
  // A page served from a loopback port of its own is another program: only our own origin.
  if (authority === null || !isLoopbackAuthority(authority, port)) {
    throw new HttpError(
      403,
      `origin: ${JSON.stringify(origin)}; requests from web pages are refused (send none, or ${expected})`,
    );
  }
}

/** Only `application/json` (parameters such as `charset=utf-8` allowed). */
function checkJsonBody(req: IncomingMessage): void {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new HttpError(
      415,
      `content-type: ${type === '' ? 'missing' : JSON.stringify(type)}; send Content-Type: application/json (curl -H 'Content-Type: application/json')`,
    );
  }
}

async function handle(
  control: EmulatorControl,
  req: IncomingMessage,
  res: ServerResponse,
  port: number,
) {
  checkCaller(req, port);
  const path = new URL(req.url ?? '/', 'http://control').pathname.replace(/\/+$/, '') || '/';
  const method = req.method ?? 'GET';
  const only = (allowed: string) => {
    if (method !== allowed) {
      throw Object.assign(new HttpError(405, `${method} ${path}: use ${allowed}`), { allowed });
    }
  };
  if (path === '/status') {
    only('GET');
    send(res, 200, control.status());
  } else if (path === '/faults') {
    only('POST');
    checkJsonBody(req);
    reply(res, control.setFault(await readJson(req)));
  } else if (path === '/link') {
    only('POST');
    checkJsonBody(req);
    reply(res, control.changeLink(await readJson(req)));
  } else if (path === '/tickets') {
    only('GET');
    send(res, 200, { tickets: control.tickets() });
  } else if (path.startsWith('/tickets/')) {
    only('GET');
    const n = path.slice('/tickets/'.length);
    if (!/^[1-9]\d*$/.test(n)) throw new HttpError(400, `ticket number: must be 1 or more: ${n}`);
    reply(res, control.ticket(Number(n)));
  } else {
    throw new HttpError(404, `no such endpoint: ${method} ${path}; try ${ROUTES}`);
  }
}

export async function startControlServer(
  control: EmulatorControl,
  options: ControlServerOptions = {},
): Promise<ControlServer> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(host)) {
    throw new Error(`control host ${host}: must be a loopback address (127.0.0.1, ::1, localhost)`);
  }
  // The port we are bound to, known once listening (port 0 picks one).
  let boundPort = options.port ?? 9101;
  const server = createServer((req, res) => {
    handle(control, req, res, boundPort).catch((err: unknown) => {
      if (res.headersSent) {
        res.destroy();
      } else if (err instanceof HttpError) {
        const allowed = (err as HttpError & { allowed?: string }).allowed;
        send(res, err.status, { error: err.message }, allowed ? { allow: allowed } : {});
      } else {
        send(res, 500, { error: errorMessage(err) });
      }
    });
  });
  // Slow or idle clients and too many connections (issue 40 item 7): cut off, refused.
  limitHttpServer(server, httpLimits(options.limits));
  const port = await listenOn(server, options.port ?? 9101, host);
  boundPort = port;
  return {
    host,
    port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive connections would hold close() open until they time out.
        server.closeAllConnections();
      }),
  };
}
