/**
 * Raw TCP clients for the slow-client tests of the Pi's own HTTP servers (issue 40 item 7): they
 * send exactly the bytes a test writes, as slowly as it says, and record what the server answers
 * and when it closes them. Every wait is for an event with a deadline, never for a fixed time.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { it } from 'node:test';
import { eventually, next, waitFor } from '../../harness/waiting.js';
import type { HttpLimits } from '../../src/host/http-limits.js';

/** Far above the short limits the tests configure, far below what the servers held before. */
export const CLOSE_DEADLINE_MS = 15_000;

export interface RawClient {
  socket: Socket;
  received: Buffer[];
  /** Resolves when the socket closes; rejects after `CLOSE_DEADLINE_MS`. */
  closed: Promise<unknown>;
  /** Sends `text` every `everyMs` until the socket closes. */
  trickle(text: string, everyMs: number): void;
}

/** Every client made, so a suite's `after` can destroy any a server failed to cut off. */
const made: Socket[] = [];

export function destroyAllRawClients(): void {
  for (const socket of made) socket.destroy();
}

/** A connected raw client of 127.0.0.1:`port`. */
export async function rawClient(port: number): Promise<RawClient> {
  const socket = connect({ port, host: '127.0.0.1' });
  made.push(socket);
  const received: Buffer[] = [];
  socket.on('data', (d: Buffer) => received.push(d));
  socket.on('error', () => {}); // a reset is one way of being cut off
  const closed = next(socket, 'close', CLOSE_DEADLINE_MS);
  closed.catch(() => {}); // awaited by the tests that expect it; no unhandled rejection otherwise
  await next(socket, 'connect');
  return {
    socket,
    received,
    closed,
    trickle(text, everyMs) {
      const timer = setInterval(() => {
        if (socket.writable) socket.write(text);
      }, everyMs);
      socket.once('close', () => clearInterval(timer));
    },
  };
}

export interface RawAnswer {
  status: number;
  /** Lower-case names. */
  headers: Map<string, string>;
  body: string;
}

