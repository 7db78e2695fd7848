/**
 * The service's broker TLS settings (`mqtt.tls`, the agent's option names): file paths are taken
 * relative to the config file, and a file that cannot be read stops the start with an error naming
 * the option, before anything listens. (The handshake itself, against a TLS Mosquitto with a
 * test CA, is in test/security/.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startOrderService } from '../../src/cli/order-service.js';
import { AgentError } from '../../src/errors.js';
import { createLogger } from '../../src/logging.js';
import { parseServiceConfig } from '../../src/order-service/index.js';
import { APP_ID, dir, STORE_KEY } from './harness.js';

const config = (tls: Record<string, unknown>) =>
  parseServiceConfig({
    apps: [
      {
        appId: APP_ID,
        publicKeyFile: 'client.pub',
        stores: [{ storeKey: STORE_KEY, restaurantNo: 'R', branchIdentifier: 'B' }],
      },
    ],
    servicePrivateKeyFile: 'service.key',
    database: ':memory:',
    listen: { port: 0 },
    mqtt: { url: 'mqtts://localhost:1', tls },
  });

describe('order-service broker TLS settings', () => {
  for (const option of ['caFile', 'certFile', 'keyFile'] as const) {
    it(`refuses to start when mqtt.tls.${option} cannot be read, naming it`, async () => {
      const tls =
        option === 'caFile'
          ? { caFile: 'tls/missing-ca.pem' }
          : { certFile: 'client.pub', keyFile: 'service.key', [option]: 'tls/missing.pem' };
      await assert.rejects(
        startOrderService(config(tls), dir, createLogger({ level: 'silent' })),
        (error: unknown) => {
          assert.ok(error instanceof AgentError);
          assert.equal(error.code, 'CONFIG_INVALID');
          // Resolved against the config file's folder, as key files are.
          assert.match(
            error.message,
            new RegExp(`^mqtt\\.tls\\.${option}: cannot read ${dir}/tls/missing`),
          );
          assert.match(error.message, /\(ENOENT\)$/);
          return true;
        },
      );
    });
  }
});
