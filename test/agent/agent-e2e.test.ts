/**
 * The daemon end to end: a real Mosquitto started by the test, the emulator on TCP, the agent in
 * this process, and a plain MQTT client playing the order service. Assertions read what leaves
 * the agent (job events, retained status) and what the emulator printed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { Agent, type AgentSettings } from '../../src/agent.js';
import {
  listenTcp,
  renderText,
  type TcpEndpoint,
  VirtualPrinter,
} from '../../src/emulator/index.js';
import { createLogger } from '../../src/logging.js';
import { buildEnvelope } from '../../src/protocol/envelope.js';
import { type JobEvent, topics } from '../../src/protocol/print-protocol.js';
import { generateKeyPair, parseKey } from '../../src/protocol/signing.js';
import { deriveStoreId } from '../../src/protocol/store-id.js';
import { formatTimestamp } from '../../src/protocol/time.js';
import { receiptOptions } from '../../src/receipt/options.js';
import { testAgentBasics, testMqtt } from '../helpers/agent-settings.js';
import { Mosquitto, skipWithoutMosquitto } from '../helpers/mosquitto.js';
import { waitFor } from '../helpers/waiting.js';

const APP_ID = 'A-e2e';
const STORE_KEY = 'sk-e2e-secret-7731-do-not-leak';
const pair = generateKeyPair();
const other = generateKeyPair();
const serviceKey = parseKey(pair.privatePem, 'private');
const otherKey = parseKey(other.privatePem, 'private');
const STORE_ID = deriveStoreId(APP_ID, STORE_KEY);

/** For this store (v1.1 §4 storeId), created now in the host's zone (the agent's, no zone set). */
function instruction(n: number, extra: Record<string, unknown> = {}) {
  return {
    storeId: STORE_ID,
    jobId: `P-E2E-${n}`,
    orderNo: `O-E2E-${n}`,
    pickUpNo: `A${String(n).padStart(3, '0')}`,
    createTime: formatTimestamp(new Date()),
    order: {
      productInfo: [{ productName: `Adobo plate ${n}`, price: 18500, quantity: 1 }],
      orderType: 2,
      paymentWay: 2,
      paymentTransactionId: `M-${n}`,
    },
    ...extra,
  };
}

