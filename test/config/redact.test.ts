import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.js';
import { REDACTED, redactConfig, secretValues } from '../../src/config/redact.js';
import { SCRUBBED, scrubText, secretForms } from '../../src/logging.js';
import {
  FILE_MQTT_PASSWORD,
  FILE_STORE_KEY,
  findLeaks,
  MQTT_PASSWORD,
  STORE_KEY,
  type Workspace,
  workspace,
} from './fixtures.js';

let ws: Workspace;
beforeEach(() => {
  ws = workspace();
});
afterEach(() => ws.cleanup());

describe('redaction', () => {
  it('masks the secrets of a loaded config and keeps the file paths', () => {
    const { config } = loadConfig({ configPath: ws.configPath, env: {} });
    const shown = redactConfig(config);
    const text = JSON.stringify(shown);
    assert.deepEqual(findLeaks([text]), []);
    assert.equal(shown.storeKey, REDACTED);
    assert.equal((shown.mqtt as Record<string, unknown>).password, REDACTED);
    assert.equal(shown.storeKeyFile, config.storeKeyFile);
    assert.equal((shown.mqtt as Record<string, unknown>).passwordFile, config.mqtt.passwordFile);
    assert.equal(
      (shown.keys as Record<string, unknown>).storePrivateKeyFile,
      config.keys.storePrivateKeyFile,
    );
    // The original is untouched.
    assert.equal(config.storeKey, FILE_STORE_KEY);
  });

  it('masks inline secrets of a raw file and credentials someone put into URLs', () => {
    const shown = redactConfig({
      storeKey: STORE_KEY,
      mqtt: { url: `mqtts://u:${MQTT_PASSWORD}@broker:8883`, password: MQTT_PASSWORD },
      printers: [{ url: `tcp://u:${MQTT_PASSWORD}@10.0.0.1` }],
      catchUp: { baseUrl: `https://u:${MQTT_PASSWORD}@orders` },
    });
    assert.deepEqual(findLeaks([JSON.stringify(shown)]), []);
    assert.equal((shown.mqtt as Record<string, unknown>).url, 'mqtts://***@broker:8883');
  });

  it('lists the secret values, which the logger scrubs from any text', () => {
    const { config } = loadConfig({ configPath: ws.configPath, env: {} });
    const secrets = secretValues(config);
    assert.deepEqual(secrets.sort(), [FILE_MQTT_PASSWORD, FILE_STORE_KEY].sort());
    const line = `connect as ${config.mqtt.username} with ${FILE_MQTT_PASSWORD} for ${FILE_STORE_KEY}`;
    assert.equal(
      scrubText(line, secretForms(secrets)),
      `connect as store-0001 with ${SCRUBBED} for ${SCRUBBED}`,
    );
    assert.deepEqual(secretValues({ storeKey: '', mqtt: {} }), []);
  });
});
