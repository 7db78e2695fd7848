import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FieldIssue } from '../../src/errors.js';
import { type OrderRecord, orderRecordSchema, parseWith } from '../../src/protocol/index.js';

/** A full record as the query operation returns it (order-api 2.5-2.8), every field present. */
function fullRecord() {
  return {
    orderInnerNo: 'O202611250001',
    restaurantNo: 'RST001',
    branchIdentifier: 'BR-MNL-01',
    orderSerialNumber: 23,
    channelCode: 'CHANNEL_B_DYNAMIC_QR',
    channelName: 'E-wallet B dynamic QR',
    payProductType: 5,
    discountAmount: 2000,
    fee: 370,
    serviceFee: 1500,
    packageFee: 500,
    deliveryFee: 0,
    merchantDeliveryFee: 0,
    realAmount: 42000,
    totalAmount: 44000,
    orderStatus: 3,
    paymentStatus: 2,
    customerNum: 2,
    createTime: '2026-11-25 12:30:00',
    completeTime: '2026-11-25 12:58:41',
    paymentTime: '2026-11-25 12:30:04',
    refundTime: null,
    discountType: 2,
    receiptNo: 'R-000123',
    refundReceiptNo: '',
    skuList: [
      {
        categoryNo: 'C01',
        categoryName: 'Mains',
        productNo: 'P100',
        productName: 'Chicken Adobo',
        variant: 1,
        skuNo: 'P100-L',
        skuName: 'Chicken Adobo (large)',
        count: 2,
        price: 18500,
        optionAmount: 3000,
        optionList: [
          {
            optionNo: 'OP1',
            optionName: 'Rice',
            optionItemList: [{ optionItemNo: 'OI1', optionItemName: 'Garlic rice', price: 1500 }],
          },
          {
            optionNo: 'OP2',
            optionName: 'Extras',
            optionItemList: [
              { optionItemNo: 'OI2', optionItemName: ['Egg', 'Chili'], price: 0 },
              { optionItemNo: 'OI3', optionItemName: null, price: null },
            ],
          },
        ],
      },
      {
        categoryNo: 'C02',
        productNo: 'P200',
        variant: 2,
        skuName: 'Calamansi juice',
        count: 1,
        price: 5000,
        optionAmount: 0,
        optionList: [],
      },
    ],
    remark: '',
    lessVat: 0,
    surcharge: 0,
  };
}

type Rec = ReturnType<typeof fullRecord>;

function ok(input: unknown): OrderRecord {
  const r = parseWith(orderRecordSchema, input);
  if (!r.ok) assert.fail(`expected the record to pass, got ${JSON.stringify(r.issues)}`);
  return r.value;
}

function issues(input: unknown): FieldIssue[] {
  const r = parseWith(orderRecordSchema, input);
  if (r.ok) assert.fail('expected the record to be rejected');
  return r.issues;
}

function rejectedOnce(input: unknown, path: string, message: RegExp): void {
  const list = issues(input);
  assert.equal(list.length, 1, `one issue expected, got ${JSON.stringify(list)}`);
  assert.equal(list[0]!.path, path);
  assert.match(list[0]!.message, message);
}

function withField(field: string, value: unknown): Record<string, unknown> {
  return { ...fullRecord(), [field]: value };
}

function without(field: keyof Rec): Record<string, unknown> {
  const r: Record<string, unknown> = fullRecord();
  delete r[field];
  return r;
}

describe('orderRecordSchema: a full realistic record', () => {
  it('passes and keeps every value, including nested options', () => {
    const input = fullRecord();
    const v = ok(input);
    assert.deepEqual(v, input);
  });

  it('keeps optionItemName both as a string and as a list of strings', () => {
    const v = ok(fullRecord());
    const options = v.skuList[0]!.optionList!;
    assert.equal(options[0]!.optionItemList![0]!.optionItemName, 'Garlic rice');
    assert.deepEqual(options[1]!.optionItemList![0]!.optionItemName, ['Egg', 'Chili']);
  });

  it('a minimal record with only the required fields passes', () => {
    const minimal = {
      orderInnerNo: 'O1',
      restaurantNo: 'RST001',
      branchIdentifier: 'BR1',
      orderSerialNumber: 1,
      realAmount: 0,
      orderStatus: 1,
      paymentStatus: 1,
      createTime: '2026-01-01 00:00:00',
      paymentTime: '2026-01-01 00:00:01',
      skuList: [],
    };
    assert.deepEqual(ok(minimal), minimal);
  });

  it('a SKU with only its required fields passes (optionList is optional)', () => {
    const r = fullRecord();
    const sku = {
      categoryNo: 'C',
      productNo: 'P',
      variant: 2,
      skuName: 'S',
      count: 1,
      price: 100,
      optionAmount: 0,
    };
    ok({ ...r, skuList: [sku] });
  });

  it('option and option item records have no required fields', () => {
    const r = fullRecord();
    r.skuList[0]!.optionList = [{}, { optionItemList: [{}] }] as never;
    ok(r);
  });
});

