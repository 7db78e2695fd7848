/**
 * Property tests of the create parameters (order-api 2.9, 4.2 and §8).
 *
 * The generators are built from `SPEC`, the limits copied by hand from the spec text; a separate
 * test checks that `CREATE_LIMITS` in the source says the same, so a drift in either is caught.
 * Valid timestamps come from `Date#toISOString` and leap years from the Gregorian rule written
 * here, not from src/protocol/time.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { z } from 'zod';
import { createParamsTwin } from '../../src/protocol/create-params.js';
import {
  CREATE_LIMITS,
  createParamsSchema,
  inboundInstructionSchema,
  parseWith,
  printInstructionSchema,
} from '../../src/protocol/index.js';

type Order = Record<string, unknown>;
type Range = { min: number; max: number };

/** order-api 2.9 "Length / range" and §8, transcribed from the spec document. */
const SPEC = {
  productInfo: { min: 1, max: 50 }, // 2.9 productInfo "1 to 50 entries"; §8
  productName: { min: 1, max: 50 }, // product record "1 to 50 chars"; §8
  productPrice: { min: 0, max: 1_000_000 }, // product record price; §8
  productQuantity: { min: 1, max: 1000 }, // product record quantity; §8
  fee: { min: 0, max: 10_000_000 }, // serviceFee, merchantDeliveryFee, deliveryFee, packingFee
  amount: { min: 0, max: 100_000_000 }, // paymentAmount, discountAmount, transactionFee
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
  transactionTime: { min: 1, max: 200 }, // transactionCreateTime / transactionReturnTime
} as const;

const FEE_FIELDS = ['serviceFee', 'merchantDeliveryFee', 'deliveryFee', 'packingFee'] as const;
const AMOUNT_FIELDS = ['paymentAmount', 'discountAmount', 'transactionFee'] as const;
const TIME_FIELDS = ['transactionCreateTime', 'transactionReturnTime'] as const;
/** Optional text fields with a 1..max length (pickUpNum is separate: it also allows ''). */
const TEXT_FIELDS = [
  'userName',
  'userPhone',
  'userAddress',
  'paymentChannel',
  'discountNo',
  'discounterName',
  'discountValidityPeriod',
  'transactionId',
  'paymentPlatform',
] as const satisfies readonly (keyof typeof SPEC)[];
const REQUIRED_FIELDS = ['productInfo', 'orderType', 'paymentWay', 'paymentTransactionId'] as const;

const TAKEOUT_MSG = 'is required for takeout orders (orderType 3)';
const ONLINE_MSG = 'is required for online payment (paymentWay 1)';
const PWD_MSG = 'is required for PWD discounts (discountType 2)';
const SC_MSG = 'is required for SC discounts (discountType 4)';
const TIME_MSG = 'must be a real date and time in the form yyyy-MM-dd HH:mm:ss';
const CODE_MSG = {
  orderType: 'must be one of 1 (Table order), 2 (Queue order), 3 (Takeout order)',
  paymentWay: 'must be one of 1 (Online), 2 (Offline)',
  discountType: 'must be one of 1 (Promo discount), 2 (PWD discount), 4 (SC discount)',
  promoDiscountType: 'must be one of 1 (Whole order discount), 2 (Product discount)',
  transactionFeeType: 'must be one of 1 (Merchant), 2 (Customer)',
} as const;

const rangeMsg = (r: Range) => `must be between ${r.min} and ${r.max}`;
const lengthMsg = (r: Range) => `must be ${r.min} to ${r.max} characters`;

// ---------------------------------------------------------------------------------------------
// Arbitraries of valid values

const codePoint = (min: number, max: number) =>
  fc.integer({ min, max }).map((cp) => String.fromCodePoint(cp));

/** One character as a person counts it: one code point, often outside the BMP. */
const char = fc.oneof(
  { weight: 4, arbitrary: codePoint(0x20, 0x7e) }, // printable ASCII
  { weight: 3, arbitrary: codePoint(0x4e00, 0x9fff) }, // CJK unified ideographs
  { weight: 3, arbitrary: codePoint(0x1f300, 0x1faff) }, // emoji (two UTF-16 units)
  { weight: 1, arbitrary: codePoint(0x20000, 0x2a6df) }, // CJK extension B (two units)
  { weight: 1, arbitrary: codePoint(0xac00, 0xd7a3) }, // Hangul syllables
);

