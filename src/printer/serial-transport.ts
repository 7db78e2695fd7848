/**
 * Serial printers through `serialport`. Bytes drain at the line rate (a 2.4 KB receipt takes 2.5 s
 * at 9600 baud), so write timeouts must allow for the baud rate; `drain` tells when the OS has
 * sent everything. Prefer stable paths like `/dev/serial/by-id/...` in configuration.
 */
import { SerialPort } from 'serialport';
import { AgentError } from '../errors.js';
import type { FlowControl } from './printer-url.js';
import { BaseTransport } from './transport.js';

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
    port.on('error', () => {
      // 'close' follows when the device goes away; it is reported there.
    });
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
      port.write(Buffer.from(data), (error) => {
        if (error)
          reject(
            new AgentError('PRINTER_DISCONNECTED', `${this.description}: ${error.message}`, {
              cause: error,
            }),
          );
      });
      port.drain((error) => {
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
    const port = this.port;
    this.port = null;
    if (!port?.isOpen) return;
    await new Promise<void>((resolve) => port.close(() => resolve()));
  }
}
