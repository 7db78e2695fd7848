/**
 * A TCP proxy for fault tests (reliability fault matrix rows 3, 7, 8, 12): it sits in front of a
 * target port (the broker, a TCP printer) and its behaviour can be switched while connections are
 * open. Each accepted connection gets its own upstream connection at once, whatever the mode.
 *
 * Modes (`setMode`), for data in both directions:
 * - `pass`: forwarded, subject to `delayMs` (each chunk forwarded that long after it arrived) and
 *   `throttleBps` (at most that many bytes per second per direction, in slices of about 20 ms).
 * - `hold`: a silent partition. Connections stay open, nothing is forwarded (the data waits in the
 *   proxy, as TCP would retransmit it after the partition), and a side that closes is not told to
 *   the other side: that side only learns of it by its own timeouts. When the hold ends, the data
 *   waiting is forwarded, and a connection whose other side went away meanwhile is reset (its peer
 *   would answer a retransmission with RST).
 * - `drop`: data is discarded and counted (`dropped`); connections stay open and closes propagate.
 * - `drop-to-client` / `drop-to-target`: the same for one direction only; the other direction is
 *   forwarded as in `pass`. With `drop-to-client` in front of a broker, the broker receives what
 *   the client publishes and passes it on, and the client never sees the acknowledgement: a lost
 *   PUBACK, made on purpose rather than by a race against a delay.
 * - `refuse`: new connections are reset as soon as they are accepted (`refused`); current
 *   connections carry on as in `pass`.
 *
 * `reset()` destroys every current connection on both sides with RST (`socket.resetAndDestroy()`).
 *
 * Closing in the other modes: a side that ends gracefully has what the proxy still holds for the
 * other side forwarded, then the other side is ended, as TCP would. With `discardOnClose` the
 * proxy is a lossy link instead: what it has not forwarded when a side goes is lost and the other
 * side is reset (bytes in a cable or an adapter when the host dies). A side that errors (reset)
 * resets the other side.
 */
import { createServer, type Server, Socket } from 'node:net';

export type ProxyMode = 'pass' | 'hold' | 'drop' | 'drop-to-client' | 'drop-to-target' | 'refuse';

export interface TcpProxyOptions {
  /** Upstream host; default 127.0.0.1. */
  targetHost?: string;
  targetPort: number;
  /** Port to listen on (127.0.0.1); default 0, a free one. */
  port?: number;
  mode?: ProxyMode;
  delayMs?: number;
  throttleBps?: number | null;
  discardOnClose?: boolean;
}

/** Slices of a throttled direction are about this long. */
const SLICE_MS = 20;
/** Bytes held for one direction before the proxy stops reading from the sender. */
const HIGH_WATER = 64 * 1024;

interface Chunk {
  data: Buffer;
  /** performance.now() when it may be forwarded (delay). */
  due: number;
}

/** One direction of one connection. */
class Pipe {
  private readonly queue: Chunk[] = [];
  private queued = 0;
  private timer: NodeJS.Timeout | undefined;
  private lineFreeAt = 0;
  private waitingForDrain = false;
  /** The sender closed gracefully: end the receiver once the queue is empty. */
  private ending = false;
  private ended = false;

  constructor(
    private readonly proxy: TcpProxy,
    private readonly direction: 'up' | 'down',
    readonly from: Socket,
    readonly to: Socket,
  ) {
    from.on('data', (chunk: Buffer) => this.receive(chunk));
  }

  get pending(): number {
    return this.queued;
  }

  private receive(chunk: Buffer): void {
    if (this.proxy.drops(this.direction)) {
      this.proxy.dropped += chunk.length;
      this.proxy.droppedBytes[this.direction] += chunk.length;
      return;
    }
    this.proxy.received += chunk.length;
    this.queue.push({ data: chunk, due: performance.now() + this.proxy.delayMs });
    this.queued += chunk.length;
    if (this.queued >= HIGH_WATER) this.from.pause();
    this.pump();
  }

  /** The sender ended gracefully: forward what is left, then end the receiver. */
  finish(): void {
    this.ending = true;
    this.pump();
  }

  discard(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queue.length = 0;
    this.queued = 0;
  }

  pump(): void {
    if (this.timer || this.waitingForDrain) return;
    if (this.proxy.mode === 'hold') return;
    while (this.queue.length > 0) {
      if (this.to.destroyed || !this.to.writable) {
        this.discard();
        return;
      }
      const head = this.queue[0]!;
      const now = performance.now();
      if (head.due > now) {
        this.schedule(head.due - now);
        return;
      }
      const bps = this.proxy.throttleBps;
      let part: Buffer;
      if (bps) {
        if (this.lineFreeAt > now) {
          this.schedule(this.lineFreeAt - now);
          return;
        }
        const slice = Math.max(1, Math.round((bps * SLICE_MS) / 1000));
        part = head.data.subarray(0, slice);
        // Continues from the end of the previous slice while the line is busy, so timer lateness
        // does not slow the line down.
        this.lineFreeAt = Math.max(now, this.lineFreeAt) + (part.length * 1000) / bps;
      } else {
        part = head.data;
      }
      if (part.length === head.data.length) this.queue.shift();
      else head.data = head.data.subarray(part.length);
      this.queued -= part.length;
      this.proxy.forwarded[this.direction] += part.length;
      this.proxy.writes[this.direction]++;
      const more = this.to.write(part);
      if (this.queued < HIGH_WATER && this.from.isPaused() && !this.from.destroyed)
        this.from.resume();
      if (!more) {
        this.waitingForDrain = true;
        this.to.once('drain', () => {
          this.waitingForDrain = false;
          this.pump();
        });
        return;
      }
    }
    if (this.ending && !this.ended && !this.to.destroyed) {
      this.ended = true;
      this.to.end();
      // The other side should close once it has been ended; make sure it does.
      setTimeout(() => this.to.destroy(), 2000).unref();
    }
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pump();
    }, ms);
  }
}