/** A string of exactly `n` characters. */
const textOfLength = (n: number) => fc.string({ unit: char, minLength: n, maxLength: n });

/** A string of `min` to `max` characters, with both bounds generated often. */
const textIn = (r: Range) =>
  fc.oneof(fc.constant(r.min), fc.constant(r.max), fc.integer(r)).chain(textOfLength);

/**
 * An identifier (print-protocol v1.2 §10): `textIn` with no space at either end (`char` has no
 * other white space, control or invisible character).
 */
const identifierIn = (r: Range) => textIn(r).map((s) => s.replace(/^ /, 'x').replace(/ $/, 'x'));

/** An integer of the range, with both bounds generated often. */
const intIn = (r: Range) => fc.oneof(fc.constant(r.min), fc.constant(r.max), fc.integer(r));

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** A real `yyyy-MM-dd HH:mm:ss` built by Date itself, plus the leap days around the boundary. */
const timestamp = fc.oneof(
  fc
    .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z') })
    .filter((d) => !Number.isNaN(d.getTime()))
    .map((d) => d.toISOString().slice(0, 19).replace('T', ' ')),
  fc.constantFrom('2028-02-29 00:00:00', '2000-02-29 23:59:59', '2026-12-31 23:59:59'),
);

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** Strings that look like timestamps but are not real ones, or are in another format. */
const badTimestamp = fc.oneof(
  fc
    .integer({ min: 1901, max: 2099 })
    .filter((y) => !isLeap(y))
    .map((y) => `${y}-02-29 10:00:00`),
  fc.integer({ min: 24, max: 99 }).map((h) => `2026-05-05 ${h}:00:00`),
  fc.integer({ min: 60, max: 99 }).map((m) => `2026-05-05 10:${m}:00`),
  fc.integer({ min: 60, max: 99 }).map((s) => `2026-05-05 10:00:${s}`),
  fc.integer({ min: 13, max: 99 }).map((mo) => `2026-${pad(mo)}-01 10:00:00`),
  fc.constantFrom(
    '2026-01-01 24:00:00',
    '2026-01-01 23:60:00',
    '2026-01-01 23:59:60',
    '2026-02-29 00:00:00',
    '1900-02-29 00:00:00',
    '2026-04-31 00:00:00',
    '2026-00-01 00:00:00',
    '2026-01-00 00:00:00',
    '2026-01-01',
    '2026-01-01T00:00:00',
    '2026-01-01 00:00',
    '',
  ),
);

const nullable = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 4, arbitrary: arb }, { weight: 1, arbitrary: fc.constant(null) });

// Plain objects, as JSON.parse makes them (the output is compared with deepStrictEqual).
const product = fc.record(
  {
    productName: textIn(SPEC.productName),
    price: intIn(SPEC.productPrice),
    quantity: intIn(SPEC.productQuantity),
  },
  { noNullPrototype: true },
);

const products = fc.oneof(
  fc.array(product, { minLength: SPEC.productInfo.min, maxLength: SPEC.productInfo.max }),
  fc.array(product, { minLength: SPEC.productInfo.max, maxLength: SPEC.productInfo.max }),
);

/** Every optional field of 2.9 (discountType is chosen with its rules below); keys may be absent. */
const optionalFields = fc.record(
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
    paymentTransaction: fc.anything().filter((v) => v !== undefined),
  },
  { requiredKeys: [] },
);

/** Non-null values for the fields the conditional rules of 4.2 may demand. */
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

const codeNumber = (v: unknown) => (v === undefined || v === null ? v : Number(v));

/** The fields 4.2 rules 2 to 4 require for this order, with the message each would get. */
function requiredByRules(o: Order): [field: string, message: string][] {
  const out: [string, string][] = [];
  if (o.orderType === 3) out.push(['deliveryFee', TAKEOUT_MSG], ['packingFee', TAKEOUT_MSG]);
  if (codeNumber(o.paymentWay) === 1) {
    for (const f of ['paymentChannel', ...TIME_FIELDS]) out.push([f, ONLINE_MSG]);
  }
  const dt = codeNumber(o.discountType);
  if (dt === 2) {
    for (const f of ['discountNo', 'discounterName', 'discountValidityPeriod']) {
      out.push([f, PWD_MSG]);
    }
  }
  if (dt === 4) out.push(['discountNo', SC_MSG], ['discounterName', SC_MSG]);
  return out;
}

