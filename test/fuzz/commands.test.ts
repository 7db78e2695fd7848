/**
 * Fuzzing commands (issue 9; print-protocol §5): the command schema, `openEnvelope` with it, and
 * the MQTT inbox on the `/command` topic with a real job store.
 *
 * - The schema: valid commands pass (positive control), one field broken is rejected naming the
 *   field, arbitrary values never throw and every issue has a path and a message.
 * - The envelope: as in envelope.test.ts, around a pool of signed commands.
 * - The inbox: never throws, always acks; a rejected command is one `rejected` event with the
 *   same typed reason; `status` asks for a status and answers `printed`; `test-print` and a
 *   `reprint` of a stored order are queued once (then `duplicate`); a `reprint` of an unknown
 *   order `failed` with JOB_NOT_FOUND.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import {
  type Command,
  commandSchema,
  describeIssues,
  type Opened,
  openEnvelope,
  parseWith,
  printInstructionSchema,
} from '../../src/protocol/index.js';
import {
  assertIssues,
  FUZZ_TIMEOUT_MS,
  fuzzOptions,
  type Json,
  mutateCommand,
  oddValue,
  targetRuns,
  validCommand,
  withExtraKeys,
} from './arbitraries.js';
import { checkOpened, envelopeCases, jsonSafe, type PoolEntry, reject } from './envelope-cases.js';
import { envelope, makeKeys, OPEN_OPTIONS, openInbox, STORE_KEY, TOPICS } from './harness.js';

const keys = makeKeys();
const POOL_SEED = 20_261_126;

/** Orders whose receipts are in the store before the fuzzing starts: reprints of them queue. */
const STORED_ORDERS = ['O-STORED-1', 'O-STORED-2', 'O-STORED-3'];

function buildPool(): PoolEntry[] {
  const sign = (param: string, expect: PoolEntry['expect'], key = keys.privateKey) => ({
    env: envelope(param, key),
    expect,
  });
  const valid = fc.sample(
    validCommand.chain((c) =>
      c.type === 'reprint'
        ? fc
            .constantFrom(...STORED_ORDERS, 'O-NEVER-STORED', c.orderNo as string)
            .map((orderNo) => ({ ...c, orderNo }))
        : fc.constant(c),
    ),
    { numRuns: 30, seed: POOL_SEED },
  );
  const mutated = fc.sample(
    validCommand.chain(mutateCommand).filter((m) => jsonSafe(m.value)),
    { numRuns: 40, seed: POOL_SEED + 1 },
  );
  return [
    ...valid.map((c) => sign(JSON.stringify(c), { kind: 'accept' })),
    ...mutated.map((m) => sign(JSON.stringify(m.value), reject('PARAM_INVALID', m.path))),
    ...['[]', '"status"', 'null', '7', '{"type":"status"'].map((p) =>
      sign(p, reject('PARAM_NOT_JSON', 'param')),
    ),
    sign(
      JSON.stringify({ commandId: 'C-1', type: 'status' }),
      reject('SIGNATURE_INVALID', 'sign'),
      keys.otherPrivateKey,
    ),
  ];
}

const POOL = buildPool();
const SIGNED = {
  authentic: new Set(POOL.filter((e) => e.expect.kind === 'accept').map((e) => e.env.param)),
  parse: (param: string) => commandSchema.parse(JSON.parse(param)),
};
const commandCase = envelopeCases(POOL);

function open(body: Buffer | string | object, rawSize?: number): Opened<Command> {
  return openEnvelope(
    body,
    { ...OPEN_OPTIONS, verifyKey: keys.publicKey, paramSchema: commandSchema },
    rawSize,
  );
}

/** This target's FUZZ_RUNS (10,000 in `npm test`) over its properties (decision 259). */
const RUNS = targetRuns({ valid: 25, broken: 25, open: 25, inbox: 25 });

