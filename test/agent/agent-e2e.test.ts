/**
 * The daemon end to end: a real Mosquitto started by the test, the emulator on TCP, the agent in
 * this process, and a plain MQTT client playing the order service. Assertions read what leaves
 * the agent (job events, retained status) and what the emulator printed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { renderText } from '../../src/emulator/index.js';
import { buildEnvelope } from '../../src/protocol/envelope.js';
import { topics } from '../../src/protocol/print-protocol.js';
import { generateKeyPair, parseKey } from '../../src/protocol/signing.js';
import { deriveStoreId } from '../../src/protocol/store-id.js';
import { formatTimestamp } from '../../src/protocol/time.js';
import { type AgentRig, startAgentRig } from '../helpers/agent-rig.js';

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
    let rig: AgentRig;
    const storeId = deriveStoreId(APP_ID, STORE_KEY);
    const t = topics('printer-agent/v1', storeId);

    before(async () => {
      rig = await startAgentRig({
        appId: APP_ID,
        storeKey: STORE_KEY,
        header: 'E2E Store',
        protocolVersion,
        servicePublicPem: pair.publicPem,
        observer: { clientId: `service-${protocolVersion}` },
      });
    });

    after(async () => rig?.stop());

    it('prints a signed instruction: queued -> printing -> printed, and a retained status', async () => {
      await rig.publish(
        t.print,
        buildEnvelope({
          appId: APP_ID,
          storeKey: STORE_KEY,
          param: instruction(1),
          key: serviceKey,
        }),
      );
      await waitFor('printed event', () => rig.statesOf('P-E2E-1').includes('printed'), 15_000);
      assert.deepEqual(rig.statesOf('P-E2E-1'), ['queued', 'printing', 'printed']);
      const ticket = rig.emulator.paper.tickets.at(-1);
      assert.ok(ticket);
      assert.match(renderText(ticket), /Adobo plate 1/);
      await waitFor('a retained status', () => rig.status() !== null);
      assert.equal(rig.status()!.online, true);
      assert.equal(rig.status()!.storeId, storeId);
    });

    it('rejects forged, wrong-store, oversize and malformed messages with events, printing none', async () => {
      const tickets = rig.emulator.paper.tickets.length;
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
      const before = rig.events.filter((e) => e.state === 'rejected').length;
      for (const body of [
        forged,
        tampered,
        wrongStore,
        oversize,
        malformedParam,
        'not json at all',
        '{"appId":1}',
      ])
        await rig.publish(t.print, body);
      await waitFor(
        'seven rejections',
        () => rig.events.filter((e) => e.state === 'rejected').length >= before + 7,
        15_000,
      );
      const codes = rig.events
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
      await rig.publish(
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
        () => rig.statesOf('P-E2E-7').includes('printed'),
        15_000,
      );
      assert.equal(rig.emulator.paper.tickets.length, tickets + 1, 'only the good one printed');
    });

    it('a duplicate instruction prints once and is answered with a duplicate event', async () => {
      const body = buildEnvelope({
        appId: APP_ID,
        storeKey: STORE_KEY,
        param: instruction(8),
        key: serviceKey,
      });
      await rig.publish(t.print, body);
      await waitFor('printed', () => rig.statesOf('P-E2E-8').includes('printed'), 15_000);
      const tickets = rig.emulator.paper.tickets.length;
      await rig.publish(t.print, body);
      // Same orderNo with a new jobId: the business key still dedupes it.
      await rig.publish(
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
          rig.statesOf('P-E2E-8').includes('duplicate') &&
          rig.statesOf('P-E2E-8b').includes('duplicate'),
        15_000,
      );
      assert.equal(rig.emulator.paper.tickets.length, tickets, 'not printed again');
    });

    it('commands: test-print prints a test page, reprint prints the stored receipt marked REPRINT', async () => {
      const command = (param: object) =>
        buildEnvelope({
          appId: APP_ID,
          storeKey: STORE_KEY,
          param: { storeId: STORE_ID, ...param },
          key: serviceKey,
        });
      await rig.publish(t.command, command({ commandId: 'C-TEST-1', type: 'test-print' }));
      await waitFor(
        'test page printed',
        () => rig.statesOf('command:C-TEST-1').includes('printed'),
        15_000,
      );
      assert.match(renderText(rig.emulator.paper.tickets.at(-1)!), /TEST PAGE/);
      await rig.publish(
        t.command,
        command({ commandId: 'C-REPRINT-1', type: 'reprint', orderNo: 'O-E2E-1' }),
      );
      await waitFor(
        'reprint printed',
        () => rig.statesOf('command:C-REPRINT-1').includes('printed'),
        15_000,
      );
      const reprint = renderText(rig.emulator.paper.tickets.at(-1)!);
      assert.match(reprint, /REPRINT #1/);
      assert.match(reprint, /Adobo plate 1/);
      // A command is deduplicated by commandId, and an unknown type is rejected, not ignored.
      await rig.publish(
        t.command,
        command({ commandId: 'C-REPRINT-1', type: 'reprint', orderNo: 'O-E2E-1' }),
      );
      await rig.publish(t.command, command({ commandId: 'C-X', type: 'explode' }));
      await waitFor(
        'duplicate command answered',
        () => rig.statesOf('command:C-REPRINT-1').includes('duplicate'),
        15_000,
      );
      await waitFor(
        'unknown command rejected',
        () =>
          rig.events.some(
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
        ...rig.logLines,
        ...rig.events.map((e) => JSON.stringify(e)),
        JSON.stringify(rig.status()),
      ].join('\n');
      assert.ok(rig.logLines.length > 5, 'the agent logged');
      assert.ok(!everything.includes(STORE_KEY));
      assert.ok(!everything.includes('another-store-key'));
    });
  });
}
