/**
 * Finding network printers on a subnet the technician names (issue 41 item 1): the subnet walked
 * host by host, TCP 9100 probed on each with bounded concurrency and a short connect timeout.
 * Only the subnet given is probed; nothing here picks a network by itself. Identifying what
 * answered is the caller's (`src/cli/scan-printers.ts` calls `identifyPrinter` per open port).
 */
import { connect } from 'node:net';

/** Subnets wider than this (more than 1022 hosts) are refused unless the caller says `wide`. */
export const WIDEST_PREFIX = 22;
/** Wider than this (65534 hosts) is no store's network: refused even with `wide`. */
export const WIDEST_WIDE_PREFIX = 16;

export interface Subnet {
  /** Normalised: host bits cleared, e.g. `192.168.1.0/24` for `192.168.1.7/24`. */
  cidr: string;
  /** The network address as an unsigned 32-bit number. */
  base: number;
  prefix: number;
}

/** A CIDR that is not an IPv4 subnet; the message says what is wrong, without the option name. */
export class CidrError extends Error {}

function ipToNumber(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let n = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return null;
    n = n * 256 + Number(part);
  }
  return n;
}

export function numberToIp(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** `A.B.C.D/N` (IPv4, N from 0 to 32); a bare address is refused, so the width is always said. */
export function parseCidr(text: string): Subnet {
  const m = /^([^/]+)\/(\d{1,2})$/.exec(text.trim());
  if (!m) throw new CidrError('must be an IPv4 subnet like 192.168.1.0/24');
  const address = ipToNumber(m[1]!);
  if (address === null) throw new CidrError(`${m[1]} is no IPv4 address`);
  const prefix = Number(m[2]);
  if (prefix > 32) throw new CidrError('the prefix length must be 0 to 32');
  const base = (address & maskOf(prefix)) >>> 0;
  return { cidr: `${numberToIp(base)}/${prefix}`, base, prefix };
}

function maskOf(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

/** Whether `ip` (dotted IPv4) lies in `subnet`; anything that is no IPv4 address does not. */
export function subnetContains(subnet: Subnet, ip: string): boolean {
  const n = ipToNumber(ip);
  return n !== null && (n & maskOf(subnet.prefix)) >>> 0 === subnet.base;
}

/** Orders dotted IPv4 addresses numerically (`10.0.0.9` before `10.0.0.10`). */
export function compareAddresses(a: string, b: string): number {
  return (ipToNumber(a) ?? -1) - (ipToNumber(b) ?? -1);
}

/** Whether two subnets share an address: one of them holds the other. */
export function subnetsOverlap(a: Subnet, b: Subnet): boolean {
  const mask = maskOf(Math.min(a.prefix, b.prefix));
  return (a.base & mask) >>> 0 === (b.base & mask) >>> 0;
}

/** Hosts probed: all but the network and broadcast addresses (a /31 and a /32 have only hosts). */
export function hostCount(subnet: Subnet): number {
  const size = 2 ** (32 - subnet.prefix);
  return subnet.prefix >= 31 ? size : size - 2;
}

export function* hostsOf(subnet: Subnet): Generator<string> {
  const size = 2 ** (32 - subnet.prefix);
  const [first, last] = subnet.prefix >= 31 ? [0, size - 1] : [1, size - 2];
  for (let i = first; i <= last; i++) yield numberToIp(subnet.base + i);
}

export type ProbeResult = 'open' | 'closed' | 'timeout';

/**
 * Connects to `host:port` and closes again. `open` only after the peer has let go too (or
 * `timeoutMs` more has passed): a printer takes one connection at a time, and the identification
 * that follows needs the port free. `closed` covers refused and unreachable, `timeout` a connect
 * that did not finish within `timeoutMs` (no host there, or a firewall that drops).
 */
export function probeTcp(host: string, port: number, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let connected = false;
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(connected ? 'open' : 'timeout');
    }, timeoutMs);
    socket.on('error', () => {});
    socket.resume(); // read (and drop) whatever comes, so the peer's FIN is seen
    socket.once('connect', () => {
      connected = true;
      clearTimeout(timer);
      const letGo = setTimeout(() => socket.destroy(), timeoutMs);
      socket.once('close', () => {
        clearTimeout(letGo);
        resolve('open');
      });
      socket.end();
    });
    socket.once('close', () => {
      if (connected) return;
      clearTimeout(timer);
      resolve('closed');
    });
  });
}

/** Runs `work` over `items`, at most `limit` at a time; results in the order of `items`. */
export async function mapLimit<T, R>(
  items: Iterable<T>,
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const list = [...items];
  const results: R[] = new Array(list.length);
  let next = 0;
  const worker = async () => {
    while (next < list.length) {
      const i = next++;
      results[i] = await work(list[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, list.length)) }, worker));
  return results;
}

export interface ScanOptions {
  port?: number;
  /** Connect timeout per host. */
  timeoutMs: number;
  /** Probes at a time; default 32. */
  concurrency?: number;
}

export interface SubnetScan {
  cidr: string;
  port: number;
  probed: number;
  /** Hosts whose port accepted a connection, in address order. */
  open: string[];
  closed: number;
  timedOut: number;
  elapsedMs: number;
}

/** Probes `port` on every host of `subnet`. Never throws for what a host does. */
export async function scanSubnet(subnet: Subnet, options: ScanOptions): Promise<SubnetScan> {
  const port = options.port ?? 9100;
  const started = performance.now();
  const hosts = [...hostsOf(subnet)];
  const results = await mapLimit(hosts, options.concurrency ?? 32, (host) =>
    probeTcp(host, port, options.timeoutMs),
  );
  return {
    cidr: subnet.cidr,
    port,
    probed: hosts.length,
    open: hosts.filter((_, i) => results[i] === 'open'),
    closed: results.filter((r) => r === 'closed').length,
    timedOut: results.filter((r) => r === 'timeout').length,
    elapsedMs: Math.round(performance.now() - started),
  };
}
