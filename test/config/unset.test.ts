/**
 * `printer-agent config unset KEY` (issue 43 item 4): a setting removed, the whole file validated
 * before it is written, owner and mode kept; and the shipped template
 * (config/config.example.json, installed as /etc/printer-agent/config.json) turned into a plain
 * MQTT config with nothing but `config set` and `config unset`, in this process and through the
 * bundle a store runs.
 */
import assert from 'node:assert/strict';
import { chownSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { generateKeyPair } from '../../src/protocol/signing.js';
import { type CliResult, ROOT, runCli, runCliInProcess } from '../helpers/cli.js';
import { fileConfig, findLeaks, MQTT_PASSWORD, type Workspace, workspace } from './fixtures.js';

const TEMPLATE = readFileSync(join(ROOT, 'config', 'config.example.json'), 'utf8');
const asRoot = process.getuid?.() === 0;

const captured: string[] = [];
let ws: Workspace;

beforeEach(() => {
  ws = workspace();
});
afterEach(() => ws.cleanup());
after(() => assert.deepEqual(findLeaks(captured), [], 'a secret leaked into CLI output'));

/** The environment without PRINTER_AGENT_* variables, which would override the file. */
const cleanEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('PRINTER_AGENT_')),
  );

type Runner = (args: string[]) => Promise<CliResult>;

const inProcess: Runner = async (args) => {
  const result = await runCliInProcess(args, { env: cleanEnv(), cwd: ws.dir });
  captured.push(result.stdout, result.stderr);
  return result;
};

/** The bundle of the current sources in a child process, as `npm run build` ships it. */
const bundled: Runner = async (args) => {
  const result = runCli(args, { env: cleanEnv(), cwd: ws.dir });
  captured.push(result.stdout, result.stderr);
  return result;
};

function snapshot(path: string) {
  const st = statSync(path);
  return { text: readFileSync(path, 'utf8'), mode: st.mode & 0o777, mtimeMs: st.mtimeMs };
}

const json = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;

