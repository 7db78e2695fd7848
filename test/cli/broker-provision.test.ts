/**
 * `printer-agent broker provision` and `broker acl` (issue 19): per-store broker credentials. The
 * output is put into a real Mosquitto (password_file, acl_file) and attacked: a store reaches only
 * its own topics. Then the real agent runs under a store's credentials and does all its work,
 * proving the rules are sufficient, not only restrictive.
 *
 * Absence is proven with a sentinel: the forbidden message goes first, a permitted one after it on
 * a topic the same receiver reads; once the sentinel arrived, anything the broker had let through
 * would have arrived before it (one broker, acknowledged in order).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  mkdtempSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { Mosquitto, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { eventually, next, waitFor } from '../../harness/waiting.js';
import type { Provisioned } from '../../src/cli/broker.js';
import { renderText } from '../../src/emulator/index.js';
import {
  MOSQUITTO_PBKDF2_ITERATIONS,
  verifyMosquittoHash,
} from '../../src/mqtt/mosquitto-password.js';
import { probeBroker } from '../../src/mqtt/probe.js';
import { MqttPublisher } from '../../src/mqtt/publisher.js';
import { buildEnvelope } from '../../src/protocol/envelope.js';
import { DEFAULT_TOPIC_PREFIX, topics } from '../../src/protocol/print-protocol.js';
import { generateKeyPair, parseKey } from '../../src/protocol/signing.js';
import { deriveStoreId } from '../../src/protocol/store-id.js';
import { formatTimestamp } from '../../src/protocol/time.js';
import { type AgentRig, startAgentRig } from '../helpers/agent-rig.js';
import { runCliInProcess } from '../helpers/cli.js';

const APP_ID = 'A-broker-acl';
const KEY_A = 'sk-store-a-secret-9f1e-do-not-leak';
const KEY_B = 'sk-store-b-secret-44c2-do-not-leak';
const SERVICE = 'order-service.test';
const ID_A = deriveStoreId(APP_ID, KEY_A);
const ID_B = deriveStoreId(APP_ID, KEY_B);
const TA = topics(DEFAULT_TOPIC_PREFIX, ID_A);
const TB = topics(DEFAULT_TOPIC_PREFIX, ID_B);

/** A directory Mosquitto can read after dropping to its own user (when the tests run as root). */
function worldReadableDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `pa-${name}-`));
  chmodSync(dir, 0o755);
  return dir;
}

function keyFile(dir: string, name: string, key: string): string {
  const path = join(dir, name);
  writeFileSync(path, `${key}\n`, { mode: 0o600 });
  return path;
}

async function provisionJson(args: string[]): Promise<Provisioned> {
  const r = await runCliInProcess(['broker', 'provision', ...args, '--format', 'json']);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Provisioned;
}

