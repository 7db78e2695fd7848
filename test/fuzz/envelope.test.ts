/**
 * Fuzzing the envelope (issue 9; fault matrix rows 15 and 18): `openEnvelope` and the MQTT inbox
 * on a real job store, fed arbitrary bytes, arbitrary JSON, near-valid envelopes (one field of a
 * signed envelope changed) and signed envelopes whose param is broken.
 *
 * Every case: no throw; either accepted, and then the param is one we signed, for this store,
 * and schema-valid; or rejected with a catalogued AgentError whose message starts with the field
 * it is about and never contains the store key. Where the broken field is known, the code and
 * the field are checked exactly. The pool of valid signed instructions must be accepted: the
 * positive control that fails an implementation rejecting everything.
 *
 * Signing costs ~2 ms, so ~120 params are signed once (fixed seed) and every case mutates or
 * re-wraps one of them.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { AgentError } from '../../src/errors.js';
import {
  commandSchema,
  inboundInstructionSchema,
  type Opened,
  openEnvelope,
} from '../../src/protocol/index.js';
import {
  FUZZ_TIMEOUT_MS,
  fuzzOptions,
  mutateInstruction,
  targetRuns,
  validInstruction,
} from './arbitraries.js';
import {
  type Case,
  checkOpened,
  type Expect,
  envelopeCases,
  jsonSafe,
  type PoolEntry,
} from './envelope-cases.js';
import { envelope, makeKeys, OPEN_OPTIONS, openInbox, STORE_KEY, TOPICS } from './harness.js';

const keys = makeKeys();

const POOL_SEED = 20_261_125;

const small = (p: unknown) => Buffer.byteLength(JSON.stringify(JSON.stringify(p))) < 40 * 1024;

function buildPool(): PoolEntry[] {
  const sign = (param: string, expect: Expect, key = keys.privateKey, pss = false): PoolEntry => ({
    env: envelope(param, key, pss ? 'RSA-PSS-SHA256' : 'RSA-SHA256'),
    expect,
  });
  const valid = fc.sample(validInstruction.filter(small), { numRuns: 36, seed: POOL_SEED });
  const mutated = fc.sample(
    validInstruction
      .filter(small)
      .chain(mutateInstruction)
      .filter((m) => jsonSafe(m.value)),
    { numRuns: 60, seed: POOL_SEED + 1 },
  );
  const objects = fc.sample(fc.object({ maxDepth: 2 }), { numRuns: 8, seed: POOL_SEED + 2 });
  const notJsonObject = [
    '[]',
    '[{"jobId":"J-1"}]',
    '1',
    'null',
    'true',
    '"{}"',
    'not json',
    '{"jobId":',
    '{}x',
    "{'jobId':'J-1'}",
    'NaN',
    '\uFEFF{}',
  ];
  return [
    ...valid.map((v) => sign(JSON.stringify(v), { kind: 'accept' })),
    ...mutated.map((m) =>
      sign(JSON.stringify(m.value), { kind: 'reject', code: 'PARAM_INVALID', path: m.path }),
    ),
    ...objects.map((o) => sign(JSON.stringify(o), { kind: 'reject', code: 'PARAM_INVALID' })),
    sign('{}', { kind: 'reject', code: 'PARAM_INVALID', path: 'jobId' }),
    // print-protocol v1.1 §4: the signed param names its store; another store's or none is refused.
    ...valid.slice(6, 9).map((v) =>
      sign(JSON.stringify({ ...v, storeId: 'otherstore000002' }), {
        kind: 'reject',
        code: 'IDENTITY_MISMATCH',
        path: 'storeId',
      }),
    ),
    ...valid.slice(9, 12).map((v) => {
      const { storeId: _, ...withoutStore } = v;
      return sign(JSON.stringify(withoutStore), {
        kind: 'reject',
        code: 'PARAM_INVALID',
        path: 'storeId',
      });
    }),
    sign(' {"jobId": 1} ', { kind: 'reject', code: 'PARAM_INVALID', path: 'jobId' }),
    ...notJsonObject.map((p) => sign(p, { kind: 'reject', code: 'PARAM_NOT_JSON', path: 'param' })),
    // Signed by someone else, or with the other scheme: the signature must not verify.
    ...valid
      .slice(0, 3)
      .map((v) =>
        sign(
          JSON.stringify(v),
          { kind: 'reject', code: 'SIGNATURE_INVALID', path: 'sign' },
          keys.otherPrivateKey,
        ),
      ),
    ...valid
      .slice(3, 6)
      .map((v) =>
        sign(
          JSON.stringify(v),
          { kind: 'reject', code: 'SIGNATURE_INVALID', path: 'sign' },
          keys.privateKey,
          true,
        ),
      ),
  ];
}

const POOL = buildPool();
/** Params signed with the configured key and scheme whose content is a valid instruction. */
const AUTHENTIC = new Set(POOL.filter((e) => e.expect.kind === 'accept').map((e) => e.env.param));
const SIGNED = {
  authentic: AUTHENTIC,
  // What the inbox opens with: `printer` stays absent when the service left it out (v1.1 §4).
  parse: (param: string) => inboundInstructionSchema.parse(JSON.parse(param)),
};
const envelopeCase = envelopeCases(POOL);

function open(
  body: Case['body'],
  schema: typeof inboundInstructionSchema | typeof commandSchema,
  rawSize?: number,
) {
  return openEnvelope(
    body,
    { ...OPEN_OPTIONS, verifyKey: keys.publicKey, paramSchema: schema },
    rawSize,
  );
}

