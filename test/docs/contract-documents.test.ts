/**
 * The contract documents (issue 19): docs/api/openapi.json (the order API, OpenAPI 3.1) and
 * docs/api/asyncapi.json (the print protocol, AsyncAPI 3.0).
 *
 * - The committed files are what the generator makes now (npm run api:docs), and the service
 *   serves the same OpenAPI document.
 * - Both are valid per their official meta-schemas, and every schema in them compiles in ajv's
 *   strict mode.
 * - They accept what the code accepts and refuse what it refuses: generated valid values and
 *   values with one field broken (the fuzz tests' generators) are judged by zod and by ajv over
 *   the documents, and the verdicts must agree, except where a document says it cannot express
 *   a rule (a time range's order and length).
 * Real traffic against the documents: contract-traffic.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import asyncapiSpecs from '@asyncapi/specs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv as AjvDraft07 } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import type { z } from 'zod';
import { apiDocuments, formatted } from '../../packaging/api-docs.js';
import { OPENAPI_PATH, orderServiceOpenApi } from '../../src/order-service/openapi-route.js';
import {
  commandSchema,
  createParamsSchema,
  inboundInstructionSchema,
  isTimestamp,
  lenientCodePattern,
  QUERY_LIMITS,
  queryParamsSchema,
  TIMESTAMP_PATTERN,
  wallClockMs,
} from '../../src/protocol/index.js';
import {
  badTimestamp,
  type Json,
  mutateCommand,
  mutateCreate,
  mutateInstruction,
  oddValue,
  timestamp as timestampArb,
  validCommand,
  validCreateParams,
  validInstruction,
  validQueryParams,
  withExtraKeys,
} from '../fuzz/arbitraries.js';
import { ROOT } from '../helpers/cli.js';
import { makeService } from '../order-service/harness.js';
import { DocumentValidator, responsePointer } from './contract-validators.js';

const documents = apiDocuments();
const openapi = documents['docs/api/openapi.json']!;
const asyncapi = documents['docs/api/asyncapi.json']!;

/** Cases per property: enough to meet every rule and field several times, cheap on 2 cores. */
const RUNS = 1500;

describe('contract documents: committed, served, valid', () => {
  for (const [path, document] of Object.entries(documents)) {
    it(`${path} equals the generator's output (npm run api:docs)`, () => {
      assert.equal(
        readFileSync(join(ROOT, path), 'utf8'),
        formatted(document, path),
        `stale: run npm run api:docs`,
      );
    });
  }

  it('the service serves the same OpenAPI document at GET /openapi.json', async () => {
    // The service's own app (buildApp), nothing registered by the test; over a socket, with the
    // real service from its composition root, in contract-traffic.test.ts.
    const { app } = makeService();
    try {
      const res = await app.inject({ method: 'GET', url: OPENAPI_PATH });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.deepEqual(res.json(), orderServiceOpenApi());
      assert.deepEqual(
        res.json(),
        JSON.parse(readFileSync(join(ROOT, 'docs/api/openapi.json'), 'utf8')),
      );
    } finally {
      await app.close();
    }
  });

  it('the OpenAPI document is valid OpenAPI 3.1 (@seriousme/openapi-schema-validator)', async () => {
    const result = await new Validator().validate(structuredClone(openapi));
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    // The validator is not vacuous: an operation without responses is refused.
    const broken = structuredClone(openapi) as { paths: Record<string, Record<string, Json>> };
    delete broken.paths['/open-api/order/create']!.post!.responses;
    broken.paths['/open-api/order/create']!.post!.requestBody = 'none';
    assert.equal((await new Validator().validate(broken)).valid, false);
  });

  it('the AsyncAPI document is valid AsyncAPI 3.0 (@asyncapi/specs with ajv draft-07)', () => {
    const ajv = new AjvDraft07({ allErrors: true, strict: false });
    addFormats.default(ajv);
    const validate = ajv.compile(asyncapiSpecs.schemasWithoutId['3.0.0']);
    assert.equal(validate(asyncapi), true, ajv.errorsText(validate.errors, { separator: '\n' }));
    // Not vacuous: an action AsyncAPI 3 does not have, and a payload schema of a wrong type.
    const broken = structuredClone(asyncapi) as {
      operations: Record<string, Json>;
      components: { schemas: Record<string, Json> };
    };
    broken.operations.sendJobEvent!.action = 'publish';
    assert.equal(validate(broken), false);
    const badSchema = structuredClone(asyncapi) as typeof broken;
    badSchema.components.schemas.JobEvent!.required = 'eventId';
    assert.equal(validate(badSchema), false);
  });

  it('every schema in the documents compiles in ajv strict mode', () => {
    const o = new DocumentValidator(openapi, 'openapi');
    const a = new DocumentValidator(asyncapi, 'asyncapi');
    const components = (doc: Json) =>
      Object.keys((doc.components as { schemas: Json }).schemas).map(
        (name) => `#/components/schemas/${name}`,
      );
    for (const pointer of components(openapi)) o.schema(pointer);
    for (const pointer of components(asyncapi)) a.schema(pointer);
    // The response bodies of each status, which combine components.
    for (const [path, item] of Object.entries(openapi.paths as Record<string, Json>))
      for (const [method, op] of Object.entries(item as Record<string, { responses: Json }>))
        for (const status of Object.keys(op.responses))
          o.schema(responsePointer(path, method, Number(status)));
  });

  it('the documents carry the limits the code enforces, not only the shapes', () => {
    const o = new DocumentValidator(openapi, 'openapi');
    const params = '#/components/schemas/CreateParams';
    const order = {
      productInfo: [{ productName: 'Tea', price: 100, quantity: 1 }],
      orderType: 1,
      paymentWay: '2',
      paymentTransactionId: 'M-1',
    };
    o.assertValid(params, order, 'a small order');
    // 50 characters are 50 code points: 50 emoji (100 UTF-16 units) pass, 51 do not.
    const name = (n: number) => '🍜'.repeat(n);
    const named = (n: number) => ({
      ...order,
      productInfo: [{ productName: name(n), price: 100, quantity: 1 }],
    });
    o.assertValid(params, named(50), '50 emoji');
    o.assertInvalid(params, named(51), '51 emoji');
    assert.equal(createParamsSchema.safeParse(named(51)).success, false);
    o.assertInvalid(params, { ...order, orderType: 4 }, 'an orderType outside the table');
    o.assertInvalid(params, { ...order, paymentWay: '3' }, 'a paymentWay outside the table');
    o.assertInvalid(params, { ...order, serviceFee: 1.5 }, 'a fraction of a cent');
    o.assertInvalid(
      params,
      { ...order, transactionCreateTime: '2026-02-29 10:00:00' },
      'no leap day',
    );
  });
});

