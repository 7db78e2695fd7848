/**
 * Example-based tests of the create parameters (order-api 2.9, 4.2 and §8).
 *
 * Every limit is written here as a literal copied from the spec text, not taken from
 * `CREATE_LIMITS`, so a wrong number in the source fails these tests.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type CreateParams,
  createParamsSchema,
  createResultSchema,
  FREE_TEXT_MAX_CHARS,
  parseWith,
} from '../../src/protocol/index.js';

type FieldIssue = { path: string; message: string };

type Input = Record<string, unknown>;

/** A small valid order: a table order paid offline with one product and nothing optional. */
const BASE: Input = Object.freeze({
  productInfo: [{ productName: 'Milk tea', price: 1500, quantity: 2 }],
  orderType: 1,
  paymentWay: 2,
  paymentTransactionId: 'M-0001',
});

/** The fields online payment (paymentWay 1) needs. */
const ONLINE: Input = Object.freeze({
  paymentWay: 1,
  paymentChannel: 'CHANNEL_B_URL',
  transactionCreateTime: '2026-03-01 12:00:00',
  transactionReturnTime: '2026-03-01 12:00:05',
});

/** The fields a PWD discount (discountType 2) needs. */
const PWD: Input = Object.freeze({
  discountType: 2,
  discountNo: 'PWD-123',
  discounterName: 'Juan Dela Cruz',
  discountValidityPeriod: '2027-12-31',
});

const TAKEOUT_MSG = 'is required for takeout orders (orderType 3)';
const ONLINE_MSG = 'is required for online payment (paymentWay 1)';
const PWD_MSG = 'is required for PWD discounts (discountType 2)';
const SC_MSG = 'is required for SC discounts (discountType 4)';
const TIME_MSG = 'must be a real date and time in the form yyyy-MM-dd HH:mm:ss';
const ORDER_TYPE_MSG = 'must be one of 1 (Table order), 2 (Queue order), 3 (Takeout order)';
const PAYMENT_WAY_MSG = 'must be one of 1 (Online), 2 (Offline)';
const DISCOUNT_TYPE_MSG = 'must be one of 1 (Promo discount), 2 (PWD discount), 4 (SC discount)';
const PROMO_TYPE_MSG = 'must be one of 1 (Whole order discount), 2 (Product discount)';
const FEE_TYPE_MSG = 'must be one of 1 (Merchant), 2 (Customer)';

function order(changes: Input = {}): Input {
  return { ...BASE, ...changes };
}

function without(value: Input, ...fields: string[]): Input {
  const copy = { ...value };
  for (const f of fields) delete copy[f];
  return copy;
}

function product(changes: Input = {}): Input {
  return { productName: 'Item', price: 100, quantity: 1, ...changes };
}

/** An order whose product at `index` (of `index + 1` products) carries `changes`. */
function withProductAt(index: number, changes: Input): Input {
  const products = Array.from({ length: index + 1 }, (_, i) =>
    i === index ? product(changes) : product(),
  );
  return order({ productInfo: products });
}

function accepts(value: unknown): CreateParams {
  const result = parseWith(createParamsSchema, value);
  if (!result.ok) {
    assert.fail(`expected acceptance, got ${JSON.stringify(result.issues)}`);
  }
  return result.value;
}

function rejects(value: unknown, prefix?: string): FieldIssue[] {
  const result = parseWith(createParamsSchema, value, prefix);
  assert.equal(result.ok, false, 'expected rejection');
  if (result.ok) throw new Error('unreachable');
  return result.issues;
}

/** Rejected with exactly these issues, in this order. */
function rejectsWith(value: unknown, expected: FieldIssue[], prefix?: string): void {
  assert.deepEqual(rejects(value, prefix), expected);
}

function rejectsOne(value: unknown, path: string, message: string): void {
  rejectsWith(value, [{ path, message }]);
}

const chars = (n: number, ch = 'a') => ch.repeat(n);

