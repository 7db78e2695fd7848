/**
 * Shared pieces of the fuzz tests (issue 9, fault matrix row 18): how many cases, how to replay a
 * failure, what a typed rejection must look like, and the generators of valid values, near-valid
 * values (one field broken) and hostile input (arbitrary bytes, JSON, objects).
 *
 * The valid generators follow the spec text (order-api 2.9 and §8, print-protocol §4 and §5), not
 * the schemas in src/, so a schema that drifts from the spec fails the positive controls.
 *
 * Runs: `FUZZ_RUNS` cases per target (default 10,000; issue 9 asks at least 10,000 generated
 * cases per target in the normal test run), each target's file splitting them over its properties
 * by weight (`targetRuns`); `npm run fuzz` (FUZZ_RUNS=100000) or `FUZZ_RUNS=200000 node --import
 * tsx --test test/fuzz/*.test.ts` for a long run. fast-check prints the seed and path of a
 * failure; `FUZZ_SEED=... FUZZ_PATH=...` replays it.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AgentError, ERROR_CODES, type FieldIssue } from '../../src/errors.js';
import { STORE_ID } from './harness.js';

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isSafeInteger(value) || value < 1)
    throw new Error(`${name} must be a positive integer, got ${raw}`);
  return value;
}

/** Cases per target: at least 10,000 in the normal test run, more with `FUZZ_RUNS`. */
export const FUZZ_RUNS = positiveInteger('FUZZ_RUNS', 10_000);

/**
 * A target's FUZZ_RUNS split over its fuzzed properties by weight: each gets
 * `ceil(FUZZ_RUNS * weight / sum of weights)` cases, so together they run at least FUZZ_RUNS
 * (decision 259). Each target's file gives the weights of all its properties in one place.
 */
export function targetRuns<K extends string>(weights: Record<K, number>): Record<K, number> {
  const entries = Object.entries(weights) as [K, number][];
  const total = entries.reduce((sum, [, w]) => sum + w, 0);
  if (entries.length === 0 || entries.some(([, w]) => !(w > 0)))
    throw new Error(`fuzz weights must be positive: ${JSON.stringify(weights)}`);
  return Object.fromEntries(
    entries.map(([k, w]) => [k, Math.ceil((FUZZ_RUNS * w) / total)]),
  ) as Record<K, number>;
}

/**
 * node:test's timeout per fuzz test, growing with the runs (12 ms per case, 2 min at least): an
 * async hang (the inbox, the scripted printer link) fails the test instead of blocking CI. A
 * synchronous endless loop cannot be interrupted in-process; the inputs are bounded in size so
 * that every case is short work.
 */
export const FUZZ_TIMEOUT_MS = Math.max(120_000, FUZZ_RUNS * 12);

/**
 * fast-check parameters: `numRuns` cases (the property's share of its target, `targetRuns`);
 * FUZZ_SEED and FUZZ_PATH replay a printed failure.
 */
export function fuzzOptions<T>(numRuns: number, extra: fc.Parameters<T> = {}): fc.Parameters<T> {
  const seed = process.env.FUZZ_SEED;
  const path = process.env.FUZZ_PATH;
  return {
    numRuns,
    // The failed assertion's own message in the report, not only in `cause`.
    includeErrorInReport: true,
    ...(seed ? { seed: Number(seed) } : {}),
    ...(path ? { path } : {}),
    ...extra,
  };
}

// ---------------------------------------------------------------------------------------------
// What a rejection must look like

/** A field path as the project prints it: `order.productInfo[3].quantity`, or `(root)`. */
export const FIELD_PATH = /^(?:\(root\)|[A-Za-z_$][\w$]*(?:\[\d+\]|\.[A-Za-z_$][\w$]*)*)$/;

/** `path: rule` at the start of a message (several are joined with `; `). */
const NAMES_A_FIELD = /^(?:\(root\)|[A-Za-z_$][\w$]*(?:\[\d+\]|\.[A-Za-z_$][\w$]*)*): \S/;

export function assertIssues(issues: readonly FieldIssue[]): void {
  for (const issue of issues) {
    assert.match(issue.path, FIELD_PATH, `issue path ${JSON.stringify(issue.path)}`);
    assert.equal(typeof issue.message, 'string');
    assert.ok(issue.message.trim().length > 0, `empty message at ${issue.path}`);
  }
}

