import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { catchUpWarnings } from '../../src/config/cross-field-rules.js';
import { validateConfig } from '../../src/config/load.js';
import { configJsonSchema } from '../../src/config/reference.js';
import { AgentError } from '../../src/errors.js';
import { ROOT } from '../helpers/cli.js';
import { ALL_SECRETS, findLeaks, MQTT_PASSWORD, STORE_KEY, validRaw } from './fixtures.js';

const FILE = '/etc/printer-agent/config.json';
const LONG_KEY = `sk-LEAKCHECK-a9e0c4d2-${'x'.repeat(80)}`; // 102 characters: one too many
const captured: string[] = [];

type Raw = Record<string, unknown>;
type Mutation = (raw: Raw) => void;

const mqtt = (raw: Raw) => raw.mqtt as Raw;
const printer = (raw: Raw, i = 0) => (raw.printers as Raw[])[i]!;

/** Validates and returns the `path: message` lines (empty when valid). */
function problems(raw: Raw, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    validateConfig(raw, { file: FILE, env });
    return [];
  } catch (error) {
    assert.ok(error instanceof AgentError, String(error));
    assert.equal(error.code, 'CONFIG_INVALID');
    captured.push(error.message);
    return error.issues.map((i) => `${i.path}: ${i.message}`);
  }
}