describe('createParamsSchema: base order', () => {
  it('accepts the minimal valid order and returns it unchanged', () => {
    assert.deepEqual(accepts(BASE), {
      productInfo: [{ productName: 'Milk tea', price: 1500, quantity: 2 }],
      orderType: 1,
      paymentWay: 2,
      paymentTransactionId: 'M-0001',
    });
  });

  it('accepts an order with every field given', () => {
    const full = {
      productInfo: [product(), product({ productName: '珍珠奶茶', price: 0, quantity: 1000 })],
      serviceFee: 500,
      orderType: 3,
      paymentWay: 1,
      pickUpNum: 'A12',
      merchantDeliveryFee: 0,
      deliveryFee: 4900,
      packingFee: 100,
      userName: 'Maria',
      userPhone: '+639171234567',
      userAddress: '12 Rizal Ave, Manila',
      customPrintContext: 'No ice',
      paymentChannel: 'CHANNEL_A_DYNAMIC_QR',
      paymentTransactionId: 'M-0002',
      paymentAmount: 9999,
      discountAmount: 100,
      discountType: '2',
      promoDiscountType: 1,
      discountNo: 'PWD-1',
      discounterName: 'Maria',
      discountValidityPeriod: '2027-01-01',
      transactionFee: 25,
      transactionFeeType: '2',
      transactionId: 'T-1',
      paymentPlatform: 'Platform',
      transactionCreateTime: '2026-03-01 12:00:00',
      transactionReturnTime: '2026-03-01 12:00:05',
      paymentTransaction: 'whatever',
    };
    const out = accepts(full);
    assert.deepEqual(out, { ...full, discountType: 2, transactionFeeType: 2 });
  });

  it('rejects a value that is not an object', () => {
    for (const v of [null, 'order', 42, []]) {
      const issues = rejects(v);
      assert.equal(issues.length, 1);
      assert.equal(issues[0]?.path, '(root)');
    }
  });
});

describe('createParamsSchema: required fields (4.2 rule 1)', () => {
  for (const field of ['productInfo', 'orderType', 'paymentWay', 'paymentTransactionId']) {
    it(`${field} missing -> "is required"`, () => {
      rejectsOne(without(BASE, field), field, 'is required');
    });
    it(`${field} explicitly undefined -> "is required"`, () => {
      rejectsOne(order({ [field]: undefined }), field, 'is required');
    });
  }

  it('null counts as missing for a required field', () => {
    rejectsOne(order({ productInfo: null }), 'productInfo', 'is required');
    rejectsOne(order({ orderType: null }), 'orderType', 'is required');
    rejectsOne(order({ paymentWay: null }), 'paymentWay', 'is required');
    rejectsOne(order({ paymentTransactionId: null }), 'paymentTransactionId', 'is required');
  });

  it('reports every missing required field at once', () => {
    rejectsWith({}, [
      { path: 'productInfo', message: 'is required' },
      { path: 'orderType', message: 'is required' },
      { path: 'paymentWay', message: 'is required' },
      { path: 'paymentTransactionId', message: 'is required' },
    ]);
  });

  it('a prefix roots every path', () => {
    rejectsWith(
      {},
      [
        { path: 'order.productInfo', message: 'is required' },
        { path: 'order.orderType', message: 'is required' },
        { path: 'order.paymentWay', message: 'is required' },
        { path: 'order.paymentTransactionId', message: 'is required' },
      ],
      'order',
    );
  });
});

describe('createParamsSchema: productInfo (1 to 50 entries)', () => {
  it('accepts 1 and 50 entries', () => {
    assert.equal(accepts(order({ productInfo: [product()] })).productInfo.length, 1);
    const fifty = Array.from({ length: 50 }, (_, i) => product({ productName: `P${i}` }));
    assert.equal(accepts(order({ productInfo: fifty })).productInfo.length, 50);
  });

  it('rejects 0 and 51 entries', () => {
    rejectsOne(order({ productInfo: [] }), 'productInfo', 'must have 1 to 50 entries');
    const fiftyOne = Array.from({ length: 51 }, () => product());
    rejectsOne(order({ productInfo: fiftyOne }), 'productInfo', 'must have 1 to 50 entries');
  });

  it('rejects a non-array', () => {
    rejectsOne(order({ productInfo: {} }), 'productInfo', 'must be an array');
    rejectsOne(order({ productInfo: 'tea' }), 'productInfo', 'must be an array');
  });

  it('rejects a product that is not an object, on its index', () => {
    const issues = rejects(order({ productInfo: [product(), 'tea'] }));
    assert.equal(issues.length, 1);
    assert.equal(issues[0]?.path, 'productInfo[1]');
  });

  it('reports each missing product field with its index', () => {
    rejectsWith(order({ productInfo: [product(), product(), {}] }), [
      { path: 'productInfo[2].productName', message: 'is required' },
      { path: 'productInfo[2].price', message: 'is required' },
      { path: 'productInfo[2].quantity', message: 'is required' },
    ]);
  });
});

