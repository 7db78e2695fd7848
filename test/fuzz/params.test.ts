/**
 * Fuzzing the param schemas (issue 9): create parameters (order-api 2.9), query parameters (2.3),
 * print instructions (print-protocol §4). Commands are in commands.test.ts.
 *
 * - Arbitrary values never make `safeParse` or `parseWith` throw, and every issue has a path and a
 *   message.
 * - Valid generated values pass (the positive control: a schema that rejects everything fails).
 * - A value with one field broken (wrong type, out of range, too long, missing) is rejected with
 *   an issue on that very field.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  createParamsSchema,
  describeIssues,
  type Parsed,
  parseWith,
  printInstructionSchema,
  queryParamsSchema,
} from '../../src/protocol/index.js';
import {
  assertIssues,
  breakField,
  FUZZ_TIMEOUT_MS,
  fuzzOptions,
  type Json,
  MISSING,
  type Mutation,
  mutateCreate,
  mutateInstruction,
  oddValue,
  targetRuns,
  textIn,
  validCreateParams,
  validInstruction,
  validQueryParams,
  withExtraKeys,
} from './arbitraries.js';

const SCHEMAS = {
  create: createParamsSchema,
  query: queryParamsSchema,
  print: printInstructionSchema,
} as const;
type Kind = keyof typeof SCHEMAS;

const VALID: Record<Kind, fc.Arbitrary<Json>> = {
  create: validCreateParams,
  query: validQueryParams,
  print: validInstruction,
};

function parse(kind: Kind, value: unknown): Parsed<unknown> {
  // Both entry points: zod's own and the project's, neither may throw.
  SCHEMAS[kind].safeParse(value);
  const result = parseWith(SCHEMAS[kind], value);
  if (!result.ok) {
    assert.ok(result.issues.length > 0, 'a rejection without issues');
    assertIssues(result.issues);
  }
  return result;
}

function rejectedAt(kind: Kind, m: Mutation): void {
  const result = parse(kind, m.value);
  assert.ok(!result.ok, `accepted with ${m.path} broken (${m.why})`);
  assert.ok(
    result.issues.some((i) => i.path === m.path),
    `${m.why} at ${m.path}, but the issues say: ${describeIssues(result.issues)}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Query parameters: one field broken, and the rules between fields (order-api 4.1).

const DAY_S = 24 * 60 * 60;
const shift = (ts: string, seconds: number) =>
  new Date(Date.parse(`${ts.replace(' ', 'T')}Z`) + seconds * 1000)
    .toISOString()
    .slice(0, 19)
    .replace('T', ' ');

function mutateQuery(q: Json): fc.Arbitrary<Mutation> {
  const set = (key: string, v: unknown) => {
    const out = { ...q };
    if (v === MISSING) delete out[key];
    else out[key] = v;
    return out;
  };
  const field = (key: string, rule: Parameters<typeof breakField>[0]) =>
    breakField(rule).map((b) => ({ value: set(key, b.value), path: key, why: b.why }));
  const options: fc.Arbitrary<Mutation>[] = [
    field('pageSize', { spec: { kind: 'int', range: { min: 1, max: 100 } }, required: false }),
    field('pageNum', {
      spec: { kind: 'int', range: { min: 1, max: Number.MAX_SAFE_INTEGER } },
      required: false,
    }),
    field('restaurantNo', { spec: { kind: 'string' }, required: false }),
  ];
  if (typeof q.startTime === 'string' && typeof q.endTime === 'string') {
    const { startTime } = q;
    options.push(
      field('startTime', { spec: { kind: 'timestamp' }, required: true }),
      field('endTime', { spec: { kind: 'timestamp' }, required: true }),
      fc.integer({ min: 1, max: 1000 * DAY_S }).map((s) => ({
        value: set('endTime', shift(startTime, -s)),
        path: 'endTime',
        why: 'end before start',
      })),
      fc.integer({ min: 30 * DAY_S + 1, max: 1000 * DAY_S }).map((s) => ({
        value: set('endTime', shift(startTime, s)),
        path: 'endTime',
        why: 'range over 30 days',
      })),
      textIn({ min: 1, max: 64 }).map((no) => ({
        value: set('receiptNo', no),
        path: 'receiptNo',
        why: 'two modes',
      })),
      textIn({ min: 1, max: 64 }).map((no) => ({
        value: set('orderInnerNo', no),
        path: 'orderInnerNo',
        why: 'two modes',
      })),
    );
  } else {
    const key = typeof q.orderInnerNo === 'string' ? 'orderInnerNo' : 'receiptNo';
    options.push(
      breakField({ spec: { kind: 'text', range: { min: 1, max: 64 } }, required: false }).map(
        (b) => ({ value: set(key, b.value), path: key, why: b.why }),
      ),
      fc.constant({ value: set(key, MISSING), path: 'startTime', why: 'no mode' }),
    );
  }
  return fc.oneof(...options);
}

const MUTATE: Record<Kind, (v: Json) => fc.Arbitrary<Mutation>> = {
  create: mutateCreate,
  query: mutateQuery,
  print: mutateInstruction,
};

const kind = fc.constantFrom<Kind>('create', 'query', 'print');

/** This target's FUZZ_RUNS (10,000 in `npm test`) over its properties (decision 259). */
const RUNS = targetRuns({ valid: 25, broken: 35, price: 10, anyValue: 30 });

