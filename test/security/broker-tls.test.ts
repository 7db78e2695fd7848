/**
 * Issue 13, item 10: broker TLS against a real TLS broker. Mosquitto gets a TLS listener (next to
 * its plain one, which the test's own service client uses) with certificates from a CA the test
 * makes with openssl in a temp dir (test/helpers/test-ca.ts). The agent is the real child process
 * (test/faults/harness.ts) with `mqtt.url` = `mqtts://localhost:PORT` and `mqtt.tls.caFile`.
 *
 * - the agent and the order service's publisher connect with the CA file; a signed instruction
 *   published through the publisher prints;
 * - a broker certificate from another CA, an expired one and one for another host name are each
 *   refused, the agent's log names the failed check, and it keeps trying. Meanwhile the broker
 *   holds an instruction for the agent's session that would print the moment the agent connected:
 *   nothing prints until Mosquitto is restarted with the good certificate, then exactly the
 *   genuine instructions print, once each;
 * - a broker with `require_certificate true` refuses the agent without a client certificate and
 *   with one from another CA, and accepts the configured `certFile`/`keyFile`;
 * - `doctor` names the failed check (unknown CA, expired, host name, client certificate required
 *   or refused) with a fix for each.
 *
 * Skipped, naming the Debian package, without mosquitto or openssl.
 */
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type CheckLine, runDoctor } from '../../src/cli/doctor.js';
import { MqttPublisher } from '../../src/mqtt/publisher.js';
import type { TlsCheck } from '../../src/mqtt/tls-failure.js';
import { FaultStore, type Json } from '../faults/harness.js';
import { Mosquitto, type MosquittoTls, skipWithoutMosquitto } from '../helpers/mosquitto.js';
import { type IssuedCertificate, skipWithoutOpenssl, TestCa } from '../helpers/test-ca.js';
import { waitFor } from '../helpers/waiting.js';

const DAY = 86_400_000;
const skip = skipWithoutMosquitto() || skipWithoutOpenssl();