/** The first HTTP answer a client received; fails the test when there is none. */
export function firstAnswer(client: RawClient): RawAnswer {
  const all = Buffer.concat(client.received).toString('latin1');
  const split = all.indexOf('\r\n\r\n');
  assert.ok(split > 0, `an HTTP answer, got ${JSON.stringify(all)}`);
  const [statusLine, ...lines] = all.slice(0, split).split('\r\n');
  const headers = new Map(
    lines.map((l) => [
      l.slice(0, l.indexOf(':')).toLowerCase(),
      l.slice(l.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine!.split(' ')[1]), headers, body: all.slice(split + 4) };
}

/** Whether the server closed `client` before sending it a single byte. */
export function droppedUnanswered(client: RawClient): boolean {
  return client.socket.destroyed && client.received.length === 0;
}

/**
 * A normal client: `request` (a complete HTTP/1.1 request with `Connection: close`) on a new
 * connection, its answer once the server closes it.
 */
export async function ask(port: number, request: string): Promise<RawAnswer> {
  const client = await rawClient(port);
  client.socket.write(request);
  await client.closed;
  return firstAnswer(client);
}

/** Limits far shorter than the shipped ones (host/http-limits.ts), so the cases are quick. */
export const SHORT_LIMITS: HttpLimits = {
  headersTimeoutMs: 1500,
  requestTimeoutMs: 3000,
  // Announced in whole seconds (`Keep-Alive: timeout=2`): the cases check the announcement too.
  keepAliveTimeoutMs: 2000,
  // Out of the way: only the limit under test may end a connection.
  idleTimeoutMs: 60_000,
  maxConnections: 64,
};

export interface SlowClientServer {
  /** Starts the server with `SHORT_LIMITS` and these changes; resolves with its port. */
  start(limits: Partial<HttpLimits>): Promise<number>;
  /** A GET the server answers 200, on a connection closed or kept alive after it. */
  get(port: number, connection: 'close' | 'keep-alive'): string;
  /** The headers of a POST whose body the server waits for, and the body's first bytes. */
  slowBody(port: number): string;
  /** More checks of a 408's body (the server's error format). */
  timeoutBody?(body: string): void;
}

/**
 * The same five cases against each of the Pi's own HTTP servers (issue 40 item 7): trickled
 * headers, a silent connection and a trickled body are answered 408 and closed; an idle
 * keep-alive connection is closed; connections over the cap are closed unanswered while the
 * earlier ones are held, and the server answers again once those are gone.
 */
export function slowClientCases(server: SlowClientServer): void {
  const timedOut = (client: RawClient): void => {
    const answer = firstAnswer(client);
    assert.equal(answer.status, 408, answer.body);
    server.timeoutBody?.(answer.body);
    assert.equal(client.socket.destroyed, true);
  };
  const start = (limits: Partial<HttpLimits> = {}) => server.start(limits);

  it('answers 408 and closes clients trickling their headers, and still answers others', async () => {
    const port = await start();
    const clients = await Promise.all(Array.from({ length: 4 }, () => rawClient(port)));
    for (const c of clients) {
      // The request line and Host of the GET, then a header that never ends.
      c.socket.write(
        `${server.get(port, 'close').split('\r\n').slice(0, 2).join('\r\n')}\r\nX-Padding: `,
      );
      // Far more often than any idle timeout: only the header timeout can end this.
      c.trickle('a', 200);
    }
    await Promise.all(clients.map((c) => c.closed));
    for (const c of clients) timedOut(c);
    assert.equal((await ask(port, server.get(port, 'close'))).status, 200, 'still answering');
  });

  it('answers 408 and closes a connection that never sends a byte', async () => {
    const client = await rawClient(await start());
    await client.closed;
    timedOut(client);
  });

  it('answers 408 and closes a client trickling its body, at the request timeout', async () => {
    const port = await start();
    const client = await rawClient(port);
    // Complete headers (the header timeout is met) and a body that never completes.
    client.socket.write(server.slowBody(port));
    client.trickle('x', 200);
    await client.closed;
    timedOut(client);
  });

  it('closes an idle keep-alive connection after its answer', async () => {
    const port = await start();
    const client = await rawClient(port);
    client.socket.write(server.get(port, 'keep-alive'));
    await client.closed;
    const answer = firstAnswer(client);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('connection'), 'keep-alive', 'it was kept alive at first');
    assert.equal(answer.headers.get('keep-alive'), 'timeout=2', 'our keep-alive, announced');
  });

  it('closes connections over the cap unanswered while holding the earlier ones', async () => {
    // Timeouts far beyond the test: only the cap can close anything until the held ones go.
    const port = await start({
      headersTimeoutMs: 60_000,
      requestTimeoutMs: 60_000,
      keepAliveTimeoutMs: 60_000,
      maxConnections: 4,
    });
    // Four connections the server has certainly taken: each got its answer and is kept alive.
    const held = await Promise.all(Array.from({ length: 4 }, () => rawClient(port)));
    for (const c of held) c.socket.write(server.get(port, 'keep-alive'));
    await waitFor(
      'answers on the four held connections',
      () => held.every((c) => Buffer.concat(c.received).includes('\r\n\r\n')),
      CLOSE_DEADLINE_MS,
    );
    const over = await Promise.all(Array.from({ length: 6 }, () => rawClient(port)));
    for (const c of over) if (c.socket.writable) c.socket.write(server.get(port, 'close'));
    await Promise.all(over.map((c) => c.closed));
    for (const c of over) assert.ok(droppedUnanswered(c), 'closed without an answer');
    assert.equal(held.filter((c) => c.socket.destroyed).length, 0, 'the held ones stay open');
    for (const c of held) assert.equal(firstAnswer(c).status, 200);

    // Once they are gone, a normal client is answered again (node counts a closed socket down
    // when it has seen it close: until then a new one may still be over the cap).
    for (const c of held) c.socket.destroy();
    const answer = await eventually(
      'an answer for a normal client',
      () => ask(port, server.get(port, 'close')),
      CLOSE_DEADLINE_MS,
    );
    assert.equal(answer.status, 200);
  });
}
