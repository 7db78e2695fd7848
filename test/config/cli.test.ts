/**
 * `printer-agent config ...` as a person runs it. Every stdout and stderr captured here is scanned
 * for the test's secrets at the end.
 */
import assert from 'node:assert/strict';
import { chownSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { type CliResult, ROOT, runCliInProcess } from '../helpers/cli.js';
import {
  FILE_STORE_KEY,
  fileConfig,
  findLeaks,
  MQTT_PASSWORD,
  STORE_KEY,
  type Workspace,
  workspace,
} from './fixtures.js';

const captured: string[] = [];
let ws: Workspace;

beforeEach(() => {
  ws = workspace();
});
afterEach(() => ws.cleanup());
after(() => assert.deepEqual(findLeaks(captured), [], 'a secret leaked into CLI output'));

/** Runs the CLI (in this process) with no PRINTER_AGENT_* variables but those given. */
async function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('PRINTER_AGENT_')),
  );
  const result = await runCliInProcess(args, { env: { ...clean, ...env } });
  captured.push(result.stdout, result.stderr);
  return result;
}

/** The config file's bytes, mode and modification time: to prove a refusal left it alone. */
function snapshot(path: string) {
  const st = statSync(path);
  return { text: readFileSync(path, 'utf8'), mode: st.mode & 0o777, mtimeMs: st.mtimeMs };
}

