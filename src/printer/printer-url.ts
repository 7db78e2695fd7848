/**
 * Printer URLs, one scheme per way stores connect printers (issue 5), and the table of printer
 * transports by scheme, the way MQTT.js picks its connector by protocol (`connect/index.ts`).
 * Each entry of `PRINTER_SCHEMES` holds everything a scheme means: the URL's form, what it
 * reaches, how its URL parses into an address and how an address opens a `Transport`. The URL
 * parser, `createTransport` (open-printer.ts) and the message listing the supported schemes all
 * read the table: a new transport (Bluetooth, say) is its `Transport` class and one entry here.
 */
import { AgentError } from '../errors.js';
import { FileTransport } from './file-transport.js';
import { FLOW_CONTROLS, type FlowControl, SerialTransport } from './serial-transport.js';
import { TcpTransport } from './tcp-transport.js';
import type { Transport } from './transport.js';
import { UsbTransport } from './usb-transport.js';

/** How the link is opened, beyond the address: from the agent's settings, not from the URL. */
export interface LinkOptions {
  /** How long a TCP connection may take (default 5 s). */
  connectTimeoutMs?: number;
}

/** One way to reach a printer: a URL scheme and the transport behind it. */
export interface PrinterScheme<A extends { kind: string }> {
  /** The URL's form, for people (help texts, the config reference): `tcp://HOST[:PORT]`. */
  readonly form: string;
  /** A filled-in URL of the form, for help texts: `tcp://HOST:9100`. */
  readonly example: string;
  /** What the scheme reaches and when to choose it, for people. */
  readonly description: string;
  /** `url` starts with the scheme and its colon; throws PRINTER_URL_INVALID. */
  parse(url: string): A;
  open(address: A, link: LinkOptions): Transport;
  /** How long one chunk may take to go out; 5 s when absent (a slow link says more). */
  chunkTimeoutMs?(address: A, chunkSize: number): number;
}

const BAUD_RATES = [1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600];

/** The URL as it may appear in a message: credentials someone put in it are never echoed. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/[^/@?#]*@/, '//***@');
}

/**
 * The message quotes the URL (the person who typed it wants to see it); `details.rule` is the
 * same rule without any part of the URL, for messages that must not echo a value (the config
 * file's: a secret pasted into the wrong field would end up in the log).
 */
function invalid(url: string, rule: string, valueFreeRule = rule): AgentError {
  return new AgentError(
    'PRINTER_URL_INVALID',
    `printer URL ${JSON.stringify(redactUrl(url))}: ${rule}`,
    { details: { rule: valueFreeRule } },
  );
}

function query(url: string, text: string, allowed: readonly string[]): URLSearchParams {
  const params = new URLSearchParams(text);
  const listing = allowed.join(', ') || 'none';
  for (const key of params.keys()) {
    if (!allowed.includes(key))
      throw invalid(
        url,
        `unknown parameter ${key}; allowed: ${listing}`,
        `has an unknown parameter; allowed: ${listing}`,
      );
  }
  return params;
}

/** `serial:` and `file:` name a device path, `//` after the colon allowed (`file:///dev/usb/lp0`). */
function devicePath(url: string, scheme: string): { path: string; search: string } {
  const rest = url.slice(scheme.length + 1).replace(/^\/\/(?=\/)/, '');
  const [path = '', search = ''] = rest.split('?', 2);
  if (!path.startsWith('/')) throw invalid(url, 'path must be absolute, e.g. /dev/ttyUSB0');
  return { path, search };
}

/** One entry, its address type read from what `parse` returns. */
const defineScheme = <A extends { kind: string }>(entry: PrinterScheme<A>) => entry;

/** The table, in the order messages list the schemes; each address's `kind` is its scheme. */
const schemeTable = <T extends { [K in keyof T]: PrinterScheme<{ kind: K & string }> }>(table: T) =>
  table;

