/**
 * `printers scan` composed (issue 41 item 1): USB printers from sysfs and local device files
 * listed, and, only when a subnet is given, TCP 9100 probed on each of its hosts, mDNS
 * `_pdl-datastream._tcp` asked on its link, and every printer found identified with
 * `identifyPrinter`. The walking, probing and asking are the printer room's (`network-scan.ts`,
 * `mdns-browse.ts`, `local-devices.ts`, `usb-printers.ts`); the CLI (`printers.ts`) only
 * formats what this returns.
 */
import { type LocalDevice, listLocalDevices } from '../printer/local-devices.js';
import { browsePrinters, type MdnsBrowse, type MdnsPrinter } from '../printer/mdns-browse.js';
import {
  compareAddresses,
  mapLimit,
  type Subnet,
  type SubnetScan,
  scanSubnet,
} from '../printer/network-scan.js';
import { listUsbPrinters, type UsbPrinter } from '../printer/usb-printers.js';
import type { PrinterProfile } from '../receipt/profile.js';
import { type Identification, identifyPrinter } from './identify-printer.js';

/** Identifications at a time: each holds one printer's only connection for up to eleven waits. */
const IDENTIFY_CONCURRENCY = 8;

export interface ScanRequest {
  /** The subnet to probe; none: no network is probed at all. */
  network?: Subnet;
  port?: number;
  /** Connect timeout of each probe, and of each identification's connection and reply. */
  timeoutMs: number;
  concurrency?: number;
  widthMm?: 58 | 80;
  profiles?: Iterable<PrinterProfile>;
  /** Where `dev/` and `sys/` are looked for; default `/`. */
  root?: string;
}

/** A network printer found by the probe, by mDNS (`_pdl-datastream._tcp`), or both; identified. */
export type FoundPrinter = Identification & {
  foundBy: Array<'probe' | 'mdns'>;
  /** What it announced, when it answered the mDNS query. */
  mdns?: MdnsPrinter;
};

export interface ScanReport {
  network: (SubnetScan & { mdns: MdnsBrowse; printers: FoundPrinter[] }) | null;
  /** USB printers from sysfs, each with its URLs (a usblp one's lp node is in `local` too). */
  usb: UsbPrinter[];
  local: LocalDevice[];
}

export async function scanPrinters(request: ScanRequest): Promise<ScanReport> {
  const usb = listUsbPrinters(request.root);
  const local = listLocalDevices(request.root);
  if (!request.network) return { network: null, usb, local };
  // The mDNS answers come in while the probes run: asking costs the walk no time (decision 251).
  const browser = browsePrinters(request.network);
  const scan = await scanSubnet(request.network, {
    timeoutMs: request.timeoutMs,
    ...(request.port !== undefined ? { port: request.port } : {}),
    ...(request.concurrency !== undefined ? { concurrency: request.concurrency } : {}),
  });
  const mdns = await browser.finish();
  const printers = await mapLimit(foundTargets(scan, mdns), IDENTIFY_CONCURRENCY, async (t) => ({
    ...(await identifyPrinter(`tcp://${t.host}:${t.port}`, {
      timeoutMs: request.timeoutMs,
      ...(request.widthMm !== undefined ? { widthMm: request.widthMm } : {}),
      ...(request.profiles !== undefined ? { profiles: request.profiles } : {}),
    })),
    foundBy: t.foundBy,
    ...(t.mdns ? { mdns: t.mdns } : {}),
  }));
  return { network: { ...scan, mdns, printers }, usb, local };
}

interface Target {
  host: string;
  port: number;
  foundBy: Array<'probe' | 'mdns'>;
  mdns?: MdnsPrinter;
}

/**
 * The open ports and the announced printers as one list, by address then port: a printer found
 * both ways is one entry; one announced on another port than the probed one is its own.
 */
function foundTargets(scan: SubnetScan, mdns: MdnsBrowse): Target[] {
  const targets = new Map<string, Target>();
  for (const host of scan.open) {
    targets.set(`${host}:${scan.port}`, { host, port: scan.port, foundBy: ['probe'] });
  }
  for (const p of mdns.printers) {
    const known = targets.get(`${p.address}:${p.port}`);
    if (!known) {
      targets.set(`${p.address}:${p.port}`, {
        host: p.address,
        port: p.port,
        foundBy: ['mdns'],
        mdns: p,
      });
    } else if (!known.mdns) {
      known.foundBy.push('mdns');
      known.mdns = p;
    }
  }
  return [...targets.values()].sort((a, b) => compareAddresses(a.host, b.host) || a.port - b.port);
}

