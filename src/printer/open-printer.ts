/** From a printer URL and its profile's capabilities to a ready-to-use Printer. */
import { FileTransport } from './file-transport.js';
import { type ConfirmMode, Printer, type PrinterOptions } from './printer.js';
import { type PrinterAddress, parsePrinterUrl } from './printer-url.js';
import { SerialTransport } from './serial-transport.js';
import { TcpTransport } from './tcp-transport.js';
import type { Transport } from './transport.js';
import { UsbTransport } from './usb-transport.js';

/** Transports chosen from a table by URL scheme, the way MQTT.js picks its connectors. */
export function createTransport(address: PrinterAddress): Transport {
  switch (address.kind) {
    case 'tcp':
      return new TcpTransport({ host: address.host, port: address.port });
    case 'serial':
      return new SerialTransport(address);
    case 'file':
      return new FileTransport(address.path);
    case 'usb':
      return new UsbTransport(address);
  }
}

/** Serial lines need time per byte: 10 bits per byte at the baud rate, twice over for margin. */
function chunkTimeoutFor(address: PrinterAddress, chunkSize: number): number {
  if (address.kind !== 'serial') return 5000;
  return Math.max(2000, Math.ceil(((chunkSize * 10) / address.baudRate) * 1000 * 2));
}

export interface PrinterCapabilities {
  realtimeStatus: boolean;
  confirm: ConfirmMode;
}

export function openPrinter(
  url: string,
  capabilities: PrinterCapabilities,
  overrides: Partial<PrinterOptions> = {},
): Printer {
  const address = parsePrinterUrl(url);
  const chunkSize = overrides.chunkSize ?? 1024;
  return new Printer(createTransport(address), {
    realtimeStatus: capabilities.realtimeStatus,
    confirm: capabilities.confirm,
    chunkSize,
    chunkTimeoutMs: chunkTimeoutFor(address, chunkSize),
    ...overrides,
  });
}
