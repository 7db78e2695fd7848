/**
 * Issue 13 item 8: the service could be held open (300 connections sending one byte every 5 s were
 * all still open after 95 s). Over real sockets against the service's HTTP server, configured with
 * short timeouts so the test is quick: trickled headers and bodies are cut at the header and
 * request timeouts, silent and idle keep-alive connections are closed, and connections over the
 * cap are closed at once while a normal client is still answered. One client address cannot take
 * every slot: its connections over `maxConnectionsPerClient` are closed at once while a client
 * from another address (127.0.0.2, bound as the socket's local address) is answered. Every wait is
 * for the socket's `close` event, with a deadline; the slow clients keep sending until they are
 * cut off.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { eventually, next } from '../../harness/waiting.js';
import { RESPONSE_SIGNATURE_HEADER } from '../../src/protocol/index.js';
import { baseUrl, makeService, postRaw, signedByService } from '../order-service/harness.js';

/** Far above the configured timeouts, far below what the service did before (60-300 s or never). */
const DEADLINE = 15_000;

const LIMITS = {
  headersTimeoutMs: 1500,
  requestTimeoutMs: 3000,
  keepAliveTimeoutMs: 500,
  idleTimeoutMs: 20_000,
  maxConnections: 10,
  // Out of the way (every client here is 127.0.0.1) except in the test of the per-client cap.
  maxConnectionsPerClient: 100,
};

type Service = ReturnType<typeof makeService>;
const services: Service[] = [];
const sockets: Socket[] = [];
after(async () => {
  // A client the service failed to cut off would otherwise hold the server's close open.
  for (const socket of sockets) socket.destroy();
  for (const s of services) await s.app.close();
});

async function service(http: Partial<typeof LIMITS> = {}) {
  const svc = makeService({ config: { http: { ...LIMITS, ...http } } });
  services.push(svc);
  const url = await baseUrl(svc.app);
  return { ...svc, url, port: Number(new URL(url).port) };
}

interface RawClient {
  socket: Socket;
  received: Buffer[];
  closed: Promise<unknown>;
  /** Sends `byte` every `everyMs` until the socket closes. */
  trickle(byte: string, everyMs: number): void;
}

/** A raw TCP client of the service, from `localAddress` (any 127.x.y.z address is loopback). */
async function rawClient(port: number, localAddress = '127.0.0.1'): Promise<RawClient> {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  sockets.push(socket);
  const received: Buffer[] = [];
  socket.on('data', (d: Buffer) => received.push(d));
  socket.on('error', () => {}); // a reset is one way of being cut off
  const closed = next(socket, 'close', DEADLINE);
  await next(socket, 'connect');
  return {
    socket,
    received,
    closed,
    trickle(byte, everyMs) {
      const timer = setInterval(() => {
        if (socket.writable) socket.write(byte);
      }, everyMs);
      socket.once('close', () => clearInterval(timer));
    },
  };
}

/** A raw HTTP answer split into status, headers and the exact body bytes. */
function parseAnswer(chunks: Buffer[]) {
  const all = Buffer.concat(chunks);
  const split = all.indexOf('\r\n\r\n');
  assert.ok(split > 0, `an HTTP answer, got ${JSON.stringify(all.toString('latin1'))}`);
  const [statusLine, ...lines] = all.subarray(0, split).toString('latin1').split('\r\n');
  const headers = new Map(
    lines.map((l) => [
      l.slice(0, l.indexOf(':')).toLowerCase(),
      l.slice(l.indexOf(':') + 1).trim(),
    ]),
  );
  const bytes = new Uint8Array(all.subarray(split + 4));
  return {
    status: Number(statusLine!.split(' ')[1]),
    headers,
    bytes,
    signature: headers.get(RESPONSE_SIGNATURE_HEADER) ?? null,
    body: JSON.parse(Buffer.from(bytes).toString('utf8')) as { code: number },
  };
}

/** The answer to a timed-out request: 408, our envelope, signed, connection closed. */
function assertTimedOut(client: RawClient) {
  const answer = parseAnswer(client.received);
  assert.equal(answer.status, 408);
  assert.equal(answer.body.code, 40800);
  assert.equal(answer.headers.get('connection'), 'close');
  assert.ok(signedByService(answer), 'the 408 is signed like every answer');
}

const REQUEST_START =
  'POST /open-api/order/create HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n';