for (const protocolVersion of [5, 4] as const) {
  describe(`agent end to end over MQTT ${protocolVersion === 5 ? '5' : '3.1.1'}`, {
    skip: skipWithoutMosquitto(),
  }, () => {
    let broker: Mosquitto;
    let emulator: VirtualPrinter;
    let endpoint: TcpEndpoint;
    let agent: Agent;
    let client: MqttClient;
    const events: JobEvent[] = [];
    let status: Record<string, unknown> | null = null;
    const logLines: string[] = [];
    const storeId = deriveStoreId(APP_ID, STORE_KEY);
    const t = topics('printer-agent/v1', storeId);

    before(async () => {
      broker = await Mosquitto.start();
      emulator = new VirtualPrinter({ columns: 48 });
      endpoint = await listenTcp(emulator, { port: 0 });
      const dir = mkdtempSync(join(tmpdir(), 'pa-e2e-'));
      writeFileSync(join(dir, 'service-public.pem'), pair.publicPem);
      const settings: AgentSettings = {
        appId: APP_ID,
        storeKey: STORE_KEY,
        storeId,
        mqtt: testMqtt(broker.url, storeId, protocolVersion),
        keys: { servicePublicKeyFile: join(dir, 'service-public.pem'), scheme: 'RSA-SHA256' },
        printers: [
          {
            id: 'receipt',
            url: endpoint.address,
            profile: 'generic-80mm',
            roles: ['receipt'],
            statusIntervalMs: 200,
          },
        ],
        receipt: receiptOptions({ header: ['E2E Store'] }),
        ...testAgentBasics(join(dir, 'state')),
      };
      const log = createLogger({
        level: 'debug',
        secrets: [STORE_KEY],
        destination: { write: (line: string) => void logLines.push(line) },
      });
      agent = await Agent.start(settings, log);
      client = mqtt.connect(broker.url, {
        protocolVersion: 5,
        clientId: `service-${protocolVersion}`,
      });
      client.on('message', (topic, payload) => {
        // Delivery is at least once: a resent event has the same eventId and counts once.
        if (topic === t.job) {
          const event = JSON.parse(payload.toString()) as JobEvent;
          if (!events.some((e) => e.eventId === event.eventId)) events.push(event);
        }
        if (topic === t.status) status = JSON.parse(payload.toString()) as Record<string, unknown>;
      });
      await new Promise<void>((resolve) => client.once('connect', () => resolve()));
      await client.subscribeAsync([t.job, t.status], { qos: 1 });
      // Agent.start returns before the broker connection is up: until the agent subscribed, an
      // instruction would find no session to wait in. Its online status comes after the SUBSCRIBE.
      await waitFor('the agent online', () => status?.online === true, 20_000);
    });

    after(async () => {
      await client?.endAsync();
      await agent?.stop();
      await endpoint?.close();
      await broker?.stop();
    });

    const publish = (topic: string, body: string | object) =>
      client.publishAsync(topic, typeof body === 'string' ? body : JSON.stringify(body), {
        qos: 1,
      });
    const statesOf = (jobId: string) => events.filter((e) => e.jobId === jobId).map((e) => e.state);

    it('prints a signed instruction: queued -> printing -> printed, and a retained status', async () => {
      await publish(
        t.print,
        buildEnvelope({
          appId: APP_ID,
          storeKey: STORE_KEY,
          param: instruction(1),
          key: serviceKey,
        }),
      );
      await waitFor('printed event', () => statesOf('P-E2E-1').includes('printed'), 15_000);
      assert.deepEqual(statesOf('P-E2E-1'), ['queued', 'printing', 'printed']);
      const ticket = emulator.paper.tickets.at(-1);
      assert.ok(ticket);
      assert.match(renderText(ticket), /Adobo plate 1/);
      await waitFor('a retained status', () => status !== null);
      assert.equal(status!.online, true);
      assert.equal(status!.storeId, storeId);
    });

    it('rejects forged, wrong-store, oversize and malformed messages with events, printing none', async () => {
      const tickets = emulator.paper.tickets.length;
      const forged = buildEnvelope({
        appId: APP_ID,
        storeKey: STORE_KEY,
        param: instruction(2),
        key: otherKey,
      });
      const tampered = {
        ...buildEnvelope({
          appId: APP_ID,
          storeKey: STORE_KEY,
          param: instruction(3),
          key: serviceKey,
        }),
      };
      tampered.param = tampered.param.replace('18500', '1');
      const wrongStore = buildEnvelope({
        appId: APP_ID,
        storeKey: 'another-store-key',
        param: instruction(4),
        key: serviceKey,
      });
      const oversize = buildEnvelope({
        appId: APP_ID,
        storeKey: STORE_KEY,
        param: instruction(5, {
          order: { ...instruction(5).order, customPrintContext: 'x'.repeat(70_000) },
        }),
        key: serviceKey,
      });
      const malformedParam = buildEnvelope({
        appId: APP_ID,
        storeKey: STORE_KEY,
        param: { jobId: 'P-E2E-6' },
        key: serviceKey,
      });
      const before = events.filter((e) => e.state === 'rejected').length;
      for (const body of [
        forged,
        tampered,
        wrongStore,
        oversize,
        malformedParam,
        'not json at all',
        '{"appId":1}',
      ])
        await publish(t.print, body);
      await waitFor(
        'seven rejections',
        () => events.filter((e) => e.state === 'rejected').length >= before + 7,
        15_000,
      );
      const codes = events
        .filter((e) => e.state === 'rejected')
        .slice(before)
        .map((e) => e.reason?.code);
      assert.deepEqual(codes, [
        'SIGNATURE_INVALID',
        'SIGNATURE_INVALID',
        'IDENTITY_MISMATCH',
        'TOO_LARGE',
        'PARAM_INVALID',
        'ENVELOPE_INVALID',
        'ENVELOPE_INVALID',
      ]);
      // And the daemon still works after all that.
      await publish(
        t.print,
        buildEnvelope({
          appId: APP_ID,
          storeKey: STORE_KEY,
          param: instruction(7),
          key: serviceKey,
        }),
      );
      await waitFor(
        'the next good one printed',
        () => statesOf('P-E2E-7').includes('printed'),
        15_000,
      );
      assert.equal(emulator.paper.tickets.length, tickets + 1, 'only the good one printed');
    });

    it('a duplicate instruction prints once and is answered with a duplicate event', async () => {
      const body = buildEnvelope({
        appId: APP_ID,
        storeKey: STORE_KEY,
        param: instruction(8),
        key: serviceKey,
      });
      await publish(t.print, body);
      await waitFor('printed', () => statesOf('P-E2E-8').includes('printed'), 15_000);
      const tickets = emulator.paper.tickets.length;
      await publish(t.print, body);
      // Same orderNo with a new jobId: the business key still dedupes it.
      await publish(
        t.print,
        buildEnvelope({
          appId: APP_ID,
          storeKey: STORE_KEY,
          param: { ...instruction(8), jobId: 'P-E2E-8b' },
          key: serviceKey,
        }),
      );
      await waitFor(
        'two duplicate events',
        () =>
          statesOf('P-E2E-8').includes('duplicate') && statesOf('P-E2E-8b').includes('duplicate'),
        15_000,
      );
      assert.equal(emulator.paper.tickets.length, tickets, 'not printed again');
    });

    it('commands: test-print prints a test page, reprint prints the stored receipt marked REPRINT', async () => {
      const command = (param: object) =>
        buildEnvelope({
          appId: APP_ID,
          storeKey: STORE_KEY,
          param: { storeId: STORE_ID, ...param },
          key: serviceKey,
        });
      await publish(t.command, command({ commandId: 'C-TEST-1', type: 'test-print' }));
      await waitFor(
        'test page printed',
        () => statesOf('command:C-TEST-1').includes('printed'),
        15_000,
      );
      assert.match(renderText(emulator.paper.tickets.at(-1)!), /TEST PAGE/);
      await publish(
        t.command,
        command({ commandId: 'C-REPRINT-1', type: 'reprint', orderNo: 'O-E2E-1' }),
      );
      await waitFor(
        'reprint printed',
        () => statesOf('command:C-REPRINT-1').includes('printed'),
        15_000,
      );
      const reprint = renderText(emulator.paper.tickets.at(-1)!);
      assert.match(reprint, /REPRINT #1/);
      assert.match(reprint, /Adobo plate 1/);
      // A command is deduplicated by commandId, and an unknown type is rejected, not ignored.
      await publish(
        t.command,
        command({ commandId: 'C-REPRINT-1', type: 'reprint', orderNo: 'O-E2E-1' }),
      );
      await publish(t.command, command({ commandId: 'C-X', type: 'explode' }));
      await waitFor(
        'duplicate command answered',
        () => statesOf('command:C-REPRINT-1').includes('duplicate'),
        15_000,
      );
      await waitFor(
        'unknown command rejected',
        () =>
          events.some(
            (e) =>
              e.state === 'rejected' &&
              e.reason?.code === 'PARAM_INVALID' &&
              /type/.test(e.reason.message),
          ),
        15_000,
      );
    });

    it('never writes the storeKey into a log line, an event or the status', () => {
      const everything = [
        ...logLines,
        ...events.map((e) => JSON.stringify(e)),
        JSON.stringify(status),
      ].join('\n');
      assert.ok(logLines.length > 5, 'the agent logged');
      assert.ok(!everything.includes(STORE_KEY));
      assert.ok(!everything.includes('another-store-key'));
    });
  });
}
