import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { resolveConfigPath } from '../../src/config/config-file.js';
import { DEFAULT_CONFIG_PATH, ENV_OVERRIDES } from '../../src/config/env.js';
import { loadConfig } from '../../src/config/load.js';
import { AgentError } from '../../src/errors.js';
import { deriveStoreId } from '../../src/protocol/store-id.js';
import {
  FILE_MQTT_PASSWORD,
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
after(() => assert.deepEqual(findLeaks(captured), [], 'a secret leaked into an error or warning'));

/** loadConfig with no environment but what the test gives; records every text it produced. */
function load(env: NodeJS.ProcessEnv = {}, configPath: string | undefined = ws.configPath) {
  try {
    const loaded = loadConfig({ configPath, env, cwd: ws.dir });
    captured.push(...loaded.warnings);
    return loaded;
  } catch (error) {
    if (error instanceof Error) captured.push(error.message);
    throw error;
  }
}

function loadError(env: NodeJS.ProcessEnv = {}, configPath?: string): AgentError {
  try {
    load(env, configPath);
  } catch (error) {
    assert.ok(error instanceof AgentError, String(error));
    return error;
  }
  assert.fail('expected the load to fail');
}

const issueLines = (error: AgentError) => error.issues.map((i) => `${i.path}: ${i.message}`);

describe('loadConfig: the file', () => {
  it('reads secrets from files, resolves relative paths, derives the ids', () => {
    const { path, config, warnings } = load();
    assert.equal(path, ws.configPath);
    assert.deepEqual(warnings, []);
    assert.equal(config.storeKey, FILE_STORE_KEY, 'first line only');
    assert.equal(config.mqtt.password, FILE_MQTT_PASSWORD, 'trimmed');
    assert.equal(config.storeKeyFile, join(ws.dir, 'store-key'));
    assert.equal(config.keys.servicePublicKeyFile, join(ws.dir, 'service-public.pem'));
    assert.equal(config.storeId, deriveStoreId('A1', FILE_STORE_KEY));
    assert.match(config.storeId, /^[0-9a-f]{16}$/);
    assert.equal(config.mqtt.clientId, `printer-agent-${config.storeId}`);
    assert.equal(config.mqtt.protocolVersion, 5);
  });

  it('keeps a given storeId and clientId', () => {
    const raw = fileConfig();
    raw.storeId = 'store-0001';
    (raw.mqtt as Record<string, unknown>).clientId = 'agent-0001';
    ws.writeConfig(raw);
    const { config } = load();
    assert.equal(config.storeId, 'store-0001');
    assert.equal(config.mqtt.clientId, 'agent-0001');
  });

  it('gives a storeId set by hand a client id only its storeKey yields (no session takeover)', () => {
    const raw = fileConfig();
    raw.storeId = 'store-0001';
    ws.writeConfig(raw);
    const { config } = load();
    assert.match(config.mqtt.clientId, /^printer-agent-store-0001-[0-9a-f]{12}$/);
    // Another store's login that knows the store number cannot name this session: the suffix
    // comes from the storeKey, and another key gives another one.
    raw.storeKey = `${STORE_KEY}-other`;
    delete raw.storeKeyFile;
    ws.writeConfig(raw);
    const other = load().config.mqtt.clientId;
    assert.match(other, /^printer-agent-store-0001-[0-9a-f]{12}$/);
    assert.notEqual(other, config.mqtt.clientId);
    assert.ok(!other.includes(raw.storeKey as string), 'the storeKey is not in the client id');
  });

  it('takes inline secrets as they are', () => {
    const raw = fileConfig();
    delete raw.storeKeyFile;
    raw.storeKey = STORE_KEY;
    const mqtt = raw.mqtt as Record<string, unknown>;
    delete mqtt.passwordFile;
    mqtt.password = MQTT_PASSWORD;
    ws.writeConfig(raw);
    const { config } = load();
    assert.equal(config.storeKey, STORE_KEY);
    assert.equal(config.mqtt.password, MQTT_PASSWORD);
  });

  it('does not rewrite the file it loads (no defaults written back, mode kept)', () => {
    ws.writeConfig(fileConfig(), 0o640);
    const before = readFileSync(ws.configPath, 'utf8');
    load();
    assert.equal(readFileSync(ws.configPath, 'utf8'), before);
    assert.equal(statSync(ws.configPath).mode & 0o777, 0o640);
  });

  it('missing file: CONFIG_MISSING naming the path, and nothing created', () => {
    const path = join(ws.dir, 'absent', 'config.json');
    const error = loadError({}, path);
    assert.equal(error.code, 'CONFIG_MISSING');
    assert.match(error.message, new RegExp(`^${path}: no such file`));
    assert.equal(existsSync(join(ws.dir, 'absent')), false);
  });

  it('a folder instead of a file: CONFIG_MISSING', () => {
    const error = loadError({}, ws.dir);
    assert.equal(error.code, 'CONFIG_MISSING');
    assert.match(error.message, /is not a file/);
  });

  it('broken JSON: CONFIG_INVALID naming the file and the position, not the text', () => {
    const text = `{\n  "appId": "A1",\n  "storeKey": "${STORE_KEY}",\n}\n`;
    ws.writeConfig(text);
    const error = loadError();
    assert.equal(error.code, 'CONFIG_INVALID');
    assert.equal(
      error.message,
      `${ws.configPath}: is not valid JSON: expected a property name in double quotes ` +
        `(no trailing commas) at line 4 column 1 (position ${text.lastIndexOf('}')})`,
    );
  });

  it('schema problems: CONFIG_INVALID with every issue', () => {
    const raw = fileConfig();
    (raw.mqtt as Record<string, unknown>).protocolVersion = 3;
    raw.logLevel = 'loud';
    ws.writeConfig(raw);
    const error = loadError();
    assert.equal(error.code, 'CONFIG_INVALID');
    assert.deepEqual(issueLines(error), [
      'mqtt.protocolVersion: must be 5 (MQTT 5) or 4 (MQTT 3.1.1)',
      'logLevel: must be one of fatal, error, warn, info, debug, trace, silent',
    ]);
    assert.ok(error.message.startsWith(`${ws.configPath}: mqtt.protocolVersion: must be 5`));
  });
});

describe('loadConfig: files the config names', () => {
  it('reports unreadable and empty secret files and missing key files together', () => {
    ws.file('store-key', '\n\n');
    const raw = fileConfig();
    (raw.mqtt as Record<string, unknown>).passwordFile = 'no-such-password';
    (raw.keys as Record<string, unknown>).servicePublicKeyFile = 'no-such.pem';
    ws.writeConfig(raw);
    const error = loadError();
    assert.equal(error.code, 'CONFIG_INVALID');
    assert.deepEqual(issueLines(error), [
      `storeKeyFile: ${join(ws.dir, 'store-key')} is empty (the secret is its first line)`,
      `mqtt.passwordFile: cannot read ${join(ws.dir, 'no-such-password')} (ENOENT)`,
      `keys.servicePublicKeyFile: cannot read ${join(ws.dir, 'no-such.pem')} (ENOENT)`,
    ]);
  });

  it('a store key file whose first line is too long', () => {
    ws.file('store-key', `${STORE_KEY}${'x'.repeat(100)}\n`);
    const error = loadError();
    assert.deepEqual(issueLines(error), [
      `storeKeyFile: the first line of ${join(ws.dir, 'store-key')} must be 1 to 100 characters`,
    ]);
  });

  it('the metrics token file: read when long enough, refused when guessable (issue 42 item 8)', () => {
    const token = 'mt-LEAKCHECK-'.padEnd(40, '7');
    ws.file('metrics-token', `${token}\n`);
    const raw = fileConfig();
    raw.console = { metrics: true, metricsTokenFile: 'metrics-token' };
    ws.writeConfig(raw);
    const { config } = load();
    assert.equal(config.console.metricsToken, token);
    assert.equal(config.console.metricsTokenFile, join(ws.dir, 'metrics-token'));
    ws.file('metrics-token', 'mt-LEAKCHECK-short\n');
    assert.deepEqual(issueLines(loadError()), [
      `console.metricsTokenFile: the first line of ${join(ws.dir, 'metrics-token')} must be at least 32 characters: this token is never locked out, so it must not be guessable (openssl rand -hex 32)`,
    ]);
    assert.ok(!captured.join('\n').includes('mt-LEAKCHECK-short'), 'the token never in a message');
    // Without metrics there is nothing for it to open.
    raw.console = { metricsTokenFile: 'metrics-token' };
    ws.writeConfig(raw);
    assert.deepEqual(issueLines(loadError()), [
      'console.metricsTokenFile: applies only with console.metrics: true (it opens /metrics and nothing else)',
    ]);
  });

  it('warns (does not fail) when a secret file can be read by group or others', () => {
    ws.file('store-key', `${FILE_STORE_KEY}\n`, 0o644);
    ws.file('store-private.pem', 'key\n', 0o640);
    const { config, warnings } = load();
    assert.equal(config.storeKey, FILE_STORE_KEY);
    assert.deepEqual(warnings, [
      `storeKeyFile: ${join(ws.dir, 'store-key')} can be read by group or others (mode 0644); ` +
        `run chmod 600 ${join(ws.dir, 'store-key')}`,
      `keys.storePrivateKeyFile: ${join(ws.dir, 'store-private.pem')} can be read by group or ` +
        `others (mode 0640); run chmod 600 ${join(ws.dir, 'store-private.pem')}`,
    ]);
  });

  it('warns when the config file itself holds a secret and others can read it', () => {
    const raw = fileConfig();
    delete raw.storeKeyFile;
    raw.storeKey = STORE_KEY;
    ws.writeConfig(raw, 0o644);
    const { warnings } = load();
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /^config file \(holds a secret inline\): .* \(mode 0644\)/);
  });

  it('warns about TLS checks turned off and a password over plain MQTT', () => {
    const raw = fileConfig();
    (raw.mqtt as Record<string, unknown>).tls = { rejectUnauthorized: false };
    ws.writeConfig(raw);
    assert.deepEqual(load().warnings, [
      'mqtt.tls.rejectUnauthorized: false: the broker certificate is not checked',
    ]);
    (raw.mqtt as Record<string, unknown>).url = 'mqtt://127.0.0.1:1883';
    (raw.mqtt as Record<string, unknown>).tls = {};
    ws.writeConfig(raw);
    assert.deepEqual(load().warnings, [
      'mqtt.url: the broker password travels unencrypted over mqtt://; use mqtts://',
    ]);
  });
});

