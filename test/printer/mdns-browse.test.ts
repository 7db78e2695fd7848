/**
 * Where `printers scan` asks mDNS (issue 41 item 1, decision 251): only on an interface of this
 * machine whose IPv4 network overlaps the subnet named, loopback never, and not at all (nothing
 * sent, no wait) when none is on it. The query and answers over a real link are tested in
 * test/cli/printers-scan-netns.test.ts.
 */
import assert from 'node:assert/strict';
import type { NetworkInterfaceInfo } from 'node:os';
import { describe, it } from 'node:test';
import { browsePrinters, interfacesOn } from '../../src/printer/mdns-browse.js';
import {
  compareAddresses,
  parseCidr,
  subnetContains,
  subnetsOverlap,
} from '../../src/printer/network-scan.js';

function v4(cidr: string, internal = false): NetworkInterfaceInfo {
  return {
    address: cidr.split('/')[0]!,
    netmask: '',
    family: 'IPv4',
    mac: '00:00:00:00:00:00',
    internal,
    cidr,
  };
}

const v6: NetworkInterfaceInfo = {
  address: 'fe80::1',
  netmask: 'ffff:ffff:ffff:ffff::',
  family: 'IPv6',
  mac: '00:00:00:00:00:00',
  internal: false,
  cidr: 'fe80::1/64',
  scopeid: 2,
};

describe('mDNS: the interfaces asked on', () => {
  const interfaces = {
    lo: [v4('127.0.0.1/8', true)],
    eth0: [v6, v4('192.168.1.7/24'), v4('192.168.1.8/24')],
    wlan0: [v4('10.20.0.3/16')],
  };

  it('those whose network holds the subnet or lies in it, one address each, never loopback', () => {
    assert.deepEqual(interfacesOn(parseCidr('192.168.1.0/24'), interfaces), [
      { name: 'eth0', address: '192.168.1.7', cidr: '192.168.1.7/24' },
    ]);
    // A part of the Pi's subnet, or a subnet holding it: the same link either way.
    assert.deepEqual(
      interfacesOn(parseCidr('192.168.1.128/25'), interfaces).map((i) => i.name),
      ['eth0'],
    );
    assert.deepEqual(
      interfacesOn(parseCidr('10.20.4.0/24'), interfaces).map((i) => i.name),
      ['wlan0'],
    );
    assert.deepEqual(
      interfacesOn(parseCidr('192.168.0.0/22'), interfaces).map((i) => i.name),
      ['eth0'],
    );
    assert.deepEqual(interfacesOn(parseCidr('127.87.41.0/29'), interfaces), []);
    assert.deepEqual(interfacesOn(parseCidr('172.16.0.0/24'), interfaces), []);
  });

  it('no interface on the subnet: nothing is sent and nothing waited for', async () => {
    const started = performance.now();
    const result = await browsePrinters(parseCidr('172.16.0.0/24'), {
      interfaces: { eth0: [v4('192.168.1.7/24')] },
      minWindowMs: 60_000,
    }).finish();
    assert.ok(performance.now() - started < 30_000);
    assert.deepEqual(result.asked, []);
    assert.deepEqual(result.printers, []);
    assert.equal(
      result.problem,
      'no network interface of this machine is on 172.16.0.0/24 (mDNS reaches the local link only)',
    );
  });
});

describe('subnet arithmetic of the scan', () => {
  it('contains, overlaps and orders addresses numerically', () => {
    const s = parseCidr('10.241.0.0/24');
    assert.equal(subnetContains(s, '10.241.0.255'), true);
    assert.equal(subnetContains(s, '10.242.0.8'), false);
    assert.equal(subnetContains(s, 'printer.local'), false);
    assert.equal(subnetsOverlap(s, parseCidr('10.241.0.8/30')), true);
    assert.equal(subnetsOverlap(parseCidr('10.0.0.0/8'), s), true);
    assert.equal(subnetsOverlap(s, parseCidr('10.241.1.0/24')), false);
    assert.deepEqual(['10.0.0.10', '10.0.0.9', '9.255.255.255'].sort(compareAddresses), [
      '9.255.255.255',
      '10.0.0.9',
      '10.0.0.10',
    ]);
  });
});