describe('config unset', () => {
  const unset = (key: string) => inProcess(['config', 'unset', key, '--config', ws.configPath]);

  it('removes an object member, so its default applies, and says so', async () => {
    const r = await unset('mqtt.passwordFile');
    // The password needs a user name and the reverse does not: only the file is removed.
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${ws.configPath}: mqtt.passwordFile removed\n`);
    const expected = fileConfig();
    delete (expected.mqtt as Record<string, unknown>).passwordFile;
    assert.deepEqual(json(ws.configPath), expected);
  });

  it('removes a list item; the items after it move up', async () => {
    const raw = fileConfig();
    (raw.printers as unknown[]).splice(1, 0, {
      id: 'bar',
      url: 'tcp://127.0.0.1:9102',
      profile: 'generic-58mm',
    });
    ws.writeConfig(raw);
    const r = await unset('printers[1]');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${ws.configPath}: printers[1] removed\n`);
    const ids = (json(ws.configPath).printers as { id: string }[]).map((p) => p.id);
    assert.deepEqual(ids, ['receipt', 'kitchen']);
  });

  it('validates the whole result: a required setting stays, the file untouched', async () => {
    const before = snapshot(ws.configPath);
    const required = await unset('keys.servicePublicKeyFile');
    assert.equal(required.status, 1);
    assert.equal(
      required.stderr,
      `keys.servicePublicKeyFile: is required\nCONFIG_INVALID: ${ws.configPath}: 1 problem\n`,
    );
    // A cross-field rule too: the password needs its user name.
    const user = await unset('mqtt.username');
    assert.equal(user.status, 1);
    assert.match(user.stderr, /^mqtt\.username: is required when a password is given$/m);
    // The last printer of the receipt role.
    const receipt = await unset('printers[0]');
    assert.equal(receipt.status, 1);
    assert.match(receipt.stderr, /^printers: must include a printer for the receipt role/m);
    assert.deepEqual(snapshot(ws.configPath), before);
  });

  it('a setting the file does not have: exit 0, nothing written', async () => {
    const before = snapshot(ws.configPath);
    for (const key of ['mqtt.tls', 'receipt.logo', 'printers[5]', 'printers[1].roles']) {
      const r = await unset(key);
      assert.equal(r.status, 0, `${key}: ${r.stderr}`);
      assert.equal(r.stdout, `${ws.configPath}: ${key} is not set; nothing changed\n`);
    }
    assert.deepEqual(snapshot(ws.configPath), before);
  });

  it('a key that names no setting: exit 1, so a typo never passes for "not set"', async () => {
    const before = snapshot(ws.configPath);
    for (const key of ['mqtt.tsl', 'printers.id', 'appId.x', 'receipt.header.x']) {
      const r = await unset(key);
      assert.equal(r.status, 1, key);
      assert.equal(
        r.stderr,
        `INPUT_INVALID: key ${key}: no such setting (see printer-agent config reference)\n`,
      );
    }
    const proto = await unset('__proto__');
    assert.equal(proto.status, 1);
    assert.match(proto.stderr, /^INPUT_INVALID: key "__proto__": must be names/);
    assert.deepEqual(snapshot(ws.configPath), before);
  });

  it('keeps the owner, the group and the mode, and never echoes a removed secret', async () => {
    const raw = fileConfig();
    const mqtt = raw.mqtt as Record<string, unknown>;
    delete mqtt.passwordFile;
    mqtt.password = MQTT_PASSWORD;
    ws.writeConfig(raw, 0o640);
    // The install's 0640 root:printer-agent, as other ids (root may give files away).
    if (asRoot) chownSync(ws.configPath, 4321, 8765);
    const before = statSync(ws.configPath);
    const r = await unset('mqtt.password');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${ws.configPath}: mqtt.password removed\n`);
    const after = statSync(ws.configPath);
    assert.notEqual(after.ino, before.ino, 'replaced by a new file (atomic rename)');
    assert.equal(after.mode & 0o777, 0o640);
    assert.deepEqual([after.uid, after.gid], asRoot ? [4321, 8765] : [before.uid, before.gid]);
    assert.ok(!readFileSync(ws.configPath, 'utf8').includes(MQTT_PASSWORD));
  });

  it('`set KEY null` is still no removal, and says which command removes the setting', async () => {
    const before = snapshot(ws.configPath);
    const r = await inProcess(['config', 'set', 'mqtt.tls', 'null', '--config', ws.configPath]);
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /^mqtt\.tls: must be an object; to remove the setting: printer-agent config unset mqtt\.tls$/m,
    );
    assert.deepEqual(snapshot(ws.configPath), before);
  });
});

/**
 * The shipped template to a plain-MQTT store config (a LAN broker without TLS or a password),
 * one command at a time: each is validated whole, so the order matters where rules span fields,
 * and a person following the errors gets there.
 */
async function templateToPlainMqtt(run: Runner): Promise<void> {
  const config = ws.writeConfig(TEMPLATE, 0o640);
  // The files the config will name, as a store has them (the workspace's own are for others).
  const pair = generateKeyPair();
  ws.file('service-public.pem', pair.publicPem, 0o644);
  mkdirSync(join(ws.dir, 'state'));
  const step = async (args: string[], expected: number, pattern?: RegExp) => {
    const r = await run(['config', ...args, '--config', config]);
    assert.equal(r.status, expected, `config ${args.join(' ')}: ${r.stdout}${r.stderr}`);
    if (pattern) assert.match(r.stdout + r.stderr, pattern, `config ${args.join(' ')}`);
  };
  // mqtt:// with the template's TLS files is refused, naming the way out.
  await step(
    ['set', 'mqtt.url', 'mqtt://192.168.1.10:1883'],
    1,
    /^mqtt\.tls\.caFile: applies only to mqtts:\/\/ URLs: change mqtt\.url to mqtts:\/\/, or remove it \(printer-agent config unset mqtt\.tls\.caFile\)$/m,
  );
  await step(['unset', 'mqtt.tls'], 0, /: mqtt\.tls removed\n$/);
  await step(['set', 'mqtt.url', 'mqtt://192.168.1.10:1883'], 0, /: mqtt\.url updated\n$/);
  // An anonymous broker: the password goes before its user name (the other order is refused).
  await step(['unset', 'mqtt.username'], 1, /^mqtt\.username: is required when a password/m);
  await step(['unset', 'mqtt.passwordFile'], 0);
  await step(['unset', 'mqtt.username'], 0);
  await step(['set', 'storeKeyFile', join(ws.dir, 'store-key')], 0);
  await step(['set', 'keys.servicePublicKeyFile', join(ws.dir, 'service-public.pem')], 0);
  // No order service to catch up from: catch-up off, then its key can go.
  await step(['unset', 'keys.storePrivateKeyFile'], 1, /catch-up is enabled/);
  await step(['set', 'catchUp.enabled', 'false'], 0);
  await step(['unset', 'keys.storePrivateKeyFile'], 0);
  await step(['set', 'printers[0].url', 'tcp://127.0.0.1:9100'], 0);
  await step(['unset', 'printers[1]'], 0, /: printers\[1\] removed\n$/);
  await step(['set', 'stateDir', join(ws.dir, 'state')], 0);
  await step(['unset', 'printers[1]'], 0, /printers\[1\] is not set; nothing changed/);

  const check = await run(['config', 'check', '--config', config]);
  assert.equal(check.status, 0, check.stderr);
  assert.equal(check.stdout, `config OK: ${config}\n`);
  assert.equal(check.stderr, '', 'no warning: nothing unencrypted is sent, no file exposed');
  const written = json(config);
  assert.equal(written.version, 2, 'the template is current: nothing was migrated');
  assert.deepEqual(written.mqtt, {
    url: 'mqtt://192.168.1.10:1883',
    protocolVersion: 5,
    prefix: 'printer-agent/v1',
    keepaliveSec: 30,
    sessionExpirySec: 86400,
    reconnectMinMs: 1000,
    reconnectMaxMs: 30000,
    maxMessageBytes: 65536,
  });
  assert.deepEqual(written.keys, {
    servicePublicKeyFile: join(ws.dir, 'service-public.pem'),
    scheme: 'RSA-SHA256',
  });
  assert.equal((written.printers as unknown[]).length, 1);
  assert.equal(statSync(config).mode & 0o777, 0o640, 'the mode the package gave it');
}

describe('the shipped template becomes a plain-MQTT config with the CLI alone', () => {
  it('in this process', async () => {
    await templateToPlainMqtt(inProcess);
  });

  it('through the bundle a store runs', { timeout: 300_000 }, async () => {
    await templateToPlainMqtt(bundled);
  });
});
