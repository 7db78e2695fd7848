/**
 * `printer-agent printers scan --network` on a store LAN the test makes (issue 41 item 5): two
 * network namespaces joined by a veth pair, `agent` (the Pi, 10.241.0.1/24 on agent0, where the
 * scan runs through `ip netns exec`) and `lan` (10.241.0.2, .5, .6 and .10 on lan0, where a child
 * process runs emulators of shipped profiles and an mDNS responder). No address of a real
 * network is used, and the host's own network stack is not touched. What loopback cannot show:
 * - 10.241.0.9 answers ARP for nobody and drops every SYN (a permanent neighbour entry to a MAC
 *   nobody has): `timeout` within --timeout, like the ~250 absent hosts of the /24 (whose ARP
 *   would fail only after 3 s); the whole /24 finishes in about 8 timeouts, printers identified;
 * - 10.241.0.10 (and .6 on 9100) is there and refuses (RST): `closed`;
 * - mDNS `_pdl-datastream._tcp`: a real multicast query leaves agent0 and the responder answers
 *   over the veth; the announced printers inside the subnet are merged with the probe's (one on
 *   9101 is found by mDNS alone), one announced outside the subnet is not listed;
 * - without --network, agent0 sends not one packet (its kernel counter) and the LAN hears nothing.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { cliEntry, scriptEntry } from '../../harness/child-entry.js';
import { DEADLINE_MS, waitFor } from '../../harness/waiting.js';
import type { ScanReport } from '../../src/cli/scan-printers.js';
import { ROOT } from '../helpers/cli.js';
import {
  inNamespace,
  ip,
  makeNamespaces,
  type Namespaces,
  netnsSkipReason,
  sentPackets,
} from '../helpers/netns.js';
import type { LanConfig, LanEvent } from './printers-lan-child.js';

const AGENT = '10.241.0.1';
const EPSON = '10.241.0.2';
const GENERIC = '10.241.0.5';
const KITCHEN = '10.241.0.6';
const DROPS = '10.241.0.9';
const REFUSES = '10.241.0.10';
/** The probes' connect timeout and each identification reply's wait. */
const TIMEOUT = 300;

const LAN: LanConfig = {
  printers: [
    { host: EPSON, port: 9100, profile: 'epson-tm-t88vi' },
    { host: GENERIC, port: 9100, profile: 'pos-5890-gb18030' },
    // Found by mDNS alone: 9100 is closed on this host, its SRV record names 9101.
    { host: KITCHEN, port: 9101, profile: 'epson-tm-t20iii' },
  ],
  mdnsInterface: EPSON,
  services: [
    {
      instance: 'EPSON TM-T88VI',
      host: 'EPSON1A2B3C.local',
      address: EPSON,
      port: 9100,
      txt: ['txtvers=1', 'ty=EPSON TM-T88VI', 'product=(TM-T88VI)'],
      additionals: true,
    },
    {
      instance: 'Kitchen',
      host: 'kitchen-t20.local',
      address: KITCHEN,
      port: 9101,
      txt: ['txtvers=1', 'ty=EPSON TM-T20III'],
      additionals: false,
    },
    // Another subnet on the same link: the technician did not name it.
    {
      instance: 'Back office',
      host: 'backoffice.local',
      address: '10.242.0.8',
      port: 9100,
      txt: [],
      additionals: true,
    },
  ],
};

const CHILD = join(ROOT, 'test', 'cli', 'printers-lan-child.ts');