/** A valid create parameter object: every order type, payment way and discount type. */
const validOrder: fc.Arbitrary<Order> = fc
  .record({
    productInfo: products,
    orderType: fc.constantFrom(1, 2, 3),
    paymentWay: fc.constantFrom(1, 2, '1', '2'),
    paymentTransactionId: identifierIn(SPEC.paymentTransactionId),
    discountType: fc.constantFrom(undefined, null, 1, 2, 4, '1', '2', '4'),
    optional: optionalFields,
    forced: ruleFields,
  })
  .map(({ optional, forced, discountType, ...core }) => {
    const o: Order = { ...optional, ...core };
    if (discountType !== undefined) o.discountType = discountType;
    for (const [field] of requiredByRules(o)) o[field] = forced[field as keyof typeof forced];
    return o;
  });

// ---------------------------------------------------------------------------------------------
// Single-field mutations

type Mutation = { label: string; value: Order; path: string; message: string };

const set = (o: Order, field: string, v: unknown): Order => ({ ...o, [field]: v });

function withProduct(o: Order, index: number, field: string, v: unknown): Order {
  const list = (o.productInfo as Order[]).map((p, i) => (i === index ? { ...p, [field]: v } : p));
  return { ...o, productInfo: list };
}

/** max + 1, min - 1, or an in-range value plus 0.5, with the message each must produce. */
const badNumber = (r: Range) =>
  fc.oneof(
    fc.constant({ v: r.max + 1, message: rangeMsg(r) }),
    fc.constant({ v: r.min - 1, message: rangeMsg(r) }),
    fc.integer({ min: r.min, max: r.max - 1 }).map((n) => ({
      v: n + 0.5,
      message: 'must be an integer',
    })),
  );