/** One line per printer: the URL for the config first, then the proposal and what it said. */
export function describeScan(report: ScanReport): string {
  const lines: string[] = [];
  const n = report.network;
  if (n === null) {
    lines.push('network: not probed (name a subnet: --network 192.168.1.0/24)');
  } else {
    lines.push(
      `network ${n.cidr}: ${n.probed} ${n.probed === 1 ? 'host' : 'hosts'} probed on port ${n.port} in ${n.elapsedMs} ms, ${n.open.length} open`,
    );
    lines.push(describeMdns(n.mdns));
    for (const r of n.printers) {
      const announced = r.mdns ? `; found by mDNS as "${printable(r.mdns.instance)}"` : '';
      lines.push(`${r.url}  ${describeFound(r)}${announced}`);
    }
  }
  for (const p of report.usb) lines.push(`${p.url}  ${describeUsbPrinter(p)}`);
  if (report.local.length === 0 && report.usb.length === 0) {
    lines.push('local: no /dev/usb/lp* or /dev/serial/by-id/* devices');
  }
  // A usblp node whose USB printer has a line already said everything there is.
  const told = new Set(report.usb.map((p) => p.lp));
  for (const d of report.local) {
    if (told.has(d.path)) continue;
    lines.push(
      d.kind === 'usblp'
        ? `${d.url}  USB printer (usblp); ask it: printer-agent printers identify ${d.url}`
        : `${d.url}  serial port${d.target ? ` (${d.target})` : ''}; add ?baudRate= to the printer's rate (default 115200)`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function describeMdns(m: MdnsBrowse): string {
  if (m.asked.length === 0) return `mdns: not asked: ${m.problem}`;
  const on = m.asked.map((i) => `${i.name} (${i.address})`).join(', ');
  const parts = [
    `mdns ${m.service} asked on ${on}: ${m.printers.length} announced in the subnet in ${m.windowMs} ms`,
  ];
  if (m.outside > 0) parts.push(`${m.outside} outside it (not listed)`);
  if (m.unresolved.length > 0) {
    parts.push(
      `${m.unresolved.length} without port or address (${m.unresolved.map((u) => `"${printable(u)}"`).join(', ')})`,
    );
  }
  if (m.problem !== null) parts.push(`failed: ${printable(m.problem)}`);
  return parts.join(', ');
}

/** Device strings are the device's to choose: no control character reaches the terminal. */
function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are what is replaced
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
}

/** The URL as one shell word: `?` and `&` of a `usb:` URL are special to the shell. */
function shellWord(url: string): string {
  return /^[\w:/.=%+@,-]+$/.test(url) ? url : `'${url.replaceAll("'", "'\\''")}'`;
}

function describeUsbPrinter(p: UsbPrinter): string {
  const names =
    [p.manufacturer, p.product]
      .filter((s) => s !== null)
      .map(printable)
      .join(' ') || 'naming nothing';
  const ids = `${p.vendorId}:${p.productId}, ${p.serial === null ? 'no serial' : `serial ${printable(p.serial)}`}`;
  const parts = [
    p.reason === 'printer-class'
      ? `USB printer ${names} (${ids})`
      : `USB device ${names} (${ids}), vendor-specific interface and the vendor ID of ${p.vendor}: maybe an ESC/POS printer`,
  ];
  if (p.fileUrl !== null) {
    parts.push(`usblp holds it; or ${p.usbUrl} (usblp detached while the agent holds it)`);
  } else if (p.driver === 'usblp') {
    parts.push('usblp holds it but sysfs names no lp node');
  } else if (p.driver === 'usbfs') {
    parts.push(
      `a program has claimed interface ${p.interface} (a CUPS queue, or a printer-agent running)`,
    );
  } else if (p.driver !== null) {
    parts.push(`driver ${printable(p.driver)} holds interface ${p.interface}`);
  } else {
    parts.push('no kernel driver');
  }
  if (p.usbUrlMatches > 1) {
    parts.push(
      `${p.usbUrlMatches} devices answer to ${p.usbUrl} (same ids${p.serial === null ? ', no serial' : ' and serial'}): it cannot tell them apart${p.fileUrl === null ? '; connect one at a time' : ''}`,
    );
  }
  parts.push(`ask it: printer-agent printers identify ${shellWord(p.url)}`);
  return parts.join('; ');
}

function describeFound(r: Identification): string {
  const a = r.answers;
  const proposal = `profile ${r.proposal.profile} (${r.proposal.confidence})`;
  if (!a.reachable) return `${proposal}; unreachable when asked`;
  if (!r.learnt) {
    // Garbage names what came; else the last problem sums up (a silent port: asked no more).
    const why = a.garbage[0] ?? a.problems.at(-1);
    return `${proposal}; port open but nothing could be learnt${why ? ` (${why})` : ''}`;
  }
  const name = [a.manufacturer, a.model].filter((s) => s !== null).join(' ') || 'names no model';
  return `${proposal}; ${name}, ${a.status ? a.status.state : 'status unknown'}`;
}