describe('orderRecordSchema: required fields (order-api 2.5, 2.6)', () => {
  const requiredTop: (keyof Rec)[] = [
    'orderInnerNo',
    'restaurantNo',
    'branchIdentifier',
    'orderSerialNumber',
    'realAmount',
    'orderStatus',
    'paymentStatus',
    'createTime',
    'paymentTime',
    'skuList',
  ];
  for (const field of requiredTop) {
    it(`${field} missing -> "${field}: is required"`, () => {
      rejectedOnce(without(field), field, /^is required/);
    });
  }

  const requiredSku = [
    'categoryNo',
    'productNo',
    'variant',
    'skuName',
    'count',
    'price',
    'optionAmount',
  ] as const;
  for (const field of requiredSku) {
    it(`skuList[0].${field} missing -> "skuList[0].${field}: is required"`, () => {
      const r = fullRecord();
      delete (r.skuList[0] as Record<string, unknown>)[field];
      rejectedOnce(r, `skuList[0].${field}`, /^is required/);
    });
  }

  it('a missing field in the second SKU is reported with index 1', () => {
    const r = fullRecord();
    delete (r.skuList[1] as Record<string, unknown>).skuName;
    rejectedOnce(r, 'skuList[1].skuName', /^is required/);
  });

  it('every missing field is reported, not only the first', () => {
    const r: Record<string, unknown> = without('createTime');
    delete r.orderInnerNo;
    const paths = issues(r)
      .map((i) => i.path)
      .sort();
    assert.deepEqual(paths, ['createTime', 'orderInnerNo']);
  });

  it('an empty orderInnerNo is rejected', () => {
    rejectedOnce(withField('orderInnerNo', ''), 'orderInnerNo', /must not be empty/);
  });

  it('required fields given as null are rejected', () => {
    for (const field of ['orderInnerNo', 'realAmount', 'orderStatus', 'createTime', 'skuList']) {
      const list = issues(withField(field, null));
      assert.deepEqual(
        list.map((i) => i.path),
        [field],
      );
    }
  });

  it('wrong types are reported as such, not as missing', () => {
    rejectedOnce(withField('skuList', {}), 'skuList', /must be an array/);
    rejectedOnce(withField('restaurantNo', 1001), 'restaurantNo', /must be a string/);
    rejectedOnce(withField('realAmount', '420.00'), 'realAmount', /must be a number/);
  });
});

describe('orderRecordSchema: nullable and optional fields', () => {
  it('completeTime, refundTime and discountType may be null (2.5 "may be null")', () => {
    const v = ok({ ...fullRecord(), completeTime: null, refundTime: null, discountType: null });
    assert.equal(v.completeTime, null);
    assert.equal(v.refundTime, null);
    assert.equal(v.discountType, null);
  });

  it('optional fields may be absent or null', () => {
    const optional: (keyof Rec)[] = [
      'channelCode',
      'channelName',
      'payProductType',
      'discountAmount',
      'fee',
      'serviceFee',
      'packageFee',
      'deliveryFee',
      'merchantDeliveryFee',
      'totalAmount',
      'customerNum',
      'completeTime',
      'refundTime',
      'discountType',
      'receiptNo',
      'refundReceiptNo',
      'remark',
      'lessVat',
      'surcharge',
    ];
    for (const field of optional) {
      ok(without(field));
      ok(withField(field, null));
    }
  });

  it('remark may be an empty string; optionList may be empty or null', () => {
    assert.equal(ok(withField('remark', '')).remark, '');
    const r = fullRecord();
    (r.skuList[0] as Record<string, unknown>).optionList = null;
    ok(r);
  });

  it('a refunded order carries a real refundTime', () => {
    const v = ok({
      ...fullRecord(),
      paymentStatus: 5,
      refundTime: '2026-11-25 13:10:00',
      refundReceiptNo: 'RR-9',
    });
    assert.equal(v.refundTime, '2026-11-25 13:10:00');
  });

  it('amounts must be whole cents', () => {
    rejectedOnce(withField('realAmount', 420.5), 'realAmount', /must be an integer/);
    rejectedOnce(withField('fee', 3.7), 'fee', /must be an integer/);
    const r = fullRecord();
    r.skuList[0]!.price = 185.5;
    rejectedOnce(r, 'skuList[0].price', /must be an integer/);
  });
});