describe('fuzz: param schemas', { timeout: FUZZ_TIMEOUT_MS }, () => {
  it('valid create, query and print params pass (positive control), extra keys or not', {
    timeout: FUZZ_TIMEOUT_MS,
  }, () => {
    fc.assert(
      fc.property(
        kind.chain((k) =>
          VALID[k].chain((v) => fc.oneof(fc.constant(v), withExtraKeys(v))).map((v) => ({ k, v })),
        ),
        ({ k, v }) => {
          const result = parse(k, v);
          assert.ok(result.ok, `rejected: ${result.ok ? '' : describeIssues(result.issues)}`);
        },
      ),
      fuzzOptions(RUNS.valid),
    );
  });

  it('one field broken: rejected, and an issue names that field', {
    timeout: FUZZ_TIMEOUT_MS,
  }, () => {
    fc.assert(
      fc.property(
        kind.chain((k) => VALID[k].chain(MUTATE[k]).map((m) => ({ k, m }))),
        ({ k, m }) => rejectedAt(k, m),
      ),
      fuzzOptions(RUNS.broken),
    );
  });

  it('a price above 1,000,000 cents is rejected naming productInfo[i].price', {
    timeout: FUZZ_TIMEOUT_MS,
  }, () => {
    fc.assert(
      fc.property(
        validCreateParams.chain((o) =>
          fc.record({
            o: fc.constant(o),
            i: fc.nat((o.productInfo as unknown[]).length - 1),
            price: fc.integer({ min: 1_000_001, max: Number.MAX_SAFE_INTEGER }),
          }),
        ),
        ({ o, i, price }) => {
          const list = (o.productInfo as Json[]).map((p, k) => (k === i ? { ...p, price } : p));
          const result = parse('create', { ...o, productInfo: list });
          assert.ok(!result.ok);
          assert.deepEqual(
            result.issues.filter((x) => x.path === `productInfo[${i}].price`),
            [{ path: `productInfo[${i}].price`, message: 'must be between 0 and 1000000' }],
          );
        },
      ),
      fuzzOptions(RUNS.price),
    );
  });

  it('arbitrary values and valid ones with any field replaced never throw', {
    timeout: FUZZ_TIMEOUT_MS,
  }, () => {
    const anyValue = fc.oneof(
      oddValue,
      fc.anything({
        maxDepth: 3,
        withNullPrototype: true,
        withBigInt: true,
        withDate: true,
        withMap: true,
        withSet: true,
        withSparseArray: true,
        withTypedArray: true,
        withBoxedValues: true,
      }),
      fc.jsonValue({ maxDepth: 4 }),
    );
    const replaced = kind.chain((k) =>
      VALID[k].chain((v) =>
        fc
          .tuple(fc.constantFrom(...Object.keys(v), 'order', 'productInfo', 'x'), anyValue)
          .map(([key, x]) => ({ k, value: { ...v, [key]: x } as unknown })),
      ),
    );
    fc.assert(
      fc.property(fc.oneof(fc.record({ k: kind, value: anyValue }), replaced), ({ k, value }) => {
        parse(k, value);
      }),
      fuzzOptions(RUNS.anyValue),
    );
  });
});