describe('fuzz: commands', { timeout: FUZZ_TIMEOUT_MS }, () => {
  it('the schema: valid commands pass, extra keys or not (positive control)', {
    timeout: FUZZ_TIMEOUT_MS,
  }, () => {
    fc.assert(
      fc.property(validCommand.chain(withExtraKeys), (c) => {
        const result = parseWith(commandSchema, c);
        assert.ok(result.ok, result.ok ? '' : describeIssues(result.issues));
        assert.equal(result.value.type, c.type);
      }),
      fuzzOptions(RUNS.valid),
    );
  });

  it('the schema: one field broken is rejected naming the field; nothing throws', {
    timeout: FUZZ_TIMEOUT_MS,
  }, () => {
    const anything = fc.oneof(
      oddValue,
      fc.anything({
        maxDepth: 3,
        withNullPrototype: true,
        withBigInt: true,
        withBoxedValues: true,
      }),
      validCommand.chain((c) =>
        fc
          .tuple(fc.constantFrom(...Object.keys(c), 'x'), oddValue)
          .map(([k, v]) => ({ ...c, [k]: v }) as Json),
      ),
    );
    fc.assert(
      fc.property(
        fc.oneof(
          validCommand.chain(mutateCommand),
          anything.map((value) => ({ value, path: null })),
        ),
        ({ value, path }) => {
          commandSchema.safeParse(value);
          const result = parseWith(commandSchema, value);
          if (result.ok) {
            assert.equal(path, null, `accepted with ${path} broken`);
            return;
          }
          assert.ok(result.issues.length > 0);
          assertIssues(result.issues);
          if (path !== null)
            assert.ok(
              result.issues.some((i) => i.path === path),
              `${path} broken, but: ${describeIssues(result.issues)}`,
            );
        },
      ),
      fuzzOptions(RUNS.broken),
    );
  });

  it('openEnvelope with the command schema: typed outcomes, only signed commands accepted', {
    timeout: FUZZ_TIMEOUT_MS,
  }, () => {
    assert.ok(SIGNED.authentic.size >= 20);
    fc.assert(
      fc.property(commandCase, (c) => checkOpened(c, open(c.body, c.rawSize), SIGNED)),
      fuzzOptions(RUNS.open),
    );
  });

  const harness = openInbox(keys);
  after(() => harness.close());

  it('the inbox on /command: never throws, always acks, one event of the right kind', {
    timeout: FUZZ_TIMEOUT_MS,
  }, async () => {
    for (const [i, orderNo] of STORED_ORDERS.entries()) {
      const instruction = printInstructionSchema.parse({
        jobId: `J-STORED-${i}`,
        orderNo,
        createTime: '2026-11-25 12:00:00',
        order: {
          productInfo: [{ productName: 'Tea', price: 100, quantity: 1 }],
          orderType: 1,
          paymentWay: 2,
          paymentTransactionId: `M-${i}`,
        },
      });
      assert.equal(harness.store.enqueueInstruction(instruction).status, 'inserted');
    }
    harness.takeEvents();
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(commandCase, async (c) => {
        const payload =
          c.body instanceof Buffer
            ? c.body
            : Buffer.from(typeof c.body === 'string' ? c.body : (JSON.stringify(c.body) ?? ''));
        const statusBefore = harness.statusRequests;
        assert.equal(await harness.inbox.handle(TOPICS.command, payload), 'ack');
        const events = harness.takeEvents();
        assert.deepEqual(harness.faults, []);
        assert.deepEqual(harness.leakedLogLines, []);
        assert.ok(!JSON.stringify(events).includes(STORE_KEY), 'the store key in a job event');
        assert.equal(events.length, 1, JSON.stringify(events));
        const [event] = events as [(typeof events)[number]];
        const oracle = open(payload);
        if (!oracle.ok) {
          assert.equal(event.state, 'rejected');
          assert.deepEqual(event.reason, oracle.error.toReason());
          if (c.expect.kind === 'accept' && c.rawSize === undefined)
            assert.fail(`${c.label}: a valid command was rejected`);
          seen.add('rejected');
          return;
        }
        const command = oracle.param;
        assert.equal(event.jobId, `command:${command.commandId}`);
        assert.equal(event.commandId, command.commandId);
        assert.equal(harness.statusRequests - statusBefore, command.type === 'status' ? 1 : 0);
        seen.add(`${command.type} ${event.state}`);
        if (command.type === 'status') {
          assert.equal(event.state, 'printed');
        } else if (event.state === 'queued') {
          const job = harness.store.getByJobId(`command:${command.commandId}`);
          assert.ok(job, 'queued but not stored');
          assert.equal(job.kind, command.type === 'reprint' ? 'reprint' : 'test');
          if (command.type === 'reprint') assert.ok(STORED_ORDERS.includes(command.orderNo));
        } else if (event.state === 'failed') {
          assert.equal(command.type, 'reprint');
          assert.equal(event.reason?.code, 'JOB_NOT_FOUND');
        } else {
          assert.equal(event.state, 'duplicate');
          assert.equal(event.reason?.code, 'DUPLICATE');
        }
      }),
      fuzzOptions(RUNS.inbox),
    );
    for (const outcome of [
      'rejected',
      'status printed',
      'test-print queued',
      'reprint queued',
      'reprint failed',
    ])
      assert.ok(seen.has(outcome), `no case ended in ${outcome}`);
  });
});