/** Throws unless no `secret` (nor any 12-character piece of one) appears in `text`. */
export function assertNoSecret(text: string, secrets: readonly string[]): void {
  for (const secret of secrets) {
    const piece = Math.min(12, secret.length);
    for (let i = 0; i + piece <= secret.length; i++) {
      const part = secret.slice(i, i + piece);
      if (text.includes(part))
        assert.fail(`a secret (or a piece ${JSON.stringify(part)} of it) appears in: ${text}`);
    }
  }
}

/**
 * A typed rejection: an AgentError with a catalogued code, a message that starts with the field
 * it is about (`path: rule`), well-formed issues, and no secret anywhere.
 */
export function assertTypedRejection(
  error: unknown,
  options: { secrets?: readonly string[]; namesField?: boolean } = {},
): asserts error is AgentError {
  assert.ok(error instanceof AgentError, `not an AgentError: ${String(error)}`);
  assert.ok(Object.hasOwn(ERROR_CODES, error.code), `unknown code ${error.code}`);
  if (options.namesField ?? true) assert.match(error.message, NAMES_A_FIELD);
  assertIssues(error.issues);
  const everything = [error.message, ...error.issues.flatMap((i) => [i.path, i.message])];
  for (const text of everything) assertNoSecret(text, options.secrets ?? []);
}

// ---------------------------------------------------------------------------------------------
// Text and numbers

export type Range = { readonly min: number; readonly max: number };

const codePoint = (min: number, max: number) =>
  fc.integer({ min, max }).map((cp) => String.fromCodePoint(cp));

/** One character as a person counts it: one code point, often outside the BMP or a control. */
export const char = fc.oneof(
  { weight: 6, arbitrary: codePoint(0x20, 0x7e) },
  { weight: 2, arbitrary: codePoint(0x4e00, 0x9fff) }, // CJK ideographs
  { weight: 2, arbitrary: codePoint(0x1f300, 0x1faff) }, // emoji: two UTF-16 units
  { weight: 1, arbitrary: codePoint(0xa0, 0x24f) }, // Latin-1 and Latin Extended
  { weight: 1, arbitrary: codePoint(0x00, 0x1f) }, // controls: allowed by the schemas
);

export const textOfLength = (n: number) => fc.string({ unit: char, minLength: n, maxLength: n });

/** `min` to `max` characters, the bounds themselves often. */
export const textIn = (r: Range) =>
  fc.oneof(fc.constant(r.min), fc.constant(r.max), fc.integer(r)).chain(textOfLength);

export const intIn = (r: Range) => fc.oneof(fc.constant(r.min), fc.constant(r.max), fc.integer(r));

/**
 * print-protocol v1.2 §10, transcribed: an identifier holds no control, format or invisible
 * character (Cc, Cf, Zl, Zp; with decision 232 also Cs and Default_Ignorable_Code_Point) and no
 * white space but U+0020, which is neither first nor last.
 */
const LOOK_ALIKE_CHARACTER = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;
export function isIdentifier(value: string): boolean {
  for (const ch of value) {
    if (LOOK_ALIKE_CHARACTER.test(ch)) return false;
    if (ch !== ' ' && /^\p{White_Space}$/u.test(ch)) return false;
  }
  return !value.startsWith(' ') && !value.endsWith(' ');
}

/** A character an identifier may hold (`char` without what §10 refuses). */
const identifierChar = char.filter((c) => c === ' ' || isIdentifier(c));

/** `min` to `max` characters an identifier may be (§10), the bounds themselves often. */
export const identifierIn = (r: Range) =>
  fc
    .oneof(fc.constant(r.min), fc.constant(r.max), fc.integer(r))
    .chain((n) => fc.string({ unit: identifierChar, minLength: n, maxLength: n }))
    .map((s) => (s.startsWith(' ') ? `x${s.slice(1)}` : s))
    .map((s) => (s.endsWith(' ') ? `${s.slice(0, -1)}x` : s));

/** An id of print-protocol §4/§5: 1 to 64 characters, mostly plain, never a look-alike (§10). */
export const id = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^[A-Z][A-Z0-9-]{0,20}$/) },
  { weight: 1, arbitrary: identifierIn({ min: 1, max: 64 }) },
);