function mutations(o: Order): fc.Arbitrary<Mutation> {
  const count = (o.productInfo as Order[]).length;
  const index = fc.integer({ min: 0, max: count - 1 });
  const options: fc.Arbitrary<Mutation>[] = [
    // A fee or amount field out of range or fractional.
    fc
      .tuple(fc.constantFrom(...FEE_FIELDS), badNumber(SPEC.fee))
      .map(([f, b]) => ({ label: `${f}=${b.v}`, value: set(o, f, b.v), path: f, ...b })),
    fc
      .tuple(fc.constantFrom(...AMOUNT_FIELDS), badNumber(SPEC.amount))
      .map(([f, b]) => ({ label: `${f}=${b.v}`, value: set(o, f, b.v), path: f, ...b })),
    // A product's price or quantity out of range or fractional.
    fc.tuple(index, badNumber(SPEC.productPrice)).map(([i, b]) => ({
      label: `price[${i}]=${b.v}`,
      value: withProduct(o, i, 'price', b.v),
      path: `productInfo[${i}].price`,
      message: b.message,
    })),
    fc.tuple(index, badNumber(SPEC.productQuantity)).map(([i, b]) => ({
      label: `quantity[${i}]=${b.v}`,
      value: withProduct(o, i, 'quantity', b.v),
      path: `productInfo[${i}].quantity`,
      message: b.message,
    })),
    // A product name of max + 1 characters or empty.
    fc
      .tuple(index, fc.oneof(textOfLength(SPEC.productName.max + 1), fc.constant('')))
      .map(([i, s]) => ({
        label: `productName[${i}] length ${[...s].length}`,
        value: withProduct(o, i, 'productName', s),
        path: `productInfo[${i}].productName`,
        message: lengthMsg(SPEC.productName),
      })),
    // A text field of max + 1 characters or empty.
    fc.constantFrom(...TEXT_FIELDS, 'paymentTransactionId' as const).chain((f) =>
      fc.oneof(textOfLength(SPEC[f].max + 1), fc.constant('')).map((s) => ({
        label: `${f} length ${[...s].length}`,
        value: set(o, f, s),
        path: f,
        message: lengthMsg(SPEC[f]),
      })),
    ),
    // A look-alike paymentTransactionId (print-protocol v1.2 §10): white space at an end, or an
    // invisible, format or control character, or white space other than U+0020, inside.
    identifierIn({ min: 1, max: SPEC.paymentTransactionId.max - 1 }).chain((id) =>
      fc.oneof(
        fc.constantFrom(`${id} `, ` ${id}`).map((s) => ({
          label: `paymentTransactionId ${JSON.stringify(s)}`,
          value: set(o, 'paymentTransactionId', s),
          path: 'paymentTransactionId',
          message: 'must not start or end with white space',
        })),
        fc
          .tuple(
            fc.integer({ min: 0, max: [...id].length }),
            fc.constantFrom(0x200b, 0x200d, 0xfeff, 0x00ad, 0x2028, 0x00a0, 0x3000, 0x09, 0x7f),
          )
          .map(([at, cp]) => {
            const points = [...id];
            const s = [...points.slice(0, at), String.fromCodePoint(cp), ...points.slice(at)];
            const hex = cp.toString(16).toUpperCase().padStart(4, '0');
            return {
              label: `paymentTransactionId with U+${hex} at ${at + 1}`,
              value: set(o, 'paymentTransactionId', s.join('')),
              path: 'paymentTransactionId',
              message: `must not contain control, format or invisible characters, nor white space other than a plain space (U+${hex} at character ${at + 1})`,
            };
          }),
      ),
    ),
    // pickUpNum of max + 1 characters ('' is allowed).
    textOfLength(SPEC.pickUpNum.max + 1).map((s) => ({
      label: 'pickUpNum too long',
      value: set(o, 'pickUpNum', s),
      path: 'pickUpNum',
      message: lengthMsg(SPEC.pickUpNum),
    })),
    // A transaction time that is not a real yyyy-MM-dd HH:mm:ss.
    fc.tuple(fc.constantFrom(...TIME_FIELDS), badTimestamp).map(([f, s]) => ({
      label: `${f}=${JSON.stringify(s)}`,
      value: set(o, f, s),
      path: f,
      message: TIME_MSG,
    })),
    // productInfo with 0 or 51 entries.
    fc.constantFrom(0, SPEC.productInfo.max + 1).map((n) => {
      const list = Array.from({ length: n }, () => ({ productName: 'x', price: 1, quantity: 1 }));
      return {
        label: `productInfo with ${n} entries`,
        value: set(o, 'productInfo', list),
        path: 'productInfo',
        message: `must have ${SPEC.productInfo.min} to ${SPEC.productInfo.max} entries`,
      };
    }),
    // A required field deleted.
    fc.constantFrom(...REQUIRED_FIELDS).map((f) => {
      const value = { ...o };
      delete value[f];
      return { label: `delete ${f}`, value, path: f, message: 'is required' };
    }),
    // A code outside its table.
    fc
      .oneof(
        fc.constantFrom(0, 4, 2.5, '1', 'x').map((v) => ['orderType', v] as const),
        fc.constantFrom(0, 3, '3', 'x', '', 'Online').map((v) => ['paymentWay', v] as const),
        fc.constantFrom(0, 3, 5, '3', 'x').map((v) => ['discountType', v] as const),
        fc.constantFrom(0, 3, '1').map((v) => ['promoDiscountType', v] as const),
        fc.constantFrom(0, 3, '3', 'x').map((v) => ['transactionFeeType', v] as const),
      )
      .map(([f, v]) => ({
        label: `${f}=${JSON.stringify(v)}`,
        value: set(o, f, v),
        path: f,
        message: CODE_MSG[f],
      })),
  ];
  // A field that a rule of 4.2 requires for this order, deleted or set to null.
  const byRule = requiredByRules(o);
  if (byRule.length > 0) {
    options.push(
      fc.tuple(fc.constantFrom(...byRule), fc.boolean()).map(([[f, message], toNull]) => {
        const value = { ...o };
        if (toNull) value[f] = null;
        else delete value[f];
        return { label: `${toNull ? 'null' : 'delete'} ${f}`, value, path: f, message };
      }),
    );
  }
  return fc.oneof(...options);
}

// ---------------------------------------------------------------------------------------------

describe('create params: limits', () => {
  it('CREATE_LIMITS matches the numbers written in order-api 2.9 and §8', () => {
    assert.deepEqual(CREATE_LIMITS, SPEC);
  });
});