describe('broker provision and broker acl: the output', () => {
  const dir = worldReadableDir('provision');
  const keyA = keyFile(dir, 'store-a.key', KEY_A);

  it('derives the storeId from the store key as the agent does, and never shows the key', async () => {
    for (const format of ['mosquitto', 'emqx', 'json']) {
      const r = await runCliInProcess([
        'broker',
        'provision',
        '--app-id',
        APP_ID,
        '--store-key-file',
        keyA,
        '--format',
        format,
      ]);
      assert.equal(r.status, 0, r.stderr);
      assert.ok(r.stdout.includes(ID_A), format);
      assert.ok(
        !r.stdout.includes(KEY_A) && !r.stderr.includes(KEY_A),
        `${format}: store key shown`,
      );
    }
    const p = await provisionJson(['--app-id', APP_ID, '--store-key-file', keyA]);
    assert.equal(p.storeId, ID_A);
    assert.equal(p.username, ID_A);
    assert.deepEqual(p.topics, TA);
    // The password line holds the generated password, hashed: the name, then Mosquitto's $7$.
    assert.ok(p.password && p.password.length >= 32);
    const [user, hash] = p.mosquitto.passwordLine.split(':') as [string, string];
    assert.equal(user, ID_A);
    assert.ok(verifyMosquittoHash(hash, p.password));
    assert.ok(!verifyMosquittoHash(hash, `${p.password}x`));
    assert.ok(!p.mosquitto.passwordLine.includes(p.password));
    // Random each time: two stores never share a password by accident.
    const again = await provisionJson(['--store-id', ID_A]);
    assert.notEqual(again.password, p.password);
  });

  it('writes the generated password to a new 0600 file instead of showing it, and never overwrites one', async () => {
    const file = join(dir, 'written-password');
    const r = await runCliInProcess([
      'broker',
      'provision',
      '--store-id',
      'store-w',
      '--write-password',
      file,
    ]);
    assert.equal(r.status, 0, r.stderr);
    const password = readFileSync(file, 'utf8').trim();
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.ok(!r.stdout.includes(password), 'a written password is not shown');
    const line = /^store-w:(\S+)$/m.exec(r.stdout);
    assert.ok(line?.[1] && verifyMosquittoHash(line[1], password));

    const second = await runCliInProcess([
      'broker',
      'provision',
      '--store-id',
      'store-w',
      '--write-password',
      file,
    ]);
    assert.equal(second.status, 1);
    assert.match(second.stderr, /^INPUT_INVALID: --write-password .*: already exists/);
    assert.equal(readFileSync(file, 'utf8').trim(), password, 'the first password is kept');
  });

  it('hashes a supplied password of at least 16 characters, and refuses a shorter one', async () => {
    const long = join(dir, 'long-password');
    writeFileSync(long, 'correct-horse-battery-staple\n', { mode: 0o600 });
    const p = await provisionJson(['--store-id', 'store-s', '--password-file', long]);
    assert.equal(p.password, undefined, 'a supplied password is not echoed');
    assert.ok(
      verifyMosquittoHash(
        p.mosquitto.passwordLine.split(':')[1] as string,
        'correct-horse-battery-staple',
      ),
    );

    const short = join(dir, 'short-password');
    writeFileSync(short, 'tooshort-9\n', { mode: 0o600 });
    const r = await runCliInProcess([
      'broker',
      'provision',
      '--store-id',
      'store-s',
      '--password-file',
      short,
    ]);
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /^INPUT_INVALID: --password-file: the password must be at least 16 characters/,
    );
    assert.ok(!r.stderr.includes('tooshort-9'));
  });

  it('refuses bad input naming the option and the rule, never echoing the store key', async () => {
    const cases: Array<[string[], number, RegExp]> = [
      [
        ['--store-id', 'a/b'],
        1,
        /^INPUT_INVALID: --store-id: must be 1 to 64 letters, digits, dash or underscore/,
      ],
      [['--store-id', 'x+'], 1, /^INPUT_INVALID: --store-id: /],
      [
        [],
        1,
        /^INPUT_INVALID: --store-id, --store-key-file \(with --app-id\) or --service-user: give exactly one/,
      ],
      [['--store-id', 'a', '--service-user', 'svc.x'], 1, /give exactly one/],
      [
        ['--store-key-file', keyA],
        1,
        /^INPUT_INVALID: --app-id: is required with --store-key-file/,
      ],
      [
        ['--store-id', 'a', '--app-id', APP_ID],
        1,
        /^INPUT_INVALID: --app-id: only with --store-key-file/,
      ],
      // print-protocol v1.2 §10: the config's rule, so the storeId is the agent's.
      [
        ['--app-id', 'A:1', '--store-key-file', keyA],
        1,
        /^INPUT_INVALID: --app-id: must not contain ':' \(the store id is sha256\(appId:storeKey\)\)/,
      ],
      [
        ['--app-id', 'A'.repeat(65), '--store-key-file', keyA],
        1,
        /^INPUT_INVALID: --app-id: must be 1 to 64 characters/,
      ],
      [['--store-id', 'a', '--prefix', 'pre%c/v1'], 2, /--prefix.*must be 1 to 8 topic levels/],
      [['--service-user', 'order-service'], 2, /must contain a dot or an @/],
      [['--store-id', 'a', '--format', 'yaml'], 2, /must be one of mosquitto, emqx, json/],
    ];
    for (const [args, status, message] of cases) {
      const r = await runCliInProcess(['broker', 'provision', ...args]);
      assert.equal(r.status, status, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message, args.join(' '));
    }
    // A store key file that breaks the rule is named, its content is not.
    const tooLong = keyFile(dir, 'long.key', `${KEY_A}${'k'.repeat(100)}`);
    const r = await runCliInProcess([
      'broker',
      'provision',
      '--app-id',
      APP_ID,
      '--store-key-file',
      tooLong,
    ]);
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /^INPUT_INVALID: --store-key-file: the first line of .*long\.key must be 1 to 100 characters/,
    );
    assert.ok(!r.stderr.includes(KEY_A));
  });

  it('writes its hashes in the format of mosquitto_passwd, which it verifies', (t) => {
    const tool = spawnSync('mosquitto_passwd', ['-h'], { stdio: 'ignore' });
    if (tool.error) return t.skip('needs mosquitto_passwd (Debian package mosquitto)');
    const file = join(dir, 'mosquitto_passwd.txt');
    const made = spawnSync(
      'mosquitto_passwd',
      ['-c', '-b', file, 'someone', 'pass-from-the-tool-1'],
      {
        encoding: 'utf8',
      },
    );
    assert.equal(made.status, 0, made.stderr);
    const [user, hash] = readFileSync(file, 'utf8').trim().split(':') as [string, string];
    assert.equal(user, 'someone');
    assert.ok(hash.startsWith(`$7$${MOSQUITTO_PBKDF2_ITERATIONS}$`), hash);
    assert.ok(verifyMosquittoHash(hash, 'pass-from-the-tool-1'));
    assert.ok(!verifyMosquittoHash(hash, 'pass-from-the-tool-2'));
  });

  it('the ACL rules come from the protocol topics, for Mosquitto and for EMQX', async () => {
    const mosq = await runCliInProcess(['broker', 'acl', '--service-user', SERVICE]);
    assert.equal(mosq.status, 0, mosq.stderr);
    const rules = mosq.stdout.split('\n').filter((l) => l && !l.startsWith('#'));
    const mine = topics(DEFAULT_TOPIC_PREFIX, '%u');
    const any = topics(DEFAULT_TOPIC_PREFIX, '+');
    assert.deepEqual(rules, [
      `pattern read ${mine.print}`,
      `pattern read ${mine.command}`,
      `pattern write ${mine.job}`,
      `pattern write ${mine.status}`,
      `user ${SERVICE}`,
      `topic write ${any.print}`,
      `topic write ${any.command}`,
      `topic read ${any.job}`,
      `topic read ${any.status}`,
    ]);
    const emqx = await runCliInProcess([
      'broker',
      'acl',
      '--service-user',
      SERVICE,
      '--format',
      'emqx',
    ]);
    assert.equal(emqx.status, 0, emqx.stderr);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: EMQX's placeholder, not JavaScript's
    const placeholder = topics(DEFAULT_TOPIC_PREFIX, '${username}');
    assert.deepEqual(
      emqx.stdout.split('\n').filter((l) => l && !l.startsWith('%%')),
      [
        `{allow, all, subscribe, ["${placeholder.print}", "${placeholder.command}"]}.`,
        `{allow, all, publish, ["${placeholder.job}", "${placeholder.status}"]}.`,
        `{allow, {username, "${SERVICE}"}, publish, ["${any.print}", "${any.command}"]}.`,
        `{allow, {username, "${SERVICE}"}, subscribe, ["${any.job}", "${any.status}"]}.`,
        '{deny, all}.',
      ],
    );
    // Another prefix moves every rule.
    const other = await runCliInProcess([
      'broker',
      'acl',
      '--service-user',
      SERVICE,
      '--prefix',
      'acme/pa',
    ]);
    assert.match(other.stdout, /^pattern read acme\/pa\/%u\/print$/m);
    assert.doesNotMatch(other.stdout, /printer-agent\/v1/);
  });
});