/** Look-alikes of a valid identifier (§10): white space at an end, or a refused character in it. */
export const lookAlikeOf = (valid: string): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(`${valid} `, ` ${valid}`, `${valid}\t`, `${valid}\u00a0`, `\u3000${valid}`),
    fc
      .tuple(
        fc.nat(valid.length),
        fc.constantFrom(
          '\u200b', // zero width space (Cf)
          '\u200d', // zero width joiner (Cf)
          '\u2060', // word joiner (Cf)
          '\ufeff', // byte order mark (Cf)
          '\u00ad', // soft hyphen (Cf)
          '\u202e', // right-to-left override (Cf)
          '\u2028', // line separator (Zl)
          '\u2029', // paragraph separator (Zp)
          '\u00a0', // no-break space
          '\u3000', // ideographic space
          '\t',
          '\n',
          '\r',
          '\u0000',
          '\u007f',
          '\u0085', // next line (Cc)
          '\u3164', // Hangul filler (Default_Ignorable_Code_Point)
          '\ufe0f', // variation selector 16 (Default_Ignorable_Code_Point)
          '\ud800', // a lone surrogate (Cs)
        ),
      )
      .map(([i, c]) => {
        // Between two code points, never inside a surrogate pair.
        const points = [...valid];
        const at = Math.min(i, points.length);
        return [...points.slice(0, at), c, ...points.slice(at)].join('');
      }),
  );

/** A printer role: 1 to 64 of letters, digits, dot, dash, underscore. */
export const role = fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/);

const pad = (n: number) => String(n).padStart(2, '0');

/** A real `yyyy-MM-dd HH:mm:ss`, built from Date (Gregorian rules), plus leap-day edges. */
export const timestamp = fc.oneof(
  fc
    .date({
      min: new Date('1970-01-01T00:00:00Z'),
      max: new Date('2099-12-31T23:59:59Z'),
      noInvalidDate: true,
    })
    .map((d) => d.toISOString().slice(0, 19).replace('T', ' ')),
  fc.constantFrom('2028-02-29 00:00:00', '2000-02-29 23:59:59', '2026-12-31 23:59:59'),
);

const TIMESTAMP_SHAPE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/** Strings that are not a real `yyyy-MM-dd HH:mm:ss`. */
export const badTimestamp = fc.oneof(
  fc.constantFrom(
    '2026-02-29 10:00:00',
    '1900-02-29 00:00:00',
    '2026-04-31 00:00:00',
    '2026-13-01 00:00:00',
    '2026-00-10 00:00:00',
    '2026-01-00 00:00:00',
    '2026-01-01 24:00:00',
    '2026-01-01 23:60:00',
    '2026-01-01 23:59:60',
    '2026-01-01T10:00:00',
    '2026-01-01 10:00:00Z',
    '2026-01-01',
    ' 2026-01-01 10:00:00',
    '2026-01-01 10:00:00\n',
    '２０２６-01-01 10:00:00',
    '',
  ),
  fc
    .tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 32, max: 99 }))
    .map(([m, d]) => `2026-${pad(m)}-${pad(d)} 00:00:00`),
  fc.string({ maxLength: 30 }).filter((s) => !TIMESTAMP_SHAPE.test(s)),
);

/** Values hostile to validators: wrong types, extremes, lone surrogates, prototype keys. */
export const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    -0,
    Number.MAX_VALUE,
    Number.MIN_VALUE,
    Number.MAX_SAFE_INTEGER + 2,
    1e21,
    '',
    ' ',
    '\u0000',
    '\uD800',
    '\uDFFF',
    'null',
    '1',
    '__proto__',
    true,
    false,
    [],
    {},
    [null],
  ),
  fc.constant(null).map(() => JSON.parse('{"__proto__":{"polluted":1},"constructor":{}}')),
  fc.string({ maxLength: 5 }).map((s) => s.repeat(2000)),
  fc.anything({ maxDepth: 2 }),
);

// ---------------------------------------------------------------------------------------------
// Valid create parameters (order-api 2.9, rules of 4.2, limits of §8)

/** order-api 2.9 and §8, transcribed from the spec. */
export const SPEC = {
  productInfo: { min: 1, max: 50 },
  productName: { min: 1, max: 50 },
  productPrice: { min: 0, max: 1_000_000 },
  productQuantity: { min: 1, max: 1000 },
  fee: { min: 0, max: 10_000_000 },
  amount: { min: 0, max: 100_000_000 },
  pickUpNum: { min: 1, max: 50 },
  userName: { min: 1, max: 100 },
  userPhone: { min: 1, max: 20 },
  userAddress: { min: 1, max: 200 },
  paymentChannel: { min: 1, max: 200 },
  paymentTransactionId: { min: 1, max: 50 },
  discountNo: { min: 1, max: 200 },
  discounterName: { min: 1, max: 50 },
  discountValidityPeriod: { min: 1, max: 200 },
  transactionId: { min: 1, max: 50 },
  paymentPlatform: { min: 1, max: 200 },
} as const;

