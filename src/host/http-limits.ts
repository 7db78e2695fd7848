/**
 * Slow and idle clients on the HTTP servers of the Pi's own rooms: the agent's local console and
 * the emulator's control server (issue 40 item 7). A client that trickles its headers or its body,
 * or keeps a connection open and says nothing, is cut off after a bound, and only so many
 * connections are let in at all, so no local process or store LAN host can hold the Pi's sockets.
 * One set of values for both (decision 230); the order service has its own, configurable ones
 * (order-service/config.ts `http`, decision 125).
 *
 * Node checks the header and request timeouts on a timer (`connectionsCheckingInterval`, 30 s by
 * default), so a 10 s timeout fired up to 30 s late (the console held slow headers 35 s): the
 * timer here runs at a quarter of the shortest timeout, at most every second.
 */
import type { Server as HttpServer, ServerOptions } from 'node:http';
import type { Server as HttpsServer } from 'node:https';

export interface HttpLimits {
  /** From a connection's or request's first byte until its headers are complete: 408, closed. */
  headersTimeoutMs: number;
  /** From a request's first byte until its whole body is in: 408, closed. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed this long after its last answer. */
  keepAliveTimeoutMs: number;
  /** A socket with no traffic either way this long is closed (a client that stopped reading). */
  idleTimeoutMs: number;
  /** Open connections at most; node closes further ones at once, before reading a byte. */
  maxConnections: number;
}

/**
 * A technician's browser sends a request in one packet and opens about six connections; the CLI
 * one. Nothing the console or the control server answers takes seconds to compute.
 */
export const LOCAL_HTTP_LIMITS: Readonly<HttpLimits> = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  idleTimeoutMs: 30_000,
  maxConnections: 64,
});

/** `LOCAL_HTTP_LIMITS` with `overrides` (tests use short timeouts); throws on values node refuses. */
export function httpLimits(overrides: Partial<HttpLimits> = {}): HttpLimits {
  const limits = { ...LOCAL_HTTP_LIMITS, ...overrides };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1)
      throw new RangeError(`HTTP limit ${name}: must be a whole number of 1 or more: ${value}`);
  }
  // Node refuses a headers timeout longer than the request timeout; it would mean nothing.
  if (limits.headersTimeoutMs > limits.requestTimeoutMs)
    throw new RangeError('HTTP limit headersTimeoutMs: must not be longer than requestTimeoutMs');
  return limits;
}

/** How often node checks the header and request timeouts (see the module comment). */
function checkingInterval(limits: HttpLimits): number {
  const shortest = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs);
  return Math.max(50, Math.min(1000, Math.floor(shortest / 4)));
}

/**
 * The limits as options of `http.createServer` or `https.createServer` (fastify's `http`, or
 * spread into its `https`), for every server made from them.
 */
export function serverOptions(limits: HttpLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: checkingInterval(limits),
  };
}

/**
 * Applies every limit to a server before it listens (node starts the checking timer on
 * `listening`), the idle timeout and connection cap included, which no server option carries.
 */
export function limitHttpServer<S extends HttpServer | HttpsServer>(
  server: S,
  limits: HttpLimits,
): S {
  if (server.listening) throw new Error('HTTP limits must be applied before the server listens');
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // Not in @types/node as a property, but read from the server when it starts listening.
  (server as { connectionsCheckingInterval?: number }).connectionsCheckingInterval =
    checkingInterval(limits);
  server.setTimeout(limits.idleTimeoutMs);
  server.maxConnections = limits.maxConnections;
  return server;
}
