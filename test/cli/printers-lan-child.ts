/**
 * The store's LAN side of test/cli/printers-scan-netns.test.ts, run inside its network namespace
 * (`ip netns exec`): emulators playing shipped profiles on their addresses and ports, and an mDNS
 * responder (multicast-dns, the library the agent asks with) announcing `_pdl-datastream._tcp`
 * services on the LAN interface, the way a printer's own mDNS stack does: answers to the group,
 * SRV, TXT and address added to the PTR answer, or only when asked for (`additionals: false`,
 * as some stacks do). One JSON line on stdout per event: `ready`, each `query` heard (who asked
 * what), each `connection` an emulator accepted. Ends when its standard input closes.
 */
import makeMdns from 'multicast-dns';
import { emulatorOptionsForProfile } from '../../src/cli/emulator-profile.js';
import { listenTcp, VirtualPrinter } from '../../src/emulator/index.js';
import { loadProfiles } from '../../src/receipt/profile.js';

export interface LanService {
  instance: string;
  host: string;
  address: string;
  port: number;
  txt: string[];
  /** Whether the PTR answer carries SRV, TXT and A (else only a question for them gets them). */
  additionals: boolean;
}

export interface LanConfig {
  printers: Array<{ host: string; port: number; profile: string }>;
  /** An address of the LAN interface: where the responder's multicast leaves. */
  mdnsInterface: string;
  services: LanService[];
}

export type LanEvent =
  | { event: 'ready' }
  | { event: 'query'; from: string; port: number; questions: string[] }
  | { event: 'connection'; to: string };

const SERVICE = '_pdl-datastream._tcp.local';
const config = JSON.parse(process.argv[2] ?? '{}') as LanConfig;
const say = (event: LanEvent) => process.stdout.write(`${JSON.stringify(event)}\n`);

const profiles = loadProfiles();
const endpoints = await Promise.all(
  config.printers.map(async (p) => {
    const profile = profiles.get(p.profile);
    if (!profile) throw new Error(`no profile ${p.profile}`);
    const endpoint = await listenTcp(new VirtualPrinter(emulatorOptionsForProfile(profile)), {
      host: p.host,
      port: p.port,
    });
    endpoint.slot.on('link', () => say({ event: 'connection', to: `${p.host}:${p.port}` }));
    return endpoint;
  }),
);

const full = (s: LanService) => `${s.instance}.${SERVICE}`;
type Rr = makeMdns.ResponseOutgoingPacket['answers'][number];
const srv = (s: LanService): Rr => ({
  name: full(s),
  type: 'SRV',
  ttl: 120,
  data: { port: s.port, target: s.host },
});
const txt = (s: LanService): Rr => ({ name: full(s), type: 'TXT', ttl: 4500, data: s.txt });
const a = (s: LanService): Rr => ({ name: s.host, type: 'A', ttl: 120, data: s.address });

const mdns = makeMdns({ interface: config.mdnsInterface, bind: '0.0.0.0' });
mdns.on('query', (query, rinfo) => {
  say({
    event: 'query',
    from: rinfo.address,
    port: rinfo.port,
    questions: query.questions.map((q) => `${q.name} ${q.type}`),
  });
  const answers: Rr[] = [];
  const additionals: Rr[] = [];
  for (const q of query.questions) {
    const name = q.name.toLowerCase();
    for (const s of config.services) {
      if (name === SERVICE.toLowerCase() && q.type === 'PTR') {
        answers.push({ name: SERVICE, type: 'PTR', ttl: 4500, data: full(s) });
        if (s.additionals) additionals.push(srv(s), txt(s), a(s));
      } else if (name === full(s).toLowerCase()) {
        if (q.type === 'SRV') answers.push(srv(s));
        if (q.type === 'TXT') answers.push(txt(s));
      } else if (name === s.host.toLowerCase() && q.type === 'A') {
        answers.push(a(s));
      }
    }
  }
  if (answers.length === 0) return;
  if (rinfo.port === 5353) mdns.respond({ answers, additionals });
  // From another port: a one-shot "legacy" query, answered to its sender with its ID (RFC 6762
  // section 6.7).
  else mdns.respond({ id: query.id, answers, additionals }, rinfo);
});
mdns.on('ready', () => say({ event: 'ready' }));

process.stdin.resume();
process.stdin.on('end', async () => {
  mdns.destroy();
  await Promise.all(endpoints.map((e) => e.close()));
  process.exit(0);
});
