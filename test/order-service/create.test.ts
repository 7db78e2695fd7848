import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { deriveStoreId, openEnvelope, printInstructionSchema } from '../../src/protocol/index.js';
import {
  APP_ID,
  baseOrder,
  baseUrl,
  makeService,
  newOrder,
  OTHER_STORE_KEY,
  post,
  request,
  STORE_KEY,
  servicePublicKey,
  signed,
  steppingClock,
  strangerKey,
} from './harness.js';

const clock = steppingClock('2026-11-25 12:30:05', 1000);
const { app, store, publisher } = makeService({ now: clock });
after(() => app.close());

describe('order-service create', () => {
  it('creates a table order and publishes a signed print instruction', async () => {
    const env = signed(baseOrder);
    const res = await post(app, 'create', env);
    assert.equal(res.status, 200);
    assert.equal(res.body.code, 10000);
    assert.equal(res.body.message, 'success');
    assert.match(res.body.data.orderNo, /^O20261125\d{6}$/);
    assert.equal(res.body.data.pickUpNo, null);
    assert.equal(res.body.data.takeoutNo, null);

    const call = publisher.calls.at(-1)!;
    assert.equal(call.storeId, deriveStoreId(APP_ID, STORE_KEY));
    const opened = openEnvelope(
      { appId: APP_ID, storeKey: STORE_KEY, param: call.param, sign: call.sign },
      {
        verifyKey: servicePublicKey,
        identity: { appId: APP_ID, storeKey: STORE_KEY },
        paramSchema: printInstructionSchema,
      },
    );
    assert.ok(opened.ok, opened.ok ? '' : opened.error.message);
    assert.equal(opened.param.orderNo, res.body.data.orderNo);
    assert.equal(opened.param.createTime, '2026-11-25 12:30:05');
    // v1.1 §4: the store is bound inside the signed param; the store's routing picks the printer.
    assert.equal(opened.param.storeId, deriveStoreId(APP_ID, STORE_KEY));
    assert.equal('printer' in JSON.parse(call.param), false);
    // `order` is the merchant's param exactly as signed (paymentWay still the string '2').
    assert.deepEqual(JSON.parse(call.param).order, baseOrder);
    assert.equal(await store.outboxSize(), 0);
  });

  it('generates pick-up codes for queue orders and keeps a given pickUpNum', async () => {
    const a = await post(app, 'create', signed(newOrder({ orderType: 2 })));
    const b = await post(app, 'create', signed(newOrder({ orderType: 2, pickUpNum: '' })));
    const c = await post(app, 'create', signed(newOrder({ orderType: 2, pickUpNum: 'VIP-7' })));
    assert.equal(a.body.data.pickUpNo, 'A001');
    assert.equal(b.body.data.pickUpNo, 'A002');
    assert.equal(c.body.data.pickUpNo, 'VIP-7');
    // Counters are per store.
    const d = await post(
      app,
      'create',
      signed(newOrder({ orderType: 2 }), { storeKey: OTHER_STORE_KEY }),
    );
    assert.equal(d.body.data.pickUpNo, 'A001');
  });

  it('numbers takeout orders and jobIds are unique', async () => {
    const t = await post(
      app,
      'create',
      signed(newOrder({ orderType: 3, deliveryFee: 1000, packingFee: 200 })),
    );
    assert.equal(t.body.code, 10000);
    assert.equal(t.body.data.takeoutNo, 'T001');
    const jobIds = publisher.calls.map((c) => JSON.parse(c.param).jobId);
    assert.equal(new Set(jobIds).size, jobIds.length);
    const orderNos = publisher.calls.map((c) => JSON.parse(c.param).orderNo);
    assert.deepEqual([...orderNos].sort(), orderNos, 'orderNo sorts in creation order');
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['productInfo missing', { productInfo: undefined }, 'productInfo: is required'],
    ['productInfo empty', { productInfo: [] }, 'productInfo: must have 1 to 50 entries'],
    [
      'productInfo over 50',
      { productInfo: Array.from({ length: 51 }, () => baseOrder.productInfo[0]) },
      'productInfo: must have 1 to 50 entries',
    ],
    [
      'quantity over 1000',
      { productInfo: [{ productName: 'x', price: 1, quantity: 1001 }] },
      'productInfo[0].quantity: must be between 1 and 1000',
    ],
    [
      'price over limit',
      { productInfo: [{ productName: 'x', price: 1_000_001, quantity: 1 }] },
      'productInfo[0].price: must be between 0 and 1000000',
    ],
    [
      'productName too long',
      { productInfo: [{ productName: 'x'.repeat(51), price: 1, quantity: 1 }] },
      'productInfo[0].productName: must be 1 to 50 characters',
    ],
    ['orderType missing', { orderType: undefined }, 'orderType: is required'],
    ['paymentWay missing', { paymentWay: undefined }, 'paymentWay: is required'],
    [
      'paymentTransactionId missing',
      { paymentTransactionId: undefined },
      'paymentTransactionId: is required',
    ],
    ['serviceFee over limit', { serviceFee: 10_000_001 }, 'serviceFee: must be between'],
    ['paymentAmount fraction', { paymentAmount: 1.5 }, 'paymentAmount: must be an integer'],
    ['takeout without fees', { orderType: 3 }, 'deliveryFee: is required for takeout orders'],
    ['takeout without packingFee', { orderType: 3, deliveryFee: 1 }, 'packingFee: is required'],
    ['online without channel', { paymentWay: 1 }, 'paymentChannel: is required for online payment'],
    [
      'online without transaction times',
      { paymentWay: 1, paymentChannel: 'CHANNEL_B_URL' },
      'transactionCreateTime: is required for online payment (paymentWay 1); transactionReturnTime: is required',
    ],
    [
      'PWD without card data',
      { discountType: '2' },
      'discountNo: is required for PWD discounts (discountType 2); discounterName: is required for PWD discounts (discountType 2); discountValidityPeriod: is required',
    ],
    [
      'SC without card data',
      { discountType: 4, discountNo: 'SC1' },
      'discounterName: is required for SC',
    ],
    ['pickUpNum too long', { pickUpNum: 'x'.repeat(51) }, 'pickUpNum: must be 1 to 50 characters'],
  ];
  for (const [name, patch, expected] of invalid) {
    it(`rejects ${name} with 40003 and the field path`, async () => {
      const before = publisher.calls.length;
      const res = await post(app, 'create', signed({ ...baseOrder, ...patch }));
      assert.equal(res.status, 200);
      assert.equal(res.body.code, 40003);
      assert.ok(res.body.message.includes(expected), res.body.message);
      assert.equal(res.body.data, null);
      assert.equal(publisher.calls.length, before);
    });
  }

  it('rejects a forged signature and a tampered param with 40101', async () => {
    const forged = await post(app, 'create', signed(baseOrder, { key: strangerKey }));
    assert.equal(forged.body.code, 40101);
    const env = signed(baseOrder);
    const tampered = await post(app, 'create', {
      ...env,
      param: env.param.replace('M-0001', 'M-0002'),
    });
    assert.equal(tampered.body.code, 40101);
    assert.equal(tampered.body.data, null);
  });

  it('rejects an unknown app or store with 40102', async () => {
    const app2 = await post(app, 'create', signed(baseOrder, { appId: 'NOPE' }));
    assert.equal(app2.body.code, 40102);
    const store2 = await post(app, 'create', signed(baseOrder, { storeKey: 'K-unknown' }));
    assert.equal(store2.body.code, 40102);
    assert.ok(!store2.body.message.includes('K-unknown'), 'never echoes the storeKey');
  });

  it('answers a wrong or missing Content-Type with 415 and the envelope', async () => {
    const body = JSON.stringify(signed(baseOrder));
    const url = `${await baseUrl(app)}/open-api/order/create`;
    // A byte body makes fetch send no Content-Type at all.
    const missing = await fetch(url, { method: 'POST', body: new TextEncoder().encode(body) });
    const wrong = await request(app, '/open-api/order/create', body, {
      'content-type': 'text/plain',
    });
    for (const res of [{ status: missing.status, body: await missing.json() }, wrong]) {
      assert.equal(res.status, 415);
      assert.deepEqual(res.body, {
        code: 41500,
        message: 'Content-Type must be application/json',
        data: null,
      });
    }
    const charset = await request(app, '/open-api/order/create', body, {
      'content-type': 'application/json; charset=utf-8',
    });
    assert.equal(charset.body.code, 10000);
  });

  it('answers bad bodies and envelopes with 40001/40002, never 5xx', async () => {
    const badJson = await request(app, '/open-api/order/create', '{not json');
    assert.equal(badJson.status, 200);
    assert.equal(badJson.body.code, 40001);
    const noSign = await post(app, 'create', { appId: APP_ID, storeKey: STORE_KEY, param: '{}' });
    assert.equal(noSign.body.code, 40001);
    assert.match(noSign.body.message, /sign: is required/);
    const notJson = await post(app, 'create', signed('not json'));
    assert.equal(notJson.body.code, 40002);
    const array = await post(app, 'create', [1, 2]);
    assert.equal(array.body.code, 40001);
  });

  it('answers an oversized body with 41300', async () => {
    const big = signed({ ...baseOrder, customPrintContext: 'x'.repeat(1_100_000) });
    const res = await post(app, 'create', big);
    assert.equal(res.status, 200);
    assert.equal(res.body.code, 41300);
  });

  it('answers unknown paths with 404 and the envelope', async () => {
    const res = await fetch(`${await baseUrl(app)}/nope`);
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as { code: number }).code, 40400);
  });
});