describe('createParamsSchema: productName (1 to 50 chars, code points)', () => {
  const at = 'productInfo[2].productName';
  const msg = 'must be 1 to 50 characters';

  it('accepts 1 and 50 characters of ASCII, CJK, emoji and supplementary CJK', () => {
    for (const ch of ['a', '茶', '😀', '𠀀']) {
      accepts(withProductAt(2, { productName: ch }));
      const out = accepts(withProductAt(2, { productName: chars(50, ch) }));
      assert.equal(out.productInfo[2]?.productName, chars(50, ch));
    }
  });

  it('rejects 51 characters of ASCII, CJK, emoji and supplementary CJK', () => {
    for (const ch of ['a', '茶', '😀', '𠀀']) {
      rejectsOne(withProductAt(2, { productName: chars(51, ch) }), at, msg);
    }
  });

  it('counts an emoji as one character, not two UTF-16 units', () => {
    // 26 emoji = 52 UTF-16 units but 26 characters.
    accepts(withProductAt(0, { productName: chars(26, '😀') }));
  });

  it('rejects an empty name and a non-string', () => {
    rejectsOne(withProductAt(2, { productName: '' }), at, msg);
    rejectsOne(withProductAt(2, { productName: 7 }), at, 'must be a string');
    rejectsOne(withProductAt(2, { productName: null }), at, 'is required');
  });
});

describe('createParamsSchema: product price (0 to 1000000, integer)', () => {
  const at = 'productInfo[1].price';
  const range = 'must be between 0 and 1000000';

  it('accepts 0 and 1000000', () => {
    accepts(withProductAt(1, { price: 0 }));
    accepts(withProductAt(1, { price: 1_000_000 }));
  });

  it('rejects -1 and 1000001', () => {
    rejectsOne(withProductAt(1, { price: -1 }), at, range);
    rejectsOne(withProductAt(1, { price: 1_000_001 }), at, range);
  });

  it('rejects a non-integer', () => {
    rejectsOne(withProductAt(1, { price: 1.5 }), at, 'must be an integer');
  });

  it('rejects a numeric string, NaN and Infinity', () => {
    rejectsOne(withProductAt(1, { price: '100' }), at, 'must be a number');
    rejectsOne(withProductAt(1, { price: Number.NaN }), at, 'must be a number');
    rejectsOne(withProductAt(1, { price: Number.POSITIVE_INFINITY }), at, 'must be a number');
  });
});

describe('createParamsSchema: product quantity (1 to 1000, integer)', () => {
  const range = 'must be between 1 and 1000';

  it('accepts 1 and 1000', () => {
    accepts(withProductAt(3, { quantity: 1 }));
    accepts(withProductAt(3, { quantity: 1000 }));
  });

  it('rejects 0 and 1001 on the exact product index', () => {
    rejectsOne(withProductAt(3, { quantity: 0 }), 'productInfo[3].quantity', range);
    rejectsOne(withProductAt(3, { quantity: 1001 }), 'productInfo[3].quantity', range);
  });

  it('rejects a non-integer', () => {
    rejectsOne(
      withProductAt(0, { quantity: 2.5 }),
      'productInfo[0].quantity',
      'must be an integer',
    );
  });

  it('roots the product path under a prefix', () => {
    rejectsWith(
      withProductAt(3, { quantity: 1001 }),
      [{ path: 'order.productInfo[3].quantity', message: range }],
      'order',
    );
  });
});

