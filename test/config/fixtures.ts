/**
 * Config test fixtures: a temporary folder with a valid config and the files it names, and
 * distinctive secrets that every test scans its output for.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFIG_VERSION } from '../../src/config/migrations.js';

/** Distinctive secrets: if one of these appears in any output, a secret leaked. */
export const STORE_KEY = 'sk-LEAKCHECK-7f3a9c1e-store-key';
export const MQTT_PASSWORD = 'pw-LEAKCHECK-b41d0e92-broker';
export const FILE_STORE_KEY = 'sk-LEAKCHECK-5d2e8a60-from-file';
export const FILE_MQTT_PASSWORD = 'pw-LEAKCHECK-09c7f3b1-from-file';
/** Content of the store private key file (never read by the config room). */
export const PRIVATE_KEY_BODY = 'PRIVKEY-LEAKCHECK-3e1f0a77';
export const ALL_SECRETS = [
  STORE_KEY,
  MQTT_PASSWORD,
  FILE_STORE_KEY,
  FILE_MQTT_PASSWORD,
  PRIVATE_KEY_BODY,
] as const;

/** Fails when any text holds any of the secrets (checked piece by piece, so a partial echo counts). */
export function findLeaks(texts: readonly string[], secrets: readonly string[] = ALL_SECRETS) {
  const leaks: string[] = [];
  for (const text of texts)
    for (const secret of secrets) {
      // The distinctive middle part is enough to identify an echo even if it was cut.
      const marker = secret.split('-').slice(1, 3).join('-');
      if (text.includes(secret) || text.includes(marker)) leaks.push(secret);
    }
  return leaks;
}

/** A config object that validates (in memory; key paths need not exist for the schema). */
export function validRaw(): Record<string, unknown> {
  return {
    version: CONFIG_VERSION,
    appId: 'A1',
    storeKey: STORE_KEY,
    mqtt: { url: 'mqtts://broker.example.com:8883' },
    keys: {
      servicePublicKeyFile: '/etc/printer-agent/service-public.pem',
      storePrivateKeyFile: '/etc/printer-agent/store-private.pem',
    },
    printers: [{ id: 'receipt', url: 'tcp://127.0.0.1:9100', profile: 'generic-80mm' }],
    catchUp: { baseUrl: 'https://orders.example.com' },
  };
}

export interface Workspace {
  dir: string;
  configPath: string;
  file(name: string, content: string, mode?: number): string;
  writeConfig(value: unknown, mode?: number, name?: string): string;
  cleanup(): void;
}

/**
 * A folder holding service-public.pem, store-private.pem (0600), store-key and mqtt-password
 * (0600, first line the secret) and a config.json (0600) that names them by relative path.
 */
export function workspace(): Workspace {
  const dir = mkdtempSync(join(tmpdir(), 'printer-agent-config-'));
  const file = (name: string, content: string, mode = 0o600) => {
    const path = join(dir, name);
    writeFileSync(path, content, { mode });
    chmodSync(path, mode);
    return path;
  };
  file('service-public.pem', '-----BEGIN PUBLIC KEY-----\nnot-checked-here\n', 0o644);
  file('store-private.pem', `-----BEGIN PRIVATE KEY-----\n${PRIVATE_KEY_BODY}\n`);
  file('store-key', `${FILE_STORE_KEY}\nsecond line is ignored\n`);
  file('mqtt-password', `  ${FILE_MQTT_PASSWORD}  \n`);
  const writeConfig = (value: unknown, mode = 0o600, name = 'config.json') =>
    file(name, typeof value === 'string' ? value : `${JSON.stringify(value, null, 2)}\n`, mode);
  const configPath = writeConfig(fileConfig());
  return { dir, configPath, file, writeConfig, cleanup: () => rmSync(dir, { recursive: true }) };
}

/** The workspace's config: secrets as files, relative paths. */
export function fileConfig(): Record<string, unknown> {
  return {
    // As this agent writes it: a file without a version is 0.1.0's, which commands migrate.
    version: CONFIG_VERSION,
    appId: 'A1',
    storeKeyFile: 'store-key',
    mqtt: {
      url: 'mqtts://broker.example.com:8883',
      username: 'store-0001',
      passwordFile: 'mqtt-password',
    },
    keys: { servicePublicKeyFile: 'service-public.pem', storePrivateKeyFile: 'store-private.pem' },
    printers: [
      { id: 'receipt', url: 'tcp://127.0.0.1:9100', profile: 'generic-80mm' },
      { id: 'kitchen', url: 'tcp://127.0.0.1:9101', profile: 'generic-58mm' },
    ],
    catchUp: { baseUrl: 'https://orders.example.com' },
  };
}
