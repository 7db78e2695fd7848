/** From a printer URL and its profile's capabilities to a ready-to-use Printer. */
import { type ConfirmMode, Printer, type PrinterOptions } from './printer.js';
import { type LinkOptions, type PrinterAddress, parsePrinterUrl, schemeOf } from './printer-url.js';
import type { Transport } from './transport.js';

/** Transports chosen from a table by URL scheme (`PRINTER_SCHEMES`), as MQTT.js picks its connectors. */
export function createTransport(address: PrinterAddress, link: LinkOptions = {}): Transport {
  return schemeOf(address).open(address, link);
}

export interface PrinterCapabilities {
  realtimeStatus: boolean;
  confirm: ConfirmMode;
}

/** `link.connectTimeoutMs`: how long a TCP connection may take (default 5 s). */
export function openPrinter(
  url: string,
  capabilities: PrinterCapabilities,
  overrides: Partial<PrinterOptions> = {},
  link: LinkOptions = {},
): Printer {
  const address = parsePrinterUrl(url);
  const chunkSize = overrides.chunkSize ?? 1024;
  return new Printer(createTransport(address, link), {
    realtimeStatus: capabilities.realtimeStatus,
    confirm: capabilities.confirm,
    chunkSize,
    chunkTimeoutMs: schemeOf(address).chunkTimeoutMs?.(address, chunkSize) ?? 5000,
    ...overrides,
  });
}