// Each case: what is wrong, how to break a valid config, the `path: message` expected.
const CASES: [string, Mutation, RegExp][] = [
  ['missing appId', (r) => delete r.appId, /^appId: is required$/],
  ['appId of the wrong type', (r) => (r.appId = 42), /^appId: must be a string$/],
  ['appId too long', (r) => (r.appId = 'A'.repeat(65)), /^appId: must be 1 to 64 characters$/],
  ['storeKey too long', (r) => (r.storeKey = LONG_KEY), /^storeKey: must be 1 to 100 characters$/],
  [
    'both storeKey and storeKeyFile',
    (r) => (r.storeKeyFile = '/etc/printer-agent/store-key'),
    /^storeKeyFile: give storeKey or storeKeyFile, not both$/,
  ],
  ['neither storeKey nor storeKeyFile', (r) => delete r.storeKey, /^storeKey: is required/],
  ['storeId with a slash', (r) => (r.storeId = 'a/b'), /^storeId: must be 1 to 64 letters/],
  ['missing mqtt section', (r) => delete r.mqtt, /^mqtt: is required$/],
  [
    'mqtt url with an http scheme',
    (r) => (mqtt(r).url = 'http://broker:1883'),
    /^mqtt\.url: must start with mqtt:\/\/ or mqtts:\/\/$/,
  ],
  [
    'mqtt url carrying credentials',
    (r) => (mqtt(r).url = `mqtts://user:${MQTT_PASSWORD}@broker:8883`),
    /^mqtt\.url: must not carry credentials/,
  ],
  [
    'protocolVersion 3',
    (r) => (mqtt(r).protocolVersion = 3),
    /^mqtt\.protocolVersion: must be 5 \(MQTT 5\) or 4 \(MQTT 3\.1\.1\)$/,
  ],
  [
    'keepalive not a whole number',
    (r) => (mqtt(r).keepaliveSec = 2.5),
    /^mqtt\.keepaliveSec: must be a whole number$/,
  ],
  [
    'keepalive as a string',
    (r) => (mqtt(r).keepaliveSec = '30'),
    /^mqtt\.keepaliveSec: must be a number$/,
  ],
  [
    'prefix with a wildcard',
    (r) => (mqtt(r).prefix = 'agents/#'),
    /^mqtt\.prefix: must be topic levels/,
  ],
  [
    'password and passwordFile',
    (r) => Object.assign(mqtt(r), { username: 'u', password: MQTT_PASSWORD, passwordFile: '/p' }),
    /^mqtt\.passwordFile: give mqtt\.password or mqtt\.passwordFile, not both$/,
  ],
  [
    'password without username',
    (r) => (mqtt(r).password = MQTT_PASSWORD),
    /^mqtt\.username: is required when a password is given$/,
  ],
  [
    'client certificate without its key',
    (r) => (mqtt(r).tls = { certFile: '/etc/printer-agent/client.pem' }),
    /^mqtt\.tls\.keyFile: is required with the other half/,
  ],
  [
    'CA file on a plain mqtt:// URL',
    (r) => Object.assign(mqtt(r), { url: 'mqtt://broker:1883', tls: { caFile: '/ca.pem' } }),
    /^mqtt\.tls\.caFile: applies only to mqtts:\/\/ URLs/,
  ],
  [
    'reconnect cap below the first delay',
    (r) => Object.assign(mqtt(r), { reconnectMinMs: 5000, reconnectMaxMs: 2000 }),
    /^mqtt\.reconnectMaxMs: must be at least mqtt\.reconnectMinMs$/,
  ],
  ['misspelt key', (r) => (mqtt(r).urll = 'x'), /^mqtt: unknown setting "urll"/],
  ['unknown top-level key', (r) => (r.printer = []), /^\(root\): unknown setting "printer"/],
  [
    'unknown signature scheme',
    (r) => ((r.keys as Raw).scheme = 'RSA-MD5'),
    /^keys\.scheme: must be one of RSA-SHA256, RSA-PSS-SHA256$/,
  ],
  [
    'missing service public key',
    (r) => delete (r.keys as Raw).servicePublicKeyFile,
    /^keys\.servicePublicKeyFile: is required$/,
  ],
  ['no printers', (r) => (r.printers = []), /^printers: must list at least one printer$/],
  ['printers not a list', (r) => (r.printers = {}), /^printers: must be a list of printers$/],
  [
    'nine printers',
    (r) =>
      (r.printers = Array.from({ length: 9 }, (_, i) => ({
        id: i === 0 ? 'receipt' : `p${i}`,
        url: `tcp://127.0.0.1:${9100 + i}`,
        profile: 'generic-80mm',
      }))),
    /^printers: must list at most 8 printers$/,
  ],
  [
    'duplicate printer ids',
    (r) => (r.printers as Raw[]).push({ ...printer(r), url: 'tcp://10.0.0.2' }),
    /^printers\[1\]\.id: must be unique; printers\[0\] has the same id$/,
  ],
  [
    'unknown profile',
    (r) => (printer(r).profile = 'epson-tm-x999'),
    /^printers\[0\]\.profile: must be a profile in config\/printers\/: .*generic-80mm/,
  ],
  [
    'printer URL with an unknown scheme',
    (r) => (printer(r).url = 'http://printer.local'),
    /^printers\[0\]\.url: scheme must be tcp:, serial:, file: or usb:$/,
  ],
  [
    'serial URL with a bad baud rate',
    (r) => (printer(r).url = 'serial:/dev/ttyUSB0?baudRate=1234'),
    /^printers\[0\]\.url: baudRate must be one of/,
  ],
  [
    'no printer for the receipt role',
    (r) => (printer(r).id = 'kitchen'),
    /^printers: must include a printer for the receipt role/,
  ],
  [
    'a role served by two printers',
    (r) =>
      (r.printers as Raw[]).push({
        id: 'bar',
        url: 'tcp://10.0.0.3',
        profile: 'generic-58mm',
        roles: ['receipt'],
      }),
    /^printers\[1\]\.roles\[0\]: role receipt is already served by printers\[0\]/,
  ],
  [
    'a routing rule for a role no printer serves',
    (r) => (r.routing = [{ role: 'receipt' }, { role: 'kitchen' }]),
    /^routing\[1\]\.role: no printer serves role kitchen: add it to a printer's roles$/,
  ],
  [
    'two routing rules for one role',
    (r) => (r.routing = [{ role: 'receipt' }, { role: 'receipt', orderTypes: ['table'] }]),
    /^routing\[1\]\.role: must be unique; routing\[0\] already routes to role receipt$/,
  ],
  [
    'an item filter on the payment receipt',
    (r) => (r.routing = [{ role: 'receipt', items: ['*beer*'] }]),
    /^routing\[0\]\.items: applies only to the kitchen layout: a payment receipt lists the whole order$/,
  ],
  [
    'an unknown order type in a routing rule',
    (r) => (r.routing = [{ role: 'receipt', orderTypes: ['delivery'] }]),
    /^routing\[0\]\.orderTypes\[0\]: must be one of table, queue, takeout$/,
  ],
  [
    'an unknown layout',
    (r) => (r.routing = [{ role: 'receipt', layout: 'label' }]),
    /^routing\[0\]\.layout: must be one of receipt, kitchen$/,
  ],
  ['an empty routing table', (r) => (r.routing = []), /^routing: must list at least one rule$/],
  [
    'code page the profile cannot select',
    (r) => (printer(r).codepage = 'cp1252'),
    /^printers\[0\]\.codepage: must be a code page profile generic-80mm can select: cp437/,
  ],
  [
    'unknown confirm mode',
    (r) => (printer(r).confirm = 'maybe'),
    /^printers\[0\]\.confirm: must be one of process-id, status, none$/,
  ],
  [
    'bad currency',
    (r) => (r.receipt = { money: { currency: 'peso' } }),
    /^receipt\.money\.currency: must be an ISO 4217 code of three capital letters/,
  ],
  [
    'unknown key in money',
    (r) => (r.receipt = { money: { symbol: '₱' } }),
    /^receipt\.money: unknown setting "symbol"/,
  ],
  [
    'header line too long',
    (r) => (r.receipt = { header: ['x'.repeat(201)] }),
    /^receipt\.header\[0\]: must be at most 200 characters$/,
  ],
  [
    'unknown duplicate policy',
    (r) => (r.receipt = { markings: { possibleDuplicatePolicy: 'ignore' } }),
    /^receipt\.markings\.possibleDuplicatePolicy: must be one of reprint-marked, hold$/,
  ],
  [
    'lateAfterMinutes of zero',
    (r) => (r.receipt = { markings: { lateAfterMinutes: 0 } }),
    /^receipt\.markings\.lateAfterMinutes: must be between 1 and 1440$/,
  ],
  [
    'catch-up faster than order-api §8 allows',
    (r) => ((r.catchUp as Raw).minIntervalSec = 5),
    /^catchUp\.minIntervalSec: must be between 10 and 3600 \(order-api §8: at least 10 s\)$/,
  ],
  [
    'page size over 100',
    (r) => ((r.catchUp as Raw).pageSize = 101),
    /^catchUp\.pageSize: must be between 1 and 100/,
  ],
  [
    'catch-up interval below its floor',
    (r) => Object.assign(r.catchUp as Raw, { minIntervalSec: 30, intervalSec: 20 }),
    /^catchUp\.intervalSec: must be at least catchUp\.minIntervalSec$/,
  ],
  [
    'catch-up window longer than the stale age',
    (r) => Object.assign(r.catchUp as Raw, { windowMinutes: 30, maxAgeMinutes: 30 }),
    /^catchUp\.maxAgeMinutes: must be more than catchUp\.windowMinutes/,
  ],
  [
    'catch-up enabled without a base URL',
    (r) => delete (r.catchUp as Raw).baseUrl,
    /^catchUp\.baseUrl: is required while catch-up is enabled/,
  ],
  [
    'catch-up enabled without the store private key',
    (r) => delete (r.keys as Raw).storePrivateKeyFile,
    /^keys\.storePrivateKeyFile: is required while catch-up is enabled/,
  ],
  [
    'catch-up base URL of another scheme',
    (r) => ((r.catchUp as Raw).baseUrl = 'ftp://orders.example.com'),
    /^catchUp\.baseUrl: must start with https:\/\/$/,
  ],
  [
    'catch-up over http to a host other than loopback (print-protocol §8)',
    (r) => ((r.catchUp as Raw).baseUrl = 'http://192.0.2.10:8080'),
    /^catchUp\.baseUrl: must be https:\/\/ for a host other than loopback \(print-protocol §8\): over http anyone on the network path can answer in the service's place .*only in a lab set catchUp\.allowInsecureHttp to true$/,
  ],
  [
    'catch-up over http to a host name, even one that might resolve to loopback',
    (r) => ((r.catchUp as Raw).baseUrl = 'http://orders.lan/api'),
    /^catchUp\.baseUrl: must be https:\/\/ for a host other than loopback/,
  ],
  [
    'catch-up CA file with http',
    (r) => Object.assign(r.catchUp as Raw, { baseUrl: 'http://127.0.0.1:8080', caFile: 'ca.pem' }),
    /^catchUp\.caFile: applies only to https:\/\/ URLs; change catchUp\.baseUrl to https:\/\/ or remove catchUp\.caFile$/,
  ],
  [
    'catch-up response signatures off over http, even on loopback',
    (r) =>
      Object.assign(r.catchUp as Raw, {
        baseUrl: 'http://localhost:8080',
        responseSignature: 'off',
      }),
    /^catchUp\.responseSignature: may be "off" only over https:\/\/ \(print-protocol §8\)/,
  ],
  [
    'catch-up response signatures off over http with the lab switch',
    (r) =>
      Object.assign(r.catchUp as Raw, {
        baseUrl: 'http://192.0.2.10',
        allowInsecureHttp: true,
        responseSignature: 'off',
      }),
    /^catchUp\.responseSignature: may be "off" only over https:\/\//,
  ],
  [
    'catch-up response signature mode unknown',
    (r) => ((r.catchUp as Raw).responseSignature = 'optional'),
    /^catchUp\.responseSignature: must be one of "required", "off"$/,
  ],
  [
    'unknown log level',
    (r) => (r.logLevel = 'verbose'),
    /^logLevel: must be one of fatal, error, warn, info, debug, trace, silent$/,
  ],
  [
    'retention of zero days',
    (r) => (r.retention = { printedDays: 0 }),
    /^retention\.printedDays: must be between 1 and 365$/,
  ],
  ['empty state dir', (r) => (r.stateDir = ''), /^stateDir: must be a file path, not empty$/],
  [
    'enabled as a string',
    (r) => (r.catchUp = { enabled: 'yes' }),
    /^catchUp\.enabled: must be true or false$/,
  ],
];

