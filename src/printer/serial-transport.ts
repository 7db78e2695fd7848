/**
 * Serial printers through `serialport`. Bytes drain at the line rate (a 2.4 KB receipt takes 2.5 s
 * at 9600 baud), so write timeouts must allow for the baud rate; `drain` tells when the OS has
 * sent everything. Prefer stable paths like `/dev/serial/by-id/...` in configuration.
 *
 * `serialport` (its bindings and a dozen parser packages) is loaded when a serial printer first
 * opens: an agent on a network or USB printer never pays for it.
 */
import type { SerialPort } from 'serialport';
import { AgentError } from '../errors.js';
import { BaseTransport } from './transport.js';

export const FLOW_CONTROLS = ['none', 'rtscts', 'xonxoff'] as const;
export type FlowControl = (typeof FLOW_CONTROLS)[number];

export interface SerialOptions {
  path: string;
  baudRate: number;
  flowControl: FlowControl;
}

export class SerialTransport extends BaseTransport {
  readonly description: string;
  private port: SerialPort | null = null;

  constructor(private readonly options: SerialOptions) {
    super();
    this.description = `serial:${options.path}`;
  }

  get isOpen(): boolean {
    return this.port?.isOpen ?? false;
  }

  async open(): Promise<void> {
    if (this.isOpen) return;
    const { SerialPort } = await import('serialport');
    const port = new SerialPort({
      path: this.options.path,
      baudRate: this.options.baudRate,
      rtscts: this.options.flowControl === 'rtscts',
      xon: this.options.flowControl === 'xonxoff',
      xoff: this.options.flowControl === 'xonxoff',
      autoOpen: false,
    });
    await new Promise<void>((resolve, reject) => {
      port.open((error) => {
        if (error)
          reject(
            new AgentError('PRINTER_UNREACHABLE', `${this.description}: ${error.message}`, {
              cause: error,
            }),
          );
        else resolve();
      });
    });
    port.on('data', (chunk: Buffer) => this.receive(chunk));
    port.on('error', (error: Error) => this.lost(port, error));
    port.once('close', (error?: Error) => {
      if (this.port === port) {
        this.port = null;
        this.dropped(error);
      }
    });
    this.port = port;
  }

  protected async writeAll(
    data: Uint8Array,
    _deadline: number,
    progress: (sent: number) => void,
  ): Promise<void> {
    const port = this.port;
    if (!port?.isOpen) throw this.notOpen();
    await new Promise<void>((resolve, reject) => {
      const fail = (error: Error) => {
        // A serial device that fails a write is gone (USB adapter unplugged, pty closed): the
        // port does not always say so with 'close', so the link is declared lost here.
        this.lost(port, error);
        reject(
          new AgentError('PRINTER_DISCONNECTED', `${this.description}: ${error.message}`, {
            cause: error,
          }),
        );
      };
      port.write(Buffer.from(data), (error) => {
        if (error) fail(error);
      });
      port.drain((error) => {
        if (error) fail(error);
        else {
          progress(data.length);
          resolve();
        }
      });
    });
  }

  private lost(port: SerialPort, error: Error): void {
    if (this.port !== port) return;
    this.port = null;
    if (port.isOpen) port.close(() => undefined);
    this.dropped(error);
  }

  async close(): Promise<void> {
    const port = this.port;
    this.port = null;
    if (!port?.isOpen) return;
    await new Promise<void>((resolve) => port.close(() => resolve()));
  }
}
