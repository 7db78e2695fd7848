/**
 * Network printers that announce themselves with mDNS/DNS-SD (issue 41 item 1): the service type
 * `_pdl-datastream._tcp`, raw port printing (Bonjour Printing 1.2, RFC 6763 section 7), asked for
 * on the link of the subnet the technician named, never elsewhere (decision 251). An mDNS query
 * is link-local multicast: it leaves only through an interface of this machine whose IPv4 network
 * overlaps the subnet, and none is sent when no interface is on it (a routed subnet: its mDNS
 * answers could not come back anyway). Answers are kept only when the announced address lies in
 * the subnet. This file is the only importer of `multicast-dns`; it identifies nothing (the
 * caller connects to what is found).
 */
import { type NetworkInterfaceInfo, networkInterfaces } from 'node:os';
import makeMdns from 'multicast-dns';
import {
  compareAddresses,
  parseCidr,
  type Subnet,
  subnetContains,
  subnetsOverlap,
} from './network-scan.js';

export const PRINTER_SERVICE = '_pdl-datastream._tcp';
const SERVICE_NAME = `${PRINTER_SERVICE}.local`;

/**
 * The shortest time answers are waited for. Responders delay answers about a shared record (a
 * service's PTR) by 20-120 ms, and up to 500 ms when they hold back for known answers (RFC 6762
 * sections 6 and 7.2); a second covers both with room for a busy printer. The caller usually
 * waits longer anyway: answers are taken for as long as its probe walk lasts.
 */
export const MDNS_MIN_WINDOW_MS = 1000;

export interface MdnsInterface {
  /** e.g. `eth0`. */
  name: string;
  /** This machine's address there: the source of the query. */
  address: string;
  cidr: string;
}

export interface MdnsPrinter {
  /** The service instance name the printer announces, e.g. `EPSON TM-T88VI`. */
  instance: string;
  /** The SRV record's target host, e.g. `EPSON1A2B3C.local`. */
  host: string;
  address: string;
  /** From the SRV record: not always 9100. */
  port: number;
  /** TXT record keys (lower case) and values: `ty` is the model by DNS-SD convention. */
  txt: Record<string, string>;
}

export interface MdnsBrowse {
  service: typeof PRINTER_SERVICE;
  /** The interfaces asked on; empty when none is on the subnet (then nothing was sent). */
  asked: MdnsInterface[];
  /** Announced printers whose address lies in the subnet, by address, then port. */
  printers: MdnsPrinter[];
  /** Addresses announced outside the subnet: not listed, the technician did not name them. */
  outside: number;
  /** Instances announced whose port or address did not come within the window. */
  unresolved: string[];
  /** Why nothing was asked, or what went wrong while asking; null when all went well. */
  problem: string | null;
  /** How long answers were taken. */
  windowMs: number;
}

export interface MdnsBrowser {
  /** Waits out the rest of the window, closes the sockets and says what was announced. */
  finish(): Promise<MdnsBrowse>;
}

type Mdns = ReturnType<typeof makeMdns>;
type MdnsRecord = makeMdns.ResponsePacket['answers'][number];

/**
 * The interfaces of this machine on `subnet`: IPv4, not loopback (multicast does not leave it),
 * one address each (a group membership is per interface, and one query per link is enough).
 */
export function interfacesOn(
  subnet: Subnet,
  interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces(),
): MdnsInterface[] {
  const found: MdnsInterface[] = [];
  for (const [name, infos] of Object.entries(interfaces)) {
    const info = infos?.find(
      (i) =>
        i.family === 'IPv4' &&
        !i.internal &&
        i.cidr !== null &&
        subnetsOverlap(parseCidr(i.cidr), subnet),
    );
    if (info?.cidr) found.push({ name, address: info.address, cidr: info.cidr });
  }
  return found;
}

/** What the answers said, by lower-case name (DNS names compare without case). */
class Records {
  /** Service instances (full names) announced by a PTR of the service. */
  readonly instances = new Map<string, string>();
  readonly srv = new Map<string, { port: number; target: string }>();
  readonly txt = new Map<string, Record<string, string>>();
  readonly addresses = new Map<string, Set<string>>();

  add(record: MdnsRecord): void {
    // TTL 0 is a goodbye: that service or address is going away.
    if (record.type === 'OPT' || record.ttl === 0) return;
    const key = record.name.toLowerCase();
    switch (record.type) {
      case 'PTR':
        if (key === SERVICE_NAME) this.instances.set(record.data.toLowerCase(), record.data);
        break;
      case 'SRV':
        this.srv.set(key, { port: record.data.port, target: record.data.target });
        break;
      case 'TXT':
        this.txt.set(key, txtPairs(record.data));
        break;
      case 'A': {
        const set = this.addresses.get(key) ?? new Set<string>();
        set.add(record.data);
        this.addresses.set(key, set);
        break;
      }
    }
  }
}

