/**
 * The fault tests' TCP proxy (test/helpers/tcp-proxy.ts): each mode does what the fault tests
 * rely on, checked with a plain TCP server behind it and a plain client in front.
 */
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { next, tcpClient, waitFor } from '../../harness/waiting.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

/** The target: records what each accepted connection receives, and keeps the sockets. */
interface Target {
  server: Server;
  port: number;
  sockets: Socket[];
  received: Buffer[][];
  closed: Array<{ hadError: boolean } | null>;
}

async function startTarget(): Promise<Target> {
  const target: Target = {
    server: createServer({ noDelay: true }),
    port: 0,
    sockets: [],
    received: [],
    closed: [],
  };
  target.server.on('connection', (socket) => {
    const i = target.sockets.length;
    target.sockets.push(socket);
    target.received.push([]);
    target.closed.push(null);
    socket.on('data', (d: Buffer) => target.received[i]!.push(d));
    socket.on('error', () => {});
    socket.on('close', (hadError) => {
      target.closed[i] = { hadError };
    });
  });
  await new Promise<void>((r) => target.server.listen(0, '127.0.0.1', r));
  target.port = (target.server.address() as { port: number }).port;
  return target;
}

const text = (chunks: Buffer[] | undefined) => Buffer.concat(chunks ?? []).toString('latin1');