describe('createParamsSchema: fee fields (0 to 10000000 cents)', () => {
  const range = 'must be between 0 and 10000000';
  for (const field of ['serviceFee', 'merchantDeliveryFee', 'deliveryFee', 'packingFee']) {
    it(`${field}: accepts 0, 10000000 and null`, () => {
      assert.equal(accepts(order({ [field]: 0 }))[field as keyof CreateParams], 0);
      assert.equal(
        accepts(order({ [field]: 10_000_000 }))[field as keyof CreateParams],
        10_000_000,
      );
      assert.equal(accepts(order({ [field]: null }))[field as keyof CreateParams], null);
    });
    it(`${field}: rejects -1, 10000001, 0.5 and a numeric string`, () => {
      rejectsOne(order({ [field]: -1 }), field, range);
      rejectsOne(order({ [field]: 10_000_001 }), field, range);
      rejectsOne(order({ [field]: 0.5 }), field, 'must be an integer');
      rejectsOne(order({ [field]: '100' }), field, 'must be a number');
    });
  }
});

describe('createParamsSchema: amount fields (0 to 100000000 cents)', () => {
  const range = 'must be between 0 and 100000000';
  for (const field of ['paymentAmount', 'discountAmount', 'transactionFee']) {
    it(`${field}: accepts 0, 100000000 and null`, () => {
      accepts(order({ [field]: 0 }));
      assert.equal(
        accepts(order({ [field]: 100_000_000 }))[field as keyof CreateParams],
        100_000_000,
      );
      accepts(order({ [field]: null }));
    });
    it(`${field}: rejects -1, 100000001 and 99.99`, () => {
      rejectsOne(order({ [field]: -1 }), field, range);
      rejectsOne(order({ [field]: 100_000_001 }), field, range);
      rejectsOne(order({ [field]: 99.99 }), field, 'must be an integer');
    });
  }
});

describe('createParamsSchema: string lengths of 2.9', () => {
  const limits: [field: string, max: number][] = [
    ['userName', 100],
    ['userPhone', 20],
    ['userAddress', 200],
    ['paymentChannel', 200],
    ['paymentTransactionId', 50],
    ['discountNo', 200],
    ['discounterName', 50],
    ['discountValidityPeriod', 200],
    ['transactionId', 50],
    ['paymentPlatform', 200],
  ];
  for (const [field, max] of limits) {
    const msg = `must be 1 to ${max} characters`;
    it(`${field}: accepts 1 and ${max} characters (ASCII and CJK/emoji)`, () => {
      accepts(order({ [field]: 'x' }));
      assert.equal(
        accepts(order({ [field]: chars(max) }))[field as keyof CreateParams],
        chars(max),
      );
      accepts(order({ [field]: chars(max, '名') }));
      accepts(order({ [field]: chars(max, '😀') }));
    });
    it(`${field}: rejects "" and ${max + 1} characters`, () => {
      rejectsOne(order({ [field]: '' }), field, msg);
      rejectsOne(order({ [field]: chars(max + 1) }), field, msg);
      rejectsOne(order({ [field]: chars(max + 1, '😀') }), field, msg);
    });
    it(`${field}: rejects a non-string`, () => {
      rejectsOne(order({ [field]: 12 }), field, 'must be a string');
    });
  }

  it('customPrintContext: at most FREE_TEXT_MAX_CHARS characters (ours, print-protocol §9), a string', () => {
    accepts(order({ customPrintContext: chars(FREE_TEXT_MAX_CHARS) }));
    accepts(order({ customPrintContext: chars(FREE_TEXT_MAX_CHARS, '😀') }));
    accepts(order({ customPrintContext: '' }));
    rejectsOne(
      order({ customPrintContext: chars(FREE_TEXT_MAX_CHARS + 1) }),
      'customPrintContext',
      `must be at most ${FREE_TEXT_MAX_CHARS} characters`,
    );
    rejectsOne(order({ customPrintContext: 5 }), 'customPrintContext', 'must be a string');
  });
});