function txtPairs(data: string | Buffer | Array<string | Buffer>): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const item of Array.isArray(data) ? data : [data]) {
    const text = item.toString();
    const eq = text.indexOf('=');
    if (text.length === 0 || eq === 0) continue;
    const name = (eq < 0 ? text : text.slice(0, eq)).toLowerCase();
    // The first occurrence of a key counts (RFC 6763 section 6.4).
    if (!(name in pairs)) pairs[name] = eq < 0 ? '' : text.slice(eq + 1);
  }
  return pairs;
}

/**
 * The instance part of `NAME._pdl-datastream._tcp.local`. A dot inside NAME cannot be told from a
 * label boundary once decoded (the DNS library joins labels with dots), so a name with a dot shows
 * whole but cannot be asked for again: such a printer needs its SRV and address in the answer.
 */
function instanceName(full: string): string {
  return full.slice(0, full.length - SERVICE_NAME.length - 1);
}

/**
 * Sends one query for `_pdl-datastream._tcp` on each interface on `subnet` and takes answers
 * until `finish()`, and for at least `minWindowMs`. An instance announced without its SRV and
 * TXT, or a host without its address, is asked for once more within the window (responders
 * should add them to the answer, not all do). Never throws: what failed is the `problem`.
 */
export function browsePrinters(
  subnet: Subnet,
  options: { minWindowMs?: number; interfaces?: NodeJS.Dict<NetworkInterfaceInfo[]> } = {},
): MdnsBrowser {
  const started = performance.now();
  const asked = interfacesOn(subnet, options.interfaces);
  const records = new Records();
  // A set: a failed bind is reported by the socket and again by every query that waited on it.
  const problems = new Set<string>();
  const askedAgain = new Set<string>();
  const queriers: Mdns[] = [];

  const query = (mdns: Mdns, where: MdnsInterface, questions: makeMdns.QueryOutgoingPacket) =>
    mdns.query(questions, (error) => {
      if (error) problems.add(`${where.name}: ${error.message}`);
    });

  const askForMissing = () => {
    const questions: makeMdns.QueryOutgoingPacket['questions'] = [];
    for (const [key, name] of records.instances) {
      if (records.srv.has(key) || askedAgain.has(key)) continue;
      askedAgain.add(key);
      questions.push({ name, type: 'SRV' }, { name, type: 'TXT' });
    }
    for (const { target } of records.srv.values()) {
      const key = target.toLowerCase();
      if (records.addresses.has(key) || askedAgain.has(key)) continue;
      askedAgain.add(key);
      questions.push({ name: target, type: 'A' });
    }
    if (questions.length === 0) return;
    queriers.forEach((mdns, i) => {
      query(mdns, asked[i]!, { questions });
    });
  };

  for (const where of asked) {
    // Bound to 0.0.0.0: a socket bound to a unicast address receives no multicast on Linux. Port
    // 5353 shared (SO_REUSEADDR) with a responder already there, such as avahi-daemon: answers
    // go to the group and port 5353, and every socket bound there gets them.
    const mdns = makeMdns({ interface: where.address, bind: '0.0.0.0', loopback: false });
    mdns.on('error', (error: Error) => problems.add(`${where.name}: ${error.message}`));
    mdns.on('warning', (error: NodeJS.ErrnoException) => {
      // A failed membership or interface choice means no answers; a packet that does not decode
      // is some other device's business.
      if (error.syscall) problems.add(`${where.name}: ${error.message}`);
    });
    mdns.on('response', (response) => {
      for (const record of [...response.answers, ...response.additionals]) records.add(record);
      askForMissing();
    });
    queriers.push(mdns);
    query(mdns, where, { questions: [{ name: SERVICE_NAME, type: 'PTR' }] });
  }

  const windowClosed =
    asked.length === 0
      ? Promise.resolve()
      : new Promise<void>((resolve) =>
          setTimeout(resolve, options.minWindowMs ?? MDNS_MIN_WINDOW_MS),
        );

  return {
    async finish() {
      await windowClosed;
      await Promise.all(queriers.map((mdns) => new Promise<void>((r) => mdns.destroy(() => r()))));
      const printers: MdnsPrinter[] = [];
      const unresolved: string[] = [];
      let outside = 0;
      for (const [key, full] of records.instances) {
        const srv = records.srv.get(key);
        const addresses = srv && records.addresses.get(srv.target.toLowerCase());
        if (!srv || !addresses) {
          unresolved.push(instanceName(full));
          continue;
        }
        for (const address of addresses) {
          if (!subnetContains(subnet, address)) {
            outside++;
            continue;
          }
          printers.push({
            instance: instanceName(full),
            host: srv.target,
            address,
            port: srv.port,
            txt: records.txt.get(key) ?? {},
          });
        }
      }
      printers.sort((a, b) => compareAddresses(a.address, b.address) || a.port - b.port);
      const problem =
        asked.length === 0
          ? `no network interface of this machine is on ${subnet.cidr} (mDNS reaches the local link only)`
          : problems.size > 0
            ? [...problems].join('; ')
            : null;
      return {
        service: PRINTER_SERVICE,
        asked,
        printers,
        outside,
        unresolved,
        problem,
        windowMs: Math.round(performance.now() - started),
      };
    },
  };
}