describe('tcp proxy for fault tests', () => {
  let target: Target;
  const proxies: TcpProxy[] = [];

  async function proxy(options: Partial<Parameters<typeof TcpProxy.start>[0]> = {}) {
    const p = await TcpProxy.start({ targetPort: target.port, ...options });
    proxies.push(p);
    return p;
  }

  before(async () => {
    target = await startTarget();
  });

  after(async () => {
    for (const p of proxies) await p.close();
    for (const s of target.sockets) s.destroy();
    await new Promise<void>((r) => target.server.close(() => r()));
  });

  it('pass: forwards both ways and counts connections', async () => {
    const p = await proxy();
    const first = target.sockets.length;
    const client = await tcpClient(p.port);
    client.socket.write('hello');
    await waitFor('upstream got hello', () => text(target.received[first]) === 'hello');
    target.sockets[first]!.write('world');
    await client.bytes(5);
    assert.equal(Buffer.from(client.received).toString(), 'world');
    assert.equal(p.connections, 1);
    assert.equal(p.active, 1);
    client.socket.end();
    await waitFor('upstream closed', () => target.closed[first] !== null);
    await waitFor('connection forgotten', () => p.active === 0);
  });

  it('hold: forwards nothing, tells no side of a close, then delivers and resets when healed', async () => {
    const p = await proxy();
    const first = target.sockets.length;
    const a = await tcpClient(p.port);
    await waitFor('upstream a', () => target.sockets.length === first + 1);
    const b = await tcpClient(p.port);
    await waitFor('upstream b', () => target.sockets.length === first + 2);
    p.setMode('hold');
    a.socket.write('held-a');
    b.socket.write('held-b');
    target.sockets[first + 1]!.write('reply-b');
    await waitFor('the proxy took the bytes', () => p.pending === 6 + 6 + 7);
    assert.equal(text(target.received[first]), '');
    assert.equal(b.received.length, 0);
    // Client a goes away during the partition: its upstream is not told.
    a.socket.destroy();
    await waitFor('a closed', () => a.closed);
    await new Promise((r) => setImmediate(r));
    assert.equal(target.closed[first], null, 'upstream of a still open');
    // New connections are accepted and held too.
    const c = await tcpClient(p.port);
    c.socket.write('held-c');
    p.setMode('pass');
    // b's data flows; a's upstream is reset (its peer is gone), and c's connect goes through.
    await waitFor('b delivered', () => text(target.received[first + 1]) === 'held-b');
    await b.bytes(7);
    assert.equal(Buffer.from(b.received).toString(), 'reply-b');
    await waitFor('a upstream reset', () => target.closed[first] !== null);
    assert.equal(text(target.received[first]), '', "a's bytes died with it");
    await waitFor('c delivered', () => text(target.received[first + 2]) === 'held-c');
    b.socket.destroy();
    c.socket.destroy();
  });

  it('drop: discards data both ways and keeps the connection open', async () => {
    const p = await proxy({ mode: 'drop' });
    const first = target.sockets.length;
    const client = await tcpClient(p.port);
    await waitFor('upstream', () => target.sockets.length === first + 1);
    client.socket.write('lost');
    target.sockets[first]!.write('also lost');
    await waitFor('dropped both', () => p.dropped === 4 + 9);
    assert.equal(text(target.received[first]), '');
    assert.equal(client.received.length, 0);
    assert.equal(client.closed, false);
    p.setMode('pass');
    client.socket.write('kept');
    await waitFor('kept arrives', () => text(target.received[first]) === 'kept');
    client.socket.destroy();
  });

  it('drop-to-client / drop-to-target: one direction discarded, the other forwarded', async () => {
    const p = await proxy();
    const first = target.sockets.length;
    const client = await tcpClient(p.port);
    await waitFor('upstream', () => target.sockets.length === first + 1);
    const upstream = target.sockets[first]!;

    p.setMode('drop-to-client');
    client.socket.write('request');
    upstream.write('reply lost');
    // The target gets the request: what it answers is dropped, counted as going down.
    await waitFor('request delivered', () => text(target.received[first]) === 'request');
    await waitFor('reply dropped', () => p.droppedBytes.down === 10);
    assert.equal(client.received.length, 0);
    assert.equal(p.droppedBytes.up, 0);
    // A later byte towards the client is dropped too: not a race against the first one.
    upstream.write('!');
    await waitFor('second reply dropped', () => p.droppedBytes.down === 11);
    assert.equal(client.received.length, 0);

    p.setMode('drop-to-target');
    client.socket.write('lost');
    upstream.write('reply');
    await client.bytes(5);
    assert.equal(Buffer.from(client.received).toString(), 'reply');
    await waitFor('request dropped', () => p.droppedBytes.up === 4);
    assert.equal(text(target.received[first]), 'request');
    assert.equal(p.dropped, 15);
    assert.equal(client.closed, false, 'the connection stays open');

    // Back to pass: both ways again, on the same connection.
    p.setMode('pass');
    client.socket.write('+kept');
    await waitFor('kept arrives', () => text(target.received[first]) === 'request+kept');
    client.socket.destroy();
  });

  it('delay: holds each chunk for the delay, in order', async () => {
    const p = await proxy({ delayMs: 300 });
    const first = target.sockets.length;
    const client = await tcpClient(p.port);
    client.socket.write('one');
    await waitFor('taken in', () => p.received === 3);
    // It cannot have left yet: it was taken in less than the delay ago.
    assert.equal(p.pending, 3);
    assert.equal(text(target.received[first]), '');
    client.socket.write('two');
    await waitFor('both, in order', () => text(target.received[first]) === 'onetwo');
    client.socket.destroy();
  });

  it('throttle: forwards in small slices at the set rate', async () => {
    const p = await proxy({ throttleBps: 2000 });
    const first = target.sockets.length;
    const client = await tcpClient(p.port);
    const data = Buffer.alloc(400, 0x41);
    client.socket.write(data);
    await waitFor('all 400 bytes', () => text(target.received[first]).length === 400);
    // 2000 B/s in 20 ms slices: 40 bytes a slice, so at least 10 writes.
    assert.ok(p.writes.up >= 10, `${p.writes.up} writes`);
    assert.equal(p.forwarded.up, 400);
    client.socket.destroy();
  });

  it('reset: both sides of every connection see a reset', async () => {
    const p = await proxy();
    const first = target.sockets.length;
    const client = await tcpClient(p.port);
    await waitFor('upstream', () => target.sockets.length === first + 1);
    const error = next<[NodeJS.ErrnoException]>(client.socket, 'error');
    assert.equal(p.reset(), 1);
    const [err] = await error;
    assert.equal(err.code, 'ECONNRESET');
    await waitFor('upstream closed', () => target.closed[first] !== null);
    assert.equal(target.closed[first]!.hadError, true);
    assert.equal(p.resets, 1);
  });

  it('refuse: new connections are reset, open ones carry on', async () => {
    const p = await proxy();
    const first = target.sockets.length;
    const open = await tcpClient(p.port);
    await waitFor('upstream', () => target.sockets.length === first + 1);
    p.setMode('refuse');
    // Reset straight after the handshake: the client may see the reset before its 'connect'.
    const refused = connect({ port: p.port, host: '127.0.0.1' });
    refused.on('error', () => {});
    await next(refused, 'close');
    assert.equal(p.refused, 1);
    assert.equal(target.sockets.length, first + 1, 'no upstream for the refused one');
    open.socket.write('still');
    await waitFor('open one works', () => text(target.received[first]) === 'still');
    open.socket.destroy();
  });

  it('discardOnClose: a client that dies loses what the proxy had not forwarded', async () => {
    const p = await proxy({ throttleBps: 500, discardOnClose: true });
    const first = target.sockets.length;
    const client = await tcpClient(p.port);
    client.socket.write(Buffer.alloc(1000, 0x42));
    await waitFor('some forwarded', () => text(target.received[first]).length >= 20);
    client.socket.destroy();
    await waitFor('upstream reset', () => target.closed[first] !== null);
    assert.ok(text(target.received[first]).length < 1000, 'the rest was lost');
  });
});