export type Json = Record<string, unknown>;

const nullable = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 4, arbitrary: arb }, { weight: 1, arbitrary: fc.constant(null) });

export const product = fc.record({
  productName: textIn(SPEC.productName),
  price: intIn(SPEC.productPrice),
  quantity: intIn(SPEC.productQuantity),
});

const products = fc.oneof(
  { weight: 9, arbitrary: fc.array(product, { minLength: 1, maxLength: 8 }) },
  { weight: 1, arbitrary: fc.array(product, { minLength: 50, maxLength: 50 }) },
);

const optionalCreateFields = fc.record(
  {
    serviceFee: nullable(intIn(SPEC.fee)),
    merchantDeliveryFee: nullable(intIn(SPEC.fee)),
    deliveryFee: nullable(intIn(SPEC.fee)),
    packingFee: nullable(intIn(SPEC.fee)),
    paymentAmount: nullable(intIn(SPEC.amount)),
    discountAmount: nullable(intIn(SPEC.amount)),
    transactionFee: nullable(intIn(SPEC.amount)),
    pickUpNum: nullable(fc.oneof(fc.constant(''), textIn(SPEC.pickUpNum))),
    userName: nullable(textIn(SPEC.userName)),
    userPhone: nullable(textIn(SPEC.userPhone)),
    userAddress: nullable(textIn(SPEC.userAddress)),
    customPrintContext: nullable(fc.string({ unit: char, maxLength: 300 })),
    paymentChannel: nullable(textIn(SPEC.paymentChannel)),
    promoDiscountType: nullable(fc.constantFrom(1, 2)),
    discountNo: nullable(textIn(SPEC.discountNo)),
    discounterName: nullable(textIn(SPEC.discounterName)),
    discountValidityPeriod: nullable(textIn(SPEC.discountValidityPeriod)),
    transactionFeeType: nullable(fc.constantFrom(1, 2, '1', '2')),
    transactionId: nullable(textIn(SPEC.transactionId)),
    paymentPlatform: nullable(textIn(SPEC.paymentPlatform)),
    transactionCreateTime: nullable(timestamp),
    transactionReturnTime: nullable(timestamp),
    paymentTransaction: fc.jsonValue({ maxDepth: 2 }),
  },
  { requiredKeys: [] },
);

/** Non-null values for the fields a 4.2 rule may demand. */
const ruleFields = fc.record({
  deliveryFee: intIn(SPEC.fee),
  packingFee: intIn(SPEC.fee),
  paymentChannel: textIn(SPEC.paymentChannel),
  transactionCreateTime: timestamp,
  transactionReturnTime: timestamp,
  discountNo: textIn(SPEC.discountNo),
  discounterName: textIn(SPEC.discounterName),
  discountValidityPeriod: textIn(SPEC.discountValidityPeriod),
});

/** The fields that order-api 4.2 rules 2 to 4 require for this order. */
export function requiredByRules(o: Json): string[] {
  const out: string[] = [];
  if (o.orderType === 3) out.push('deliveryFee', 'packingFee');
  if (Number(o.paymentWay) === 1)
    out.push('paymentChannel', 'transactionCreateTime', 'transactionReturnTime');
  const dt = o.discountType == null ? null : Number(o.discountType);
  if (dt === 2) out.push('discountNo', 'discounterName', 'discountValidityPeriod');
  if (dt === 4) out.push('discountNo', 'discounterName');
  return out;
}

/** Valid create parameters: every order type, payment way and discount rule; as JSON gives them. */
export const validCreateParams: fc.Arbitrary<Json> = fc
  .record({
    productInfo: products,
    orderType: fc.constantFrom(1, 2, 3),
    paymentWay: fc.constantFrom(1, 2, '1', '2'),
    paymentTransactionId: identifierIn(SPEC.paymentTransactionId),
    discountType: fc.constantFrom(undefined, null, 1, 2, 4, '1', '2', '4'),
    optional: optionalCreateFields,
    forced: ruleFields,
  })
  .map(({ optional, forced, discountType, ...core }) => {
    const o: Json = { ...optional, ...core };
    if (discountType !== undefined) o.discountType = discountType;
    for (const field of requiredByRules(o)) o[field] = forced[field as keyof typeof forced];
    return o;
  });

