import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentError } from '../../src/errors.js';
import { parseServiceConfig } from '../../src/order-service/index.js';

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
    assert.equal(c.database, ':memory:');
  });
});