describe('loadConfig: environment overrides', () => {
  it('documents each override once, by name and path', () => {
    const names = ENV_OVERRIDES.map((o) => o.name);
    assert.equal(new Set(names).size, names.length);
    assert.deepEqual(names.sort(), [
      'PRINTER_AGENT_LOG_FORMAT',
      'PRINTER_AGENT_LOG_LEVEL',
      'PRINTER_AGENT_MQTT_PASSWORD_FILE',
      'PRINTER_AGENT_MQTT_URL',
      'PRINTER_AGENT_MQTT_USERNAME',
      'PRINTER_AGENT_PRINTER_URL',
      'PRINTER_AGENT_STATE_DIR',
      'PRINTER_AGENT_STORE_KEY_FILE',
    ]);
  });

  it('applies every override over the file', () => {
    ws.file('other-key', `${STORE_KEY}\n`);
    ws.file('other-password', `${MQTT_PASSWORD}\n`);
    const raw = fileConfig();
    // The receipt role is served by the second printer: the override must find it by role.
    raw.printers = [
      { id: 'kitchen', url: 'tcp://127.0.0.1:9101', profile: 'generic-58mm' },
      { id: 'front', url: 'tcp://127.0.0.1:9100', profile: 'generic-80mm', roles: ['receipt'] },
    ];
    ws.writeConfig(raw);
    const { config } = load({
      PRINTER_AGENT_MQTT_URL: 'mqtts://other-broker:8883',
      PRINTER_AGENT_MQTT_USERNAME: 'store-0002',
      PRINTER_AGENT_MQTT_PASSWORD_FILE: 'other-password', // relative: against the cwd
      PRINTER_AGENT_STORE_KEY_FILE: join(ws.dir, 'other-key'),
      PRINTER_AGENT_STATE_DIR: '/srv/agent-state',
      PRINTER_AGENT_LOG_LEVEL: 'debug',
      PRINTER_AGENT_PRINTER_URL: 'file:/dev/usb/lp1',
    });
    assert.equal(config.mqtt.url, 'mqtts://other-broker:8883');
    assert.equal(config.mqtt.username, 'store-0002');
    assert.equal(config.mqtt.passwordFile, join(ws.dir, 'other-password'));
    assert.equal(config.mqtt.password, MQTT_PASSWORD);
    assert.equal(config.storeKey, STORE_KEY);
    assert.equal(config.storeId, deriveStoreId('A1', STORE_KEY));
    assert.equal(config.stateDir, '/srv/agent-state');
    assert.equal(config.logLevel, 'debug');
    assert.equal(config.printers[1]!.url, 'file:/dev/usb/lp1');
    assert.equal(config.printers[0]!.url, 'tcp://127.0.0.1:9101');
  });

  it('a secret file from the environment replaces the inline secret of the file', () => {
    const raw = fileConfig();
    delete raw.storeKeyFile;
    raw.storeKey = STORE_KEY;
    ws.writeConfig(raw);
    const { config } = load({ PRINTER_AGENT_STORE_KEY_FILE: join(ws.dir, 'store-key') });
    assert.equal(config.storeKey, FILE_STORE_KEY);
  });

  it('ignores empty values', () => {
    const { config } = load({ PRINTER_AGENT_MQTT_URL: '', PRINTER_AGENT_LOG_LEVEL: '' });
    assert.equal(config.mqtt.url, 'mqtts://broker.example.com:8883');
    assert.equal(config.logLevel, 'info');
  });

  it('names the variable when its value is invalid', () => {
    const error = loadError({ PRINTER_AGENT_LOG_LEVEL: 'loud' });
    assert.deepEqual(issueLines(error), [
      'logLevel: must be one of fatal, error, warn, info, debug, trace, silent (set by PRINTER_AGENT_LOG_LEVEL)',
    ]);
  });

  it('finds the file: --config, else PRINTER_AGENT_CONFIG, else /etc/printer-agent', () => {
    assert.equal(resolveConfigPath(undefined, {}), DEFAULT_CONFIG_PATH);
    assert.equal(resolveConfigPath(undefined, { PRINTER_AGENT_CONFIG: '/a/b.json' }), '/a/b.json');
    assert.equal(
      resolveConfigPath('c.json', { PRINTER_AGENT_CONFIG: '/a/b.json' }, '/x'),
      '/x/c.json',
    );
    const loaded = loadConfig({ env: { PRINTER_AGENT_CONFIG: ws.configPath } });
    assert.equal(loaded.path, ws.configPath);
  });
});