export const PRINTER_SCHEMES = schemeTable({
  tcp: defineScheme({
    form: 'tcp://HOST[:PORT]',
    example: 'tcp://HOST:9100',
    description: "a network printer's raw socket, port 9100 by default",
    parse(url: string): { kind: 'tcp'; host: string; port: number } {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw invalid(url, 'must look like tcp://HOST:PORT');
      }
      if (!parsed.hostname) throw invalid(url, 'host is missing');
      if (parsed.pathname && parsed.pathname !== '/') throw invalid(url, 'must have no path');
      if (parsed.username || parsed.password) throw invalid(url, 'must not carry credentials');
      query(url, parsed.search, []);
      const port = parsed.port === '' ? 9100 : Number(parsed.port);
      return { kind: 'tcp', host: parsed.hostname.replace(/^\[|\]$/g, ''), port };
    },
    open: (address, link) =>
      new TcpTransport({
        host: address.host,
        port: address.port,
        ...(link.connectTimeoutMs !== undefined ? { connectTimeoutMs: link.connectTimeoutMs } : {}),
      }),
  }),
  serial: defineScheme({
    form: 'serial:PATH[?baudRate=N&flowControl=none|rtscts|xonxoff]',
    example: 'serial:/dev/serial/by-id/...?baudRate=115200',
    description:
      'a serial port, 115200 baud by default; prefer /dev/serial/by-id/..., which survives ' +
      'replugging into another port',
    parse(url: string): {
      kind: 'serial';
      path: string;
      baudRate: number;
      flowControl: FlowControl;
    } {
      const { path, search } = devicePath(url, 'serial');
      const params = query(url, search, ['baudRate', 'flowControl']);
      const baud = params.get('baudRate') ?? '115200';
      const baudRate = Number(baud);
      if (!BAUD_RATES.includes(baudRate))
        throw invalid(url, `baudRate must be one of ${BAUD_RATES.join(', ')}`);
      const flowControl = (params.get('flowControl') ?? 'none') as FlowControl;
      if (!FLOW_CONTROLS.includes(flowControl))
        throw invalid(url, `flowControl must be one of ${FLOW_CONTROLS.join(', ')}`);
      return { kind: 'serial', path, baudRate, flowControl };
    },
    open: (address) => new SerialTransport(address),
    // Serial lines need time per byte: 10 bits per byte at the baud rate, twice over for margin.
    chunkTimeoutMs: (address, chunkSize) =>
      Math.max(2000, Math.ceil(((chunkSize * 10) / address.baudRate) * 1000 * 2)),
  }),
  file: defineScheme({
    form: 'file:PATH',
    example: 'file:/dev/usb/lp0',
    description: "a device file, such as the kernel usblp driver's /dev/usb/lp0",
    parse(url: string): { kind: 'file'; path: string } {
      const { path, search } = devicePath(url, 'file');
      query(url, search, []);
      return { kind: 'file', path };
    },
    open: (address) => new FileTransport(address.path),
  }),
  usb: defineScheme({
    form: 'usb:VID:PID[?serial=SN]',
    example: 'usb:VID:PID?serial=SN',
    description: 'a USB printer no kernel driver holds, by hex ids (usb:04b8:0202)',
    parse(url: string): {
      kind: 'usb';
      vendorId: number;
      productId: number;
      serialNumber: string | null;
    } {
      const [ids = '', search = ''] = url.slice('usb:'.length).split('?', 2);
      const m = /^([0-9a-fA-F]{4}):([0-9a-fA-F]{4})$/.exec(ids);
      if (!m) throw invalid(url, 'must be usb:VID:PID with 4 hex digits each, e.g. usb:04b8:0202');
      const params = query(url, search, ['serial']);
      return {
        kind: 'usb',
        vendorId: Number.parseInt(m[1]!, 16),
        productId: Number.parseInt(m[2]!, 16),
        serialNumber: params.get('serial'),
      };
    },
    open: (address) => new UsbTransport(address),
  }),
});

export type PrinterSchemeName = keyof typeof PRINTER_SCHEMES;

/** Where a printer is, as its URL says: one shape per scheme of the table. */
export type PrinterAddress = {
  [K in PrinterSchemeName]: ReturnType<(typeof PRINTER_SCHEMES)[K]['parse']>;
}[PrinterSchemeName];

/** The table's entry for an address (its `kind` is its scheme). */
export function schemeOf(address: PrinterAddress): PrinterScheme<PrinterAddress> {
  // The table's type pairs each entry with its own address; indexing by a union loses the pair.
  return PRINTER_SCHEMES[address.kind] as PrinterScheme<PrinterAddress>;
}

/** `a, b or c`. */
function listing(items: readonly string[]): string {
  return items.length > 1 ? `${items.slice(0, -1).join(', ')} or ${items.at(-1)}` : items.join('');
}

/** `tcp:, serial:, file: or usb:`: the schemes, for the message that lists them. */
function schemeList(): string {
  return listing(Object.keys(PRINTER_SCHEMES).map((name) => `${name}:`));
}

/** One example URL per scheme of the table, for the help texts that ask for a printer URL. */
export function printerUrlExamples(): string {
  return listing(Object.values(PRINTER_SCHEMES).map((scheme) => scheme.example));
}

/** Every scheme's form, for the config reference. */
export function printerUrlForms(): string {
  return listing(Object.values(PRINTER_SCHEMES).map((scheme) => scheme.form));
}

export function parsePrinterUrl(url: string): PrinterAddress {
  const name = /^([a-z]+):/.exec(url)?.[1];
  if (name !== undefined && Object.hasOwn(PRINTER_SCHEMES, name)) {
    return PRINTER_SCHEMES[name as PrinterSchemeName].parse(url);
  }
  throw invalid(url, `scheme must be ${schemeList()}`);
}