/** This target's FUZZ_RUNS (10,000 in `npm test`) over its properties (decision 259). */
const RUNS = targetRuns({ open: 50, inbox: 50 });

describe('fuzz: envelopes', { timeout: FUZZ_TIMEOUT_MS }, () => {
  it('the pool holds valid signed instructions, and they open (positive control)', {
    timeout: FUZZ_TIMEOUT_MS,
  }, () => {
    const valid = POOL.filter((e) => e.expect.kind === 'accept');
    assert.ok(valid.length >= 30);
    for (const e of valid) {
      const result = open(Buffer.from(JSON.stringify(e.env)), inboundInstructionSchema);
      assert.ok(result.ok, result.ok ? '' : result.error.message);
    }
  });

  it('openEnvelope: never throws; accepts only what we signed; rejections are typed', {
    timeout: FUZZ_TIMEOUT_MS,
  }, () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(envelopeCase, (c) => {
        let result: Opened<unknown>;
        try {
          result = open(c.body, inboundInstructionSchema, c.rawSize);
        } catch (error) {
          assert.fail(`${c.label}: openEnvelope threw ${String(error)}`);
        }
        seen.add(result.ok ? 'accepted' : result.error.code);
        checkOpened(c, result, SIGNED);
      }),
      fuzzOptions(RUNS.open),
    );
    // Both ways out were taken, and the rejections were told apart.
    for (const code of [
      'accepted',
      'TOO_LARGE',
      'ENVELOPE_INVALID',
      'SIGNATURE_INVALID',
      'IDENTITY_MISMATCH',
      'PARAM_NOT_JSON',
      'PARAM_INVALID',
    ])
      assert.ok(seen.has(code), `no case ended in ${code}`);
  });

  const harness = openInbox(keys);
  after(() => harness.close());

  it('the inbox: never throws, always acks, stores what opens, records a typed rejection otherwise', {
    timeout: FUZZ_TIMEOUT_MS,
  }, async () => {
    const topic = fc.oneof(
      { weight: 8, arbitrary: fc.constant(TOPICS.print) },
      { weight: 1, arbitrary: fc.constant(TOPICS.command) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(`${TOPICS.print}/x`, 'printer-agent/v1/other/print', ''),
      },
    );
    let stored = 0;
    let stale = 0;
    await fc.assert(
      fc.asyncProperty(envelopeCase, topic, async (c, t) => {
        const payload =
          c.body instanceof Buffer
            ? c.body
            : Buffer.from(typeof c.body === 'string' ? c.body : (JSON.stringify(c.body) ?? ''));
        const floor = harness.store.timeFloor();
        const disposition = await harness.inbox.handle(t, payload);
        assert.equal(disposition, 'ack');
        const events = harness.takeEvents();
        assert.deepEqual(harness.faults, []);
        assert.deepEqual(harness.leakedLogLines, []);
        assert.ok(!JSON.stringify(events).includes(STORE_KEY), 'the store key in a job event');
        if (t !== TOPICS.print && t !== TOPICS.command) {
          assert.deepEqual(events, []);
          return;
        }
        const oracle = open(payload, t === TOPICS.print ? inboundInstructionSchema : commandSchema);
        assert.equal(events.length, 1, JSON.stringify(events));
        const [event] = events as [(typeof events)[number]];
        // The case's own expectation holds for the bytes too (a declared rawSize does not travel).
        if (t === TOPICS.print && c.rawSize === undefined) {
          if (c.expect.kind === 'accept')
            assert.ok(
              ['queued', 'duplicate', 'failed'].includes(event.state),
              `${c.label}: ${event.state}`,
            );
          if (c.expect.kind === 'reject') assert.equal(event.reason?.code, c.expect.code, c.label);
        }
        if (!oracle.ok) {
          assert.equal(event.state, 'rejected');
          assert.deepEqual(event.reason, oracle.error.toReason());
          assert.ok(oracle.error instanceof AgentError);
          return;
        }
        const { jobId, createTime } = oracle.param as { jobId: string; createTime: string };
        // The time floor (v1.2 §10): more than 7 days older than the newest order stored before.
        const utc = (v: string) => Date.parse(`${v.replace(' ', 'T')}Z`);
        const belowFloor = floor !== null && utc(floor) - utc(createTime) > 7 * 86_400_000;
        if (event.state === 'failed') {
          assert.ok(belowFloor, `${c.label}: failed ${createTime}, floor ${floor}`);
          assert.equal(event.reason?.code, 'STALE_ORDER');
          assert.equal(harness.store.getByJobId(jobId)?.state, 'failed', 'stored failed');
          stale++;
        } else if (event.state === 'queued') {
          assert.ok(!belowFloor, `${c.label}: queued ${createTime} below the floor ${floor}`);
          assert.equal(event.jobId, jobId);
          // The harness's clock is not trusted: the age was not checked, and the event says so.
          assert.deepEqual(
            event.warnings?.map((w) => w.code),
            ['CLOCK_UNSYNCHRONIZED'],
          );
          assert.ok(harness.store.getByJobId(jobId), 'queued but not stored');
          stored++;
        } else {
          assert.equal(event.state, 'duplicate');
          assert.equal(event.reason?.code, 'DUPLICATE');
        }
      }),
      fuzzOptions(RUNS.inbox),
    );
    assert.ok(stored > 0, 'no instruction was ever stored');
    // Fuzzed createTimes span centuries: some fall below the floor the ones before them set.
    assert.ok(stale > 0, 'no instruction ever met the time floor');
  });
});