interface Seen {
  topic: string;
  payload: string;
}

/** One connection attempt: resolves on CONNACK, rejects with mqtt.js's error when refused. */
function connectOnce(url: string, options: IClientOptions): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(url, { reconnectPeriod: 0, connectTimeout: 10_000, ...options });
    client.once('connect', () => resolve(client));
    // Always listened to: an error event nobody listens to would throw. After CONNACK the
    // promise is settled and these do nothing.
    client.on('error', (error) => {
      client.end(true);
      reject(error);
    });
    client.once('close', () => reject(new Error('closed before CONNACK')));
  });
}

/** The broker's refusal code: 135 "Not authorized" on MQTT 5, 5 on MQTT 3.1.1. */
const NOT_AUTHORIZED = { 5: 135, 4: 5 } as const;

/** A broker with stores A and B and the service provisioned by the CLI, as an operator would. */
async function provisionedBroker(dir: string): Promise<{
  broker: Mosquitto;
  a: Provisioned & { password: string };
  b: Provisioned & { password: string };
  service: Provisioned & { password: string };
  passwordFile: string;
}> {
  const keyA = keyFile(dir, 'a.key', KEY_A);
  const keyB = keyFile(dir, 'b.key', KEY_B);
  // Store A's password goes to a file, as it would to the store's mqtt.passwordFile.
  const aPasswordFile = join(dir, 'a-password');
  const a = await provisionJson([
    '--app-id',
    APP_ID,
    '--store-key-file',
    keyA,
    '--write-password',
    aPasswordFile,
  ]);
  const b = await provisionJson(['--app-id', APP_ID, '--store-key-file', keyB]);
  const service = await provisionJson(['--service-user', SERVICE]);
  const passwordFile = join(dir, 'passwords');
  writeFileSync(
    passwordFile,
    [a, b, service].map((p) => `${p.mosquitto.passwordLine}\n`).join(''),
    {
      mode: 0o644,
    },
  );
  const acl = await runCliInProcess(['broker', 'acl', '--service-user', SERVICE]);
  assert.equal(acl.status, 0, acl.stderr);
  const aclFile = join(dir, 'acl');
  writeFileSync(aclFile, acl.stdout, { mode: 0o644 });
  const broker = await Mosquitto.start({ auth: { passwordFile, aclFile } });
  const withPassword = (p: Provisioned, password: string | undefined) => {
    assert.ok(password);
    return { ...p, password };
  };
  return {
    broker,
    a: withPassword(a, readFileSync(aPasswordFile, 'utf8').trim()),
    b: withPassword(b, b.password),
    service: withPassword(service, service.password),
    passwordFile,
  };
}