describe('config schema: invalid configs give readable `path: message`', () => {
  after(() => {
    assert.deepEqual(findLeaks(captured, [...ALL_SECRETS, LONG_KEY]), [], 'a secret leaked');
  });

  it('has a valid base', () => {
    assert.deepEqual(problems(validRaw()), []);
  });

  assert.ok(CASES.length >= 25);
  for (const [name, mutate, expected] of CASES) {
    it(name, () => {
      const raw = validRaw();
      mutate(raw);
      const lines = problems(raw);
      assert.ok(
        lines.some((line) => expected.test(line)),
        `expected ${expected}, got:\n${lines.join('\n')}`,
      );
    });
  }

  it('reports every problem at once, cross-field rules included', () => {
    const raw = validRaw();
    raw.appId = 7;
    mqtt(raw).protocolVersion = 3;
    printer(raw).profile = 'nope';
    (raw.catchUp as Raw).pageSize = 0;
    raw.storeKeyFile = '/k'; // both forms of the key: a cross-field rule
    const lines = problems(raw);
    for (const path of [
      'appId',
      'mqtt.protocolVersion',
      'printers[0].profile',
      'catchUp.pageSize',
      'storeKeyFile',
    ])
      assert.ok(
        lines.some((l) => l.startsWith(`${path}: `)),
        `${path} missing in\n${lines.join('\n')}`,
      );
  });

  it('says "must be an object" for a file that is not one', () => {
    assert.deepEqual(problems([] as unknown as Raw), ['(root): must be an object']);
  });

  it('names the environment variable when the bad value came from it', () => {
    const lines = problems(validRaw(), { PRINTER_AGENT_MQTT_URL: 'http://broker' });
    assert.deepEqual(lines, [
      'mqtt.url: must start with mqtt:// or mqtts:// (set by PRINTER_AGENT_MQTT_URL)',
    ]);
  });

  it('never echoes a rejected value', () => {
    const raw = validRaw();
    raw.storeKey = LONG_KEY;
    mqtt(raw).url = `mqtts://u:${MQTT_PASSWORD}@h`;
    raw.appId = STORE_KEY.repeat(3);
    const text = problems(raw).join('\n');
    assert.deepEqual(findLeaks([text], [LONG_KEY, MQTT_PASSWORD, STORE_KEY]), []);
  });
});

