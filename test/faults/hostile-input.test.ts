/**
 * Fault matrix rows 15 and 16, hostile and repeated messages published to the agent as a child
 * process (the in-process version of row 15 is in test/agent/agent-e2e.test.ts).
 *
 * - Row 15: forged, tampered, wrong-key, wrong-scheme, wrong-store, oversize and malformed
 *   messages on `/print` and `/command`. Invariant: each is answered with exactly one `rejected`
 *   event naming the check that failed, nothing prints, the daemon never exits (same process
 *   throughout) and prints the next valid instruction.
 * - Row 16: a valid message replayed later, after a restart and after its job row was purged
 *   (the closest one machine gets to "days later": retention has removed the job, only the dedupe
 *   ledger remembers it). Invariant: every replay is answered `duplicate` and nothing prints
 *   twice; the same holds for a replayed `reprint` command.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { buildEnvelope } from '../../src/protocol/envelope.js';
import { generateKeyPair, parseKey } from '../../src/protocol/signing.js';
import { runCliInProcess } from '../helpers/cli.js';
import { faultSuite, serviceKey } from './harness.js';

const otherKey = parseKey(generateKeyPair().privatePem, 'private');

describe('rows 15 and 16: hostile and replayed messages (child process)', {
  skip: skipWithoutMosquitto(),
}, () => {
  const env = faultSuite({ persistence: true });

  it('row 15: forged, tampered, wrong-key, wrong-store, malformed: rejected, never printed, daemon alive', async () => {
    const s = await env.stores.create({ name: 'r15', broker: env.broker });
    const agent = await s.startOnline();
    const valid = (n: number) => JSON.parse(s.envelope(s.instruction(n))) as Record<string, string>;

    const tampered = valid(2);
    tampered.param = tampered.param!.replace('10000', '1');
    const swapped = { ...valid(3), sign: valid(4).sign };
    const pss = buildEnvelope({
      appId: s.appId,
      storeKey: s.storeKey,
      key: serviceKey,
      param: s.instruction(5),
      scheme: 'RSA-PSS-SHA256',
    });
    const { sign: _unsigned, ...noSign } = valid(6);
    const deep = `{"appId":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    const garbage = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 151 + 7) % 256));
    const cases: Array<{ what: string; body: string | Buffer; code: string; topic?: string }> = [
      {
        what: 'wrong key',
        body: s.envelope(s.instruction(1), { key: otherKey }),
        code: 'SIGNATURE_INVALID',
      },
      { what: 'tampered param', body: JSON.stringify(tampered), code: 'SIGNATURE_INVALID' },
      {
        what: "another message's signature",
        body: JSON.stringify(swapped),
        code: 'SIGNATURE_INVALID',
      },
      { what: 'other scheme', body: JSON.stringify(pss), code: 'SIGNATURE_INVALID' },
      {
        what: 'wrong store key',
        body: s.envelope(s.instruction(7), { storeKey: 'sk-someone-else' }),
        code: 'IDENTITY_MISMATCH',
      },
      {
        what: 'wrong appId',
        body: s.envelope(s.instruction(8), { appId: 'A-someone-else' }),
        code: 'IDENTITY_MISMATCH',
      },
      {
        what: 'oversize',
        body: s.envelope(s.instruction(9, { customPrintContext: 'x'.repeat(70_000) })),
        code: 'TOO_LARGE',
      },
      {
        what: 'not an instruction',
        body: s.envelope({ jobId: 'P-r15-10' }),
        code: 'PARAM_INVALID',
      },
      { what: 'param not JSON', body: s.envelope('not json'), code: 'PARAM_NOT_JSON' },
      { what: 'no signature', body: JSON.stringify(noSign), code: 'ENVELOPE_INVALID' },
      { what: 'not JSON', body: 'not json at all', code: 'ENVELOPE_INVALID' },
      { what: 'empty body', body: '', code: 'ENVELOPE_INVALID' },
      { what: 'binary garbage', body: garbage, code: 'ENVELOPE_INVALID' },
      { what: 'deep nesting', body: deep, code: 'ENVELOPE_INVALID' },
      {
        what: 'forged reprint command',
        body: s.envelope(
          s.command({ commandId: 'C-r15-1', type: 'reprint', orderNo: s.orderNo(11) }),
          {
            key: otherKey,
          },
        ),
        code: 'SIGNATURE_INVALID',
        topic: s.t.command,
      },
      {
        what: 'unknown command type',
        body: s.envelope(s.command({ commandId: 'C-r15-2', type: 'open-drawer' })),
        code: 'PARAM_INVALID',
        topic: s.t.command,
      },
    ];
    for (const c of cases) await s.publishRaw(c.body, c.topic);
    await waitFor(
      `${cases.length} rejections`,
      () => s.events.filter((e) => e.state === 'rejected').length >= cases.length,
      20_000,
    );
    const rejected = s.events.filter((e) => e.state === 'rejected');
    assert.deepEqual(
      rejected.map((e) => e.reason?.code),
      cases.map((c) => c.code),
      cases.map((c) => c.what).join(', '),
    );
    // Ids are echoed only when the signature held (print-protocol §3): a forgery names nothing.
    assert.equal(rejected[0]!.jobId, null);
    assert.equal(rejected[4]!.jobId, s.jobId(7));
    assert.ok(agent.alive, 'the daemon is still running');
    assert.equal(s.emulator.tickets().length, 0, 'nothing printed');

    await s.publish(12);
    await s.waitForState(12, 'printed');
    assert.ok(agent.alive);
    assert.equal(s.agent, agent, 'the same process throughout');
    assert.deepEqual(s.printedOrders(), [s.orderNo(12)]);
    assert.equal(s.events.filter((e) => e.state === 'rejected').length, cases.length);
    s.assertInvariants({
      notPrinted: Array.from({ length: 11 }, (_, i) => s.orderNo(i + 1)),
    });
    assert.ok(!s.output.includes(s.storeKey), 'the store key is not in the logs');
  });

  it('row 16: a valid message replayed later (after a restart and a purge): duplicate, not printed', async () => {
    const s = await env.stores.create({ name: 'r16', broker: env.broker });
    await s.startOnline();
    const original = s.envelope(s.instruction(1));
    await s.publishRaw(original);
    await s.waitForState(1, 'printed');
    const duplicates = () => s.states(1).filter((x) => x === 'duplicate').length;

    // At once.
    await s.publishRaw(original);
    await waitFor('duplicate 1', () => duplicates() === 1, 20_000);

    // After a restart: the dedupe keys are in the database, not in memory.
    await s.stopAgent('SIGTERM');
    await s.startOnline();
    await s.publishRaw(original);
    await waitFor('duplicate 2', () => duplicates() === 2, 20_000);

    // "Days later": the printed job is purged (what retention does after 14 days) while the
    // agent runs; only the dedupe ledger still knows the order.
    const purge = await runCliInProcess([
      'jobs',
      'purge',
      '--printed-before',
      new Date(Date.now() + 86_400_000).toISOString(),
      '--state-dir',
      s.stateDir,
    ]);
    assert.equal(purge.status, 0, purge.stderr);
    assert.match(purge.stdout, /purged 1 printed job/);
    await s.publishRaw(original);
    await waitFor('duplicate 3', () => duplicates() === 3, 20_000);

    // The service sends the same order again under a new jobId: deduped on the orderNo.
    await s.publishRaw(s.envelope({ ...s.instruction(1), jobId: `${s.jobId(1)}-again` }));
    await waitFor(
      'duplicate by orderNo',
      () => s.states(`${s.jobId(1)}-again`).includes('duplicate'),
      20_000,
    );
    assert.equal(s.states(1).filter((x) => x === 'printed').length, 1);
    assert.equal(s.prints().length, 1, 'printed once');
    s.assertInvariants();
  });

  it('row 16: a reprint command replayed: the reprint prints once, the replay is duplicate', async () => {
    const s = await env.stores.create({ name: 'r16c', broker: env.broker });
    await s.startOnline();
    await s.publish(1);
    await s.waitForState(1, 'printed');
    const command = s.envelope(
      s.command({ commandId: 'C-r16c-1', type: 'reprint', orderNo: s.orderNo(1) }),
    );
    await s.publishRaw(command, s.t.command);
    await waitFor(
      'the reprint printed',
      () => s.events.some((e) => e.commandId === 'C-r16c-1' && e.state === 'printed'),
      20_000,
    );
    await s.publishRaw(command, s.t.command);
    await waitFor(
      'the replay answered duplicate',
      () => s.events.some((e) => e.commandId === 'C-r16c-1' && e.state === 'duplicate'),
      20_000,
    );
    // A later valid instruction prints, and by then the replay would have printed too.
    await s.publish(2);
    await s.waitForState(2, 'printed');
    const prints = s.printsByOrder().get(s.orderNo(1))!;
    assert.equal(prints.length, 2, 'the original and one reprint');
    assert.deepEqual(prints[1]!.markings, ['REPRINT']);
    s.assertInvariants();
  });
});
