/**
 * Where a host meets the virtual printer (issue 4, item 4): an in-process duplex stream, a TCP
 * port in the style of port 9100, a serial port and a device file, the last two through a socat
 * pty pair. Each endpoint feeds one `LinkSlot`, so all of them share the one-link-at-a-time rule,
 * the slow-link setting and `disconnect()`.
 *
 * Every function takes either a `VirtualPrinter` (a slot is made for it) or a `LinkSlot` (when the
 * caller also wants to switch link behaviours or record the bytes, as the CLI does).
 */
import { EventEmitter } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { VirtualPrinter } from '../core/virtual-printer.js';
import { duplexPair } from './duplex-pair.js';
import { type LinkOptions, LinkSlot, type PrinterLink } from './link.js';
import { type PtyPair, startPtyPair } from './pty-pair.js';

export type EndpointKind = 'in-process' | 'tcp' | 'serial' | 'device';

/** What every endpoint offers the CLI and the control interface. */
export interface Endpoint {
  readonly kind: EndpointKind;
  /** What to give the agent: `tcp://127.0.0.1:9100`, `serial:/tmp/x/host`, `file:/tmp/x/lp0`. */
  readonly address: string;
  readonly slot: LinkSlot;
  /** Stops taking connections and drops the current one; the printer is left as it is. */
  close(): Promise<void>;
}

export type LinkTarget = VirtualPrinter | LinkSlot;

function slotFor(target: LinkTarget, options: LinkOptions): LinkSlot {
  if (target instanceof LinkSlot) {
    if (options.slowLinkBps !== undefined) target.setSlowLink(options.slowLinkBps);
    return target;
  }
  return new LinkSlot(target, options);
}

// In-process ------------------------------------------------------------------------------------

/** The host's end of an in-process link: a Duplex, plus the link behind it. */
export type InProcessLink = Duplex & { readonly link: PrinterLink; readonly slot: LinkSlot };

/**
 * Returns a Duplex for the host side (unit tests of the agent's printer code): bytes written to it
 * reach the printer, replies can be read from it. A disconnect destroys it ('close' without 'end').
 * Throws when the printer already has a link.
 */
export function createInProcessLink(target: LinkTarget, options: LinkOptions = {}): InProcessLink {
  const slot = slotFor(target, options);
  const [host, printerSide] = duplexPair();
  const link = slot.attach(printerSide);
  if (!link) {
    host.destroy();
    throw new Error('the printer already has a link: disconnect it first');
  }
  return Object.assign(host, { link, slot });
}

// TCP -----------------------------------------------------------------------------------------

/**
 * Starts `server` (a raw TCP or an HTTP one) on `host:port` and answers the port it got (`0`
 * picks a free one); a failure to listen (port taken) rejects instead of being an 'error' event.
 */
export async function listenOn(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address();
  return typeof bound === 'object' && bound ? bound.port : port;
}

export interface TcpOptions extends LinkOptions {
  /** Default 127.0.0.1: the emulator is a loopback printer. */
  host?: string;
  /** Default 9100; 0 picks a free port. */
  port?: number;
}

export interface TcpEndpoint extends Endpoint {
  readonly kind: 'tcp';
  readonly host: string;
  /** The bound port (the real one when 0 was asked). */
  readonly port: number;
  readonly server: Server;
  /** Connections turned away because another one was open. */
  readonly refused: number;
}

/**
 * A raw TCP print port. One connection at a time, like real printers: a connection that arrives
 * while another is open is accepted and closed at once, without a byte read or sent (Epson's
 * network interfaces close or refuse a second client of port 9100; closing is what a Node server
 * can do without giving up its listening socket). The host sees 'end'/'close' straight after
 * 'connect' and can retry; once the first connection has closed, the next one is served.
 */
export async function listenTcp(
  target: LinkTarget,
  options: TcpOptions = {},
): Promise<TcpEndpoint> {
  const slot = slotFor(target, options);
  let refused = 0;
  const server = createServer({ noDelay: true }, (socket: Socket) => {
    socket.on('error', () => {}); // a reset from the host is a closed link, not a crash
    if (!slot.attach(socket)) {
      refused++;
      socket.destroy();
    }
  });
  const host = options.host ?? '127.0.0.1';
  const port = await listenOn(server, options.port ?? 9100, host);
  const hostInUrl = host.includes(':') ? `[${host}]` : host;
  return {
    kind: 'tcp',
    host,
    port,
    address: `tcp://${hostInUrl}:${port}`,
    slot,
    server,
    get refused() {
      return refused;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        slot.disconnect();
      }),
  };
}

