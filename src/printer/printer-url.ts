/**
 * Printer URLs, one scheme per way stores connect printers (issue 5):
 * - `tcp://HOST[:PORT]` raw socket, port 9100 by default;
 * - `serial:/dev/ttyUSB0?baudRate=115200&flowControl=rtscts` (prefer `/dev/serial/by-id/...`,
 *   which survives replugging into another port);
 * - `file:/dev/usb/lp0`, the kernel's usblp device file;
 * - `usb:VID:PID[?serial=SN]` (hex ids, e.g. `usb:04b8:0202`) for printers without a driver.
 */
import { AgentError } from '../errors.js';

export const FLOW_CONTROLS = ['none', 'rtscts', 'xonxoff'] as const;
export type FlowControl = (typeof FLOW_CONTROLS)[number];

export type PrinterAddress =
  | { kind: 'tcp'; host: string; port: number }
  | { kind: 'serial'; path: string; baudRate: number; flowControl: FlowControl }
  | { kind: 'file'; path: string }
  | { kind: 'usb'; vendorId: number; productId: number; serialNumber: string | null };

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

export function parsePrinterUrl(url: string): PrinterAddress {
  const scheme = /^([a-z]+):/.exec(url)?.[1];
  if (scheme === 'tcp') {
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
  }
  if (scheme === 'serial' || scheme === 'file') {
    const rest = url.slice(scheme.length + 1).replace(/^\/\/(?=\/)/, '');
    const [path = '', search = ''] = rest.split('?', 2);
    if (!path.startsWith('/')) throw invalid(url, 'path must be absolute, e.g. /dev/ttyUSB0');
    if (scheme === 'file') {
      query(url, search, []);
      return { kind: 'file', path };
    }
    const params = query(url, search, ['baudRate', 'flowControl']);
    const baud = params.get('baudRate') ?? '115200';
    const baudRate = Number(baud);
    if (!BAUD_RATES.includes(baudRate))
      throw invalid(url, `baudRate must be one of ${BAUD_RATES.join(', ')}`);
    const flowControl = (params.get('flowControl') ?? 'none') as FlowControl;
    if (!FLOW_CONTROLS.includes(flowControl))
      throw invalid(url, `flowControl must be one of ${FLOW_CONTROLS.join(', ')}`);
    return { kind: 'serial', path, baudRate, flowControl };
  }
  if (scheme === 'usb') {
    const [ids = '', search = ''] = url.slice(4).split('?', 2);
    const m = /^([0-9a-fA-F]{4}):([0-9a-fA-F]{4})$/.exec(ids);
    if (!m) throw invalid(url, 'must be usb:VID:PID with 4 hex digits each, e.g. usb:04b8:0202');
    const params = query(url, search, ['serial']);
    return {
      kind: 'usb',
      vendorId: Number.parseInt(m[1]!, 16),
      productId: Number.parseInt(m[2]!, 16),
      serialNumber: params.get('serial'),
    };
  }
  throw invalid(url, 'scheme must be tcp:, serial:, file: or usb:');
}