for (const protocolVersion of [5, 4] as const) {
  describe(`per-store credentials on a real Mosquitto, MQTT ${protocolVersion === 5 ? '5' : '3.1.1'}`, {
    skip: skipWithoutMosquitto(),
  }, () => {
    let setup: Awaited<ReturnType<typeof provisionedBroker>>;
    const clients: MqttClient[] = [];
    let dir: string;

    /** A connected client of `who` that records everything it receives. */
    async function as(
      who: { username: string; password: string },
      options: IClientOptions = {},
    ): Promise<{ client: MqttClient; seen: Seen[] }> {
      const seen: Seen[] = [];
      const client = await connectOnce(setup.broker.url, {
        protocolVersion,
        username: who.username,
        password: who.password,
        ...options,
      });
      clients.push(client);
      client.on('message', (topic, payload) => seen.push({ topic, payload: payload.toString() }));
      return { client, seen };
    }
    const got = (seen: Seen[], payload: string) => seen.some((m) => m.payload === payload);
    const publish = (client: MqttClient, topic: string, payload: string, retain = false) =>
      client.publishAsync(topic, payload, { qos: 1, retain });

    before(async () => {
      dir = worldReadableDir('acl-broker');
      setup = await provisionedBroker(dir);
    });

    after(async () => {
      for (const client of clients) client.end(true);
      await setup?.broker.stop();
    });

    it("a store receives its own instructions and nothing on another store's topics, whatever it subscribes to", async () => {
      const a = await as(setup.a);
      const b = await as(setup.b);
      const service = await as(setup.service);
      const granted = await a.client.subscribeAsync(
        [TA.print, TA.command, TB.print, TB.command, `${DEFAULT_TOPIC_PREFIX}/+/print`, '#'],
        { qos: 1 },
      );
      // Its own topics are granted. Mosquitto grants the others too (it checks read access when
      // it delivers, not at SUBSCRIBE); a broker that refuses them is just as right.
      assert.equal(granted[0]?.qos, 1);
      assert.equal(granted[1]?.qos, 1);
      await b.client.subscribeAsync([TB.print, TB.command], { qos: 1 });

      await publish(service.client, TB.print, 'for-b-print');
      await publish(service.client, TB.command, 'for-b-command');
      await publish(service.client, TA.command, 'for-a-command');
      await publish(service.client, TA.print, 'sentinel-a');
      await waitFor('the sentinel at store A', () => got(a.seen, 'sentinel-a'));
      assert.ok(got(a.seen, 'for-a-command'));
      assert.deepEqual(
        a.seen.filter((m) => m.payload.startsWith('for-b') || m.topic.includes(ID_B)),
        [],
        'store A received store B messages',
      );
      // They were published, and B got them: the broker refused them to A only.
      await waitFor(
        "store B's messages at B",
        () => got(b.seen, 'for-b-print') && got(b.seen, 'for-b-command'),
      );
    });

    it("a store cannot publish on another store's job or status, retain a status there, or leave its last will there", async () => {
      const service = await as(setup.service);
      await service.client.subscribeAsync(
        [`${DEFAULT_TOPIC_PREFIX}/+/job`, `${DEFAULT_TOPIC_PREFIX}/+/status`],
        { qos: 1 },
      );
      const a = await as(setup.a);
      for (const [topic, retain] of [
        [TB.job, false],
        [TB.status, true],
      ] as const) {
        const sent = publish(a.client, topic, `forged-${topic}`, retain);
        if (protocolVersion === 5) {
          // MQTT 5 tells the publisher: PUBACK with 0x87 Not authorized.
          await assert.rejects(sent, (error: { code?: number }) => error.code === 135);
        } else {
          await sent; // MQTT 3.1.1 has no way to say no: the broker acks and drops it.
        }
      }
      await publish(a.client, TA.status, 'a-retained', true);
      await publish(a.client, TA.job, 'sentinel-a-job');
      await waitFor('the sentinel at the service', () => got(service.seen, 'sentinel-a-job'));
      assert.ok(got(service.seen, 'a-retained'));
      assert.deepEqual(
        service.seen.filter((m) => m.topic.includes(ID_B)),
        [],
        'forged events reached the service',
      );

      // Nothing retained under B: a new subscriber gets A's retained status (asked after B's),
      // and none for B.
      const late = await as(setup.service);
      await late.client.subscribeAsync([TB.status, TA.status], { qos: 1 });
      await waitFor("A's retained status", () => got(late.seen, 'a-retained'));
      assert.deepEqual(
        late.seen.filter((m) => m.topic === TB.status),
        [],
      );

      // Last wills: the same connection drop, with the will on A's status (delivered: the control)
      // and on B's (refused). Taking the client id over after the drop makes the broker finish
      // the old connection, will included, before the sentinel.
      for (const target of [TA, TB]) {
        const clientId = `will-${target === TA ? 'own' : 'other'}-${protocolVersion}`;
        const payload = `will-to-${target === TA ? 'own' : 'other'}`;
        const w = await as(setup.a, {
          clientId,
          will: { topic: target.status, payload: Buffer.from(payload), qos: 1, retain: true },
        });
        w.client.stream.destroy();
        const next = await as(setup.a, { clientId });
        await publish(next.client, TA.job, `sentinel-${payload}`);
        await waitFor('the sentinel after the will', () =>
          got(service.seen, `sentinel-${payload}`),
        );
      }
      assert.ok(
        got(service.seen, 'will-to-own'),
        'the control will on its own status did not arrive',
      );
      assert.ok(!got(service.seen, 'will-to-other'), "A's last will reached B's status");
    });

    it("a store cannot publish on another store's print or command topics, nor read its job or status", async () => {
      const a = await as(setup.a);
      const b = await as(setup.b);
      const service = await as(setup.service);
      await b.client.subscribeAsync([TB.print, TB.command], { qos: 1 });
      await service.client.subscribeAsync([TB.job, TB.status], { qos: 1 });

      // Writing: A forges an instruction and a command for B.
      for (const topic of [TB.print, TB.command]) {
        const sent = publish(a.client, topic, `forged-by-a-${topic}`);
        if (protocolVersion === 5) {
          await assert.rejects(sent, (error: { code?: number }) => error.code === 135, topic);
        } else {
          await sent; // acked and dropped (MQTT 3.1.1 cannot refuse a publish)
        }
      }
      await publish(service.client, TB.print, 'sentinel-b-print');
      await waitFor('the sentinel at store B', () => got(b.seen, 'sentinel-b-print'));
      assert.deepEqual(
        b.seen.filter((m) => m.payload.startsWith('forged-by-a')),
        [],
        "A's forged instruction or command reached store B",
      );

      // Reading: B's retained status is there before A subscribes, then B's events arrive.
      await publish(b.client, TB.status, 'b-status-retained', true);
      const granted = await a.client.subscribeAsync(
        [TB.job, TB.status, `${DEFAULT_TOPIC_PREFIX}/+/job`, `${DEFAULT_TOPIC_PREFIX}/+/status`],
        { qos: 1 },
      );
      assert.equal(granted.length, 4);
      await a.client.subscribeAsync([TA.command], { qos: 1 });
      await publish(b.client, TB.job, 'b-job-event');
      await publish(b.client, TB.status, 'b-status-live');
      // B's messages were published (the service reads them), then A's sentinel follows them.
      await waitFor(
        "B's events at the service",
        () =>
          got(service.seen, 'b-status-retained') &&
          got(service.seen, 'b-job-event') &&
          got(service.seen, 'b-status-live'),
      );
      await publish(service.client, TA.command, 'sentinel-a-command');
      await waitFor('the sentinel at store A', () => got(a.seen, 'sentinel-a-command'));
      assert.deepEqual(
        a.seen.filter((m) => m.topic.includes(ID_B)),
        [],
        "store A read store B's job or status",
      );
      // Nothing retained left under B for the tests after this one.
      await publish(b.client, TB.status, '', true);
    });

    it("refuses a wrong password, another store's password and anonymous clients", async () => {
      const refused = async (options: IClientOptions) => {
        await assert.rejects(
          connectOnce(setup.broker.url, { protocolVersion, ...options }),
          (error: { code?: number }) => {
            assert.equal(error.code, NOT_AUTHORIZED[protocolVersion]);
            return true;
          },
        );
      };
      await refused({ username: ID_A, password: `${setup.a.password}x` });
      await refused({ username: ID_A, password: setup.b.password });
      await refused({ username: SERVICE, password: setup.a.password });
      await refused({});
      await refused({ username: 'nobody.here', password: setup.a.password });
    });

    it("a store that takes another store's client id still reads none of its instructions", async () => {
      const session: IClientOptions = {
        clientId: `printer-agent-${ID_B}-${protocolVersion}`,
        clean: false,
        ...(protocolVersion === 5 ? { properties: { sessionExpiryInterval: 3600 } } : {}),
      };
      const b = await as(setup.b, session);
      await b.client.subscribeAsync([TB.print], { qos: 1 });
      await b.client.endAsync();
      const service = await as(setup.service);
      await publish(service.client, TB.print, 'queued-for-b');
      const a = await as(setup.a, session);
      await a.client.subscribeAsync([TA.print], { qos: 1 });
      await publish(service.client, TB.print, 'during-takeover-for-b');
      await publish(service.client, TA.print, 'sentinel-takeover');
      await waitFor('the sentinel at A', () => got(a.seen, 'sentinel-takeover'));
      assert.deepEqual(
        a.seen.filter((m) => m.topic === TB.print),
        [],
        "A read B's session",
      );
    });

    // Once is enough (the broker's files, not the protocol): only in the MQTT 5 suite. Not a skip,
    // which CI refuses.
    const onMqtt5 = protocolVersion === 5 ? it : () => undefined;
    onMqtt5(
      'a store added while the broker runs connects after a reload (SIGHUP); removed, it is cut off at the next',
      async () => {
        const c = await provisionJson(['--store-id', 'store-c-late']);
        const password = c.password as string;
        appendFileSync(setup.passwordFile, `${c.mosquitto.passwordLine}\n`);
        await assert.rejects(
          connectOnce(setup.broker.url, { protocolVersion, username: 'store-c-late', password }),
        );
        setup.broker.reload();
        const client = await eventually('store C accepted after SIGHUP', () =>
          connectOnce(setup.broker.url, { protocolVersion, username: 'store-c-late', password }),
        );
        clients.push(client);
        // And the shared pattern rules serve it at once: it writes its own status, nobody else's.
        await client.publishAsync(topics(DEFAULT_TOPIC_PREFIX, 'store-c-late').status, 'c', {
          qos: 1,
        });
        await assert.rejects(
          client.publishAsync(TA.status, 'c', { qos: 1 }),
          (e: { code?: number }) => e.code === 135,
        );

        // Revoked: its line removed and Mosquitto reloaded, the live connection is closed at once
        // and a new one refused (Mosquitto 2 authenticates connected clients again on reload).
        const closed = next(client, 'close');
        const lines = readFileSync(setup.passwordFile, 'utf8').split('\n');
        writeFileSync(
          setup.passwordFile,
          lines.filter((l) => !l.startsWith('store-c-late:')).join('\n'),
        );
        setup.broker.reload();
        await closed;
        await assert.rejects(
          connectOnce(setup.broker.url, { protocolVersion, username: 'store-c-late', password }),
          (e: { code?: number }) => e.code === 135,
        );
      },
    );
  });
}

