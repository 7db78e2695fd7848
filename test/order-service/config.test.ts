import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadServiceConfig, serviceSecrets } from '../../src/cli/order-service.js';
import { AgentError } from '../../src/errors.js';
import { parseServiceConfig } from '../../src/order-service/index.js';
import { ROOT } from '../helpers/cli.js';

describe('order-service config', () => {
  it('reports problems as readable path: message lines', () => {
    assert.throws(
      () =>
        parseServiceConfig({
          apps: [
            { appId: 'A1', publicKeyFile: 'a.pub', stores: [] },
            {
              appId: 'A1',
              publicKeyFile: 'b.pub',
              stores: [
                { storeKey: 'K', restaurantNo: 'R', branchIdentifier: 'B' },
                { storeKey: 'K', restaurantNo: 'R', branchIdentifier: '' },
              ],
            },
          ],
          dataAsString: 'yes',
        }),
      (error: unknown) => {
        assert.ok(error instanceof AgentError);
        assert.equal(error.code, 'CONFIG_INVALID');
        for (const line of [
          'apps[0].stores: must list at least one store',
          'apps[1].stores[1].branchIdentifier: must not be empty',
          'servicePrivateKeyFile: ',
          'dataAsString: must be true or false',
        ]) {
          assert.ok(error.message.includes(line), `${line} in ${error.message}`);
        }
        return true;
      },
    );
  });

  it('applies defaults', () => {
    const c = parseServiceConfig({
      apps: [
        {
          appId: 'A1',
          publicKeyFile: 'a.pub',
          stores: [{ storeKey: 'K', restaurantNo: 'R', branchIdentifier: 'B' }],
        },
      ],
      servicePrivateKeyFile: 's.key',
    });
    assert.equal(c.dataAsString, false);
    assert.equal(c.database, 'order-service.sqlite');
    assert.deepEqual(c.listen, { host: '127.0.0.1', port: 8080 });
    assert.deepEqual(c.callbacks, { attempts: 4, firstRetryMs: 5000, timeoutMs: 10_000 });
  });
});

describe('config/order-service.example.json', () => {
  it('is a valid service config', () => {
    const text = readFileSync(join(ROOT, 'config', 'order-service.example.json'), 'utf8');
    const config = parseServiceConfig(JSON.parse(text));
    assert.equal(config.apps[0]!.callbackUrl, 'https://brand.example.com/orders/callback');
    assert.equal(config.mqtt?.protocolVersion, 5);
    assert.equal(config.mqtt?.tls.caFile, 'keys/broker-ca.pem');
    assert.equal(config.http.maxConnections, 256);
    assert.equal(config.http.maxConnectionsPerClient, 32);
  });
});

describe('order-service config: issue 13 sections', () => {
  const minimal = {
    apps: [
      {
        appId: 'A1',
        publicKeyFile: 'a.pub',
        stores: [{ storeKey: 'K', restaurantNo: 'R', branchIdentifier: 'B' }],
      },
    ],
    servicePrivateKeyFile: 's.key',
  };

  it('has defaults for the HTTP limits, the agents’ limit and the scheme', () => {
    const c = parseServiceConfig({ ...minimal, mqtt: { url: 'mqtts://broker:8883' } });
    assert.deepEqual(c.http, {
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5000,
      idleTimeoutMs: 60_000,
      maxConnections: 256,
      maxConnectionsPerClient: 32,
    });
    assert.equal(c.maxBodyBytes, 262_144);
    assert.equal(c.agentMaxMessageBytes, 65_536);
    assert.equal(c.signatureScheme, 'RSA-SHA256');
    assert.deepEqual(c.mqtt?.tls, { rejectUnauthorized: true });
  });

  it('refuses inconsistent limits and half a client certificate, naming the field', () => {
    assert.throws(
      () =>
        parseServiceConfig({
          ...minimal,
          http: {
            headersTimeoutMs: 40_000,
            requestTimeoutMs: 30_000,
            maxConnections: 0,
            maxConnectionsPerClient: 0,
          },
          agentMaxMessageBytes: 100,
          signatureScheme: 'MD5',
          mqtt: { url: 'mqtts://b:8883', tls: { certFile: 'c.pem', rejectUnauthorized: 'no' } },
        }),
      (error: unknown) => {
        assert.ok(error instanceof AgentError);
        for (const line of [
          'http.headersTimeoutMs: must not be longer than requestTimeoutMs',
          'http.maxConnections: must be 1 to 100000',
          'http.maxConnectionsPerClient: must be 1 to 100000',
          'agentMaxMessageBytes: must be 1024 to 1048576',
          'signatureScheme: must be one of RSA-SHA256, RSA-PSS-SHA256',
          'mqtt.tls.rejectUnauthorized: must be true or false',
        ]) {
          assert.ok(error.message.includes(line), `${line} in ${error.message}`);
        }
        return true;
      },
    );
    assert.throws(
      () =>
        parseServiceConfig({
          ...minimal,
          mqtt: { url: 'mqtts://b:8883', tls: { certFile: 'c.pem' } },
        }),
      /mqtt\.tls\.keyFile: is required with the other half of the client certificate/,
    );
  });
});

describe('order-service config: the broker password from a file', () => {
  const base = {
    apps: [
      {
        appId: 'A',
        publicKeyFile: 'a.pub',
        stores: [{ storeKey: 'K', restaurantNo: 'R', branchIdentifier: 'B' }],
      },
    ],
    servicePrivateKeyFile: 'k',
    mqtt: { url: 'mqtt://127.0.0.1' },
  };
  const write = (config: object, password?: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-config-'));
    if (password !== undefined)
      writeFileSync(join(dir, 'mqtt-password'), password, { mode: 0o600 });
    writeFileSync(join(dir, 'service.json'), JSON.stringify(config));
    return join(dir, 'service.json');
  };

  it('reads mqtt.passwordFile (first line, relative to the config file)', () => {
    const file = write(
      {
        ...base,
        mqtt: { ...base.mqtt, username: 'order-service.hq', passwordFile: 'mqtt-password' },
      },
      'from-the-file-0123456789\nignored\n',
    );
    const config = loadServiceConfig(file);
    assert.equal(config.mqtt?.password, 'from-the-file-0123456789');
    assert.ok(serviceSecrets(config).includes('from-the-file-0123456789'), 'scrubbed from the log');
  });

  it('refuses both password and passwordFile, and a file it cannot read, naming the field', () => {
    assert.throws(
      () =>
        loadServiceConfig(
          write({ ...base, mqtt: { ...base.mqtt, password: 'p', passwordFile: 'f' } }),
        ),
      /mqtt\.passwordFile: give password or passwordFile, not both/,
    );
    assert.throws(
      () => loadServiceConfig(write({ ...base, mqtt: { ...base.mqtt, passwordFile: 'missing' } })),
      /mqtt\.passwordFile: cannot read .*missing \(ENOENT\)/,
    );
  });
});