describe('orderRecordSchema: optionItemName (2.8: a string or a list of strings)', () => {
  const itemPath = 'skuList[0].optionList[0].optionItemList[0].optionItemName';
  const setName = (value: unknown) => {
    const r = fullRecord();
    (r.skuList[0]!.optionList[0]!.optionItemList[0] as Record<string, unknown>).optionItemName =
      value;
    return r;
  };

  it('accepts a string, a list of strings, an empty list, null or absence', () => {
    for (const value of ['Garlic rice', ['Garlic', 'Rice'], [], null]) {
      const v = ok(setName(value));
      assert.deepEqual(v.skuList[0]!.optionList![0]!.optionItemList![0]!.optionItemName, value);
    }
    const r = fullRecord();
    delete (r.skuList[0]!.optionList[0]!.optionItemList[0] as Record<string, unknown>)
      .optionItemName;
    ok(r);
  });

  it('rejects a number, an object or a list holding a number, on the item path', () => {
    for (const value of [42, { name: 'x' }, ['Egg', 7]]) {
      const list = issues(setName(value));
      assert.equal(list.length, 1, JSON.stringify(list));
      assert.ok(list[0]!.path.startsWith(itemPath), list[0]!.path);
      assert.match(list[0]!.message, /string/);
    }
  });
});

describe('orderRecordSchema: code tables are enforced (order-api section 3 and 2.5, 2.6)', () => {
  const cases: { field: string; good: number[]; bad: number[] }[] = [
    { field: 'orderStatus', good: [1, 2, 3, 4], bad: [0, 5, -1, 2.5] },
    { field: 'paymentStatus', good: [1, 2, 3, 4, 5, 6, 7, 8], bad: [0, 9, 10] },
    { field: 'payProductType', good: [0, 1, 2, 3, 4, 5, 6, 7], bad: [-1, 8] },
    { field: 'discountType', good: [1, 2, 3, 4, 5, 6], bad: [0, 7] },
  ];
  for (const { field, good, bad } of cases) {
    it(`${field} accepts exactly ${good.join(', ')}`, () => {
      for (const value of good)
        assert.equal((ok(withField(field, value)) as Record<string, unknown>)[field], value);
      for (const value of bad) rejectedOnce(withField(field, value), field, /must be one of/);
    });
  }

  it('the rejection lists the allowed values with their names', () => {
    const [issue] = issues(withField('orderStatus', 5));
    assert.match(issue!.message, /1 \(Pending acceptance\)/);
    assert.match(issue!.message, /4 \(Cancelled\)/);
  });

  it('codes given as strings are rejected in records', () => {
    rejectedOnce(withField('orderStatus', '3'), 'orderStatus', /must be one of/);
  });

  it('variant accepts 1 (yes) and 2 (no) only', () => {
    for (const variant of [1, 2]) {
      const r = fullRecord();
      r.skuList[0]!.variant = variant;
      assert.equal(ok(r).skuList[0]!.variant, variant);
    }
    for (const variant of [0, 3]) {
      const r = fullRecord();
      r.skuList[0]!.variant = variant;
      rejectedOnce(r, 'skuList[0].variant', /must be one of 1 \(Yes\), 2 \(No\)/);
    }
  });
});

describe('orderRecordSchema: timestamps must be real (order-api conventions)', () => {
  for (const field of ['createTime', 'paymentTime', 'completeTime', 'refundTime']) {
    it(`${field} must be a real yyyy-MM-dd HH:mm:ss`, () => {
      for (const bad of [
        '2026-02-30 12:00:00',
        '2026-11-25T12:30:00',
        '2026-11-25 12:30',
        '2026-11-25 25:00:00',
        '25/11/2026 12:30:00',
        '',
      ]) {
        rejectedOnce(withField(field, bad), field, /real date and time/);
      }
      rejectedOnce(withField(field, 1764073800000), field, /must be a string/);
    });
  }

  it('a leap day in a leap year is a real timestamp', () => {
    assert.equal(
      ok(withField('createTime', '2028-02-29 00:00:00')).createTime,
      '2028-02-29 00:00:00',
    );
  });
});