/** A client connection and its upstream connection. */
class Connection {
  readonly up: Pipe;
  readonly down: Pipe;
  private readonly gone = new Set<Socket>();

  constructor(
    private readonly proxy: TcpProxy,
    readonly client: Socket,
    readonly upstream: Socket,
  ) {
    this.up = new Pipe(proxy, 'up', client, upstream);
    this.down = new Pipe(proxy, 'down', upstream, client);
    for (const [side, other, pipe] of [
      [client, upstream, this.up],
      [upstream, client, this.down],
    ] as const) {
      side.on('error', () => {}); // a reset is a closed side, reported by 'close'
      side.on('end', () => {
        if (this.proxy.mode !== 'hold' && !this.proxy.discardOnClose) pipe.finish();
      });
      side.on('close', (hadError) => {
        this.gone.add(side);
        if (this.gone.size === 2) {
          this.proxy.forget(this);
          return;
        }
        if (this.proxy.mode === 'hold') return; // a partition: the other side is not told
        if (hadError || this.proxy.discardOnClose) {
          pipe.discard();
          reset(other);
        } else {
          pipe.finish();
        }
      });
    }
  }

  /** The hold ended: forward what waited; a connection that lost a side meanwhile is reset. */
  resume(): void {
    if (this.gone.size > 0) {
      this.up.discard();
      this.down.discard();
      reset(this.client);
      reset(this.upstream);
      return;
    }
    this.up.pump();
    this.down.pump();
  }

  reset(): void {
    this.up.discard();
    this.down.discard();
    reset(this.client);
    reset(this.upstream);
  }
}

function reset(socket: Socket): void {
  if (socket.destroyed) return;
  try {
    socket.resetAndDestroy(); // RST; a socket still connecting is reset once it connects
  } catch {
    socket.destroy();
  }
}

export class TcpProxy {
  mode: ProxyMode;
  delayMs: number;
  throttleBps: number | null;
  discardOnClose: boolean;
  /** Connections accepted and served (refused ones not included). */
  connections = 0;
  /** Connections reset by `refuse` mode. */
  refused = 0;
  /** Times `reset()` was called with at least one connection open, and connections it reset. */
  resets = 0;
  resetConnections = 0;
  /** Bytes taken in from either side (not dropped), and bytes discarded in the drop modes. */
  received = 0;
  dropped = 0;
  /** Bytes discarded towards the target (up) and towards the client (down). */
  readonly droppedBytes = { up: 0, down: 0 };
  /** Bytes forwarded, and the writes they took, towards the target (up) and the client (down). */
  readonly forwarded = { up: 0, down: 0 };
  readonly writes = { up: 0, down: 0 };
  private readonly open = new Set<Connection>();

  private constructor(
    readonly server: Server,
    readonly port: number,
    options: TcpProxyOptions,
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {
    this.mode = options.mode ?? 'pass';
    this.delayMs = options.delayMs ?? 0;
    this.throttleBps = options.throttleBps ?? null;
    this.discardOnClose = options.discardOnClose ?? false;
  }

  static async start(options: TcpProxyOptions): Promise<TcpProxy> {
    const server = createServer({ noDelay: true, pauseOnConnect: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const port = (server.address() as { port: number }).port;
    const proxy = new TcpProxy(
      server,
      port,
      options,
      options.targetHost ?? '127.0.0.1',
      options.targetPort,
    );
    server.on('connection', (socket) => proxy.accept(socket));
    return proxy;
  }

  /** `host:port` of the proxy. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Connections open now. */
  get active(): number {
    return this.open.size;
  }

  /** Bytes waiting in the proxy, both directions of every connection. */
  get pending(): number {
    let n = 0;
    for (const c of this.open) n += c.up.pending + c.down.pending;
    return n;
  }

  /** Whether data going `direction` (up: towards the target) is discarded in the current mode. */
  drops(direction: 'up' | 'down'): boolean {
    return (
      this.mode === 'drop' ||
      (this.mode === 'drop-to-target' && direction === 'up') ||
      (this.mode === 'drop-to-client' && direction === 'down')
    );
  }

  setMode(mode: ProxyMode): void {
    const wasHold = this.mode === 'hold';
    this.mode = mode;
    if (wasHold && mode !== 'hold') for (const c of [...this.open]) c.resume();
  }

  /** Resets every open connection, both sides. Returns how many there were. */
  reset(): number {
    const all = [...this.open];
    for (const c of all) c.reset();
    if (all.length > 0) this.resets++;
    this.resetConnections += all.length;
    return all.length;
  }

  /** Stops listening and resets every connection. */
  async close(): Promise<void> {
    for (const c of [...this.open]) c.reset();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  forget(connection: Connection): void {
    this.open.delete(connection);
  }

  private accept(client: Socket): void {
    client.on('error', () => {});
    if (this.mode === 'refuse') {
      this.refused++;
      reset(client);
      return;
    }
    client.setNoDelay(true);
    const upstream = new Socket();
    upstream.setNoDelay(true);
    upstream.on('error', () => {});
    const connection = new Connection(this, client, upstream);
    this.open.add(connection);
    this.connections++;
    upstream.connect(this.targetPort, this.targetHost);
    client.resume();
  }
}