/** The timestamp pattern of the documents is `isTimestamp`. */
describe('contract documents: the timestamp pattern', () => {
  const pattern = new RegExp(TIMESTAMP_PATTERN, 'u');
  it('accepts every real timestamp and refuses the rest, as isTimestamp does', () => {
    const shaped = fc
      .tuple(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 0, max: 13 }),
        fc.integer({ min: 0, max: 32 }),
        fc.integer({ min: 0, max: 24 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 0, max: 60 }),
      )
      .map(([y, mo, d, h, mi, s]) => {
        const p = (n: number, w = 2) => String(n).padStart(w, '0');
        return `${p(y, 4)}-${p(mo)}-${p(d)} ${p(h)}:${p(mi)}:${p(s)}`;
      });
    const leap = fc
      .integer({ min: 0, max: 9999 })
      .map((y) => `${String(y).padStart(4, '0')}-02-29 12:00:00`);
    fc.assert(
      fc.property(fc.oneof(shaped, leap, timestampArb, badTimestamp), (value) => {
        assert.equal(pattern.test(value), isTimestamp(value), value);
      }),
      { numRuns: 20_000 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The documents judge as the code does

interface Differential {
  /** The zod schema the code validates with. */
  schema: z.ZodType;
  validator: DocumentValidator;
  pointer: string;
  /** Values the document cannot judge (its description says so): expected accepted by it. */
  inexpressible?: (value: unknown) => boolean;
}

/** The value as it travels: what JSON.parse gives the receiver (no undefined, NaN, -0...). */
function onTheWire(value: unknown): unknown {
  const text = JSON.stringify(value);
  return text === undefined ? null : JSON.parse(text);
}

/** Verdicts of one property, to show it met both kinds of value. */
interface Tally {
  accepted: number;
  refused: number;
  inexpressible: number;
}

const tally = (): Tally => ({ accepted: 0, refused: 0, inexpressible: 0 });

/** Both verdicts were met often: a property that only ever saw valid values proves nothing. */
function assertMixed(t: Tally, runs: number): void {
  const total = t.accepted + t.refused + t.inexpressible;
  assert.equal(total, runs);
  assert.ok(t.accepted > runs / 10 && t.refused > runs / 10, JSON.stringify(t));
}

function agree(
  { schema, validator, pointer, inexpressible }: Differential,
  sent: unknown,
  counts: Tally,
) {
  const value = onTheWire(sent);
  const code = schema.safeParse(value).success;
  const doc = validator.errors(pointer, value);
  if (!code && inexpressible?.(value)) {
    counts.inexpressible++;
    assert.equal(doc, null, 'the document refuses what it says it cannot judge');
    return;
  }
  counts[code ? 'accepted' : 'refused']++;
  assert.equal(
    doc === null,
    code,
    `the code ${code ? 'accepts' : 'refuses'} what ${pointer} ${doc === null ? 'accepts' : `refuses:\n${doc}`}\n${JSON.stringify(value).slice(0, 1500)}`,
  );
}

function valuesAround(
  valid: fc.Arbitrary<Json>,
  mutate: (v: Json) => fc.Arbitrary<{ value: Json }>,
) {
  return fc.oneof(
    { weight: 3, arbitrary: valid },
    { weight: 1, arbitrary: valid.chain(withExtraKeys) },
    { weight: 5, arbitrary: valid.chain((v) => mutate(v).map((m) => m.value)) },
    { weight: 1, arbitrary: oddValue },
  );
}

/** A time range the code refuses for its order or length: JSON Schema cannot compare values. */
function badRange(value: unknown): boolean {
  const v = value as { startTime?: unknown; endTime?: unknown } | null;
  if (typeof v?.startTime !== 'string' || typeof v.endTime !== 'string') return false;
  const start = wallClockMs(v.startTime);
  const end = wallClockMs(v.endTime);
  if (start === null || end === null) return false;
  return end < start || end - start > QUERY_LIMITS.maxRangeDays * 86_400_000;
}

describe('contract documents accept what the code accepts, and refuse what it refuses', () => {
  const o = new DocumentValidator(openapi, 'openapi');
  const a = new DocumentValidator(asyncapi, 'asyncapi');

  for (const [name, validator, pointer] of [
    ['OpenAPI', o, '#/components/schemas/CreateParams'],
    ['AsyncAPI', a, '#/components/schemas/CreateParams'],
  ] as const) {
    it(`create parameters (${name} CreateParams)`, () => {
      const d = { schema: createParamsSchema, validator, pointer };
      const t = tally();
      fc.assert(
        fc.property(
          valuesAround(validCreateParams, (v) => mutateCreate(v)),
          (v) => agree(d, v, t),
        ),
        { numRuns: RUNS },
      );
      assertMixed(t, RUNS);
    });
  }

  it('lenient codes: numeric strings exactly where the code takes them', () => {
    const d = {
      schema: createParamsSchema,
      validator: o,
      pointer: '#/components/schemas/CreateParams',
    };
    const base = {
      productInfo: [{ productName: 'Tea', price: 100, quantity: 1 }],
      orderType: 1,
      paymentTransactionId: 'M-1',
    };
    const written = fc.oneof(
      fc.constantFrom(
        '2',
        ' 2',
        '2 ',
        '02',
        '002',
        '\t2\n',
        '\u00a02',
        '2.0',
        '+2',
        '-2',
        '0x2',
        '',
        ' ',
        '1e0',
        '２',
      ),
      fc.stringMatching(/^\s{0,2}\d{1,4}\s{0,2}$/),
    );
    const t = tally();
    fc.assert(
      fc.property(written, fc.constantFrom('paymentWay', 'transactionFeeType'), (w, field) =>
        agree(d, { ...base, paymentWay: 2, [field]: w }, t),
      ),
      { numRuns: 3000 },
    );
    assertMixed(t, 3000);
    assert.equal(lenientCodePattern([1, 2]), '^\\s*0*(?:1|2)\\s*$');
  });

  it('print instructions (AsyncAPI PrintInstruction)', () => {
    const d = {
      schema: inboundInstructionSchema,
      validator: a,
      pointer: '#/components/schemas/PrintInstruction',
    };
    const t = tally();
    fc.assert(
      fc.property(valuesAround(validInstruction, mutateInstruction), (v) => agree(d, v, t)),
      { numRuns: RUNS },
    );
    assertMixed(t, RUNS);
  });

  it('commands (AsyncAPI Command)', () => {
    const d = { schema: commandSchema, validator: a, pointer: '#/components/schemas/Command' };
    const t = tally();
    fc.assert(
      fc.property(valuesAround(validCommand, mutateCommand), (v) => agree(d, v, t)),
      { numRuns: RUNS },
    );
    assertMixed(t, RUNS);
  });

  it('query parameters (OpenAPI QueryParams), but for the time range rules it names', () => {
    const d = {
      schema: queryParamsSchema,
      validator: o,
      pointer: '#/components/schemas/QueryParams',
      inexpressible: badRange,
    };
    const field = fc.constantFrom(
      'startTime',
      'endTime',
      'orderInnerNo',
      'receiptNo',
      'pageNum',
      'pageSize',
    );
    const broken = validQueryParams.chain((v) =>
      fc.oneof(
        // Another mode added, a field dropped or nulled, or a field given a hostile value.
        fc
          .record(
            { orderInnerNo: fc.string({ maxLength: 3 }), receiptNo: fc.string({ maxLength: 3 }) },
            { requiredKeys: [] },
          )
          .map((extra) => ({ ...v, ...extra })),
        fc
          .record({ startTime: timestampArb }, { requiredKeys: [] })
          .map((extra) => ({ ...v, ...extra })),
        field.map((f) => {
          const out: Json = { ...v };
          delete out[f];
          return out;
        }),
        fc
          .tuple(field, fc.oneof(oddValue, fc.constant(null), badTimestamp, timestampArb))
          .map(([f, x]) => ({ ...v, [f]: x })),
      ),
    );
    const t = tally();
    fc.assert(
      fc.property(fc.oneof(validQueryParams, broken, oddValue), (v) => agree(d, v, t)),
      { numRuns: RUNS * 2 },
    );
    assertMixed(t, RUNS * 2);
    // The rules the document names as beyond it were met, and it let them through as it says.
    assert.ok(t.inexpressible > 0, JSON.stringify(t));
  });
});