/** A valid print instruction (print-protocol §4), for the fuzzed store (v1.1: `storeId`). */
export const validInstruction: fc.Arbitrary<Json> = fc
  .record(
    {
      storeId: fc.constant(STORE_ID),
      jobId: id,
      orderNo: id,
      pickUpNo: nullable(textIn({ min: 1, max: 50 })),
      takeoutNo: nullable(textIn({ min: 1, max: 50 })),
      createTime: timestamp,
      order: validCreateParams,
      printer: role,
      copies: fc.integer({ min: 1, max: 5 }),
    },
    { requiredKeys: ['storeId', 'jobId', 'orderNo', 'createTime', 'order'] },
  )
  .map((i) => ({ ...i }));

/** A valid command (print-protocol §5), for the fuzzed store (v1.1: `storeId`). */
const storeId = fc.constant(STORE_ID);
export const validCommand: fc.Arbitrary<Json> = fc.oneof(
  fc.record(
    { storeId, commandId: id, type: fc.constant('reprint'), orderNo: id, printer: role },
    { requiredKeys: ['storeId', 'commandId', 'type', 'orderNo'] },
  ),
  fc.record(
    { storeId, commandId: id, type: fc.constant('test-print'), printer: role },
    { requiredKeys: ['storeId', 'commandId', 'type'] },
  ),
  fc.record({ storeId, commandId: id, type: fc.constant('status') }),
);

const DAY_MS = 24 * 60 * 60 * 1000;
const wallClock = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');

/** Valid query parameters (order-api 2.3, 4.1): exactly one mode, a range of at most 30 days. */
export const validQueryParams: fc.Arbitrary<Json> = fc
  .record({
    mode: fc.oneof(
      fc
        .tuple(
          fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2090, 0, 1) }),
          fc.oneof(
            fc.constant(0),
            fc.constant(30 * DAY_MS),
            fc.integer({ min: 0, max: 30 * DAY_MS }),
          ),
        )
        .map(([start, span]) => ({
          startTime: wallClock(Math.floor(start / 1000) * 1000),
          endTime: wallClock(Math.floor(start / 1000) * 1000 + Math.floor(span / 1000) * 1000),
        })),
      textIn({ min: 1, max: 64 }).map((orderInnerNo) => ({ orderInnerNo })),
      textIn({ min: 1, max: 64 }).map((receiptNo) => ({ receiptNo })),
    ),
    page: fc.record(
      {
        pageNum: nullable(fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 1e9 }))),
        pageSize: nullable(intIn({ min: 1, max: 100 })),
        restaurantNo: nullable(fc.string({ maxLength: 20 })),
      },
      { requiredKeys: [] },
    ),
  })
  .map(({ mode, page }) => ({ ...page, ...mode }));

// ---------------------------------------------------------------------------------------------
// One field broken

/** What a field must be, as far as breaking it goes. */
export type FieldSpec =
  | { kind: 'text'; range: Range }
  /** An identifier (print-protocol v1.2 §10): text that is no look-alike of another. */
  | { kind: 'id'; range: Range }
  | { kind: 'int'; range: Range }
  | { kind: 'code'; values: readonly number[]; lenient: boolean }
  | { kind: 'timestamp' }
  | { kind: 'pickUp' }
  | { kind: 'string' }
  | { kind: 'role' };

export interface FieldRule {
  spec: FieldSpec;
  required: boolean;
}

/** Marks a mutation that deletes the field. */
export const MISSING: unique symbol = Symbol('missing');

export interface Broken {
  value: unknown;
  why: string;
}

const notString = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.string(), { minLength: 1, maxLength: 2 }),
);

const notNumber = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.boolean(),
  fc.constant([]),
  fc.constant({}),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
);