describe('createParamsSchema: pickUpNum (1 to 50 chars; empty allowed by 4.2 rule 5)', () => {
  it('accepts an empty string, which asks the service to generate the code', () => {
    assert.equal(accepts(order({ orderType: 2, pickUpNum: '' })).pickUpNum, '');
  });

  it('accepts 1 and 50 characters, absent and null', () => {
    accepts(order({ pickUpNum: 'A' }));
    accepts(order({ pickUpNum: chars(50, '😀') }));
    assert.equal(accepts(order({ pickUpNum: null })).pickUpNum, null);
    assert.equal(accepts(BASE).pickUpNum, undefined);
  });

  it('rejects 51 characters', () => {
    rejectsOne(order({ pickUpNum: chars(51) }), 'pickUpNum', 'must be 1 to 50 characters');
  });

  it('rejects a non-string with the string rule, not the empty-literal branch', () => {
    rejectsOne(order({ pickUpNum: 12 }), 'pickUpNum', 'must be a string');
  });
});

describe('createParamsSchema: transaction times (yyyy-MM-dd HH:mm:ss, real)', () => {
  for (const field of ['transactionCreateTime', 'transactionReturnTime']) {
    it(`${field}: accepts real date-times, a leap day of a leap year, null`, () => {
      for (const v of [
        '2026-01-01 00:00:00',
        '2026-12-31 23:59:59',
        '2028-02-29 12:00:00',
        '2000-02-29 00:00:00',
      ]) {
        assert.equal(accepts(order({ [field]: v }))[field as keyof CreateParams], v);
      }
      accepts(order({ [field]: null }));
    });

    it(`${field}: rejects impossible dates and times`, () => {
      for (const v of [
        '2026-02-29 00:00:00', // 2026 is not a leap year
        '1900-02-29 00:00:00', // century, not a leap year
        '2026-04-31 00:00:00',
        '2026-13-01 00:00:00',
        '2026-00-10 00:00:00',
        '2026-01-01 24:00:00',
        '2026-01-01 23:60:00',
        '2026-01-01 23:59:60',
      ]) {
        rejectsOne(order({ [field]: v }), field, TIME_MSG);
      }
    });

    it(`${field}: rejects other formats`, () => {
      for (const v of [
        '',
        '2026-01-01',
        '2026-01-01T00:00:00',
        '2026-01-01 00:00:00Z',
        '2026-1-1 0:00:00',
        '2026/01/01 00:00:00',
        ' 2026-01-01 00:00:00',
      ]) {
        rejectsOne(order({ [field]: v }), field, TIME_MSG);
      }
      rejectsOne(order({ [field]: 1767225600000 }), field, 'must be a string yyyy-MM-dd HH:mm:ss');
    });
  }
});

