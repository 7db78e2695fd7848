/**
 * Issue 13 item 3: the signature binds the store (print-protocol v1.1 §4). Before, a genuine
 * instruction for store S2, re-wrapped in S1's envelope fields (appId and storeKey are not
 * signed, and S1's travel in every message to S1), printed at S1: another store's customer data on
 * S1's paper. Now `storeId` is inside the signed param and the agent refuses any other than its
 * own: `rejected`, IDENTITY_MISMATCH naming `storeId`, the job's ids echoed (the signature held),
 * nothing printed. The same for commands. `printer-agent verify --validate print` checks what the
 * agent checks.
 *
 * Real processes: the agent as a child process (test/faults/harness.ts), Mosquitto, the emulator.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { deriveStoreId } from '../../src/protocol/store-id.js';
import { faultSuite } from '../faults/harness.js';
import { runCliInProcess } from '../helpers/cli.js';

describe('storeId binds the store (child process)', { skip: skipWithoutMosquitto() }, () => {
  const env = faultSuite();

  it("a genuine instruction or command for another store, re-wrapped in this store's envelope: rejected, never printed", async () => {
    const s = await env.stores.create({ name: 'bind', broker: env.broker });
    const agent = await s.startOnline();
    // Store S2 of the same service: its genuine, signed instruction names S2.
    const s2 = deriveStoreId('A-bind-2', 'sk-bind-2-secret');
    const forS2 = s.instruction(1, {}, { storeId: s2 });
    // Re-wrapped: the signed param untouched, S1's appId and storeKey around it.
    await s.publishRaw(s.envelope(forS2));
    // A reprint command meant for S2 (it names an order S1 has printed: would print at S1).
    await s.publish(2);
    await s.waitForState(2, 'printed');
    await s.publishRaw(
      s.envelope({ storeId: s2, commandId: 'C-bind-1', type: 'reprint', orderNo: s.orderNo(2) }),
      s.t.command,
    );
    // A service that does not send storeId yet: refused too, naming the field.
    const { storeId: _, ...noStore } = s.instruction(3);
    await s.publishRaw(s.envelope(noStore));

    await waitFor(
      'three rejections',
      () => s.events.filter((e) => e.state === 'rejected').length >= 3,
      20_000,
    );
    const rejected = s.events.filter((e) => e.state === 'rejected');
    assert.deepEqual(
      rejected.map((e) => [e.reason?.code, e.reason?.message.split(':')[0]]),
      [
        ['IDENTITY_MISMATCH', 'storeId'],
        ['IDENTITY_MISMATCH', 'storeId'],
        ['PARAM_INVALID', 'storeId'],
      ],
    );
    assert.match(
      rejected[0]!.reason!.message,
      new RegExp(`names store "${s2}", not this store \\(${s.storeId}\\)`),
    );
    // The signature held, so the rejection names what the service sent.
    assert.deepEqual([rejected[0]!.jobId, rejected[0]!.orderNo], [s.jobId(1), s.orderNo(1)]);
    assert.deepEqual(
      [rejected[1]!.jobId, rejected[1]!.commandId, rejected[1]!.orderNo],
      ['command:C-bind-1', 'C-bind-1', s.orderNo(2)],
    );
    assert.deepEqual([rejected[2]!.jobId, rejected[2]!.orderNo], [s.jobId(3), s.orderNo(3)]);

    // The daemon goes on: the next instruction for this store prints, and only it.
    await s.publish(4);
    await s.waitForState(4, 'printed');
    assert.ok(agent.alive);
    assert.deepEqual(s.printedOrders(), [s.orderNo(2), s.orderNo(4)]);
    assert.equal(s.prints().filter((p) => p.markings.includes('REPRINT')).length, 0, 'no reprint');
    s.assertInvariants({
      expected: [s.orderNo(2), s.orderNo(4)],
      notPrinted: [s.orderNo(1), s.orderNo(3)],
    });
    // The log comes through the child's stdout, which may trail its MQTT events.
    await waitFor('the rejection log line', () =>
      /message rejected.*IDENTITY_MISMATCH|IDENTITY_MISMATCH.*message rejected/.test(s.output),
    );
  });

  it('printer-agent verify --validate print checks like the agent: storeId required, --store-id compared', async () => {
    const s = { storeId: deriveStoreId('A-verify', 'sk-verify-secret') };
    const dir = mkdtempSync(join(tmpdir(), 'pa-verify-'));
    const keys = await runCliInProcess(['keys', 'generate', '--out', dir, '--name', 'svc']);
    assert.equal(keys.status, 0, keys.stderr);
    const pub = join(dir, 'svc-public.pem');
    const priv = join(dir, 'svc-private.pem');
    let files = 0;
    const param = async (extra: Record<string, unknown>) => {
      const file = join(dir, `param-${files++}.json`);
      writeFileSync(
        file,
        JSON.stringify({
          jobId: 'P-1',
          orderNo: 'O-1',
          createTime: '2026-11-25 12:30:05',
          order: {
            productInfo: [{ productName: 'Tea', price: 100, quantity: 1 }],
            orderType: 1,
            paymentWay: 2,
            paymentTransactionId: 'M-1',
          },
          ...extra,
        }),
      );
      const signed = await runCliInProcess([
        'sign',
        '--key',
        priv,
        '--app-id',
        'A1',
        '--store-key',
        'K1',
        file,
      ]);
      assert.equal(signed.status, 0, signed.stderr);
      return signed.stdout;
    };
    const verify = (input: string, extra: string[] = []) =>
      runCliInProcess(['verify', '--pub', pub, '--validate', 'print', ...extra, '-'], { input });

    const missing = await verify(await param({}));
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /^PARAM_INVALID: storeId: /);
    const ok = await verify(await param({ storeId: s.storeId }), ['--store-id', s.storeId]);
    assert.equal(ok.status, 0, ok.stderr);
    const other = await verify(await param({ storeId: 'otherstore000002' }), [
      '--store-id',
      s.storeId,
    ]);
    assert.equal(other.status, 1);
    assert.match(other.stderr, /^IDENTITY_MISMATCH: storeId: names store "otherstore000002"/);
    // sign --validate print refuses to sign an instruction without storeId.
    const file = join(dir, 'no-store.json');
    writeFileSync(file, JSON.stringify({ jobId: 'P-1' }));
    const unsigned = await runCliInProcess([
      'sign',
      '--key',
      priv,
      '--app-id',
      'A1',
      '--store-key',
      'K1',
      '--validate',
      'print',
      file,
    ]);
    assert.equal(unsigned.status, 1);
    assert.match(unsigned.stderr, /storeId/);
  });
});