describe('create params: properties', () => {
  it('every generated valid order passes, with codes normalized to numbers', () => {
    fc.assert(
      fc.property(validOrder, (o) => {
        const result = parseWith(createParamsSchema, o);
        if (!result.ok) {
          throw new Error(`rejected: ${JSON.stringify(result.issues)}`);
        }
        const expected: Order = { ...o, paymentWay: Number(o.paymentWay) };
        for (const f of ['discountType', 'transactionFeeType']) {
          if (f in o) expected[f] = codeNumber(o[f]);
        }
        assert.deepStrictEqual(result.value, expected);
      }),
      { numRuns: 1000 },
    );
  });

  it('the generator reaches every order type, payment way and discount rule', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(validOrder, (o) => {
        seen.add(`orderType ${String(o.orderType)}`);
        seen.add(`paymentWay ${typeof o.paymentWay} ${String(o.paymentWay)}`);
        seen.add(`discountType ${typeof o.discountType} ${String(o.discountType)}`);
        if ((o.productInfo as unknown[]).length === SPEC.productInfo.max) seen.add('50 products');
      }),
      { numRuns: 500 },
    );
    for (const label of [
      'orderType 1',
      'orderType 2',
      'orderType 3',
      'paymentWay number 1',
      'paymentWay number 2',
      'paymentWay string 1',
      'paymentWay string 2',
      'discountType number 2',
      'discountType string 2',
      'discountType number 4',
      'discountType string 4',
      'discountType number 1',
      '50 products',
    ]) {
      assert.ok(seen.has(label), `generator never produced ${label}`);
    }
  });

  it('a single-field mutation is rejected on exactly the mutated path', () => {
    fc.assert(
      fc.property(
        validOrder.chain((o) => mutations(o)),
        fc.boolean(),
        (m, prefixed) => {
          const prefix = prefixed ? 'order' : '';
          const path = prefixed ? `order.${m.path}` : m.path;
          const result = parseWith(createParamsSchema, m.value, prefix);
          assert.equal(result.ok, false, `${m.label}: accepted`);
          if (result.ok) return;
          assert.ok(
            result.issues.some((i) => i.path === path && i.message === m.message),
            `${m.label}: expected "${path}: ${m.message}", got ${JSON.stringify(result.issues)}`,
          );
          // Nothing else in the otherwise valid order is reported.
          assert.deepEqual(
            result.issues.filter((i) => i.path !== path),
            [],
            m.label,
          );
        },
      ),
      { numRuns: 2000 },
    );
  });
});

/**
 * The schemas that validate every instruction parse valid input through zod's compiled code
 * (`withCompiledTwin`); zod's own interpreter still runs for asynchronous parses, so the two can
 * be compared on the same schema object.
 */
describe('create params: the compiled fast path', () => {
  it('zod compiles the twins whole (no part handed back to the interpreter)', () => {
    for (const schema of [
      z.object({ order: createParamsTwin }),
      z.object({ ...printInstructionSchema.shape, order: createParamsTwin }),
      z.object({ ...inboundInstructionSchema.shape, order: createParamsTwin }),
    ]) {
      assert.doesNotThrow(() => z.compile(schema, { strict: true }));
    }
  });

  it('answers as the interpreter: same acceptance, output and issues, valid or mutated', async () => {
    const instruction = (order: unknown) => ({
      jobId: 'J-1',
      orderNo: 'O-1',
      createTime: '2026-11-25 12:30:05',
      order,
    });
    const same = async (schema: z.ZodType, value: unknown, label: string) => {
      const fast = schema.safeParse(value);
      const interpreted = await schema.safeParseAsync(value);
      assert.equal(fast.success, interpreted.success, label);
      if (fast.success && interpreted.success) assert.deepStrictEqual(fast.data, interpreted.data);
      else assert.deepStrictEqual(fast.error?.issues, interpreted.error?.issues, label);
    };
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          validOrder.map((value) => ({ label: 'valid', value })),
          validOrder.chain((o) => mutations(o)),
        ),
        async (m) => {
          await same(createParamsSchema, m.value, m.label);
          await same(printInstructionSchema, instruction(m.value), m.label);
        },
      ),
      { numRuns: 500 },
    );
  });
});
