/**
 * What counts as "the same create" (print-protocol v1.1 §9; the rule is written in
 * src/order-service/create-identity.ts and docs/decisions.md): the parsed parameters after the
 * create schema's normalization, never the bytes. Each case sends an original and a retry to a
 * fresh identity and checks the answer and what was published.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { baseOrder, makeService, post, signed } from './harness.js';

const { app, publisher } = makeService();
after(() => app.close());

let n = 0;
/** Sends `original`, then `retry` (a param string or object) under one fresh paymentTransactionId. */
async function pair(original: Record<string, unknown>, retry: (id: string) => object | string) {
  n++;
  const id = `POS-rule-${n}`;
  const first = await post(app, 'create', signed({ ...original, paymentTransactionId: id }));
  assert.equal(first.body.code, 10000, first.body.message);
  const published = publisher.calls.length;
  const second = await post(app, 'create', signed(retry(id)));
  return { first: first.body, second: second.body, published: publisher.calls.length - published };
}

const full = {
  ...baseOrder,
  orderType: 3,
  deliveryFee: 1500,
  packingFee: 200,
  paymentWay: '1',
  paymentChannel: 'CHANNEL_B_URL',
  transactionCreateTime: '2026-11-25 12:00:00',
  transactionReturnTime: '2026-11-25 12:00:30',
  transactionFeeType: '1',
  transactionFee: 30,
  customPrintContext: 'Leave at the gate',
  paymentTransaction: { ref: 'T-1', legs: [1, 2] },
};

describe('order-service: the same create', () => {
  const same: [string, Record<string, unknown>, (id: string) => object | string][] = [
    [
      'keys in another order, with whitespace',
      full,
      (id) =>
        JSON.stringify(
          Object.fromEntries(Object.entries({ ...full, paymentTransactionId: id }).reverse()),
          null,
          3,
        ),
    ],
    [
      'the tolerated numeric strings as numbers',
      full,
      (id) => ({ ...full, paymentTransactionId: id, paymentWay: 1, transactionFeeType: 1 }),
    ],
    [
      'a number as a numeric string',
      { ...baseOrder, paymentWay: 2, discountType: 1, discountAmount: 100 },
      (id) => ({
        ...baseOrder,
        paymentTransactionId: id,
        paymentWay: '2',
        discountType: '1',
        discountAmount: 100,
      }),
    ],
    [
      'optional fields as null instead of absent',
      baseOrder,
      (id) => ({
        ...baseOrder,
        paymentTransactionId: id,
        userName: null,
        serviceFee: null,
        paymentTransaction: null,
      }),
    ],
    [
      'absent instead of null',
      { ...baseOrder, userPhone: null, customPrintContext: null },
      (id) => ({ ...baseOrder, paymentTransactionId: id }),
    ],
    [
      'an empty pickUpNum instead of none',
      { ...baseOrder, orderType: 2 },
      (id) => ({ ...baseOrder, orderType: 2, paymentTransactionId: id, pickUpNum: '' }),
    ],
    [
      'a field the service does not know',
      baseOrder,
      (id) => ({ ...baseOrder, paymentTransactionId: id, posTerminal: 'T-9' }),
    ],
    [
      'characters written as JSON escapes',
      { ...baseOrder, customPrintContext: 'Café' },
      (id) =>
        JSON.stringify({
          ...baseOrder,
          paymentTransactionId: id,
          customPrintContext: 'Café',
        }).replace('é', '\\u00e9'),
    ],
    [
      'nested keys of paymentTransaction in another order',
      full,
      (id) => ({
        ...full,
        paymentTransactionId: id,
        paymentTransaction: { legs: [1, 2], ref: 'T-1' },
      }),
    ],
  ];
  for (const [name, original, retry] of same) {
    it(`answers the original order for ${name}`, async () => {
      const r = await pair(original, retry);
      assert.equal(r.second.code, 10000, r.second.message);
      assert.deepEqual(r.second.data, r.first.data);
      assert.equal(r.published, 0, 'nothing published again');
    });
  }

  const different: [string, Record<string, unknown>, (id: string) => object, string][] = [
    [
      'another quantity',
      baseOrder,
      (id) => ({
        ...baseOrder,
        paymentTransactionId: id,
        productInfo: [{ ...baseOrder.productInfo[0], quantity: 3 }, baseOrder.productInfo[1]],
      }),
      'productInfo',
    ],
    [
      'the same items in another order (the receipt order)',
      baseOrder,
      (id) => ({
        ...baseOrder,
        paymentTransactionId: id,
        productInfo: [...baseOrder.productInfo].reverse(),
      }),
      'productInfo',
    ],
    [
      'a text with a trailing space',
      { ...baseOrder, userName: 'Ana' },
      (id) => ({ ...baseOrder, paymentTransactionId: id, userName: 'Ana ' }),
      'userName',
    ],
    [
      'a field added',
      baseOrder,
      (id) => ({ ...baseOrder, paymentTransactionId: id, serviceFee: 100 }),
      'serviceFee',
    ],
    [
      'a field removed',
      { ...baseOrder, customPrintContext: 'No onions' },
      (id) => ({ ...baseOrder, paymentTransactionId: id }),
      'customPrintContext',
    ],
    [
      'another pickUpNum',
      { ...baseOrder, orderType: 2, pickUpNum: 'A7' },
      (id) => ({ ...baseOrder, orderType: 2, paymentTransactionId: id, pickUpNum: 'A8' }),
      'pickUpNum',
    ],
    [
      'another paymentTransaction value',
      full,
      (id) => ({
        ...full,
        paymentTransactionId: id,
        paymentTransaction: { ref: 'T-1', legs: [2, 1] },
      }),
      'paymentTransaction',
    ],
  ];
  for (const [name, original, retry, field] of different) {
    it(`refuses ${name} with 40901 naming ${field}`, async () => {
      const r = await pair(original, retry);
      assert.equal(r.second.code, 40901);
      assert.equal(
        r.second.message,
        `paymentTransactionId: already used for order ${r.first.data.orderNo} with different content (${field})`,
      );
      assert.equal(r.second.data, null);
      assert.equal(r.published, 0);
    });
  }
});