describe('order-service outbox', () => {
  it('does not fail the create when the broker is down, and publishes when it returns', async () => {
    const svc = makeService();
    try {
      svc.publisher.down = true;
      const res = await post(svc.app, 'create', signed(baseOrder));
      assert.equal(res.body.code, 10000);
      assert.equal(await svc.store.outboxSize(), 1);
      assert.equal(svc.publisher.calls.length, 0);
      svc.publisher.down = false;
      assert.equal(await svc.app.outbox.drain(), 0);
      assert.equal(await svc.store.outboxSize(), 0);
      assert.equal(JSON.parse(svc.publisher.calls[0]!.param).orderNo, res.body.data.orderNo);
    } finally {
      await svc.app.close();
    }
  });
});

describe('order-service failure', () => {
  it('answers 21000 with HTTP 500 when the service itself fails, without internals', async () => {
    const svc = makeService();
    try {
      await svc.store.close(); // the database is gone: every create now fails inside the service
      const res = await post(svc.app, 'create', signed(baseOrder));
      assert.equal(res.status, 500);
      assert.deepEqual(res.body, {
        code: 21000,
        message: 'Service error, please contact administrator',
        data: null,
      });
      // A client's mistake is still the client's, not a 5xx.
      const forged = await post(svc.app, 'create', signed(baseOrder, { key: strangerKey }));
      assert.equal(forged.status, 200);
      assert.equal(forged.body.code, 40101);
    } finally {
      await svc.app.close();
    }
  });
});
