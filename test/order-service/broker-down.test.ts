/**
 * The service's promise when the broker is away (issue 8): the create still succeeds, the signed
 * instruction waits in the service's outbox, and once the broker is back it reaches the agent and
 * prints. Everything real: Mosquitto (with persistence, as a store's broker runs), the service
 * over HTTP with its MQTT publisher, the agent in this process, the emulator on TCP.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import mqtt from 'mqtt';
import { Mosquitto, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { Agent } from '../../src/agent.js';
import { type RunningService, startOrderService } from '../../src/cli/order-service.js';
import {
  listenTcp,
  renderText,
  type TcpEndpoint,
  VirtualPrinter,
} from '../../src/emulator/index.js';
import { createLogger } from '../../src/logging.js';
import { parseServiceConfig } from '../../src/order-service/index.js';
import {
  buildEnvelope,
  deriveStoreId,
  generateKeyPair,
  parseKey,
  topics,
} from '../../src/protocol/index.js';
import { receiptOptions } from '../../src/receipt/options.js';
import { testAgentBasics, testMqtt } from '../helpers/agent-settings.js';

const APP_ID = 'A-down';
const STORE_KEY = 'sk-broker-down-secret';

describe('order created while the broker is down', { skip: skipWithoutMosquitto() }, () => {
  let broker: Mosquitto;
  let service: RunningService;
  let agent: Agent;
  let emulator: VirtualPrinter;
  let endpoint: TcpEndpoint;
  const client = generateKeyPair();
  const clientKey = parseKey(client.privatePem, 'private');

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pa-broker-down-'));
    const serviceKeys = generateKeyPair();
    writeFileSync(join(dir, 'client.pub'), client.publicPem);
    writeFileSync(join(dir, 'service.key'), serviceKeys.privatePem);
    writeFileSync(join(dir, 'service.pub'), serviceKeys.publicPem);
    broker = await Mosquitto.start({ persistence: true });
    emulator = new VirtualPrinter({ columns: 48 });
    endpoint = await listenTcp(emulator, { port: 0 });
    const silent = createLogger({ level: 'silent' });
    service = await startOrderService(
      parseServiceConfig({
        apps: [
          {
            appId: APP_ID,
            publicKeyFile: 'client.pub',
            stores: [{ storeKey: STORE_KEY, restaurantNo: 'R1', branchIdentifier: 'B1' }],
          },
        ],
        servicePrivateKeyFile: 'service.key',
        database: ':memory:',
        listen: { port: 0 },
        mqtt: { url: broker.url },
      }),
      dir,
      silent,
    );
    const storeId = deriveStoreId(APP_ID, STORE_KEY);
    agent = await Agent.start(
      {
        appId: APP_ID,
        storeKey: STORE_KEY,
        storeId,
        mqtt: { ...testMqtt(broker.url, storeId), reconnectMaxMs: 500 },
        keys: { servicePublicKeyFile: join(dir, 'service.pub'), scheme: 'RSA-SHA256' },
        printers: [
          {
            id: 'receipt',
            url: endpoint.address,
            profile: 'generic-80mm',
            roles: ['receipt'],
            statusIntervalMs: 200,
          },
        ],
        receipt: receiptOptions({ header: ['Broker Down Cafe'] }),
        ...testAgentBasics(join(dir, 'state')),
      },
      silent,
    );
    // Agent.start returns before the broker connection is up. Until the agent has subscribed, the
    // broker holds no session for it and would drop the first instruction: wait for its retained
    // online status (published after the SUBSCRIBE went out on the same connection).
    const observer = await mqtt.connectAsync(broker.url, { protocolVersion: 5 });
    try {
      await observer.subscribeAsync(topics('printer-agent/v1', storeId).status, { qos: 1 });
      let online = false;
      observer.on('message', (_topic, payload) => {
        online ||= (JSON.parse(payload.toString()) as { online?: boolean }).online === true;
      });
      await waitFor('the agent online', () => online, 20_000);
    } finally {
      await observer.endAsync(true);
    }
  });

  after(async () => {
    await agent?.stop();
    await service?.close();
    await endpoint?.close();
    await broker?.stop();
  });

  const create = async (productName: string) => {
    const res = await fetch(`${service.url}/open-api/order/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(
        buildEnvelope({
          appId: APP_ID,
          storeKey: STORE_KEY,
          key: clientKey,
          param: {
            productInfo: [{ productName, price: 9_900, quantity: 1 }],
            orderType: 2,
            paymentWay: 2,
            paymentTransactionId: `POS-${productName}`,
          },
        }),
      ),
    });
    return (await res.json()) as { code: number; data: { orderNo: string; pickUpNo: string } };
  };
  const printed = (orderNo: string) =>
    emulator.paper.tickets.filter((t) => renderText(t).includes(orderNo));

  it('answers success, keeps the instruction, and prints it once the broker is back', async () => {
    // The path works while the broker is up (and the agent's session now exists on the broker).
    const first = await create('Halo-halo');
    assert.equal(first.code, 10000);
    await waitFor('the first receipt', () => printed(first.data.orderNo).length === 1, 15_000);

    await broker.stop();
    const res = await create('Sinigang');
    assert.equal(res.code, 10000, 'the create is not failed by the broker being down');
    assert.match(res.data.pickUpNo, /^A\d{3}$/);
    assert.equal(await service.app.outbox.size(), 1, 'the instruction waits in the outbox');
    assert.equal(printed(res.data.orderNo).length, 0);

    await broker.restart();
    await waitFor(
      'the outbox drained',
      async () => (await service.app.outbox.size()) === 0,
      15_000,
    );
    await waitFor('the receipt printed', () => printed(res.data.orderNo).length === 1, 15_000);
    const text = renderText(printed(res.data.orderNo)[0]!);
    assert.match(text, /Sinigang/);
    assert.match(text, new RegExp(res.data.pickUpNo));
    assert.equal(printed(first.data.orderNo).length, 1, 'nothing printed twice');
  });
});