/** A value `spec` must reject (or MISSING for a required field), with what is wrong with it. */
export function breakField(rule: FieldRule): fc.Arbitrary<Broken> {
  const { spec } = rule;
  const options: fc.Arbitrary<Broken>[] = [];
  const tag = (why: string) => (value: unknown) => ({ value, why });
  if (rule.required) {
    options.push(fc.constantFrom<unknown>(MISSING, null).map(tag('missing')));
  }
  switch (spec.kind) {
    case 'id':
    case 'text':
      if (spec.kind === 'id')
        options.push(
          // One character short of the limit, so the look-alike's one more stays within it.
          identifierIn({ min: spec.range.min, max: spec.range.max - 1 })
            .chain(lookAlikeOf)
            .map(tag('look-alike')),
        );
      options.push(
        notString.map(tag('wrong type')),
        fc
          .integer({ min: spec.range.max + 1, max: spec.range.max + 20 })
          .chain(textOfLength)
          .map(tag('too long')),
      );
      if (spec.range.min > 0) options.push(fc.constant('').map(tag('empty')));
      break;
    case 'int':
      options.push(
        notNumber.map(tag('wrong type')),
        (spec.range.max < Number.MAX_SAFE_INTEGER
          ? fc.oneof(
              fc.constant(spec.range.max + 1),
              fc.integer({ min: spec.range.max + 1, max: Number.MAX_SAFE_INTEGER }),
            )
          : fc.constant(spec.range.max * 2)
        ).map(tag('above range')),
        fc.constant(spec.range.min - 1).map(tag('below range')),
        fc
          .integer({ min: spec.range.min, max: Math.min(spec.range.max - 1, 2 ** 40) })
          .map((n) => n + 0.5)
          .map(tag('fraction')),
      );
      break;
    case 'code': {
      const outside = fc.integer({ min: -5, max: 99 }).filter((n) => !spec.values.includes(n));
      options.push(
        outside.map(tag('not in table')),
        outside.map((n) => String(n)).map(tag('not in table, as text')),
        fc.constantFrom<unknown>('x', '', true, [], {}, 1.5).map(tag('wrong type')),
      );
      if (!spec.lenient)
        options.push(fc.constantFrom(...spec.values.map(String)).map(tag('number as text')));
      break;
    }
    case 'timestamp':
      options.push(badTimestamp.map(tag('not a timestamp')), notString.map(tag('wrong type')));
      break;
    case 'pickUp':
      options.push(
        notString.map(tag('wrong type')),
        fc.integer({ min: 51, max: 60 }).chain(textOfLength).map(tag('too long')),
      );
      break;
    case 'string':
      options.push(notString.map(tag('wrong type')));
      break;
    case 'role':
      options.push(
        notString.map(tag('wrong type')),
        fc.constantFrom('', 'a b', 'kitchen/1', 'rôle', 'x'.repeat(65), 'a\n').map(tag('bad role')),
      );
      break;
  }
  return fc.oneof(...options);
}

const fee: FieldRule = { spec: { kind: 'int', range: SPEC.fee }, required: false };
const amount: FieldRule = { spec: { kind: 'int', range: SPEC.amount }, required: false };
const optText = (range: Range): FieldRule => ({ spec: { kind: 'text', range }, required: false });
const optTime: FieldRule = { spec: { kind: 'timestamp' }, required: false };

export const CREATE_FIELDS: Readonly<Record<string, FieldRule>> = {
  serviceFee: fee,
  orderType: { spec: { kind: 'code', values: [1, 2, 3], lenient: false }, required: true },
  paymentWay: { spec: { kind: 'code', values: [1, 2], lenient: true }, required: true },
  pickUpNum: { spec: { kind: 'pickUp' }, required: false },
  merchantDeliveryFee: fee,
  deliveryFee: fee,
  packingFee: fee,
  userName: optText(SPEC.userName),
  userPhone: optText(SPEC.userPhone),
  userAddress: optText(SPEC.userAddress),
  customPrintContext: { spec: { kind: 'string' }, required: false },
  paymentChannel: optText(SPEC.paymentChannel),
  paymentTransactionId: {
    spec: { kind: 'id', range: SPEC.paymentTransactionId },
    required: true,
  },
  paymentAmount: amount,
  discountAmount: amount,
  discountType: { spec: { kind: 'code', values: [1, 2, 4], lenient: true }, required: false },
  promoDiscountType: { spec: { kind: 'code', values: [1, 2], lenient: false }, required: false },
  discountNo: optText(SPEC.discountNo),
  discounterName: optText(SPEC.discounterName),
  discountValidityPeriod: optText(SPEC.discountValidityPeriod),
  transactionFee: amount,
  transactionFeeType: { spec: { kind: 'code', values: [1, 2], lenient: true }, required: false },
  transactionId: optText(SPEC.transactionId),
  paymentPlatform: optText(SPEC.paymentPlatform),
  transactionCreateTime: optTime,
  transactionReturnTime: optTime,
};