describe('createParamsSchema: code fields', () => {
  it('orderType accepts 1, 2, 3', () => {
    for (const v of [1, 2, 3]) {
      const extra = v === 3 ? { deliveryFee: 0, packingFee: 0 } : {};
      assert.equal(accepts(order({ orderType: v, ...extra })).orderType, v);
    }
  });

  it('orderType rejects 0, 4, 1.5 and a numeric string (it is an integer field)', () => {
    for (const v of [0, 4, 1.5, '1', 'x']) {
      rejectsOne(order({ orderType: v }), 'orderType', ORDER_TYPE_MSG);
    }
  });

  it('paymentWay accepts 1, 2, "1", "2" and outputs the number', () => {
    assert.equal(accepts(order({ paymentWay: 2 })).paymentWay, 2);
    assert.equal(accepts(order({ paymentWay: '2' })).paymentWay, 2);
    assert.equal(accepts(order({ ...ONLINE, paymentWay: 1 })).paymentWay, 1);
    assert.equal(accepts(order({ ...ONLINE, paymentWay: '1' })).paymentWay, 1);
  });

  it('paymentWay rejects other values and non-numeric strings', () => {
    for (const v of ['x', '', 'Online', '1.0', '3', 3, 0, true]) {
      rejectsOne(order({ paymentWay: v }), 'paymentWay', PAYMENT_WAY_MSG);
    }
  });

  it('transactionFeeType accepts 1, 2, "1", "2", null and outputs the number', () => {
    assert.equal(accepts(order({ transactionFeeType: 1 })).transactionFeeType, 1);
    assert.equal(accepts(order({ transactionFeeType: 2 })).transactionFeeType, 2);
    assert.equal(accepts(order({ transactionFeeType: '1' })).transactionFeeType, 1);
    assert.equal(accepts(order({ transactionFeeType: '2' })).transactionFeeType, 2);
    assert.equal(accepts(order({ transactionFeeType: null })).transactionFeeType, null);
  });

  it('transactionFeeType rejects 0, 3, "3" and "x"', () => {
    for (const v of [0, 3, '3', 'x']) {
      rejectsOne(order({ transactionFeeType: v }), 'transactionFeeType', FEE_TYPE_MSG);
    }
  });

  it('discountType accepts 1, 2, 4 as numbers or strings and outputs the number', () => {
    assert.equal(accepts(order({ discountType: 1 })).discountType, 1);
    assert.equal(accepts(order({ discountType: '1' })).discountType, 1);
    assert.equal(accepts(order({ ...PWD, discountType: 2 })).discountType, 2);
    assert.equal(accepts(order({ ...PWD, discountType: '2' })).discountType, 2);
    assert.equal(accepts(order({ ...PWD, discountType: 4 })).discountType, 4);
    assert.equal(accepts(order({ ...PWD, discountType: '4' })).discountType, 4);
  });

  it('discountType rejects 3 (a value of the order-record table only), 0, "3" and "x"', () => {
    for (const v of [3, 0, '3', 'x', 5]) {
      rejectsOne(order({ discountType: v }), 'discountType', DISCOUNT_TYPE_MSG);
    }
  });

  it('promoDiscountType accepts 1, 2 and null', () => {
    assert.equal(accepts(order({ promoDiscountType: 1 })).promoDiscountType, 1);
    assert.equal(accepts(order({ promoDiscountType: 2 })).promoDiscountType, 2);
    accepts(order({ promoDiscountType: null }));
  });

  it('promoDiscountType rejects 0, 3 and a string', () => {
    for (const v of [0, 3, '1']) {
      rejectsOne(order({ promoDiscountType: v }), 'promoDiscountType', PROMO_TYPE_MSG);
    }
  });
});

describe('createParamsSchema: takeout orders need deliveryFee and packingFee (4.2 rule 2)', () => {
  it('accepts a takeout order with both fees, including fees of 0', () => {
    accepts(order({ orderType: 3, deliveryFee: 4900, packingFee: 100 }));
    accepts(order({ orderType: 3, deliveryFee: 0, packingFee: 0 }));
  });

  it('rejects a takeout order without both fees', () => {
    rejectsWith(order({ orderType: 3 }), [
      { path: 'deliveryFee', message: TAKEOUT_MSG },
      { path: 'packingFee', message: TAKEOUT_MSG },
    ]);
  });

  it('rejects a takeout order missing one fee, on that fee', () => {
    rejectsOne(order({ orderType: 3, deliveryFee: 100 }), 'packingFee', TAKEOUT_MSG);
    rejectsOne(order({ orderType: 3, packingFee: 100 }), 'deliveryFee', TAKEOUT_MSG);
  });

  it('treats null as missing', () => {
    rejectsOne(
      order({ orderType: 3, deliveryFee: null, packingFee: 1 }),
      'deliveryFee',
      TAKEOUT_MSG,
    );
  });

  it('does not require the fees for table and queue orders', () => {
    accepts(order({ orderType: 1 }));
    accepts(order({ orderType: 2 }));
  });
});

describe('createParamsSchema: online payment needs channel and times (4.2 rule 3)', () => {
  it('accepts online payment with all three fields, paymentWay as 1 or "1"', () => {
    accepts(order(ONLINE));
    accepts(order({ ...ONLINE, paymentWay: '1' }));
  });

  it('rejects online payment without any of them', () => {
    const expected = [
      { path: 'paymentChannel', message: ONLINE_MSG },
      { path: 'transactionCreateTime', message: ONLINE_MSG },
      { path: 'transactionReturnTime', message: ONLINE_MSG },
    ];
    rejectsWith(order({ paymentWay: 1 }), expected);
    rejectsWith(order({ paymentWay: '1' }), expected);
  });

  for (const field of ['paymentChannel', 'transactionCreateTime', 'transactionReturnTime']) {
    it(`rejects online payment missing ${field} (absent or null)`, () => {
      rejectsOne(without(order(ONLINE), field), field, ONLINE_MSG);
      rejectsOne(order({ ...ONLINE, [field]: null }), field, ONLINE_MSG);
    });
  }

  it('does not require them for offline payment (2 or "2")', () => {
    accepts(order({ paymentWay: 2 }));
    accepts(order({ paymentWay: '2' }));
  });
});