/** For store A (v1.1 §4 storeId), created now in the host's zone (the agent's, no zone set). */
function instruction(n: number) {
  return {
    storeId: ID_A,
    jobId: `P-ACL-${n}`,
    orderNo: `O-ACL-${n}`,
    pickUpNo: `A${String(n).padStart(3, '0')}`,
    createTime: formatTimestamp(new Date()),
    order: {
      productInfo: [{ productName: `Sinigang bowl ${n}`, price: 21500, quantity: 1 }],
      orderType: 2,
      paymentWay: 2,
      paymentTransactionId: `M-ACL-${n}`,
    },
  };
}

for (const protocolVersion of [5, 4] as const) {
  describe(`the agent under its provisioned credentials, MQTT ${protocolVersion === 5 ? '5' : '3.1.1'}`, {
    skip: skipWithoutMosquitto(),
  }, () => {
    const pair = generateKeyPair();
    const serviceKey = parseKey(pair.privatePem, 'private');
    let setup: Awaited<ReturnType<typeof provisionedBroker>>;
    let rig: AgentRig;
    let publisher: MqttPublisher;

    before(async () => {
      setup = await provisionedBroker(worldReadableDir('acl-agent'));
      rig = await startAgentRig({
        appId: APP_ID,
        storeKey: KEY_A,
        header: 'ACL Store',
        broker: setup.broker,
        protocolVersion,
        mqtt: { username: setup.a.username, password: setup.a.password },
        servicePublicPem: pair.publicPem,
        // The service's side, with the service's credentials: it sees the agent come online.
        observer: {
          protocolVersion,
          username: SERVICE,
          password: setup.service.password,
          topics: [`${DEFAULT_TOPIC_PREFIX}/+/job`, `${DEFAULT_TOPIC_PREFIX}/+/status`],
        },
      });
      publisher = new MqttPublisher({
        url: setup.broker.url,
        topicPrefix: DEFAULT_TOPIC_PREFIX,
        protocolVersion,
        username: SERVICE,
        password: setup.service.password,
      });
      await waitFor('the service publisher connected', () => publisher.connected);
    });

    after(async () => {
      await rig?.stop();
      await publisher?.close();
      await setup?.broker.stop();
    });

    it('prints an instruction the service published; its job events and retained status reach the service', async () => {
      const envelope = buildEnvelope({
        appId: APP_ID,
        storeKey: KEY_A,
        param: instruction(1),
        key: serviceKey,
      });
      await publisher.publish(ID_A, JSON.stringify(envelope));
      const states = () => rig.events.filter((e) => e.jobId === 'P-ACL-1').map((e) => e.state);
      await waitFor('the printed event at the service', () => states().includes('printed'));
      assert.deepEqual(states(), ['queued', 'printing', 'printed']);
      assert.match(renderText(rig.emulator.paper.tickets.at(-1)!), /Sinigang bowl 1/);
      assert.equal(rig.status()?.storeId, ID_A);

      // Retained: a service client that subscribes now gets the agent's status.
      const late = await connectOnce(setup.broker.url, {
        protocolVersion,
        username: SERVICE,
        password: setup.service.password,
      });
      const retained: string[] = [];
      late.on(
        'message',
        (topic, payload) => topic === TA.status && retained.push(payload.toString()),
      );
      await late.subscribeAsync([TA.status], { qos: 1 });
      await waitFor("the agent's retained status", () => retained.length > 0);
      assert.equal((JSON.parse(retained[0]!) as { online: boolean }).online, true);
      await late.endAsync();
    });

    it('answers a command the service sent on its command topic', async () => {
      const command = buildEnvelope({
        appId: APP_ID,
        storeKey: KEY_A,
        param: { storeId: ID_A, commandId: 'C-ACL-1', type: 'status' },
        key: serviceKey,
      });
      await rig.observer.publishAsync(TA.command, JSON.stringify(command), { qos: 1 });
      await waitFor('the command answered', () =>
        rig.events.some((e) => e.jobId === 'command:C-ACL-1'),
      );
      assert.equal(rig.events.find((e) => e.jobId === 'command:C-ACL-1')?.state, 'printed');
    });

    it("doctor's broker probe passes with the store's credentials and names a wrong password without it", async () => {
      const probe = (password: string) =>
        probeBroker(
          {
            url: setup.broker.url,
            protocolVersion,
            clientId: `printer-agent-${ID_A}`,
            username: ID_A,
            password,
          },
          10_000,
        );
      assert.equal((await probe(setup.a.password)).ok, true);
      const wrong = await probe(`${setup.a.password}-wrong`);
      assert.equal(wrong.ok, false);
      assert.ok(
        !wrong.ok && !wrong.reason.includes(setup.a.password),
        'the password is in the reason',
      );
    });

    it('stops with {"online": false} retained for the service, and never logged a refusal or a secret', async () => {
      await rig.stopAgent();
      await waitFor('the offline status at the service', () => rig.status()?.online === false);
      const log = rig.logLines.join('');
      assert.doesNotMatch(log, /not authori[sz]ed|subscribe failed|publish to .* failed/i);
      assert.ok(!log.includes(setup.a.password), 'the broker password is in the log');
      assert.ok(!log.includes(KEY_A), 'the store key is in the log');
    });
  });
}
