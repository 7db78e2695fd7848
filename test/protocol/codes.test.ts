import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CREATE_DISCOUNT_TYPE,
  channelName,
  DISCOUNT_PROMO,
  DISCOUNT_PWD,
  DISCOUNT_SC,
  displayName,
  ORDER_STATUS,
  ORDER_TYPE,
  ORDER_TYPE_QUEUE,
  ORDER_TYPE_TABLE,
  ORDER_TYPE_TAKEOUT,
  PAY_PRODUCT_TYPE,
  PAYMENT_CHANNELS,
  PAYMENT_STATUS,
  PAYMENT_WAY,
  PAYMENT_WAY_OFFLINE,
  PAYMENT_WAY_ONLINE,
  PROMO_DISCOUNT_TYPE,
  RECORD_DISCOUNT_TYPE,
  SKU_VARIANT,
  TRANSACTION_FEE_TYPE,
} from '../../src/protocol/index.js';

const keys = (table: object) => Object.keys(table).map(Number);

describe('code tables hold exactly the values of order-api.md', () => {
  it('orderStatus (section 3): 1-4 with the spec meanings', () => {
    assert.deepEqual(
      { ...ORDER_STATUS },
      { 1: 'Pending acceptance', 2: 'Accepted', 3: 'Completed', 4: 'Cancelled' },
    );
  });

  it('paymentStatus (section 3): 1-8 with the spec meanings', () => {
    assert.deepEqual(
      { ...PAYMENT_STATUS },
      {
        1: 'Unpaid',
        2: 'Paid',
        3: 'Payment failed',
        4: 'Refunding',
        5: 'Refunded',
        6: 'Refund pending',
        7: 'Refund failed',
        8: 'Cancel refund',
      },
    );
  });

  it('payProductType (2.5): 0 Offline .. 7 Balance', () => {
    assert.deepEqual(keys(PAY_PRODUCT_TYPE), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.equal(PAY_PRODUCT_TYPE[0], 'Offline');
    assert.equal(PAY_PRODUCT_TYPE[7], 'Balance');
    assert.match(PAY_PRODUCT_TYPE[1], /payment ?link/i);
    assert.match(PAY_PRODUCT_TYPE[2], /bill ?payment/i);
    assert.match(PAY_PRODUCT_TYPE[3], /bank ?transfer/i);
    assert.match(PAY_PRODUCT_TYPE[4], /static/i);
    assert.match(PAY_PRODUCT_TYPE[5], /dynamic/i);
    assert.match(PAY_PRODUCT_TYPE[6], /cpm/i);
  });

  it('record discountType (2.5): 1-6, PWD/merchant/PWD per person/SC/SC per person/coupon', () => {
    assert.deepEqual(keys(RECORD_DISCOUNT_TYPE), [1, 2, 3, 4, 5, 6]);
    assert.match(RECORD_DISCOUNT_TYPE[1], /pwd/i);
    assert.match(RECORD_DISCOUNT_TYPE[2], /merchant/i);
    assert.match(RECORD_DISCOUNT_TYPE[3], /pwd.*per person/i);
    assert.match(RECORD_DISCOUNT_TYPE[4], /sc/i);
    assert.match(RECORD_DISCOUNT_TYPE[5], /sc.*per person/i);
    assert.match(RECORD_DISCOUNT_TYPE[6], /coupon/i);
  });

  it('create discountType (2.9): 1 promo, 2 PWD, 4 SC, and no 3', () => {
    assert.deepEqual(keys(CREATE_DISCOUNT_TYPE), [1, 2, 4]);
    assert.match(CREATE_DISCOUNT_TYPE[1], /promo/i);
    assert.match(CREATE_DISCOUNT_TYPE[2], /pwd/i);
    assert.match(CREATE_DISCOUNT_TYPE[4], /sc/i);
    assert.equal(DISCOUNT_PROMO, 1);
    assert.equal(DISCOUNT_PWD, 2);
    assert.equal(DISCOUNT_SC, 4);
  });

  it('promoDiscountType (2.9): 1 whole order, 2 product', () => {
    assert.deepEqual(keys(PROMO_DISCOUNT_TYPE), [1, 2]);
    assert.match(PROMO_DISCOUNT_TYPE[1], /whole order/i);
    assert.match(PROMO_DISCOUNT_TYPE[2], /product/i);
  });

  it('orderType (2.9): 1 table code, 2 queue, 3 takeout', () => {
    assert.deepEqual(keys(ORDER_TYPE), [1, 2, 3]);
    assert.match(ORDER_TYPE[1], /table/i);
    assert.match(ORDER_TYPE[2], /queue/i);
    assert.match(ORDER_TYPE[3], /takeout/i);
    assert.equal(ORDER_TYPE_TABLE, 1);
    assert.equal(ORDER_TYPE_QUEUE, 2);
    assert.equal(ORDER_TYPE_TAKEOUT, 3);
  });

  it('paymentWay (2.9): 1 online, 2 offline', () => {
    assert.deepEqual({ ...PAYMENT_WAY }, { 1: 'Online', 2: 'Offline' });
    assert.equal(PAYMENT_WAY_ONLINE, 1);
    assert.equal(PAYMENT_WAY_OFFLINE, 2);
  });

  it('transactionFeeType (2.9): 1 merchant, 2 user', () => {
    assert.deepEqual(keys(TRANSACTION_FEE_TYPE), [1, 2]);
    assert.match(TRANSACTION_FEE_TYPE[1], /merchant/i);
    assert.match(TRANSACTION_FEE_TYPE[2], /user|customer/i);
  });

  it('variant (2.6): 1 yes, 2 no', () => {
    assert.deepEqual({ ...SKU_VARIANT }, { 1: 'Yes', 2: 'No' });
  });

  it('payment channels (4.3): exactly the nine codes of the table', () => {
    assert.deepEqual(Object.keys(PAYMENT_CHANNELS).sort(), [
      'CHANNEL_A_DYNAMIC_QR',
      'CHANNEL_B_CPM',
      'CHANNEL_B_DYNAMIC_QR',
      'CHANNEL_B_URL',
      'CHANNEL_C_URL',
      'CHANNEL_D_URL',
      'CHANNEL_E_URL',
      'CHANNEL_F_URL',
      'CHANNEL_G_URL',
    ]);
  });

  it('Bank A (CHANNEL_D_URL) is one channel, listed once', () => {
    assert.equal(Object.keys(PAYMENT_CHANNELS).filter((c) => c === 'CHANNEL_D_URL').length, 1);
    assert.equal(Object.values(PAYMENT_CHANNELS).filter((n) => /bank a\b/i.test(n)).length, 1);
    assert.match(PAYMENT_CHANNELS.CHANNEL_D_URL, /bank a/i);
    assert.match(PAYMENT_CHANNELS.CHANNEL_E_URL, /bank b/i);
  });

  it('channel names are distinct, so a receipt tells channels apart', () => {
    const names = Object.values(PAYMENT_CHANNELS);
    assert.equal(new Set(names).size, names.length);
  });
});

describe('displayName', () => {
  it('names known values, including 0', () => {
    assert.equal(displayName(ORDER_STATUS, 2), 'Accepted');
    assert.equal(displayName(PAYMENT_STATUS, 8), 'Cancel refund');
    assert.equal(displayName(PAY_PRODUCT_TYPE, 0), 'Offline');
  });

  it('shows unknown values as "Unknown (n)"', () => {
    assert.equal(displayName(ORDER_STATUS, 9), 'Unknown (9)');
    assert.equal(displayName(ORDER_STATUS, 0), 'Unknown (0)');
    assert.equal(displayName(PAYMENT_STATUS, -1), 'Unknown (-1)');
    assert.equal(displayName(CREATE_DISCOUNT_TYPE, 3), 'Unknown (3)');
    assert.equal(displayName(PAY_PRODUCT_TYPE, 1.5), 'Unknown (1.5)');
  });
});

describe('channelName', () => {
  it('names every known channel by its table entry', () => {
    for (const [code, name] of Object.entries(PAYMENT_CHANNELS))
      assert.equal(channelName(code), name);
    assert.equal(channelName('CHANNEL_D_URL'), PAYMENT_CHANNELS.CHANNEL_D_URL);
  });

  it('shows an unknown code as itself (new channels appear before documents)', () => {
    assert.equal(channelName('CHANNEL_Z_URL'), 'CHANNEL_Z_URL');
    assert.equal(channelName(''), '');
  });

  it('is case-sensitive: a lower-case code is not a known channel', () => {
    assert.equal(channelName('channel_d_url'), 'channel_d_url');
  });

  it('returns a string for codes that are names of Object.prototype members', () => {
    // The code comes off the wire; it must never reach a receipt as a function.
    for (const code of ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__']) {
      const name = channelName(code);
      assert.equal(typeof name, 'string', code);
      assert.equal(name, code);
    }
  });
});