describe('config schema: defaults and the example', () => {
  it('fills every default', () => {
    const { config } = validateConfig(validRaw(), { file: FILE, env: {} });
    assert.equal(config.mqtt.protocolVersion, 5);
    assert.equal(config.mqtt.prefix, 'printer-agent/v1');
    assert.equal(config.mqtt.maxMessageBytes, 64 * 1024);
    assert.equal(config.mqtt.tls.rejectUnauthorized, true);
    assert.equal(config.keys.scheme, 'RSA-SHA256');
    assert.deepEqual(config.printers[0]!.roles, ['receipt']);
    assert.equal(config.printers[0]!.statusIntervalMs, 5000);
    assert.equal(config.printers[0]!.confirmTimeoutSec, 15);
    assert.deepEqual(config.receipt.money, { currency: 'PHP', locale: 'en-PH', display: 'symbol' });
    assert.deepEqual(config.receipt.markings, {
      lateAfterMinutes: 15,
      possibleDuplicatePolicy: 'reprint-marked',
    });
    assert.equal(config.stateDir, '/var/lib/printer-agent');
    assert.equal(config.catchUp.enabled, true);
    assert.equal(config.catchUp.minIntervalSec, 10);
    assert.equal(config.catchUp.pageSize, 100);
    assert.equal(config.catchUp.windowMinutes, 5);
    assert.equal(config.retention.printedDays, 14);
    assert.equal(config.logLevel, 'info');
  });

  it('accepts catch-up turned off without its URL and key', () => {
    const raw = validRaw();
    raw.catchUp = { enabled: false };
    delete (raw.keys as Raw).storePrivateKeyFile;
    assert.deepEqual(problems(raw), []);
  });

  it('accepts the catch-up transports §8 allows, and says which ones weaken it', () => {
    const accepted: Array<[Raw, RegExp | null]> = [
      [{ baseUrl: 'https://orders.example.com', caFile: 'service-ca.pem' }, null],
      [{ baseUrl: 'http://127.0.0.1:8080' }, null],
      [{ baseUrl: 'http://localhost:8080/api' }, null],
      [{ baseUrl: 'http://[::1]:8080' }, null],
      [{ baseUrl: 'http://192.0.2.10:8080', allowInsecureHttp: true }, /allowInsecureHttp is true/],
      [{ baseUrl: 'https://orders.example.com', responseSignature: 'off' }, /"off"/],
    ];
    for (const [catchUp, warning] of accepted) {
      const raw = validRaw();
      raw.catchUp = catchUp;
      assert.deepEqual(problems(raw), [], JSON.stringify(catchUp));
      const warnings = catchUpWarnings(raw);
      if (warning === null) assert.deepEqual(warnings, [], JSON.stringify(catchUp));
      else {
        assert.equal(warnings.length, 1);
        assert.match(warnings[0]!, warning);
      }
    }
    // Catch-up off: its URL is not used, so it is neither refused nor warned about.
    const off = validRaw();
    off.catchUp = { enabled: false, baseUrl: 'http://192.0.2.10' };
    assert.deepEqual(problems(off), []);
    assert.deepEqual(catchUpWarnings(off), []);
  });

  it('validates config/config.example.json', () => {
    const path = join(ROOT, 'config', 'config.example.json');
    const raw = JSON.parse(readFileSync(path, 'utf8')) as Raw;
    const { config } = validateConfig(raw, { file: path, env: {} });
    assert.equal(config.printers.length, 2);
    assert.deepEqual(config.printers[1]!.roles, ['kitchen']);
  });
});

describe('config schema: JSON schema for editors', () => {
  it('describes every property', () => {
    const missing: string[] = [];
    const visit = (node: Record<string, unknown>, path: string) => {
      const properties = (node.properties ?? {}) as Record<string, Record<string, unknown>>;
      for (const [name, child] of Object.entries(properties)) {
        const here = path ? `${path}.${name}` : name;
        if (typeof child.description !== 'string' || child.description === '') missing.push(here);
        visit(child, here);
        const items = child.items as Record<string, unknown> | undefined;
        if (items) visit(items, `${here}[]`);
      }
    };
    visit(configJsonSchema(), '');
    assert.deepEqual(missing, []);
  });
});
