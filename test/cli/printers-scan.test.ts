/**
 * `printer-agent printers scan` end to end (issue 41 item 1), the CLI in this process: emulators
 * playing shipped profiles on TCP 9100 at 127.87.41.2 and .5, a port that answers garbage at .3
 * and one that accepts and never answers at .6, all in 127.87.41.0/29 (Linux routes all of 127/8 to loopback: never a LAN
 * address); the local devices from a fake dev/ tree (`--root`, hidden). Each printer is one line
 * starting with the URL for the config; the silent port costs bounded time and gets a clear line;
 * a subnet wider than /22 is refused without --wide, a bad CIDR names the option, and without
 * --network nothing is probed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { emulatorOptionsForProfile } from '../../src/cli/emulator-profile.js';
import type { ScanReport } from '../../src/cli/scan-printers.js';
import { listenTcp, type TcpEndpoint, VirtualPrinter } from '../../src/emulator/index.js';
import { loadProfiles } from '../../src/receipt/profile.js';
import { runCliInProcess } from '../helpers/cli.js';
import { FAKE_BY_ID, fakeDevTree } from '../helpers/dev-tree.js';
import { type OddDevice, startOddDevice } from '../helpers/odd-devices.js';

const playing = (id: string) =>
  new VirtualPrinter(emulatorOptionsForProfile(loadProfiles().get(id)!));

async function cli(args: string[]) {
  const started = performance.now();
  const result = await runCliInProcess(args);
  return { ...result, ms: performance.now() - started };
}

describe('printers scan --network against emulators on loopback addresses', () => {
  const endpoints: TcpEndpoint[] = [];
  let silent: OddDevice;
  let garbage: OddDevice;
  let empty: string;
  let links = 0;

  before(async () => {
    empty = mkdtempSync(join(tmpdir(), 'pa-scan-none-'));
    endpoints.push(
      await listenTcp(playing('epson-tm-t88vi'), { host: '127.87.41.2', port: 9100 }),
      await listenTcp(playing('pos-5890-gb18030'), { host: '127.87.41.5', port: 9100 }),
    );
    for (const e of endpoints) e.slot.on('link', () => links++);
    silent = await startOddDevice('silent', { host: '127.87.41.6', port: 9100 });
    garbage = await startOddDevice('garbage', { host: '127.87.41.3', port: 9100 });
  });
  after(async () => {
    await Promise.all([...endpoints.map((e) => e.close()), silent.close(), garbage.close()]);
    rmSync(empty, { recursive: true, force: true });
  });

  it('one line per open port, URL first, with the proposed profile; the silent port bounded', async () => {
    const r = await cli([
      'printers',
      'scan',
      '--network',
      '127.87.41.0/29',
      '--timeout',
      '300',
      '--root',
      empty,
    ]);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(
      lines[0]!,
      /^network 127\.87\.41\.0\/29: 6 hosts probed on port 9100 in \d+ ms, 4 open$/,
    );
    // mDNS is link-local: no interface of this machine is on 127.87.41.0/29, so nothing is sent
    // (test/cli/printers-scan-netns.test.ts asks on a real link).
    assert.equal(
      lines.splice(1, 1)[0],
      'mdns: not asked: no network interface of this machine is on 127.87.41.0/29 (mDNS reaches the local link only)',
    );
    assert.equal(
      lines[1],
      'tcp://127.87.41.2:9100  profile epson-tm-t88vi (certain); EPSON TM-T88VI, ready',
    );
    assert.match(
      lines[2]!,
      /^tcp:\/\/127\.87\.41\.3:9100 {2}profile generic-80mm \(unknown\); port open but nothing could be learnt \(.*answered 8 bytes that are no reply \(ff fe fd fc 93 80 a5 c3\)\)$/,
    );
    assert.equal(
      lines[3],
      'tcp://127.87.41.5:9100  profile generic-80mm (unknown); names no model, ready',
    );
    assert.match(
      lines[4]!,
      /^tcp:\/\/127\.87\.41\.6:9100 {2}profile generic-80mm \(unknown\); port open but nothing could be learnt \(silent to DLE EOT and GS I: nothing more was asked\)$/,
    );
    assert.equal(lines[5], 'local: no /dev/usb/lp* or /dev/serial/by-id/* devices');
    assert.equal(lines.length, 6);
    // Probes are near instant on loopback; the silent port costs two replies' waits (0.9 s in
    // all). Unbounded, it would hold the scan forever: the bound leaves a busy machine room.
    assert.ok(r.ms < 15_000, `${Math.round(r.ms)} ms`);
  });

  it('--json gives the scan and each identification for scripts; --width reaches them', async () => {
    const r = await cli([
      'printers',
      'scan',
      '--network',
      '127.87.41.0/29',
      '--timeout',
      '300',
      '--width',
      '58',
      '--json',
      '--root',
      empty,
    ]);
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout) as ScanReport;
    assert.equal(report.network?.probed, 6);
    assert.deepEqual(report.network?.open, [
      '127.87.41.2',
      '127.87.41.3',
      '127.87.41.5',
      '127.87.41.6',
    ]);
    assert.deepEqual(
      report.network?.printers.map((p) => [p.url, p.proposal.profile, p.learnt]),
      [
        ['tcp://127.87.41.2:9100', 'epson-tm-t88vi', true],
        ['tcp://127.87.41.3:9100', 'generic-58mm', false],
        ['tcp://127.87.41.5:9100', 'pos-5890-gb18030', true],
        ['tcp://127.87.41.6:9100', 'generic-58mm', false],
      ],
    );
    assert.deepEqual(report.local, []);
  });

  it('without --network no network is probed: the emulators see no connection', async () => {
    const before = links;
    const r = await cli(['printers', 'scan', '--root', empty]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stdout,
      /^network: not probed \(name a subnet: --network 192\.168\.1\.0\/24\)$/m,
    );
    assert.equal(links, before);
  });
});

describe('printers scan: bad input and local devices', () => {
  it('a subnet wider than /22 is refused without --wide (exit 2), probed with it; wider than /16 never', async () => {
    const wide = await cli(['printers', 'scan', '--network', '127.87.48.0/20']);
    assert.equal(wide.status, 2);
    assert.equal(wide.stdout, '');
    assert.match(
      wide.stderr,
      /^error: --network 127\.87\.48\.0\/20 has 4094 hosts, wider than \/22: name the store's subnet, or add --wide to probe them all$/m,
    );
    const huge = await cli(['printers', 'scan', '--network', '10.0.0.0/8', '--wide']);
    assert.equal(huge.status, 2);
    assert.match(
      huge.stderr,
      /^error: --network 10\.0\.0\.0\/8 has 16777214 hosts, wider than \/16, the widest scanned even with --wide$/m,
    );
    const root = mkdtempSync(join(tmpdir(), 'pa-scan-none-'));
    try {
      const allowed = await cli([
        'printers',
        'scan',
        '--network',
        '127.87.56.0/21',
        '--wide',
        '--timeout',
        '200',
        '--root',
        root,
      ]);
      assert.equal(allowed.status, 0, allowed.stderr);
      assert.match(
        allowed.stdout,
        /^network 127\.87\.56\.0\/21: 2046 hosts probed on port 9100 in \d+ ms, 0 open$/m,
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('an invalid CIDR is a usage error naming --network', async () => {
    for (const bad of ['192.168.1.0', '192.168.1/24', '10.0.0.0/40']) {
      const r = await cli(['printers', 'scan', '--network', bad]);
      assert.equal(r.status, 2, bad);
      assert.match(
        r.stderr,
        /^error: option '--network <cidr>' argument '.*' is invalid\. --network /m,
      );
    }
  });

  it('local usblp files and serial by-id links, one line each with the URL', async () => {
    const root = fakeDevTree();
    try {
      const r = await cli(['printers', 'scan', '--root', root]);
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(r.stdout.trimEnd().split('\n').slice(1), [
        'file:/dev/usb/lp0  USB printer (usblp); ask it: printer-agent printers identify file:/dev/usb/lp0',
        'file:/dev/usb/lp1  USB printer (usblp); ask it: printer-agent printers identify file:/dev/usb/lp1',
        `serial:/dev/serial/by-id/${FAKE_BY_ID}  serial port (../../ttyUSB0); add ?baudRate= to the printer's rate (default 115200)`,
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
