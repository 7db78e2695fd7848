/** The catch-up section of the configuration as the daemon gets it (`printer-agent run`). */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { settingsFrom } from '../../src/cli/agent-settings.js';
import { loadConfig } from '../../src/config/load.js';
import { fileConfig, workspace } from '../config/fixtures.js';

describe('catch-up settings', () => {
  const ws = workspace();
  after(() => ws.cleanup());
  const load = (catchUp: Record<string, unknown>) => {
    const path = ws.writeConfig({ ...fileConfig(), catchUp }, 0o600, 'catch-up.json');
    return settingsFrom(loadConfig({ configPath: path, env: {} }).config);
  };

  it('on by default, in milliseconds, with the store key file resolved', () => {
    const settings = load({ baseUrl: 'https://orders.example.com/api' });
    assert.deepEqual(settings.catchUp, {
      baseUrl: 'https://orders.example.com/api',
      storePrivateKeyFile: join(ws.dir, 'store-private.pem'),
      intervalMs: 60_000,
      minIntervalMs: 10_000,
      pageSize: 100,
      maxAgeMs: 60 * 60_000,
      windowMs: 5 * 60_000,
      // print-protocol §8 defaults: answers must be signed, no lab switch; v1.2 §10: and bound
      // to the request (version 1 signatures refused).
      responseSignature: 'required',
      allowInsecureHttp: false,
      allowV1Signatures: false,
    });
  });

  it('carries every field, the time zone included', () => {
    const settings = load({
      baseUrl: 'https://orders.example.com',
      intervalSec: 120,
      minIntervalSec: 15,
      pageSize: 50,
      maxAgeMinutes: 30,
      windowMinutes: 10,
      timeZone: 'Asia/Manila',
    });
    assert.equal(settings.catchUp?.intervalMs, 120_000);
    assert.equal(settings.catchUp?.minIntervalMs, 15_000);
    assert.equal(settings.catchUp?.pageSize, 50);
    assert.equal(settings.catchUp?.maxAgeMs, 30 * 60_000);
    assert.equal(settings.catchUp?.windowMs, 10 * 60_000);
    assert.equal(settings.catchUp?.timeZone, 'Asia/Manila');
  });

  it('carries the transport and identity settings, the CA file resolved', () => {
    ws.file('service-ca.pem', 'PEM');
    const settings = load({
      baseUrl: 'https://orders.example.com',
      caFile: 'service-ca.pem',
      responseSignature: 'off',
      restaurantNo: 'R100',
      branchIdentifier: 'B-1',
    });
    assert.equal(settings.catchUp?.caFile, join(ws.dir, 'service-ca.pem'));
    assert.equal(settings.catchUp?.responseSignature, 'off');
    assert.equal(settings.catchUp?.restaurantNo, 'R100');
    assert.equal(settings.catchUp?.branchIdentifier, 'B-1');
    const lab = load({ baseUrl: 'http://192.0.2.10', allowInsecureHttp: true });
    assert.equal(lab.catchUp?.allowInsecureHttp, true);
    // v1.2 §10: version 1 signatures only when the config says so.
    const v1 = load({ baseUrl: 'https://orders.example.com', allowV1Signatures: true });
    assert.equal(v1.catchUp?.allowV1Signatures, true);
  });

  it('http to a host other than loopback is a config error naming the field and the fix', () => {
    assert.throws(
      () => load({ baseUrl: 'http://192.0.2.10' }),
      /catchUp\.baseUrl: must be https:\/\/ for a host other than loopback.*allowInsecureHttp/,
    );
  });

  it('off when disabled', () => {
    assert.equal(load({ enabled: false }).catchUp, null);
  });

  it('an unknown time zone is a config error naming the field', () => {
    assert.throws(
      () => load({ baseUrl: 'https://orders.example.com', timeZone: 'Mars/Olympus' }),
      /catchUp\.timeZone: must be an IANA time zone/,
    );
  });
});
