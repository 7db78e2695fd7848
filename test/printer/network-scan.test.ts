/**
 * The subnet walk and the TCP probe of `printers scan` (issue 41 item 1): CIDRs parsed and
 * normalised, hosts without network and broadcast address, concurrency bounded, and the probe
 * telling an open port (let go before it answers, so the one-connection printer is free again)
 * from a closed one, on addresses of 127.0.0.0/8 (all loopback on Linux; never a LAN address).
 */
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import {
  CidrError,
  hostCount,
  hostsOf,
  mapLimit,
  parseCidr,
  probeTcp,
  scanSubnet,
} from '../../src/printer/network-scan.js';
import { startOddDevice } from '../helpers/odd-devices.js';

describe('parseCidr and the hosts of a subnet', () => {
  it('normalises host bits and counts hosts without network and broadcast address', () => {
    const s = parseCidr('192.168.1.77/24');
    assert.equal(s.cidr, '192.168.1.0/24');
    assert.equal(hostCount(s), 254);
    const hosts = [...hostsOf(s)];
    assert.equal(hosts.length, 254);
    assert.equal(hosts[0], '192.168.1.1');
    assert.equal(hosts.at(-1), '192.168.1.254');
    assert.deepEqual(
      [...hostsOf(parseCidr('10.0.0.8/29'))],
      ['10.0.0.9', '10.0.0.10', '10.0.0.11', '10.0.0.12', '10.0.0.13', '10.0.0.14'],
    );
    assert.deepEqual([...hostsOf(parseCidr('10.0.0.4/31'))], ['10.0.0.4', '10.0.0.5']);
    assert.deepEqual([...hostsOf(parseCidr('10.0.0.4/32'))], ['10.0.0.4']);
    assert.equal(hostCount(parseCidr('10.0.0.0/22')), 1022);
    assert.equal(hostCount(parseCidr('255.255.255.0/24')), 254);
    assert.equal([...hostsOf(parseCidr('255.255.255.252/30'))].at(-1), '255.255.255.254');
  });

  it('refuses what is no IPv4 subnet, saying why', () => {
    for (const [text, message] of [
      ['192.168.1.0', /like 192\.168\.1\.0\/24/],
      ['192.168.1/24', /192\.168\.1 is no IPv4 address/],
      ['192.168.1.256/24', /is no IPv4 address/],
      ['192.168.1.0/33', /0 to 32/],
      ['fe80::/64', /IPv4/],
      ['', /IPv4 subnet/],
    ] as const) {
      assert.throws(
        () => parseCidr(text),
        (e: unknown) => {
          assert.ok(e instanceof CidrError, text);
          assert.match((e as Error).message, message);
          return true;
        },
      );
    }
  });
});

describe('mapLimit', () => {
  it('never runs more than the limit at once, and keeps the order of the items', async () => {
    let running = 0;
    let most = 0;
    const results = await mapLimit(
      Array.from({ length: 40 }, (_, i) => i),
      5,
      async (i) => {
        running++;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, 2 + (i % 3)));
        running--;
        return i * 2;
      },
    );
    assert.equal(most, 5);
    assert.deepEqual(
      results,
      Array.from({ length: 40 }, (_, i) => i * 2),
    );
    assert.deepEqual(await mapLimit([], 5, async () => 1), []);
  });
});

describe('probeTcp and scanSubnet on loopback addresses', () => {
  it('open when a peer accepts, closed when refused; the connection is let go before "open"', async () => {
    let ended = 0;
    const server = createServer((s: Socket) => {
      s.on('end', () => ended++);
    });
    await new Promise<void>((r) => server.listen(0, '127.87.40.2', r));
    const port = (server.address() as { port: number }).port;
    try {
      assert.equal(await probeTcp('127.87.40.2', port, 500), 'open');
      assert.equal(ended, 1, 'the probe closed its side, and the peer closed its own, first');
      assert.equal(await probeTcp('127.87.40.3', port, 500), 'closed');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('a port that accepts and never answers is open, within two timeouts', async () => {
    const device = await startOddDevice('silent', { host: '127.87.40.5', port: 0 });
    const port = Number(new URL(device.url).port);
    try {
      const started = performance.now();
      assert.equal(await probeTcp('127.87.40.5', port, 200), 'open');
      assert.ok(performance.now() - started < 2 * 200 + 500);
    } finally {
      await device.close();
    }
  });

  it('scanSubnet lists the open hosts of the subnet in address order, and only its hosts', async () => {
    const servers = await Promise.all(
      ['127.87.40.14', '127.87.40.9', '127.87.40.17'].map(async (host) => {
        const server = createServer((s) => s.end());
        await new Promise<void>((r) => server.listen(9100, host, r));
        return server;
      }),
    );
    try {
      const scan = await scanSubnet(parseCidr('127.87.40.8/29'), {
        timeoutMs: 300,
        concurrency: 3,
      });
      assert.equal(scan.cidr, '127.87.40.8/29');
      assert.equal(scan.probed, 6);
      assert.deepEqual(scan.open, ['127.87.40.9', '127.87.40.14']);
      assert.equal(scan.closed, 4);
      assert.equal(scan.timedOut, 0);
    } finally {
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    }
  });
});