export const PRODUCT_FIELDS: Readonly<Record<string, FieldRule>> = {
  productName: { spec: { kind: 'text', range: SPEC.productName }, required: true },
  price: { spec: { kind: 'int', range: SPEC.productPrice }, required: true },
  quantity: { spec: { kind: 'int', range: SPEC.productQuantity }, required: true },
};

export const INSTRUCTION_FIELDS: Readonly<Record<string, FieldRule>> = {
  jobId: { spec: { kind: 'id', range: { min: 1, max: 64 } }, required: true },
  orderNo: { spec: { kind: 'id', range: { min: 1, max: 64 } }, required: true },
  pickUpNo: optText({ min: 1, max: 50 }),
  takeoutNo: optText({ min: 1, max: 50 }),
  createTime: { spec: { kind: 'timestamp' }, required: true },
  printer: { spec: { kind: 'role' }, required: false },
  copies: { spec: { kind: 'int', range: { min: 1, max: 5 } }, required: false },
};

/** A near-valid value: `value` with one field broken; `path` is the field, as issues print it. */
export interface Mutation {
  value: Json;
  path: string;
  why: string;
}

function setOrDelete(o: Json, key: string, v: unknown): Json {
  const out = { ...o };
  if (v === MISSING) delete out[key];
  else out[key] = v;
  return out;
}

/** Breaks one field of valid create parameters; `prefix` roots the path (`order.`). */
export function mutateCreate(o: Json, prefix = ''): fc.Arbitrary<Mutation> {
  const list = o.productInfo as Json[];
  const fieldNames = Object.keys(CREATE_FIELDS);
  const options: fc.WeightedArbitrary<Mutation>[] = [
    {
      weight: 12,
      arbitrary: fc
        .constantFrom(...fieldNames)
        .chain((f) => breakField(CREATE_FIELDS[f]!).map((b) => ({ f, b })))
        .map(({ f, b }) => ({ value: setOrDelete(o, f, b.value), path: prefix + f, why: b.why })),
    },
    {
      weight: 6,
      arbitrary: fc
        .tuple(fc.nat(list.length - 1), fc.constantFrom(...Object.keys(PRODUCT_FIELDS)))
        .chain(([i, f]) => breakField(PRODUCT_FIELDS[f]!).map((b) => ({ i, f, b })))
        .map(({ i, f, b }) => ({
          value: {
            ...o,
            productInfo: list.map((p, k) => (k === i ? setOrDelete(p, f, b.value) : p)),
          },
          path: `${prefix}productInfo[${i}].${f}`,
          why: b.why,
        })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.nat(list.length - 1),
          fc.oneof(fc.integer(), fc.boolean(), fc.string(), fc.constant(null)),
        )
        .map(([i, v]) => ({
          value: { ...o, productInfo: list.map((p, k) => (k === i ? v : p)) },
          path: `${prefix}productInfo[${i}]`,
          why: 'product not an object',
        })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom<unknown>(MISSING, null, [], 'x', 1, {}, Array(51).fill(list[0]))
        .map((v) => ({
          value: setOrDelete(o, 'productInfo', v),
          path: `${prefix}productInfo`,
          why: 'productInfo broken',
        })),
    },
  ];
  const byRule = requiredByRules(o);
  if (byRule.length > 0) {
    options.push({
      weight: 2,
      arbitrary: fc.tuple(fc.constantFrom(...byRule), fc.boolean()).map(([f, toNull]) => ({
        value: setOrDelete(o, f, toNull ? null : MISSING),
        path: prefix + f,
        why: 'required by a 4.2 rule',
      })),
    });
  }
  return fc.oneof(...options);
}

/** Breaks one field of a valid print instruction, its order's fields included. */
export function mutateInstruction(i: Json): fc.Arbitrary<Mutation> {
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .constantFrom(...Object.keys(INSTRUCTION_FIELDS))
        .chain((f) => breakField(INSTRUCTION_FIELDS[f]!).map((b) => ({ f, b })))
        .map(({ f, b }) => ({ value: setOrDelete(i, f, b.value), path: f, why: b.why })),
    },
    {
      weight: 5,
      arbitrary: mutateCreate(i.order as Json, 'order.').map((m) => ({
        ...m,
        value: { ...i, order: m.value },
      })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom<unknown>(MISSING, null, [], 'x', 7).map((v) => ({
        value: setOrDelete(i, 'order', v),
        path: 'order',
        why: 'order broken',
      })),
    },
  );
}