// Serial and device file (socat pty pair) ---------------------------------------------------------

export interface PtyEndpointOptions extends LinkOptions {
  /** Directory for the pty links; created if missing. */
  dir: string;
  /** Name of the host's link in `dir`. Default `host` (serial) or `lp0` (device). */
  hostName?: string;
}

export interface PtyEndpointEvents {
  /** After a disconnect the pty pair was made anew (new socat pid, same paths). */
  replug: [pid: number];
  /** socat could not be started again after a disconnect; the endpoint is down. */
  failure: [error: Error];
}

/**
 * A serial port or a device file served over a socat pty pair.
 *
 * Disconnect is an unplug and replug of the cable (a USB-serial adapter, a USB printer): the pty
 * pair is torn down, so the agent's open port or file stops working, and a new pair is made at
 * once under the same path, which the agent can reopen. The printer and its buffer live on.
 */
export class PtyEndpoint extends EventEmitter<PtyEndpointEvents> implements Endpoint {
  readonly hostPath: string;
  private pair: PtyPair;
  private closing = false;
  private replugging: Promise<void> | undefined;

  private constructor(
    readonly kind: 'serial' | 'device',
    readonly slot: LinkSlot,
    private readonly options: PtyEndpointOptions & { hostName: string },
    pair: PtyPair,
  ) {
    super();
    this.pair = pair;
    this.hostPath = pair.hostPath;
  }

  static async open(
    kind: 'serial' | 'device',
    target: LinkTarget,
    options: PtyEndpointOptions,
  ): Promise<PtyEndpoint> {
    const slot = slotFor(target, options);
    const resolved = {
      ...options,
      hostName: options.hostName ?? (kind === 'serial' ? 'host' : 'lp0'),
    };
    const pair = await PtyEndpoint.startPair(resolved);
    const endpoint = new PtyEndpoint(kind, slot, resolved, pair);
    try {
      endpoint.plug(pair);
    } catch (err) {
      await pair.stop();
      throw err;
    }
    return endpoint;
  }

  private static startPair(options: PtyEndpointOptions & { hostName: string }): Promise<PtyPair> {
    return startPtyPair({
      dir: options.dir,
      hostName: options.hostName,
      printerName: 'printer',
    });
  }

  /** The agent's printer URL for this endpoint: `serial:PATH`, or `file:PATH` for the usblp stand-in. */
  get address(): string {
    return `${this.kind === 'device' ? 'file' : 'serial'}:${this.hostPath}`;
  }

  /** socat's pid (it changes at every replug). */
  get pid(): number {
    return this.pair.pid;
  }

  async close(): Promise<void> {
    this.closing = true;
    this.slot.disconnect();
    await this.replugging;
    await this.pair.stop();
  }

  private plug(pair: PtyPair): void {
    const link = this.slot.attach(pair.stream);
    if (!link) throw new Error('the printer already has a link: disconnect it first');
    link.once('close', () => {
      if (this.closing) return;
      this.replugging = this.replug().finally(() => {
        this.replugging = undefined;
      });
    });
    // If socat dies by itself the pty may just go quiet: treat it as the cable coming out.
    void pair.exited.then(() => {
      if (!link.closed && !this.closing) link.disconnect();
    });
  }

  private async replug(): Promise<void> {
    await this.pair.stop();
    if (this.closing) return;
    try {
      const pair = await PtyEndpoint.startPair(this.options);
      if (this.closing) {
        await pair.stop();
        return;
      }
      this.pair = pair;
      this.plug(pair);
      this.emit('replug', pair.pid);
    } catch (err) {
      this.emit('failure', err instanceof Error ? err : new Error(String(err)));
    }
  }
}

/** A serial port for the agent's `serialport`: returns with `address` = `serial:DIR/host`. */
export function openSerialEndpoint(
  target: LinkTarget,
  options: PtyEndpointOptions,
): Promise<PtyEndpoint> {
  return PtyEndpoint.open('serial', target, options);
}

/**
 * A stand-in for `/dev/usb/lp0`: a path the agent opens with `fs` for reading and writing, which
 * the usblp driver also allows for bidirectional printers. Returns with `address` = `file:DIR/lp0`,
 * the agent's printer URL for it.
 */
export function openDeviceEndpoint(
  target: LinkTarget,
  options: PtyEndpointOptions,
): Promise<PtyEndpoint> {
  return PtyEndpoint.open('device', target, options);
}
