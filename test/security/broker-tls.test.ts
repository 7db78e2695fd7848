/**
 * Issue 13, item 10: broker TLS against a real TLS broker. Mosquitto gets a TLS listener (next to
 * its plain one, which the test's own service client uses) with certificates from a CA the test
 * makes with openssl in a temp dir (test/helpers/test-ca.ts). The agent is the real child process
 * (test/faults/harness.ts) with `mqtt.url` = `mqtts://localhost:PORT` and `mqtt.tls.caFile`.
 *
 * - the agent and the order service's publisher connect with the CA file; a signed instruction
 *   published through the publisher prints;
 * - a broker certificate from another CA, an expired one and one for another host name are each
 *   refused, the agent's log names the failed check, and it keeps trying; the service's
 *   publisher tries too and is refused (its own log has the TLS error). Meanwhile the broker
 *   holds an instruction for the agent's session that would print the moment the agent connected:
 *   nothing prints until Mosquitto is restarted with the good certificate, then exactly the
 *   genuine instructions print, once each;
 * - a broker with `require_certificate true` refuses the agent without a client certificate and
 *   with one from another CA, and accepts the configured `certFile`/`keyFile`;
 * - `doctor` names the failed check (unknown CA, expired, host name, client certificate required
 *   or refused) with a fix for each.
 *
 * Each test has a store (and agent) of its own and sets the broker's certificate it needs; the
 * broker is shared. Skipped, naming the Debian package, without mosquitto or openssl.
 */
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it, type TestContext } from 'node:test';
import { Mosquitto, type MosquittoTls, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { type CheckLine, runDoctor } from '../../src/cli/doctor.js';
import type { TlsCheck } from '../../src/host/tls-failure.js';
import { createLogger } from '../../src/logging.js';
import { MqttPublisher, type PublisherTls } from '../../src/mqtt/publisher.js';
import { FaultStore, type Json } from '../faults/harness.js';
import { JsonLog, type LogRecord } from '../helpers/json-log.js';
import { type IssuedCertificate, skipWithoutOpenssl, TestCa } from '../helpers/test-ca.js';

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
  /** The TLS settings Mosquitto runs with now (it restarts only for other ones). */
  let brokerTls = '';
  const stores: FaultStore[] = [];

  const listener = (cert: IssuedCertificate, requireCertificate = false): MosquittoTls => ({
    caFile: ca.certFile,
    certFile: cert.certFile,
    keyFile: cert.keyFile,
    requireCertificate,
  });

  /** Restarts Mosquitto (same ports, persistent sessions) presenting these TLS settings. */
  async function brokerWith(tls: MosquittoTls): Promise<void> {
    const key = JSON.stringify(tls);
    if (key === brokerTls) return;
    broker.useTls(tls);
    await broker.restart();
    brokerTls = key;
  }

  /**
   * A store of this test whose agent reaches the broker over TLS with the CA file; its agent is
   * stopped when the test ends, so its retries do not reach the next test's broker.
   */
  async function tlsStore(t: TestContext | null, name: string): Promise<FaultStore> {
    const s = await FaultStore.create({
      name,
      broker,
      configure: (config) => {
        const mqtt = config.mqtt as Json;
        mqtt.url = broker.tlsUrl;
        mqtt.tls = { caFile: ca.certFile };
      },
    });
    stores.push(s);
    t?.after(() => s.stopAgent());
    return s;
  }

  /** Connections the broker saw on its TLS port since `from` (an offset into its log). */
  const tlsAttempts = (from: number) =>
    broker.log
      .slice(from)
      .match(new RegExp(`New connection from \\S+ on port ${broker.tlsPort}\\.`, 'g'))?.length ?? 0;

  /**
   * Waits until the agent of `s` was refused twice for `check` (`failures`, its log records of
   * that check): it failed, and it tried again.
   */
  async function refusedTwice(
    s: FaultStore,
    failures: () => readonly LogRecord[],
    logFrom: number,
    check: TlsCheck,
  ): Promise<LogRecord> {
    try {
      await waitFor(
        `two refused attempts (${check})`,
        () => failures().length >= 2 && tlsAttempts(logFrom) >= 2,
        30_000,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${s.tail()}\n${broker.log.slice(logFrom)}`);
    }
    return failures()[0]!;
  }

  /**
   * The order service's publisher, as the service runs it, on the TLS port; its log (where it
   * reports mqtt.js errors, `broker error`) is read by the test. Closed when the test ends.
   */
  function servicePublisher(t: TestContext, clientId: string, tls: PublisherTls) {
    let text = '';
    const destination = new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        text += String(chunk);
        done();
      },
    });
    const publisher = new MqttPublisher(
      { url: broker.tlsUrl, topicPrefix: 'printer-agent/v1', clientId, tls },
      createLogger({ level: 'debug', service: 'order-service', destination }),
    );
    let closing: Promise<void> | undefined;
    const close = () => (closing ??= publisher.close());
    t.after(close);
    const errors = new JsonLog(() => text).select((r) => r.msg === 'broker error');
    return { publisher, errors, close };
  }

  /** Rewrites the agent's config file (read by the next agent start). */
  function editConfig(s: FaultStore, change: (config: Json) => void): void {
    const config = JSON.parse(readFileSync(s.configPath, 'utf8')) as Json;
    change(config);
    writeFileSync(s.configPath, JSON.stringify(config, null, 2), { mode: 0o600 });
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
    // Persistence: an agent's session (and what it holds) survives every restart below.
    broker = await Mosquitto.start({ persistence: true, tls: listener(certs.good) });
    brokerTls = JSON.stringify(listener(certs.good));
  });

  after(async () => {
    for (const s of stores.splice(0)) await s.tearDown();
    await broker?.stop();
  });

  it('the agent and the service publisher connect with the CA file; a signed instruction prints', async (t) => {
    await brokerWith(listener(certs.good));
    const s = await tlsStore(t, 'tls');
    await s.startOnline();
    const { publisher } = servicePublisher(t, 'order-service-tls', { caFile: ca.certFile });
    await waitFor('the publisher connected over TLS', () => publisher.connected, 20_000);
    await publisher.publish(s.storeId, s.envelope(s.instruction(1)));
    s.acked.add(s.orderNo(1));
    await s.waitForState(1, 'printed');
    assert.deepEqual(s.printedOrders(), [s.orderNo(1)]);
  });

  it('another CA, an expired certificate, another host name: refused, named, retried; nothing unverified prints', async (t) => {
    const cases = [
      {
        n: 1,
        cert: certs.otherCa,
        check: 'unknown-ca',
        says: /not signed by a trusted CA/,
        publisherSays:
          /self.signed certificate in certificate chain|unable to (verify the first certificate|get local issuer certificate)/,
      },
      {
        n: 2,
        cert: certs.expired,
        check: 'expired',
        says: /certificate has expired/,
        publisherSays: /certificate has expired/,
      },
      {
        n: 3,
        cert: certs.otherHost,
        check: 'host-name',
        says: /for another host name than localhost \(it names DNS:broker\.elsewhere\.example\)/,
        publisherSays: /Hostname\/IP does not match certificate's altnames/,
      },
    ] as const;
    await brokerWith(listener(certs.good));
    const s = await tlsStore(t, 'tls-refused');
    // Connected once: its persistent session will hold what is published for it meanwhile.
    await s.startOnline();
    const log = new JsonLog(() => s.output);
    for (const c of cases) {
      const failures = log.select((r) => r.tlsCheck === c.check);
      const logFrom = broker.log.length;
      await brokerWith(listener(c.cert));
      // Held by the broker for the agent's persistent session: it would print on connecting.
      await s.publish(c.n);
      const first = await refusedTwice(s, failures, logFrom, c.check);
      assert.equal(first.level, 50, 'logged as an error');
      assert.match(String(first.msg), /^broker TLS check failed \(/);
      assert.match(String(first.msg), c.says);
      assert.match(String(first.msg), /not connected, will retry$/);
      assert.match(String(first.fix), /mqtt\.(url|tls\.caFile)|certificate/);

      // The service's publisher refuses this broker too: it tries, TLS says no, nothing goes out.
      const service = servicePublisher(t, `order-service-${c.check}`, { caFile: ca.certFile });
      await waitFor(
        `the publisher refused the broker (${c.check})`,
        () => service.errors().some((r) => c.publisherSays.test(String(r.err))),
        20_000,
      );
      assert.equal(service.publisher.connected, false, `${c.check}: the publisher connected`);
      await assert.rejects(service.publisher.publish(s.storeId, 'x'), /broker not connected/);
      await service.close();

      assert.deepEqual(s.eventsOf(c.n), [], `${c.check}: no job event, nothing received`);
      assert.deepEqual(s.printedOrders(), [], `${c.check}: nothing printed`);
    }
    assert.equal(
      log.records().filter((r) => r.msg === 'connected to the broker').length,
      1,
      'the agent connected only to the verified broker',
    );

    await brokerWith(listener(certs.good));
    for (const n of [1, 2, 3]) await s.waitForState(n, 'printed', 30_000);
    assert.deepEqual(
      [...s.printedOrders()].sort(),
      [1, 2, 3].map((n) => s.orderNo(n)).sort(),
      'the genuine instructions, and nothing else',
    );
    s.assertInvariants();
    for (const prints of s.printsByOrder().values()) assert.equal(prints.length, 1);
  });

  it('a broker requiring client certificates refuses none and a foreign one, accepts certFile/keyFile', async (t) => {
    await brokerWith(listener(certs.good));
    const s = await tlsStore(t, 'tls-client');
    await s.startOnline();
    const log = new JsonLog(() => s.output);
    let logFrom = broker.log.length;
    await brokerWith(listener(certs.good, true));
    const required = await refusedTwice(
      s,
      log.select((r) => r.tlsCheck === 'client-certificate-required'),
      logFrom,
      'client-certificate-required',
    );
    assert.match(String(required.msg), /requires a client certificate and none is configured/);
    assert.match(String(required.fix), /mqtt\.tls\.certFile and mqtt\.tls\.keyFile/);
    await s.publish(1);

    await s.stopAgent();
    editConfig(s, (config) => {
      (config.mqtt as Json).tls = { caFile: ca.certFile, ...foreignClient };
    });
    logFrom = broker.log.length;
    const refusedRecords = log.select((r) => r.tlsCheck === 'client-certificate-refused');
    s.startAgent();
    const refused = await refusedTwice(s, refusedRecords, logFrom, 'client-certificate-refused');
    assert.match(String(refused.msg), /refused our client certificate \(unknown ca\)/);
    assert.deepEqual(s.eventsOf(1), []);

    await s.stopAgent();
    editConfig(s, (config) => {
      (config.mqtt as Json).tls = { caFile: ca.certFile, ...client };
    });
    await s.startOnline();
    await s.waitForState(1, 'printed', 30_000);
    await s.publish(2);
    await s.waitForState(2, 'printed');
    s.assertInvariants();
  });

  describe('doctor names the failed check and its fix', () => {
    /** A store of its own whose agent never runs: only `doctor` connects, as `<clientId>-doctor`. */
    let store: FaultStore;

    /** The broker line of `doctor` for the agent's config with these TLS settings. */
    async function brokerCheck(tls: Json, url = broker.tlsUrl): Promise<CheckLine> {
      editConfig(store, (config) => {
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
      store = await tlsStore(null, 'tls-doctor');
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
