/**
 * The kernel's usblp device file (`/dev/usb/lp0`). A printer out of paper makes a blocking
 * write() sleep in the driver indefinitely, which would pin a libuv worker thread (there are only
 * four) and eventually freeze every file operation of the agent. So the file is opened
 * non-blocking: a write the device cannot take now returns EAGAIN at once and is retried on a
 * short timer until the deadline, and reads poll the same way. No thread ever sleeps in the
 * driver, and the event loop stays free.
 */
import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { isatty } from 'node:tty';
import { AgentError, errorMessage } from '../errors.js';
import { BaseTransport } from './transport.js';

const RETRY_MS = 20;
const POLL_MS = 25;
const GONE = new Set(['ENODEV', 'ENXIO', 'EIO', 'EBADF', 'ENOENT']);

export class FileTransport extends BaseTransport {
  readonly description: string;
  private handle: FileHandle | null = null;
  private polling = false;
  /**
   * A read of 0 bytes means "hung up" only on a terminal (a pty whose other side closed). On
   * usblp it is an empty transfer from the printer (a zero-length packet): no data, not an end.
   */
  private eofMeansHangUp = true;

  constructor(private readonly path: string) {
    super();
    this.description = `file:${path}`;
  }

  get isOpen(): boolean {
    return this.handle !== null;
  }

  async open(): Promise<void> {
    if (this.handle) return;
    try {
      this.handle = await open(
        this.path,
        constants.O_RDWR | constants.O_NONBLOCK | constants.O_NOCTTY,
      );
    } catch (cause) {
      const code = (cause as NodeJS.ErrnoException).code ?? 'error';
      throw new AgentError('PRINTER_UNREACHABLE', `${this.description}: ${code}`, { cause });
    }
    this.eofMeansHangUp = isatty(this.handle.fd);
    void this.poll(this.handle);
  }

  /** Reads whatever the printer sends back (status replies) until the handle closes. */
  private async poll(handle: FileHandle): Promise<void> {
    this.polling = true;
    const buffer = Buffer.alloc(256);
    while (this.handle === handle) {
      try {
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
        if (bytesRead > 0) this.receive(Uint8Array.prototype.slice.call(buffer, 0, bytesRead));
        else if (!this.eofMeansHangUp) {
          // usblp: an empty transfer. A printer gone from the bus answers ENODEV instead.
          await sleep(POLL_MS);
        } else {
          // Non-blocking reads say "nothing yet" with EAGAIN; 0 is end of file: the terminal's
          // other side hung up.
          if (this.handle === handle) this.lost(new Error('end of file: the device hung up'));
          break;
        }
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? '';
        if (code === 'EAGAIN' || code === 'EWOULDBLOCK') {
          await sleep(POLL_MS);
          continue;
        }
        if (this.handle === handle) this.lost(error as Error);
        break;
      }
    }
    this.polling = false;
  }

  private lost(error: Error): void {
    const handle = this.handle;
    this.handle = null;
    void handle?.close().catch(() => undefined);
    this.dropped(error);
  }

  protected async writeAll(
    data: Uint8Array,
    deadline: number,
    progress: (sent: number) => void,
  ): Promise<void> {
    let sent = 0;
    while (sent < data.length) {
      const handle = this.handle;
      if (!handle) throw this.notOpen();
      try {
        const { bytesWritten } = await handle.write(data, sent, data.length - sent, null);
        sent += bytesWritten;
        progress(sent);
        if (bytesWritten === 0) await sleep(RETRY_MS);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? '';
        if (code === 'EAGAIN' || code === 'EWOULDBLOCK') {
          // The device's buffer is full (paper out, slow print): try again shortly.
          if (performance.now() > deadline) {
            throw new AgentError(
              'TRANSPORT_TIMEOUT',
              `${this.description}: ${sent} of ${data.length} bytes taken before the deadline`,
              {
                details: { sentBytes: sent, totalBytes: data.length },
              },
            );
          }
          await sleep(RETRY_MS);
          continue;
        }
        if (GONE.has(code)) {
          this.lost(error as Error);
          throw new AgentError('PRINTER_DISCONNECTED', `${this.description}: ${code}`, {
            cause: error,
          });
        }
        throw new AgentError(
          'PRINTER_DISCONNECTED',
          `${this.description}: ${code || errorMessage(error)}`,
          { cause: error },
        );
      }
    }
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = null;
    if (handle) await handle.close().catch(() => undefined);
    while (this.polling) await sleep(POLL_MS);
  }
}
