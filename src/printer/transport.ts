/**
 * The link to a printer, whatever carries it (TCP socket, serial port, usblp device file, raw
 * USB). Modelled on serialport's bindings interface: a small contract that every implementation
 * honours, so the printer logic above it and one contract test suite work with all of them, and
 * the emulator can sit on the far side.
 *
 * Contract:
 * - `open()` resolves once bytes can be written; it rejects with `PRINTER_UNREACHABLE` (retryable)
 *   and may be called again after a failure or a close.
 * - `write(data, timeoutMs)` resolves when every byte was handed to the link (the OS buffer, the
 *   socket, the USB endpoint): not when it was printed. It rejects with `TRANSPORT_TIMEOUT` when
 *   that takes longer than `timeoutMs`, with `details.sentBytes` saying how much went out, and it
 *   never resends anything by itself (a printer keeps what it received; resending prints twice).
 *   While a write is pending, another write waits its turn.
 * - `read(timeoutMs)` resolves with the bytes received since the last read, as soon as there is at
 *   least one, or with an empty array when `timeoutMs` passes in silence: many printers never
 *   answer, and silence is information, not an error.
 * - `discardInput()` drops received bytes nobody read (late replies, automatic status).
 * - When the link drops by itself (cable pulled, printer closed the socket) the transport emits
 *   `close` once; later writes reject with `PRINTER_DISCONNECTED` until `open()` succeeds again.
 * - `close()` is idempotent and releases the device for other programs.
 * - Nothing here blocks the event loop, whatever the device does.
 */
import { EventEmitter } from 'node:events';
import { AgentError } from '../errors.js';

export interface Transport {
  /** Where it goes, for logs and status: never contains credentials. */
  readonly description: string;
  readonly isOpen: boolean;
  open(): Promise<void>;
  write(data: Uint8Array, timeoutMs: number): Promise<void>;
  read(timeoutMs: number): Promise<Uint8Array>;
  discardInput(): void;
  close(): Promise<void>;
  on(event: 'close', listener: (error?: Error) => void): this;
  off(event: 'close', listener: (error?: Error) => void): this;
}

/**
 * Shared plumbing: the inbox of received bytes with timed reads, the write queue, and the close
 * event. Subclasses feed `receive()` and call `dropped()` when their link goes away.
 */
export abstract class BaseTransport extends EventEmitter implements Transport {
  abstract readonly description: string;
  abstract readonly isOpen: boolean;
  abstract open(): Promise<void>;
  abstract close(): Promise<void>;
  /**
   * Writes all of `data` or throws; `deadline` is `performance.now()` based: a link that can
   * stall between pieces (a device file, USB) stops at it and sends nothing more of this write.
   */
  protected abstract writeAll(
    data: Uint8Array,
    deadline: number,
    progress: (sent: number) => void,
  ): Promise<void>;

  private inbox: Uint8Array[] = [];
  private waiter: (() => void) | null = null;
  private queue: Promise<void> = Promise.resolve();
  /** Writes queued or running: the first starts at once, the others after the one before. */
  private writes = 0;

  protected receive(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.inbox.push(chunk);
    this.waiter?.();
  }

  /** The link went away by itself: readers wake up, the owner hears `close`. */
  protected dropped(error?: Error): void {
    this.waiter?.();
    this.emit('close', error);
  }

  protected notOpen(): AgentError {
    return new AgentError('PRINTER_DISCONNECTED', `${this.description}: the link is not open`);
  }

  write(data: Uint8Array, timeoutMs: number): Promise<void> {
    const run = () => this.timedWrite(data, timeoutMs);
    // Writes run one after another; a failed write does not poison the queue. With none pending
    // the bytes go out in this turn (issue 16: a status query or the confirmation request is not
    // held back a turn behind an empty queue).
    const result = this.writes === 0 ? run() : this.queue.then(run, run);
    this.writes++;
    const settled = () => {
      this.writes--;
    };
    this.queue = result.then(settled, settled);
    return result;
  }

  /** One write with its timeout: whichever comes first settles it. */
  private timedWrite(data: Uint8Array, timeoutMs: number): Promise<void> {
    if (!this.isOpen) return Promise.reject(this.notOpen());
    let sent = 0;
    const deadline = performance.now() + timeoutMs;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(
          new AgentError(
            'TRANSPORT_TIMEOUT',
            `${this.description}: ${sent} of ${data.length} bytes taken in ${timeoutMs} ms`,
            { details: { sentBytes: sent, totalBytes: data.length } },
          ),
        );
      }, timeoutMs);
      this.writeAll(data, deadline, (n) => (sent = n)).then(
        () => {
          clearTimeout(timer);
          resolve();
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  async read(timeoutMs: number): Promise<Uint8Array> {
    if (this.inbox.length === 0 && this.isOpen) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, timeoutMs);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.waiter = done;
      });
      this.waiter = null;
    }
    const chunks = this.inbox;
    this.inbox = [];
    if (chunks.length === 0) return new Uint8Array(0);
    return chunks.length === 1 ? chunks[0]! : new Uint8Array(Buffer.concat(chunks));
  }

  discardInput(): void {
    this.inbox = [];
  }
}