describe('broker TLS against a Mosquitto TLS listener', { skip, timeout: 240_000 }, () => {
  let ca: TestCa;
  let otherCa: TestCa;
  let certs: Record<
    'good' | 'otherCa' | 'expired' | 'notYetValid' | 'otherHost',
    IssuedCertificate
  >;
  let client: IssuedCertificate;
  let foreignClient: IssuedCertificate;
  let broker: Mosquitto;
  let store: FaultStore;
  let publisher: MqttPublisher | null = null;

  const listener = (cert: IssuedCertificate, requireCertificate = false): MosquittoTls => ({
    caFile: ca.certFile,
    certFile: cert.certFile,
    keyFile: cert.keyFile,
    requireCertificate,
  });

  /** Restarts Mosquitto (same ports, persistent sessions) presenting these TLS settings. */
  async function brokerWith(tls: MosquittoTls): Promise<void> {
    broker.useTls(tls);
    await broker.restart();
  }

  /** The agent's log records from `from` (an offset into its output) on. */
  function agentLog(from: number): Json[] {
    return store.output
      .slice(from)
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Json);
  }

  const tlsFailures = (from: number, check: TlsCheck) =>
    agentLog(from).filter((r) => r.tlsCheck === check);

  /** Connections the broker saw on its TLS port since `from` (an offset into its log). */
  const tlsAttempts = (from: number) =>
    broker.log
      .slice(from)
      .match(new RegExp(`New connection from \\S+ on port ${broker.tlsPort}\\.`, 'g'))?.length ?? 0;

  /** Waits until the agent was refused twice for `check`: it failed, and it tried again. */
  async function refusedTwice(from: number, logFrom: number, check: TlsCheck): Promise<Json> {
    try {
      await waitFor(
        `two refused attempts (${check})`,
        () => tlsFailures(from, check).length >= 2 && tlsAttempts(logFrom) >= 2,
        30_000,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${store.tail()}\n${broker.log.slice(logFrom)}`);
    }
    return tlsFailures(from, check)[0]!;
  }

  /** The store the instruction is for, inside the signed param (print-protocol v1.1 §4). */
  const signedFor = (): Json => ({ storeId: store.storeId });

  /** Rewrites the agent's config file (read by the next agent start). */
  function editConfig(change: (config: Json) => void): void {
    const config = JSON.parse(readFileSync(store.configPath, 'utf8')) as Json;
    change(config);
    writeFileSync(store.configPath, JSON.stringify(config, null, 2), { mode: 0o600 });
  }

  before(async () => {
    ca = TestCa.create('store-broker');
    otherCa = TestCa.create('impostor');
    const now = Date.now();
    certs = {
      good: ca.issue({ name: 'broker', dns: ['localhost'], ips: ['127.0.0.1'] }),
      otherCa: otherCa.issue({ name: 'broker', dns: ['localhost'], ips: ['127.0.0.1'] }),
      expired: ca.issue({
        name: 'broker-expired',
        dns: ['localhost'],
        notBefore: new Date(now - 30 * DAY),
        notAfter: new Date(now - DAY),
      }),
      // What a Pi whose clock is behind sees.
      notYetValid: ca.issue({
        name: 'broker-future',
        dns: ['localhost'],
        notBefore: new Date(now + DAY),
        notAfter: new Date(now + 30 * DAY),
      }),
      otherHost: ca.issue({ name: 'broker-elsewhere', dns: ['broker.elsewhere.example'] }),
    };
    client = ca.issue({ name: 'agent-client', usage: 'client' });
    foreignClient = otherCa.issue({ name: 'agent-client', usage: 'client' });
    // The agent's client keys are secret files: 0600, as doctor and the agent want them.
    chmodSync(client.keyFile, 0o600);
    chmodSync(foreignClient.keyFile, 0o600);
    // Persistence: the agent's session (and what it holds) survives every restart below.
    broker = await Mosquitto.start({ persistence: true, tls: listener(certs.good) });
    store = await FaultStore.create({
      name: 'tls',
      broker,
      configure: (config) => {
        const mqtt = config.mqtt as Json;
        mqtt.url = broker.tlsUrl;
        mqtt.tls = { caFile: ca.certFile };
      },
    });
  });

  after(async () => {
    await publisher?.close();
    await store?.tearDown();
    await broker?.stop();
  });

  it('the agent and the service publisher connect with the CA file; a signed instruction prints', async () => {
    await store.startOnline();
    const connected = new Promise<void>((resolve) => {
      publisher = new MqttPublisher({
        url: broker.tlsUrl,
        topicPrefix: 'printer-agent/v1',
        clientId: 'order-service-tls',
        tls: { caFile: ca.certFile },
        onConnect: resolve,
      });
    });
    await connected;
    await publisher!.publish(store.storeId, store.envelope(store.instruction(1, {}, signedFor())));
    store.acked.add(store.orderNo(1));
    await store.waitForState(1, 'printed');
    assert.deepEqual(store.printedOrders(), [store.orderNo(1)]);
  });

  it('another CA, an expired certificate, another host name: refused, named, retried; nothing unverified prints', async () => {
    const cases = [
      { n: 2, cert: certs.otherCa, check: 'unknown-ca', says: /not signed by a trusted CA/ },
      { n: 3, cert: certs.expired, check: 'expired', says: /certificate has expired/ },
      {
        n: 4,
        cert: certs.otherHost,
        check: 'host-name',
        says: /for another host name than localhost \(it names DNS:broker\.elsewhere\.example\)/,
      },
    ] as const;
    for (const c of cases) {
      const from = store.output.length;
      const logFrom = broker.log.length;
      await brokerWith(listener(c.cert));
      // Held by the broker for the agent's persistent session: it would print on connecting.
      await store.publish(c.n, {}, signedFor());
      const first = await refusedTwice(from, logFrom, c.check);
      assert.equal(first.level, 50, 'logged as an error');
      assert.match(String(first.msg), /^broker TLS check failed \(/);
      assert.match(String(first.msg), c.says);
      assert.match(String(first.msg), /not connected, will retry$/);
      assert.match(String(first.fix), /mqtt\.(url|tls\.caFile)|certificate/);
      // The service's publisher refuses this broker too: nothing can be published through it.
      assert.equal(publisher!.connected, false, `${c.check}: the publisher did not connect`);
      await assert.rejects(publisher!.publish(store.storeId, 'x'), /broker not connected/);
      assert.deepEqual(store.eventsOf(c.n), [], `${c.check}: no job event, nothing received`);
      assert.deepEqual(store.printedOrders(), [store.orderNo(1)], `${c.check}: nothing printed`);
    }
    assert.equal(
      agentLog(0).filter((r) => r.msg === 'connected to the broker').length,
      1,
      'the agent connected only to the verified broker',
    );

    await brokerWith(listener(certs.good));
    for (const n of [2, 3, 4]) await store.waitForState(n, 'printed', 30_000);
    assert.deepEqual(
      [...store.printedOrders()].sort(),
      [1, 2, 3, 4].map((n) => store.orderNo(n)).sort(),
      'the genuine instructions, and nothing else',
    );
    store.assertInvariants();
    for (const prints of store.printsByOrder().values()) assert.equal(prints.length, 1);
  });

  it('a broker requiring client certificates refuses none and a foreign one, accepts certFile/keyFile', async () => {
    let from = store.output.length;
    let logFrom = broker.log.length;
    await brokerWith(listener(certs.good, true));
    const required = await refusedTwice(from, logFrom, 'client-certificate-required');
    assert.match(String(required.msg), /requires a client certificate and none is configured/);
    assert.match(String(required.fix), /mqtt\.tls\.certFile and mqtt\.tls\.keyFile/);
    await store.publish(5, {}, signedFor());

    await store.stopAgent();
    editConfig((config) => {
      (config.mqtt as Json).tls = { caFile: ca.certFile, ...foreignClient };
    });
    from = store.output.length;
    logFrom = broker.log.length;
    store.startAgent();
    const refused = await refusedTwice(from, logFrom, 'client-certificate-refused');
    assert.match(String(refused.msg), /refused our client certificate \(unknown ca\)/);
    assert.deepEqual(store.eventsOf(5), []);

    await store.stopAgent();
    editConfig((config) => {
      (config.mqtt as Json).tls = { caFile: ca.certFile, ...client };
    });
    await store.startOnline();
    await store.waitForState(5, 'printed', 30_000);
    await store.publish(6, {}, signedFor());
    await store.waitForState(6, 'printed');
    store.assertInvariants();
  });

  describe('doctor names the failed check and its fix', () => {
    /** The broker line of `doctor` for the agent's config with these TLS settings. */
    async function brokerCheck(tls: Json, url = broker.tlsUrl): Promise<CheckLine> {
      editConfig((config) => {
        (config.mqtt as Json).tls = tls;
        (config.mqtt as Json).url = url;
        // Only the broker line matters here: a printer that answers at once.
        (config.printers as Json[])[0]!.url = 'tcp://127.0.0.1:1';
      });
      const lines = await runDoctor({ configPath: store.configPath });
      const line = lines.find((l) => l.name === 'broker');
      assert.ok(line, JSON.stringify(lines));
      return line;
    }

    const cases: {
      what: string;
      broker: () => MosquittoTls;
      tls: () => Json;
      url?: () => string;
      check: TlsCheck | null;
      fix: RegExp;
    }[] = [
      {
        what: 'a verified broker',
        broker: () => listener(certs.good),
        tls: () => ({ caFile: ca.certFile }),
        check: null,
        fix: /^$/,
      },
      {
        what: 'a certificate from another CA',
        broker: () => listener(certs.otherCa),
        tls: () => ({ caFile: ca.certFile }),
        check: 'unknown-ca',
        fix: /set mqtt\.tls\.caFile to the CA certificate that signed the broker certificate/,
      },
      {
        what: 'an expired certificate',
        broker: () => listener(certs.expired),
        tls: () => ({ caFile: ca.certFile }),
        check: 'expired',
        fix: /renew the broker's certificate/,
      },
      {
        what: 'a certificate not valid yet (or a clock behind)',
        broker: () => listener(certs.notYetValid),
        tls: () => ({ caFile: ca.certFile }),
        check: 'not-yet-valid',
        fix: /check this machine's clock \(timedatectl/,
      },
      {
        what: 'a certificate for another host name',
        broker: () => listener(certs.otherHost),
        tls: () => ({ caFile: ca.certFile }),
        check: 'host-name',
        fix: /put a host name the certificate names into mqtt\.url/,
      },
      {
        what: 'no client certificate where one is required',
        broker: () => listener(certs.good, true),
        tls: () => ({ caFile: ca.certFile }),
        check: 'client-certificate-required',
        fix: /set mqtt\.tls\.certFile and mqtt\.tls\.keyFile/,
      },
      {
        what: 'a client certificate the broker refuses',
        broker: () => listener(certs.good, true),
        tls: () => ({ caFile: ca.certFile, ...foreignClient }),
        check: 'client-certificate-refused',
        fix: /check mqtt\.tls\.certFile and mqtt\.tls\.keyFile: a certificate issued by the CA the broker trusts/,
      },
      {
        // A port that answers in plain text (here a web server's reply); Mosquitto's own plain
        // port only resets the connection, which says nothing about why.
        what: 'mqtts:// to a port that does not speak TLS',
        broker: () => listener(certs.good),
        tls: () => ({ caFile: ca.certFile }),
        url: () => `mqtts://localhost:${(plain.address() as AddressInfo).port}`,
        check: 'not-tls',
        fix: /use the TLS port of the broker in mqtt\.url/,
      },
      {
        what: 'the configured client certificate',
        broker: () => listener(certs.good, true),
        tls: () => ({ caFile: ca.certFile, ...client }),
        check: null,
        fix: /^$/,
      },
    ];

    const plainSockets = new Set<Socket>();
    const plain = createServer((socket) => {
      plainSockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => plainSockets.delete(socket));
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    });

    before(async () => {
      // doctor connects as `<clientId>-doctor`; the agent is stopped so only doctor connects.
      await store.stopAgent();
      await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    });

    after(async () => {
      for (const socket of plainSockets) socket.destroy();
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    });

    for (const c of cases) {
      it(c.what, async () => {
        await brokerWith(c.broker());
        const line = await brokerCheck(c.tls(), c.url?.());
        if (c.check === null) {
          assert.equal(line.status, 'ok', JSON.stringify(line));
          assert.match(line.detail, /: connected$/);
          return;
        }
        assert.equal(line.status, 'FAIL', JSON.stringify(line));
        assert.ok(
          line.detail.includes(`TLS check failed (${c.check}): `),
          `${c.check} named in: ${line.detail}`,
        );
        assert.match(line.fix ?? '', c.fix);
      });
    }
  });
});