describe('config check', () => {
  it('exits 0 with `config OK: FILE`', async () => {
    const r = await cli(['config', 'check', '--config', ws.configPath]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `config OK: ${ws.configPath}\n`);
    assert.equal(r.stderr, '');
  });

  it('finds the file through PRINTER_AGENT_CONFIG', async () => {
    const r = await cli(['config', 'check'], { PRINTER_AGENT_CONFIG: ws.configPath });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `config OK: ${ws.configPath}\n`);
  });

  it('exits 1 printing every problem as `path: message`, secrets never', async () => {
    const raw = fileConfig();
    delete raw.storeKeyFile;
    raw.storeKey = STORE_KEY.repeat(4); // too long, and a secret
    Object.assign(raw.mqtt as object, { url: `mqtt://u:${MQTT_PASSWORD}@b`, protocolVersion: 3 });
    (raw.printers as Record<string, unknown>[])[1]!.id = 'receipt';
    ws.writeConfig(raw);
    const r = await cli(['config', 'check', '--config', ws.configPath]);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.deepEqual(r.stderr.trimEnd().split('\n'), [
      'storeKey: must be 1 to 100 characters',
      'mqtt.url: must not carry credentials: use mqtt.username and mqtt.password or mqtt.passwordFile',
      'mqtt.protocolVersion: must be 5 (MQTT 5) or 4 (MQTT 3.1.1)',
      'printers[1].id: must be unique; printers[0] has the same id',
      `CONFIG_INVALID: ${ws.configPath}: 4 problems`,
    ]);
  });

  it('prints warnings on stderr and still passes', async () => {
    ws.file('store-key', `${FILE_STORE_KEY}\n`, 0o604);
    const r = await cli(['config', 'check', '--config', ws.configPath]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stderr,
      /^warning: storeKeyFile: .* can be read by group or others \(mode 0604\)/,
    );
  });

  it('catch-up over http to a non-loopback host: exit 1 saying why and how to fix it (§8)', async () => {
    const raw = fileConfig();
    raw.catchUp = { baseUrl: 'http://192.0.2.10:8080' };
    ws.writeConfig(raw);
    const r = await cli(['config', 'check', '--config', ws.configPath]);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    const [line, summary] = r.stderr.trimEnd().split('\n');
    assert.match(line!, /^catchUp\.baseUrl: must be https:\/\/ for a host other than loopback/);
    assert.match(line!, /anyone on the network path can answer in the service's place/);
    assert.match(line!, /use https:\/\/ \(catchUp\.caFile pins the service's CA\)/);
    assert.match(line!, /catchUp\.allowInsecureHttp to true/);
    assert.equal(summary, `CONFIG_INVALID: ${ws.configPath}: 1 problem`);
  });

  it('catch-up with the lab switch: accepted, with a loud warning', async () => {
    const raw = fileConfig();
    raw.catchUp = { baseUrl: 'http://192.0.2.10:8080', allowInsecureHttp: true };
    ws.writeConfig(raw);
    const r = await cli(['config', 'check', '--config', ws.configPath]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `config OK: ${ws.configPath}\n`);
    assert.match(
      r.stderr,
      /^WARNING: catchUp\.allowInsecureHttp is true: catch-up talks plain http to 192\.0\.2\.10:8080, so the storeKey travels in clear text .* Lab only/m,
    );
  });

  it('broken JSON: exit 1 naming the file and position', async () => {
    ws.writeConfig(`{"appId": "A1", "storeKey": "${STORE_KEY}" "mqtt": {}}`);
    const r = await cli(['config', 'check', '--config', ws.configPath]);
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      new RegExp(
        `^CONFIG_INVALID: ${ws.configPath}: is not valid JSON: .* at line 1 column \\d+ \\(position \\d+\\)\\n$`,
      ),
    );
  });

  it('missing file: exit 1 with CONFIG_MISSING', async () => {
    const path = join(ws.dir, 'nope.json');
    const r = await cli(['config', 'check', '--config', path]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, new RegExp(`^CONFIG_MISSING: ${path}: no such file`));
  });
});

describe('config show', () => {
  it('prints the effective config with environment and defaults, secrets as ***', async () => {
    const raw = fileConfig();
    delete raw.storeKeyFile;
    raw.storeKey = STORE_KEY;
    ws.writeConfig(raw);
    const r = await cli(['config', 'show', '--config', ws.configPath], {
      PRINTER_AGENT_LOG_LEVEL: 'debug',
    });
    assert.equal(r.status, 0, r.stderr);
    const shown = JSON.parse(r.stdout) as Record<string, Record<string, unknown>>;
    assert.equal(shown.storeKey, '***');
    assert.equal(shown.mqtt!.password, '***');
    assert.equal(shown.mqtt!.passwordFile, join(ws.dir, 'mqtt-password'));
    assert.equal(shown.logLevel, 'debug');
    assert.equal(shown.mqtt!.prefix, 'printer-agent/v1');
    assert.match(String(shown.storeId), /^[0-9a-f]{16}$/);
  });
});

describe('config set', () => {
  it('keeps the owner, the group and the mode the service reads it by (no lock-out)', async () => {
    // The install gives the file 0640 root:printer-agent; a rewrite as 0600 root locked the
    // service out of its own config (issue 15). As root, the test gives the file to other ids
    // to see them kept; as another user, the file's own ids must survive the rewrite.
    ws.writeConfig(fileConfig(), 0o640);
    const asRoot = process.getuid?.() === 0;
    if (asRoot) chownSync(ws.configPath, 4321, 8765);
    const before = statSync(ws.configPath);
    const r = await cli(['config', 'set', 'logLevel', 'debug', '--config', ws.configPath]);
    assert.equal(r.status, 0, r.stderr);
    const after = statSync(ws.configPath);
    assert.notEqual(after.ino, before.ino, 'replaced by a new file (atomic rename)');
    assert.equal(after.mode & 0o777, 0o640);
    assert.deepEqual([after.uid, after.gid], asRoot ? [4321, 8765] : [before.uid, before.gid]);
    assert.equal(
      (JSON.parse(readFileSync(ws.configPath, 'utf8')) as { logLevel: string }).logLevel,
      'debug',
    );
  });

  it('writes the value (parsed as JSON), keeps the rest, and takes away what others could read', async () => {
    ws.writeConfig(fileConfig(), 0o644);
    const r = await cli(['config', 'set', 'mqtt.keepaliveSec', '45', '--config', ws.configPath]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${ws.configPath}: mqtt.keepaliveSec updated\n`);
    assert.equal(statSync(ws.configPath).mode & 0o777, 0o640);
    const written = JSON.parse(readFileSync(ws.configPath, 'utf8')) as Record<string, unknown>;
    const expected = fileConfig();
    (expected.mqtt as Record<string, unknown>).keepaliveSec = 45;
    assert.deepEqual(written, expected);

    const text = await cli([
      'config',
      'set',
      'printers[1].url',
      'serial:/dev/ttyUSB0',
      '--config',
      ws.configPath,
    ]);
    assert.equal(text.status, 0, text.stderr);
    const again = JSON.parse(readFileSync(ws.configPath, 'utf8')) as {
      printers: { url: string }[];
    };
    assert.equal(again.printers[1]!.url, 'serial:/dev/ttyUSB0', 'not JSON: taken as a string');
    assert.equal((await cli(['config', 'check', '--config', ws.configPath])).status, 0);
  });

  it('refuses an invalid value without touching the file', async () => {
    const before = snapshot(ws.configPath);
    const r = await cli(['config', 'set', 'mqtt.protocolVersion', '3', '--config', ws.configPath]);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      `mqtt.protocolVersion: must be 5 (MQTT 5) or 4 (MQTT 3.1.1)\nCONFIG_INVALID: ${ws.configPath}: 1 problem\n`,
    );
    assert.deepEqual(snapshot(ws.configPath), before);
  });

  it('refuses a secret that breaks a rule without printing it', async () => {
    const before = snapshot(ws.configPath);
    const r = await cli(['config', 'set', 'storeKey', STORE_KEY, '--config', ws.configPath]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^storeKeyFile: give storeKey or storeKeyFile, not both$/m);
    assert.deepEqual(snapshot(ws.configPath), before);
  });

  it('refuses unknown keys and dangerous paths', async () => {
    const before = snapshot(ws.configPath);
    const unknown = await cli(['config', 'set', 'mqtt.urll', 'x', '--config', ws.configPath]);
    assert.equal(unknown.status, 1);
    assert.match(unknown.stderr, /^mqtt: unknown setting "urll"/m);
    const proto = await cli([
      'config',
      'set',
      '__proto__.polluted',
      '1',
      '--config',
      ws.configPath,
    ]);
    assert.equal(proto.status, 1);
    assert.match(proto.stderr, /^INPUT_INVALID: key "__proto__\.polluted": must be names/);
    assert.deepEqual(snapshot(ws.configPath), before);
  });

  it('needs an existing file', async () => {
    const path = join(ws.dir, 'new.json');
    const r = await cli(['config', 'set', 'appId', 'A2', '--config', path]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^CONFIG_MISSING: /);
  });
});

describe('config schema and reference', () => {
  it('prints the JSON schema with descriptions', async () => {
    const r = await cli(['config', 'schema']);
    assert.equal(r.status, 0, r.stderr);
    const schema = JSON.parse(r.stdout) as {
      $schema: string;
      properties: Record<string, { description?: string }>;
    };
    assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
    assert.match(schema.properties.appId!.description ?? '', /Application id/);
    assert.deepEqual(
      schema,
      JSON.parse(readFileSync(join(ROOT, 'config', 'config.schema.json'), 'utf8')),
      'config/config.schema.json is stale: run npm run config:docs',
    );
  });

  it('prints the Markdown reference (docs/config-reference.md, before formatting)', async () => {
    const r = await cli(['config', 'reference']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^# Configuration reference\n/);
    assert.match(r.stdout, /^\| `mqtt\.protocolVersion` \| one of 5, 4 \| `5` \| /m);
    assert.match(r.stdout, /^\| `PRINTER_AGENT_PRINTER_URL` \| `printers\[receipt\]\.url` \| /m);
  });
});