describe('createParamsSchema: discount rules (4.2 rule 4)', () => {
  it('PWD (2 or "2") with number, name and validity period is accepted', () => {
    accepts(order(PWD));
    accepts(order({ ...PWD, discountType: '2' }));
  });

  it('PWD without any of its fields reports all three', () => {
    const expected = [
      { path: 'discountNo', message: PWD_MSG },
      { path: 'discounterName', message: PWD_MSG },
      { path: 'discountValidityPeriod', message: PWD_MSG },
    ];
    rejectsWith(order({ discountType: 2 }), expected);
    rejectsWith(order({ discountType: '2' }), expected);
  });

  for (const field of ['discountNo', 'discounterName', 'discountValidityPeriod']) {
    it(`PWD missing ${field} (absent or null) is rejected on ${field}`, () => {
      rejectsOne(without(order(PWD), field), field, PWD_MSG);
      rejectsOne(order({ ...PWD, [field]: null }), field, PWD_MSG);
    });
  }

  it('SC (4 or "4") needs discountNo and discounterName but not the validity period', () => {
    const sc = { discountType: 4, discountNo: 'SC-9', discounterName: 'Lola' };
    accepts(order(sc));
    accepts(order({ ...sc, discountType: '4' }));
    accepts(order({ ...sc, discountValidityPeriod: null }));
    rejectsWith(order({ discountType: 4 }), [
      { path: 'discountNo', message: SC_MSG },
      { path: 'discounterName', message: SC_MSG },
    ]);
    rejectsOne(without(order(sc), 'discountNo'), 'discountNo', SC_MSG);
    rejectsOne(without(order(sc), 'discounterName'), 'discounterName', SC_MSG);
  });

  it('promo discount (1 or "1") needs none of the discount fields', () => {
    accepts(order({ discountType: 1 }));
    accepts(order({ discountType: '1', promoDiscountType: 2 }));
  });

  it('no discount type needs none of them', () => {
    accepts(order({ discountType: null }));
  });
});

describe('createParamsSchema: tolerated quirks of the spec samples', () => {
  it('accepts the undocumented paymentTransaction field with any value and keeps it', () => {
    for (const v of ['abc', 123, { a: [1, 2] }, [1, 'x'], true, null]) {
      assert.deepEqual(accepts(order({ paymentTransaction: v })).paymentTransaction, v);
    }
  });

  it('accepts null for every optional field at once', () => {
    const nulls = {
      serviceFee: null,
      pickUpNum: null,
      merchantDeliveryFee: null,
      deliveryFee: null,
      packingFee: null,
      userName: null,
      userPhone: null,
      userAddress: null,
      customPrintContext: null,
      paymentChannel: null,
      paymentAmount: null,
      discountAmount: null,
      discountType: null,
      promoDiscountType: null,
      discountNo: null,
      discounterName: null,
      discountValidityPeriod: null,
      transactionFee: null,
      transactionFeeType: null,
      transactionId: null,
      paymentPlatform: null,
      transactionCreateTime: null,
      transactionReturnTime: null,
      paymentTransaction: null,
    };
    assert.deepEqual(accepts(order(nulls)), { ...BASE, ...nulls });
  });
});