/** Breaks one field of a valid command. */
export function mutateCommand(c: Json): fc.Arbitrary<Mutation> {
  const textId: FieldRule = { spec: { kind: 'id', range: { min: 1, max: 64 } }, required: true };
  const options: fc.Arbitrary<Mutation>[] = [
    breakField(textId).map((b) => ({
      value: setOrDelete(c, 'commandId', b.value),
      path: 'commandId',
      why: b.why,
    })),
    fc
      .constantFrom<unknown>(
        MISSING,
        null,
        'print',
        'Reprint',
        'reprint ',
        'STATUS',
        '',
        1,
        ['status'],
        {},
      )
      .map((v) => ({ value: setOrDelete(c, 'type', v), path: 'type', why: 'unknown type' })),
  ];
  if (c.type === 'reprint') {
    options.push(
      breakField(textId).map((b) => ({
        value: setOrDelete(c, 'orderNo', b.value),
        path: 'orderNo',
        why: b.why,
      })),
    );
  }
  if (c.type === 'reprint' || c.type === 'test-print') {
    options.push(
      breakField({ spec: { kind: 'role' }, required: false }).map((b) => ({
        value: setOrDelete(c, 'printer', b.value),
        path: 'printer',
        why: b.why,
      })),
    );
  }
  return fc.oneof(...options);
}

/** A valid value with extra keys nobody asked for (they are stripped, not rejected). */
export function withExtraKeys(o: Json): fc.Arbitrary<Json> {
  return fc
    .dictionary(
      fc.string({ minLength: 1, maxLength: 8 }).map((k) => `x-${k}`),
      fc.jsonValue({ maxDepth: 2 }),
      { maxKeys: 3 },
    )
    .map((extra) => ({ ...extra, ...o }));
}

// ---------------------------------------------------------------------------------------------
// Hostile input

/** Arbitrary bytes, biased towards JSON punctuation and invalid UTF-8. */
export const bytes = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: fc.integer({ min: 0, max: 255 }) },
      {
        weight: 2,
        arbitrary: fc.constantFrom(
          ...[...'{}[]":,\\ '].map((c) => c.charCodeAt(0)),
          0xc0,
          0xff,
          0xed,
          0xa0,
          0x80,
          0xef,
          0xbb,
          0xbf,
        ),
      },
    ),
    { maxLength: 300, size: 'medium' },
  )
  .map((a) => Buffer.from(a));

/** Arbitrary JSON text, sometimes with a key that matters to us or to prototypes. */
export const jsonText = fc.oneof(
  fc.json({ maxDepth: 4 }),
  fc
    .dictionary(
      fc.constantFrom(
        'appId',
        'storeKey',
        'restaurantKey',
        'param',
        'sign',
        '__proto__',
        'constructor',
        'toString',
      ),
      fc.jsonValue({ maxDepth: 3 }),
    )
    .map((o) => JSON.stringify(o)),
);

/** Edits a byte string: flip, insert or delete bytes, or cut it short. */
export function corruptBytes(data: Buffer): fc.Arbitrary<Buffer> {
  const at = fc.nat(Math.max(0, data.length - 1));
  return fc.oneof(
    fc.tuple(at, fc.integer({ min: 1, max: 255 })).map(([i, x]) => {
      const out = Buffer.from(data);
      if (out.length > 0) out[i] = out[i]! ^ x;
      return out;
    }),
    fc
      .tuple(at, fc.uint8Array({ minLength: 1, maxLength: 4 }))
      .map(([i, ins]) => Buffer.concat([data.subarray(0, i), ins, data.subarray(i)])),
    fc
      .tuple(at, fc.integer({ min: 1, max: 8 }))
      .map(([i, n]) => Buffer.concat([data.subarray(0, i), data.subarray(i + n)])),
    at.map((i) => Buffer.from(data.subarray(0, i))),
  );
}

/** A byte stream cut into chunks at arbitrary points (sorted, deduplicated, empty chunks kept out). */
export function splitAt(data: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const points = [...new Set(cuts.filter((c) => c > 0 && c < data.length))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(data.subarray(prev, p));
    prev = p;
  }
  if (prev < data.length || out.length === 0) out.push(data.subarray(prev));
  return out;
}

/** Cut points for `splitAt`, inside a stream of up to `max` bytes. */
export const cuts = (max: number) =>
  fc.oneof(
    fc.array(fc.integer({ min: 1, max: Math.max(1, max) }), { maxLength: 12 }),
    fc.constant(Array.from({ length: max }, (_, i) => i + 1)), // one byte at a time
  );