describe('service: slow and abusive clients (issue 13 item 8)', () => {
  it('cuts off slowloris clients trickling their headers at the header timeout', async () => {
    const svc = await service();
    const clients = await Promise.all(Array.from({ length: 8 }, () => rawClient(svc.port)));
    for (const c of clients) {
      c.socket.write(`${REQUEST_START}X-Padding: `);
      // Faster than any idle timeout: only the header timeout can end this.
      c.trickle('a', 400);
    }
    await Promise.all(clients.map((c) => c.closed));
    for (const c of clients) assertTimedOut(c);
    const after = await postRaw(`${svc.url}/nope`, '{}');
    assert.equal(after.body.code, 40400, 'the service still answers');
  });

  it('cuts off a client trickling its body at the request timeout', async () => {
    const svc = await service();
    const client = await rawClient(svc.port);
    client.socket.write(`${REQUEST_START}Content-Length: 1000\r\n\r\n{"appId":"`);
    client.trickle('x', 400);
    await client.closed;
    assertTimedOut(client);
  });

  it('closes a connection that never sends a byte', async () => {
    const svc = await service();
    const client = await rawClient(svc.port);
    await client.closed;
    assertTimedOut(client);
  });

  it('closes an idle keep-alive connection after its answer', async () => {
    const svc = await service();
    const client = await rawClient(svc.port);
    client.socket.write('GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n');
    await client.closed;
    const answer = parseAnswer(client.received);
    assert.equal(answer.status, 404);
    assert.equal(answer.headers.get('connection'), 'keep-alive', 'it was kept alive at first');
    assert.ok(signedByService(answer));
  });

  it('closes connections over the cap at once and still answers a normal client', async () => {
    const svc = await service({ headersTimeoutMs: 2500 });
    const clients = await Promise.all(Array.from({ length: 30 }, () => rawClient(svc.port)));
    for (const c of clients) {
      if (c.socket.writable) c.socket.write(`${REQUEST_START}X-Padding: `);
      c.trickle('a', 400);
    }
    // The 20 over the cap are closed without an answer, long before any timeout would cut them.
    const dropped = await Promise.race([
      Promise.all(clients.map((c) => c.closed.then(() => c))).then(() => 'all closed'),
      eventually(
        'twenty connections dropped',
        async () => {
          const gone = clients.filter((c) => c.socket.destroyed && c.received.length === 0);
          if (gone.length < 20) throw new Error(`${gone.length} dropped so far`);
          return gone.length;
        },
        DEADLINE,
      ),
    ]);
    assert.equal(dropped, 20);
    const open = await new Promise<number>((resolve, reject) =>
      svc.app.server.getConnections((error, n) => (error ? reject(error) : resolve(n))),
    );
    assert.ok(open <= LIMITS.maxConnections, `${open} connections open`);
    // A normal client is answered as soon as the slow ones are cut at the header timeout.
    const answer = await eventually(
      'an answer for a normal client',
      () => postRaw(`${svc.url}/nope`, '{}'),
      DEADLINE,
    );
    assert.equal(answer.body.code, 40400);
    assert.ok(signedByService(answer));
    await Promise.all(clients.map((c) => c.closed));
    const answered = clients.filter((c) => c.received.length > 0);
    assert.equal(answered.length, LIMITS.maxConnections, 'the ones let in were cut by the timeout');
    for (const c of answered) assertTimedOut(c);
  });

  it('closes one client’s connections over its own cap at once, and answers other clients', async () => {
    // Timeouts far beyond the test: only the caps can close anything here.
    const svc = await service({
      headersTimeoutMs: 60_000,
      requestTimeoutMs: 60_000,
      idleTimeoutMs: 60_000,
      maxConnectionsPerClient: 4,
    });
    const flood = await Promise.all(Array.from({ length: 12 }, () => rawClient(svc.port)));
    try {
      for (const c of flood) {
        if (c.socket.writable) c.socket.write(`${REQUEST_START}X-Padding: `);
        c.trickle('a', 400);
      }
      // Before the fix node let in 10 of them (the global cap) and dropped 2.
      await eventually(
        'eight of one client’s connections dropped',
        async () => {
          const gone = flood.filter((c) => c.socket.destroyed && c.received.length === 0);
          if (gone.length < 8) throw new Error(`${gone.length} dropped so far`);
        },
        DEADLINE / 2, // before the sockets' own close deadline, so a failure says what is wrong
      );
      const kept = flood.filter((c) => !c.socket.destroyed);
      assert.equal(kept.length, 4, 'the client keeps its four');
      // Another address is answered while the first still holds all it may.
      const other = await rawClient(svc.port, '127.0.0.2');
      other.socket.write('GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
      await other.closed;
      const answer = parseAnswer(other.received);
      assert.equal(answer.status, 404);
      assert.equal(answer.body.code, 40400);
      assert.ok(signedByService(answer));
      assert.equal(kept.filter((c) => c.socket.destroyed).length, 0, 'still held meanwhile');
      // Once its connections close, the first client is let in again: its count went down.
      for (const c of kept) c.socket.destroy();
      await eventually(
        'the service to see them closed',
        async () => {
          const open = await new Promise<number>((resolve, reject) =>
            svc.app.server.getConnections((error, n) => (error ? reject(error) : resolve(n))),
          );
          if (open > 0) throw new Error(`${open} still open`);
        },
        DEADLINE,
      );
      const again = await Promise.all(Array.from({ length: 4 }, () => rawClient(svc.port)));
      for (const c of again)
        c.socket.write('GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
      await Promise.all(again.map((c) => c.closed));
      for (const c of again) assert.equal(parseAnswer(c.received).body.code, 40400);
    } finally {
      for (const c of flood) c.socket.destroy();
      await Promise.all(flood.map((c) => c.closed));
    }
  });
});