describe('printers scan --network in network namespaces', { skip: netnsSkipReason() }, () => {
  let namespaces: Namespaces;
  let agent: string;
  let lan: ChildProcess | undefined;
  const events: LanEvent[] = [];
  let empty: string;

  before(async () => {
    empty = mkdtempSync(join(tmpdir(), 'pa-scan-netns-'));
    namespaces = makeNamespaces(['agent', 'lan']);
    agent = namespaces.name('agent');
    const lanNs = namespaces.name('lan');
    // Made in their namespaces directly: no interface ever appears in the host's.
    ip(
      'link',
      'add',
      'agent0',
      'netns',
      agent,
      'type',
      'veth',
      'peer',
      'name',
      'lan0',
      'netns',
      lanNs,
    );
    ip('-n', agent, 'addr', 'add', `${AGENT}/24`, 'dev', 'agent0');
    for (const address of [EPSON, GENERIC, KITCHEN, REFUSES]) {
      ip('-n', lanNs, 'addr', 'add', `${address}/24`, 'dev', 'lan0');
    }
    ip(
      '-n',
      agent,
      'neigh',
      'replace',
      DROPS,
      'lladdr',
      '02:00:00:00:00:09',
      'dev',
      'agent0',
      'nud',
      'permanent',
    );
    ip('-n', agent, 'link', 'set', 'agent0', 'up');
    ip('-n', lanNs, 'link', 'set', 'lan0', 'up');

    const [command, args] = inNamespace(lanNs, [
      process.execPath,
      ...scriptEntry(CHILD),
      JSON.stringify(LAN),
    ]);
    const child = spawn(command, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    lan = child;
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    let exited = false;
    child.once('exit', () => {
      exited = true;
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      events.push(JSON.parse(line) as LanEvent);
    });
    await waitFor('the LAN side to be ready', () => {
      if (exited) throw new Error(`the LAN side exited: ${stderr}`);
      return events.some((e) => e.event === 'ready');
    });
  });

  after(async () => {
    if (lan && lan.exitCode === null && lan.signalCode === null) {
      const gone = new Promise((resolve) => lan!.once('exit', resolve));
      lan.stdin!.end();
      await gone;
    }
    namespaces?.remove();
    if (empty) rmSync(empty, { recursive: true, force: true });
  });

  /** `printer-agent ARGS` inside the agent namespace. */
  function scan(
    args: string[],
  ): Promise<{ status: number | null; stdout: string; stderr: string }> {
    const [command, argv] = inNamespace(agent, [process.execPath, ...cliEntry(), ...args]);
    const child = spawn(command, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const timer = setTimeout(() => child.kill(), DEADLINE_MS * 3);
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (status) => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr });
      });
    });
  }

  const heard = (kind: LanEvent['event']) => events.filter((e) => e.event === kind);

  // First: nothing before it has joined a multicast group whose reports could still be due.
  it('without --network the agent interface sends not one packet and the LAN hears nothing', async () => {
    const sent = sentPackets(agent, 'agent0');
    const r = await scan(['printers', 'scan', '--root', empty]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stdout,
      /^network: not probed \(name a subnet: --network 192\.168\.1\.0\/24\)$/m,
    );
    assert.equal(sentPackets(agent, 'agent0'), sent);
    assert.deepEqual(heard('query'), []);
    assert.deepEqual(heard('connection'), []);
  });

  it('a /24 in bounded time: printers found and identified, mDNS answers merged, drops timed out, refusals closed', async () => {
    const r = await scan([
      'printers',
      'scan',
      '--network',
      '10.241.0.0/24',
      '--timeout',
      String(TIMEOUT),
      '--json',
      '--root',
      empty,
    ]);
    assert.equal(r.status, 0, r.stderr);
    const n = (JSON.parse(r.stdout) as ScanReport).network!;
    assert.equal(n.probed, 254);
    assert.deepEqual(n.open, [EPSON, GENERIC]);
    // Refused: the agent's own address, Kitchen on 9100, and .10. Every other host, the
    // dropping .9 among them, timed out.
    assert.equal(n.closed, 3);
    assert.equal(n.timedOut, 249);
    // 249 timeouts, 32 at a time: 8 waits of 300 ms (2.4 s). Without the timeout an absent host
    // costs 3 s (ARP), 24 s for the walk, and the dropping one over two minutes (SYN retries): the
    // bound sits between, far from both, so a busy CI machine cannot fail it.
    assert.ok(n.elapsedMs < 16_000, `walk took ${n.elapsedMs} ms`);

    assert.deepEqual(n.mdns.asked, [{ name: 'agent0', address: AGENT, cidr: `${AGENT}/24` }]);
    assert.equal(n.mdns.problem, null);
    assert.deepEqual(
      n.mdns.printers.map((p) => [p.instance, p.host, p.address, p.port, p.txt.ty]),
      [
        ['EPSON TM-T88VI', 'EPSON1A2B3C.local', EPSON, 9100, 'EPSON TM-T88VI'],
        ['Kitchen', 'kitchen-t20.local', KITCHEN, 9101, 'EPSON TM-T20III'],
      ],
    );
    assert.equal(n.mdns.outside, 1);
    assert.deepEqual(n.mdns.unresolved, []);
    // Answers are taken while the probes run: the window is the walk, at least a second.
    assert.ok(n.mdns.windowMs >= 1000, `mDNS window ${n.mdns.windowMs} ms`);

    assert.deepEqual(
      n.printers.map((p) => [
        p.url,
        p.foundBy,
        p.mdns?.instance,
        p.proposal.profile,
        p.proposal.confidence,
      ]),
      [
        [`tcp://${EPSON}:9100`, ['probe', 'mdns'], 'EPSON TM-T88VI', 'epson-tm-t88vi', 'certain'],
        [`tcp://${GENERIC}:9100`, ['probe'], undefined, 'generic-80mm', 'unknown'],
        [`tcp://${KITCHEN}:9101`, ['mdns'], 'Kitchen', 'epson-tm-t20iii', 'certain'],
      ],
    );

    // The responder heard a real multicast query from the agent's port 5353, then the follow-up
    // questions for what the Kitchen printer's PTR answer left out.
    assert.deepEqual(
      heard('query').map((e) => e.event === 'query' && [e.from, e.port, e.questions]),
      [
        [AGENT, 5353, ['_pdl-datastream._tcp.local PTR']],
        [
          AGENT,
          5353,
          ['Kitchen._pdl-datastream._tcp.local SRV', 'Kitchen._pdl-datastream._tcp.local TXT'],
        ],
        [AGENT, 5353, ['kitchen-t20.local A']],
      ],
    );
  });

  it('the lines a technician reads: one per printer, URL first, mDNS names said', async () => {
    const r = await scan([
      'printers',
      'scan',
      '--network',
      '10.241.0.0/29',
      '--timeout',
      String(TIMEOUT),
      '--root',
      empty,
    ]);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(
      lines[0]!,
      /^network 10\.241\.0\.0\/29: 6 hosts probed on port 9100 in \d+ ms, 2 open$/,
    );
    assert.match(
      lines[1]!,
      /^mdns _pdl-datastream\._tcp asked on agent0 \(10\.241\.0\.1\): 2 announced in the subnet in \d+ ms, 1 outside it \(not listed\)$/,
    );
    assert.deepEqual(lines.slice(2, 5), [
      `tcp://${EPSON}:9100  profile epson-tm-t88vi (certain); EPSON TM-T88VI, ready; found by mDNS as "EPSON TM-T88VI"`,
      `tcp://${GENERIC}:9100  profile generic-80mm (unknown); names no model, ready`,
      `tcp://${KITCHEN}:9101  profile epson-tm-t20iii (certain); EPSON TM-T20III, ready; found by mDNS as "Kitchen"`,
    ]);
  });

  it('a host that drops SYNs is timed out and one that refuses is closed, each within --timeout', async () => {
    const r = await scan([
      'printers',
      'scan',
      '--network',
      '10.241.0.8/30',
      '--timeout',
      String(TIMEOUT),
      '--json',
      '--root',
      empty,
    ]);
    assert.equal(r.status, 0, r.stderr);
    const n = (JSON.parse(r.stdout) as ScanReport).network!;
    // .9 (drops) and .10 (refuses): the only two hosts of the /30.
    assert.equal(n.probed, 2);
    assert.deepEqual(n.open, []);
    assert.equal(n.closed, 1);
    assert.equal(n.timedOut, 1);
    // Without the timeout the dropping host holds the walk over two minutes (SYN retries).
    assert.ok(n.elapsedMs < 20_000, `walk took ${n.elapsedMs} ms`);
    // The link was asked (agent0 is on it), but nothing announced lies in this /30.
    assert.deepEqual(n.mdns.printers, []);
    assert.equal(n.mdns.outside, 3);
    assert.deepEqual(n.printers, []);
  });

  it('port 5353 held by a stack that does not share it: the mdns line says so, the scan goes on', async () => {
    // Another mDNS stack that bound 5353 without SO_REUSEADDR, in the agent's namespace.
    const [command, args] = inNamespace(agent, [
      process.execPath,
      '-e',
      `const s = require('node:dgram').createSocket({ type: 'udp4', reuseAddr: false });
       s.bind(5353, '0.0.0.0', () => console.log('held'));
       process.stdin.on('end', () => process.exit(0)).resume();`,
    ]);
    const holder = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      let held = false;
      holder.stdout.on('data', () => {
        held = true;
      });
      await waitFor('port 5353 to be held', () => held);
      const r = await scan([
        'printers',
        'scan',
        '--network',
        `${REFUSES}/32`,
        '--timeout',
        String(TIMEOUT),
        '--root',
        empty,
      ]);
      assert.equal(r.status, 0, r.stderr);
      const lines = r.stdout.trimEnd().split('\n');
      assert.match(
        lines[0]!,
        /^network 10\.241\.0\.10\/32: 1 host probed on port 9100 in \d+ ms, 0 open$/,
      );
      assert.match(
        lines[1]!,
        /^mdns _pdl-datastream\._tcp asked on agent0 \(10\.241\.0\.1\): 0 announced in the subnet in \d+ ms, failed: agent0: bind EADDRINUSE 0\.0\.0\.0:5353$/,
      );
    } finally {
      const gone = new Promise((resolve) => holder.once('exit', resolve));
      holder.stdin.end();
      await gone;
    }
  });
});