describe('createParamsSchema: several errors are reported together', () => {
  it('empty productInfo plus missing takeout fees', () => {
    rejectsWith(order({ productInfo: [], orderType: 3 }), [
      { path: 'productInfo', message: 'must have 1 to 50 entries' },
      { path: 'deliveryFee', message: TAKEOUT_MSG },
      { path: 'packingFee', message: TAKEOUT_MSG },
    ]);
  });

  it('range errors in several fields and products', () => {
    const value = order({
      productInfo: [product({ quantity: 0 }), product({ productName: '', price: 1_000_001 })],
      serviceFee: -1,
      userPhone: chars(21),
      transactionCreateTime: '2026-02-29 00:00:00',
    });
    rejectsWith(value, [
      { path: 'productInfo[0].quantity', message: 'must be between 1 and 1000' },
      { path: 'productInfo[1].productName', message: 'must be 1 to 50 characters' },
      { path: 'productInfo[1].price', message: 'must be between 0 and 1000000' },
      { path: 'serviceFee', message: 'must be between 0 and 10000000' },
      { path: 'userPhone', message: 'must be 1 to 20 characters' },
      { path: 'transactionCreateTime', message: TIME_MSG },
    ]);
  });

  it('a missing required field does not hide the conditional rules', () => {
    rejectsWith(without(order({ orderType: 3, paymentWay: '1' }), 'paymentTransactionId'), [
      { path: 'paymentTransactionId', message: 'is required' },
      { path: 'deliveryFee', message: TAKEOUT_MSG },
      { path: 'packingFee', message: TAKEOUT_MSG },
      { path: 'paymentChannel', message: ONLINE_MSG },
      { path: 'transactionCreateTime', message: ONLINE_MSG },
      { path: 'transactionReturnTime', message: ONLINE_MSG },
    ]);
  });

  it('an invalid code and the rules of the valid codes are both reported', () => {
    rejectsWith(order({ orderType: 9, paymentWay: 1, discountType: 4 }), [
      { path: 'orderType', message: ORDER_TYPE_MSG },
      { path: 'paymentChannel', message: ONLINE_MSG },
      { path: 'transactionCreateTime', message: ONLINE_MSG },
      { path: 'transactionReturnTime', message: ONLINE_MSG },
      { path: 'discountNo', message: SC_MSG },
      { path: 'discounterName', message: SC_MSG },
    ]);
  });

  it('all issues carry the prefix', () => {
    rejectsWith(
      order({ productInfo: [], orderType: 3 }),
      [
        { path: 'order.productInfo', message: 'must have 1 to 50 entries' },
        { path: 'order.deliveryFee', message: TAKEOUT_MSG },
        { path: 'order.packingFee', message: TAKEOUT_MSG },
      ],
      'order',
    );
  });
});

describe('createResultSchema (2.10)', () => {
  it('accepts orderNo alone', () => {
    assert.deepEqual(parseWith(createResultSchema, { orderNo: 'O-1' }), {
      ok: true,
      value: { orderNo: 'O-1' },
    });
  });

  it('accepts pickUpNo and takeoutNo as strings or null', () => {
    const withCodes = { orderNo: 'O-1', pickUpNo: 'A12', takeoutNo: 'T7' };
    assert.deepEqual(parseWith(createResultSchema, withCodes), { ok: true, value: withCodes });
    const nulls = { orderNo: 'O-1', pickUpNo: null, takeoutNo: null };
    assert.deepEqual(parseWith(createResultSchema, nulls), { ok: true, value: nulls });
  });

  it('requires orderNo', () => {
    assert.deepEqual(parseWith(createResultSchema, { pickUpNo: 'A12' }), {
      ok: false,
      issues: [{ path: 'orderNo', message: 'is required' }],
    });
    assert.deepEqual(parseWith(createResultSchema, { orderNo: null }, 'data'), {
      ok: false,
      issues: [{ path: 'data.orderNo', message: 'is required' }],
    });
  });

  it('rejects an empty orderNo', () => {
    const result = parseWith(createResultSchema, { orderNo: '' });
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.equal(result.issues.length, 1);
    assert.equal(result.issues[0]?.path, 'orderNo');
    assert.match(result.issues[0]?.message ?? '', /^must be 1 to \d+ characters$/);
  });

  it('rejects a non-string pickUpNo or takeoutNo', () => {
    for (const field of ['pickUpNo', 'takeoutNo']) {
      const result = parseWith(createResultSchema, { orderNo: 'O-1', [field]: 12 });
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.deepEqual(
        result.issues.map((i) => i.path),
        [field],
      );
    }
  });
});
