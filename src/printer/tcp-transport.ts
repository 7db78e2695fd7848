/**
 * Raw TCP to a network printer (port 9100). One connection at a time: network printers refuse or
 * starve a second one, so the agent keeps one socket and reopens it when the printer drops it
 * (some printers close idle connections after hours). Keepalive notices a dead peer on its own.
 */
import { Socket } from 'node:net';
import { AgentError } from '../errors.js';
import { BaseTransport } from './transport.js';

export interface TcpOptions {
  host: string;
  port: number;
  connectTimeoutMs?: number;
  keepAliveMs?: number;
}

export class TcpTransport extends BaseTransport {
  readonly description: string;
  private socket: Socket | null = null;

  constructor(private readonly options: TcpOptions) {
    super();
    const host = options.host.includes(':') ? `[${options.host}]` : options.host;
    this.description = `tcp://${host}:${options.port}`;
  }

  get isOpen(): boolean {
    return this.socket !== null && !this.socket.destroyed && this.socket.readyState === 'open';
  }

  async open(): Promise<void> {
    if (this.isOpen) return;
    this.socket?.destroy();
    const socket = new Socket();
    const timeoutMs = this.options.connectTimeoutMs ?? 5000;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy();
        reject(
          new AgentError(
            'PRINTER_UNREACHABLE',
            `${this.description}: no connection within ${timeoutMs} ms`,
          ),
        );
      }, timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve();
      });
      socket.once('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(
          new AgentError(
            'PRINTER_UNREACHABLE',
            `${this.description}: ${error.code ?? error.message}`,
            { cause: error },
          ),
        );
      });
      socket.connect(this.options.port, this.options.host);
    });
    socket.setKeepAlive(true, this.options.keepAliveMs ?? 10_000);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', () => {
      // 'close' follows every 'error'; the close handler reports it.
    });
    socket.once('close', (hadError) => {
      if (this.socket === socket) {
        this.socket = null;
        this.dropped(hadError ? new Error('connection reset') : undefined);
      }
    });
    this.socket = socket;
  }

  protected async writeAll(
    data: Uint8Array,
    _deadline: number,
    progress: (sent: number) => void,
  ): Promise<void> {
    const socket = this.socket;
    if (!socket || !this.isOpen) throw this.notOpen();
    await new Promise<void>((resolve, reject) => {
      const onClose = () =>
        reject(
          new AgentError(
            'PRINTER_DISCONNECTED',
            `${this.description}: connection closed while writing`,
          ),
        );
      socket.once('close', onClose);
      // The callback fires once the data is handed to the kernel: back-pressure included.
      socket.write(data, (error) => {
        socket.off('close', onClose);
        if (error)
          reject(
            new AgentError('PRINTER_DISCONNECTED', `${this.description}: ${error.message}`, {
              cause: error,
            }),
          );
        else {
          progress(data.length);
          resolve();
        }
      });
    });
  }

  async close(): Promise<void> {
    const socket = this.socket;
    this.socket = null;
    if (!socket || socket.destroyed) return;
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.end();
      // A printer that never finishes the close handshake must not hold us up.
      setTimeout(() => socket.destroy(), 1000).unref();
    });
  }
}
