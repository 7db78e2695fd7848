/**
 * Issue 18, "the status lists each role's printer": an agent with two printers, the counter
 * (receipt role) and the kitchen (kitchen and bar roles), each on its own emulator over TCP, a
 * real Mosquitto and the agent's local API. The retained status on the broker, the agent's own
 * status (what the local API and the status page show) and `printer-agent status` (text and
 * --json) all name each printer's roles.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { Agent, type AgentSettings } from '../../src/agent.js';
import { listenTcp, type TcpEndpoint, VirtualPrinter } from '../../src/emulator/index.js';
import { createLogger } from '../../src/logging.js';
import { type AgentStatus, topics } from '../../src/protocol/print-protocol.js';
import { generateKeyPair } from '../../src/protocol/signing.js';
import { deriveStoreId } from '../../src/protocol/store-id.js';
import { receiptOptions } from '../../src/receipt/options.js';
import { testAgentBasics, testMqtt } from '../helpers/agent-settings.js';
import { runCliInProcess } from '../helpers/cli.js';
import { freePort, Mosquitto, skipWithoutMosquitto } from '../helpers/mosquitto.js';
import { waitFor } from '../helpers/waiting.js';

const APP_ID = 'A-roles-status';
const STORE_KEY = 'sk-roles-status-secret-7731-do-not-leak';
const STORE_ID = deriveStoreId(APP_ID, STORE_KEY);
const t = topics('printer-agent/v1', STORE_ID);

/** The printers' ids and roles, in config order. */
const EXPECTED = [
  ['counter', ['receipt']],
  ['kitchen', ['kitchen', 'bar']],
];

describe('the status names each printer and the roles it serves', {
  skip: skipWithoutMosquitto(),
}, () => {
  let broker: Mosquitto;
  const counter = new VirtualPrinter({ columns: 48 });
  const kitchen = new VirtualPrinter({ columns: 48 });
  let counterEnd: TcpEndpoint;
  let kitchenEnd: TcpEndpoint;
  let agent: Agent;
  let client: MqttClient;
  let configPath: string;
  let retained: AgentStatus | null = null;

  before(async () => {
    broker = await Mosquitto.start();
    counterEnd = await listenTcp(counter, { port: 0 });
    kitchenEnd = await listenTcp(kitchen, { port: 0 });
    const consolePort = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'pa-status-roles-'));
    writeFileSync(join(dir, 'service-public.pem'), generateKeyPair().publicPem);
    const printers = [
      { id: 'counter', url: counterEnd.address, profile: 'generic-80mm', roles: ['receipt'] },
      {
        id: 'kitchen',
        url: kitchenEnd.address,
        profile: 'generic-80mm-buzzer',
        roles: ['kitchen', 'bar'],
      },
    ];
    const settings: AgentSettings = {
      appId: APP_ID,
      storeKey: STORE_KEY,
      storeId: STORE_ID,
      mqtt: testMqtt(broker.url, STORE_ID),
      keys: { servicePublicKeyFile: join(dir, 'service-public.pem'), scheme: 'RSA-SHA256' },
      printers: printers.map((p) => ({ ...p, statusIntervalMs: 200 })),
      routing: [
        { role: 'receipt', layout: 'receipt', orderTypes: null, items: null, skus: null },
        { role: 'kitchen', layout: 'kitchen', orderTypes: null, items: null, skus: null },
      ],
      receipt: receiptOptions({ header: ['Roles Grill'] }),
      ...testAgentBasics(join(dir, 'state')),
      console: { host: '127.0.0.1', port: consolePort, hostnames: [], metrics: false },
    };
    // The same agent as a config file: what `printer-agent status --config` reads to find it.
    configPath = join(dir, 'config.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        appId: APP_ID,
        storeKey: STORE_KEY,
        mqtt: { url: broker.url },
        keys: { servicePublicKeyFile: 'service-public.pem' },
        printers,
        routing: [{ role: 'receipt' }, { role: 'kitchen' }],
        stateDir: 'state',
        catchUp: { enabled: false },
        console: { port: consolePort },
      }),
      { mode: 0o600 },
    );
    agent = await Agent.start(
      settings,
      createLogger({ level: 'warn', secrets: [STORE_KEY], destination: { write: () => {} } }),
    );
    client = mqtt.connect(broker.url, { protocolVersion: 5, clientId: 'observer-status-roles' });
    client.on('error', () => {});
    client.on('message', (topic, payload) => {
      if (topic === t.status) retained = JSON.parse(payload.toString()) as AgentStatus;
    });
    await new Promise<void>((resolve) => client.once('connect', () => resolve()));
    await client.subscribeAsync(t.status, { qos: 1 });
    await waitFor(
      'the retained status with both printers ready',
      () =>
        retained?.online === true &&
        retained.printers.length === 2 &&
        retained.printers.every((p) => p.state === 'ready'),
    );
  });

  after(async () => {
    await client?.endAsync(true);
    await agent?.stop();
    await counterEnd?.close();
    await kitchenEnd?.close();
    await broker?.stop();
  });

  it("the retained status and the agent's own status list each printer's roles", () => {
    assert.ok(retained?.online);
    assert.deepEqual(
      retained.printers.map((p) => [p.id, p.roles]),
      EXPECTED,
    );
    const own = agent.health.status();
    assert.ok(own.online);
    assert.deepEqual(
      own.printers.map((p) => [p.id, p.roles]),
      EXPECTED,
    );
  });

  it('`printer-agent status` names the roles on each printer line', async () => {
    const run = await runCliInProcess(['status', '--config', configPath]);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^printer counter \(receipt\): ready \(paper ok\), 0 pending,/m);
    assert.match(run.stdout, /^printer kitchen \(kitchen, bar\): ready \(paper ok\), 0 pending,/m);
    assert.equal(run.stdout.match(/^printer /gm)?.length, 2, 'one line per printer');
    const json = await runCliInProcess(['status', '--config', configPath, '--json']);
    assert.equal(json.status, 0, json.stderr);
    const status = JSON.parse(json.stdout) as { printers: Array<{ id: string; roles: string[] }> };
    assert.deepEqual(
      status.printers.map((p) => [p.id, p.roles]),
      EXPECTED,
    );
  });
});
