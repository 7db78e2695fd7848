/**
 * The two adapters to the receipt model (issue 3 item 1): a print instruction (create parameters
 * of order-api 2.9 plus orderNo, pickUpNo, takeoutNo, createTime) and an order record (2.5-2.8).
 *
 * Every amount below is computed by hand from the fixture or the input written beside it, in
 * integer cents; labels and codes come from order-api (2.5, 2.9, 4.3, §3).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { PAYMENT_CHANNELS } from '../../src/protocol/codes.js';
import { type OrderRecord, orderRecordSchema } from '../../src/protocol/order-record.js';
import {
  type PrintInstruction,
  printInstructionSchema,
  storedInstructionSchema,
} from '../../src/protocol/print-protocol.js';
import { receiptFromInstruction } from '../../src/receipt/from-instruction.js';
import { receiptFromRecord } from '../../src/receipt/from-record.js';
import { maskCardNo, type Receipt, type ReceiptAmount } from '../../src/receipt/model.js';

const ORDERS = new URL('../fixtures/orders/', import.meta.url);

function fixtureJson(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(`${name}.json`, ORDERS), 'utf8')) as Record<
    string,
    unknown
  >;
}

const fixtureInstruction = (name: string) =>
  receiptFromInstruction(printInstructionSchema.parse(fixtureJson(name)));
const fixtureRecord = (name: string) =>
  receiptFromRecord(orderRecordSchema.parse(fixtureJson(name)));

/**
 * A valid instruction: a table order paid offline, with `order` fields overridden. Read as the
 * agent reads a stored job to print it (decision 238): the renderer's own defences are tested on
 * ids the inbox would now refuse too.
 */
function instruction(
  order: Record<string, unknown> = {},
  top: Record<string, unknown> = {},
): PrintInstruction {
  return storedInstructionSchema.parse({
    jobId: 'J-1',
    orderNo: 'O-1',
    createTime: '2026-11-25 12:00:00',
    ...top,
    order: {
      productInfo: [{ productName: 'Adobo', price: 15000, quantity: 1 }],
      orderType: 1,
      paymentWay: 2,
      paymentTransactionId: 'CASH-1',
      ...order,
    },
  });
}

const ONLINE = {
  paymentWay: 1,
  paymentChannel: 'CHANNEL_B_URL',
  transactionCreateTime: '2026-11-25 11:59:00',
  transactionReturnTime: '2026-11-25 11:59:30',
};

/** A valid order record with one plain SKU, fields overridden. */
function record(fields: Record<string, unknown> = {}): OrderRecord {
  return orderRecordSchema.parse({
    orderInnerNo: 'R-1',
    restaurantNo: 'R-001',
    branchIdentifier: 'B-1',
    orderSerialNumber: 7,
    realAmount: 10000,
    orderStatus: 3,
    paymentStatus: 2,
    createTime: '2026-11-25 12:00:00',
    paymentTime: '2026-11-25 12:00:30',
    skuList: [
      {
        categoryNo: 'C1',
        productNo: 'P1',
        productName: 'Adobo',
        variant: 2,
        skuName: 'Adobo',
        count: 1,
        price: 10000,
        optionAmount: 0,
      },
    ],
    ...fields,
  });
}

const adjustment = (r: Receipt, label: RegExp): ReceiptAmount => {
  const found = r.adjustments.filter((a) => label.test(a.label));
  assert.equal(
    found.length,
    1,
    `one adjustment matching ${label} in ${JSON.stringify(r.adjustments)}`,
  );
  return found[0]!;
};
const mismatch = (r: Receipt) => r.warnings.filter((w) => /do not add up/.test(w));

// ---------------------------------------------------------------------------------------------

describe('maskCardNo', () => {
  it('keeps only the last four characters readable', () => {
    assert.equal(maskCardNo('PWD-0123-456789'), '***********6789');
    assert.equal(maskCardNo('SC-778899001'), '********9001');
    assert.equal(maskCardNo('12345'), '*2345');
  });

  it('masks a number of four characters or fewer completely', () => {
    assert.equal(maskCardNo('1234'), '****');
    assert.equal(maskCardNo('123'), '***');
    assert.equal(maskCardNo('7'), '*');
    assert.equal(maskCardNo(''), '');
  });

  it('counts characters, not UTF-16 units', () => {
    assert.equal(maskCardNo('𠀀𠀀𠀀𠀀𠀀𠀀'), '**𠀀𠀀𠀀𠀀');
  });
});

describe('receiptFromInstruction: fixtures', () => {
  it('table-offline-simple: items, service fee, totals, TABLE ORDER, offline', () => {
    const r = fixtureInstruction('table-offline-simple');
    assert.equal(r.source, 'instruction');
    assert.equal(r.orderNo, 'O202611250101');
    assert.equal(r.createTime, '2026-11-25 11:02:13');
    assert.deepEqual(r.items, [
      // Create parameters carry no SKU.
      {
        name: 'Sinigang na Baboy',
        quantity: 1,
        unitPrice: 24500,
        lineTotal: 24500,
        options: [],
        sku: null,
      },
      { name: 'Plain Rice', quantity: 2, unitPrice: 3000, lineTotal: 6000, options: [], sku: null },
    ]);
    assert.equal(r.subtotal, 30500); // 24500 + 2 x 3000
    assert.deepEqual(r.adjustments, [{ label: 'Service fee', amount: 3050, inTotal: true }]);
    assert.equal(r.discount, null);
    assert.equal(r.total, 33550); // 30500 + 3050
    assert.equal(r.amountPaid, 33550);
    assert.deepEqual(r.warnings, []);
    assert.equal(r.banner, 'TABLE ORDER');
    assert.equal(r.pickUpNo, null);
    assert.equal(r.takeoutNo, null);
    assert.equal(r.takeout, null);
    assert.equal(r.payment.way, 'Offline');
    assert.equal(r.payment.channel, null);
    assert.equal(r.payment.merchantOrderNo, 'CASH-0101');
    assert.equal(r.customContent, null);
  });

  it('queue-online-pwd: PWD discount, merchant-borne transaction fee, pick-up code', () => {
    const r = fixtureInstruction('queue-online-pwd');
    assert.deepEqual(
      r.items.map((i) => [i.name, i.quantity, i.unitPrice, i.lineTotal]),
      [
        ['Chicken Adobo with Garlic Rice and Fried Egg', 2, 18500, 37000],
        ['Halo-halo', 1, 9500, 9500],
        ['Bottled water', 3, 2500, 7500],
      ],
    );
    assert.equal(r.subtotal, 54000);
    // serviceFee 0 prints no line; the transaction fee (bearer 1, merchant) is shown, not charged.
    assert.equal(r.adjustments.length, 1);
    const fee = adjustment(r, /transaction fee/i);
    assert.equal(fee.amount, 380);
    assert.equal(fee.inTotal, false);
    assert.match(fee.label, /store|merchant/i);
    assert.ok(r.discount);
    assert.match(r.discount.label, /PWD/);
    assert.equal(r.discount.amount, -6000);
    assert.equal(r.discount.discounterName, 'Juan Dela Cruz');
    assert.equal(r.discount.cardNo, '***********6789');
    assert.equal(r.discount.validity, '2028-06-30');
    assert.equal(r.total, 48000); // 54000 - 6000; the merchant's 380 is not the customer's
    assert.equal(r.amountPaid, 48000);
    assert.deepEqual(r.warnings, []);
    assert.equal(r.banner, 'QUEUE ORDER');
    assert.equal(r.pickUpNo, 'A023'); // instruction.pickUpNo; pickUpNum is ''
    assert.equal(r.payment.way, 'Online');
    assert.equal(r.payment.channel, PAYMENT_CHANNELS.CHANNEL_B_DYNAMIC_QR);
    assert.notEqual(r.payment.channel, 'CHANNEL_B_DYNAMIC_QR');
    assert.equal(r.payment.transactionId, 'TXN9988776655');
    assert.equal(r.payment.merchantOrderNo, 'MCH-20261125-77120');
    assert.equal(r.payment.platform, 'PayPlatform');
    assert.equal(r.payment.transactionCreated, '2026-11-25 12:29:40');
    assert.equal(r.payment.transactionClosed, '2026-11-25 12:29:58');
    assert.equal(r.paymentTime, '2026-11-25 12:29:58');
    assert.equal(
      r.customContent,
      'Thank you for dining with us!\nFree Wi-Fi: CafeGuest / pass: adobo2026',
    );
  });

  it('table-every-fee: each fee with its label and whether it counts', () => {
    const r = fixtureInstruction('table-every-fee');
    assert.equal(r.subtotal, 54000); // 45000 + 2 x 4500
    assert.deepEqual(adjustment(r, /^service fee$/i), {
      label: 'Service fee',
      amount: 5400,
      inTotal: true,
    });
    assert.deepEqual(adjustment(r, /^packing fee$/i), {
      label: 'Packing fee',
      amount: 1200,
      inTotal: true,
    });
    assert.deepEqual(adjustment(r, /^delivery fee$/i), {
      label: 'Delivery fee',
      amount: 2500,
      inTotal: true,
    });
    const merchantDelivery = adjustment(r, /delivery fee \(/i);
    assert.equal(merchantDelivery.amount, 1000);
    assert.equal(merchantDelivery.inTotal, false);
    assert.match(merchantDelivery.label, /store|merchant/i);
    const txFee = adjustment(r, /transaction fee/i);
    assert.equal(txFee.amount, 565);
    assert.equal(txFee.inTotal, true); // transactionFeeType "2": the user bears it
    assert.equal(r.adjustments.length, 5);
    assert.ok(r.discount);
    assert.match(r.discount.label, /promo/i);
    assert.match(r.discount.label, /product/i); // promoDiscountType 2
    assert.equal(r.discount.amount, -5000);
    assert.equal(r.discount.discounterName, null);
    assert.equal(r.discount.cardNo, null);
    // 54000 + 5400 + 1200 + 2500 + 565 - 5000; the merchant's 1000 delivery share is not added.
    assert.equal(r.total, 58665);
    assert.equal(r.amountPaid, 58665);
    assert.deepEqual(mismatch(r), []);
    assert.equal(r.customContent, null); // customPrintContext ""
    assert.equal(r.payment.channel, PAYMENT_CHANNELS.CHANNEL_D_URL);
  });

  it('takeout-online-sc: SC discount, takeout number and block', () => {
    const r = fixtureInstruction('takeout-online-sc');
    assert.equal(r.subtotal, 87000); // 32000 + 42000 + 2 x 6500
    assert.equal(r.banner, 'TAKEOUT ORDER');
    assert.equal(r.takeoutNo, 'T0088');
    assert.equal(r.pickUpNo, null);
    assert.deepEqual(r.takeout, {
      userName: 'Maria Clara Santos',
      userPhone: '+63 917 555 0142',
      userAddress:
        'Unit 12B, Tower 3, Green Residences, 1234 Taft Avenue corner Vito Cruz Street, Malate, Manila 1004 (leave with the lobby guard)',
    });
    assert.ok(r.discount);
    assert.match(r.discount.label, /SC/);
    assert.equal(r.discount.amount, -14200);
    assert.equal(r.discount.discounterName, 'Jose Rizal Mercado');
    assert.equal(r.discount.cardNo, '********9001');
    assert.equal(r.discount.validity, null);
    assert.equal(adjustment(r, /delivery fee \(/i).inTotal, false);
    // 87000 + 4900 delivery + 1500 packing + 1190 user-borne fee - 14200
    assert.equal(r.total, 80390);
    assert.equal(r.amountPaid, 80390);
    assert.deepEqual(r.warnings, []);
    assert.equal(r.payment.channel, PAYMENT_CHANNELS.CHANNEL_A_DYNAMIC_QR);
  });

  it('queue-fifty-products: 50 items, each line total exact', () => {
    const raw = fixtureJson('queue-fifty-products') as {
      order: { productInfo: Array<{ productName: string; price: number; quantity: number }> };
    };
    const r = fixtureInstruction('queue-fifty-products');
    assert.equal(r.items.length, 50);
    let sum = 0;
    raw.order.productInfo.forEach((p, i) => {
      const item = r.items[i]!;
      assert.equal(item.name, p.productName);
      assert.equal(item.unitPrice, p.price);
      assert.equal(item.quantity, p.quantity);
      assert.equal(item.lineTotal, p.price * p.quantity);
      sum += p.price * p.quantity;
    });
    assert.equal(r.subtotal, sum);
    assert.equal(r.subtotal, 1073750); // and the service's paymentAmount agrees
    assert.equal(r.total, 1073750);
    assert.deepEqual(r.warnings, []);
    assert.equal(r.pickUpNo, 'B107');
  });

  it('table-zero-prices-promo: zero-price items and a whole-order promo', () => {
    const r = fixtureInstruction('table-zero-prices-promo');
    assert.deepEqual(
      r.items.map((i) => [i.quantity, i.unitPrice, i.lineTotal]),
      [
        [1, 38000, 38000],
        [2, 0, 0],
        [1, 0, 0],
      ],
    );
    assert.equal(r.subtotal, 38000);
    assert.ok(r.discount);
    assert.match(r.discount.label, /promo/i);
    assert.match(r.discount.label, /whole order/i); // promoDiscountType 1
    assert.equal(r.total, 34200); // 38000 - 3800
    assert.deepEqual(r.warnings, []);
  });

  it('takeout-offline-long-custom: zero delivery fee prints no line; custom content verbatim', () => {
    const raw = fixtureJson('takeout-offline-long-custom') as {
      order: { customPrintContext: string };
    };
    const r = fixtureInstruction('takeout-offline-long-custom');
    assert.deepEqual(r.adjustments, [{ label: 'Packing fee', amount: 2500, inTotal: true }]);
    assert.equal(r.total, 72000); // 69500 + 2500
    assert.equal(r.takeoutNo, 'T0091');
    assert.equal(r.customContent, raw.order.customPrintContext);
    assert.equal(r.customContent?.split('\n').length, 4); // including one empty paragraph
    assert.deepEqual(r.takeout, {
      userName: 'Andres',
      userPhone: '09171234567',
      userAddress: '88 Rizal Ave, Sta. Cruz',
    });
  });

  it('queue-online-quirks: unknown channel shown as its code, variation selector removed', () => {
    const r = fixtureInstruction('queue-online-quirks');
    assert.equal(r.payment.channel, 'CHANNEL_NEW_WALLET_X');
    assert.equal(r.pickUpNo, 'MORNING-QUEUE-LANE-2-TICKET-0042');
    assert.deepEqual(r.adjustments, []); // transactionFee 0
    assert.equal(r.total, 46500); // 16500 + 9000 + 21000
    assert.deepEqual(mismatch(r), []);
    assert.equal(r.items[1]!.name, 'Café con leche €');
    // "🌶️" is U+1F336 U+FE0F: the variation selector is invisible and goes, with a warning.
    assert.equal(r.items[2]!.name, 'Spicy ramen \u{1F336} 라면');
    assert.equal(r.warnings.length, 1);
    assert.match(r.warnings[0]!, /order\.productInfo\[2\]\.productName/);
  });

  it('table-cjk: CJK names and a multi-line custom content kept', () => {
    const r = fixtureInstruction('table-cjk');
    assert.deepEqual(
      r.items.map((i) => i.name),
      ['白切鸡 Hainanese Chicken', '扬州炒饭', '酸辣汤（大份）', '珍珠奶茶 少冰 半糖'],
    );
    assert.equal(r.subtotal, 102900); // 28800 + 2 x 16800 + 12000 + 3 x 9500
    assert.equal(r.customContent, '谢谢光临！欢迎再次光临。\nThank you, come again.');
    assert.deepEqual(r.warnings, []);
  });
});

describe('receiptFromInstruction: hand-built', () => {
  it('line totals are integer cents at the limits (1000 x 1000000)', () => {
    const r = receiptFromInstruction(
      instruction({
        productInfo: [
          { productName: 'Max', price: 1_000_000, quantity: 1000 },
          { productName: 'Cheap', price: 1, quantity: 3 },
        ],
      }),
    );
    assert.equal(r.items[0]!.lineTotal, 1_000_000_000);
    assert.equal(r.items[1]!.lineTotal, 3);
    assert.equal(r.subtotal, 1_000_000_003);
    assert.ok(Number.isInteger(r.total));
  });

  it('order type banners for 1, 2, 3', () => {
    assert.equal(receiptFromInstruction(instruction({ orderType: 1 })).banner, 'TABLE ORDER');
    assert.equal(receiptFromInstruction(instruction({ orderType: 2 })).banner, 'QUEUE ORDER');
    assert.equal(
      receiptFromInstruction(instruction({ orderType: 3, deliveryFee: 0, packingFee: 0 })).banner,
      'TAKEOUT ORDER',
    );
  });

  it('pick-up code: instruction.pickUpNo first, else a non-empty pickUpNum, else none', () => {
    const queue = { orderType: 2 };
    assert.equal(
      receiptFromInstruction(instruction({ ...queue, pickUpNum: 'Q-7' }, { pickUpNo: 'A001' }))
        .pickUpNo,
      'A001',
    );
    assert.equal(
      receiptFromInstruction(instruction({ ...queue, pickUpNum: 'Q-7' }, { pickUpNo: null }))
        .pickUpNo,
      'Q-7',
    );
    assert.equal(receiptFromInstruction(instruction({ ...queue, pickUpNum: '' })).pickUpNo, null);
    assert.equal(receiptFromInstruction(instruction(queue)).pickUpNo, null);
  });

  it('takeout block: present for takeout orders, absent for a table order without user data', () => {
    const t = receiptFromInstruction(
      instruction({ orderType: 3, deliveryFee: 500, packingFee: 0, userPhone: '0917' }),
    );
    assert.deepEqual(t.takeout, { userName: null, userPhone: '0917', userAddress: null });
    assert.deepEqual(t.adjustments, [{ label: 'Delivery fee', amount: 500, inTotal: true }]);
    assert.equal(receiptFromInstruction(instruction()).takeout, null);
    const withNo = receiptFromInstruction(
      instruction({ orderType: 3, deliveryFee: 0, packingFee: 0 }, { takeoutNo: 'T-9' }),
    );
    assert.equal(withNo.takeoutNo, 'T-9');
  });

  it('a transaction fee: in the total only when the user bears it (type 2)', () => {
    const fee = (order: Record<string, unknown>) =>
      receiptFromInstruction(instruction({ ...ONLINE, transactionFee: 200, ...order }));
    const byUser = fee({ transactionFeeType: '2' });
    assert.equal(adjustment(byUser, /transaction fee/i).inTotal, true);
    assert.equal(byUser.total, 15200);
    const byMerchant = fee({ transactionFeeType: 1 });
    assert.equal(adjustment(byMerchant, /transaction fee/i).inTotal, false);
    assert.equal(byMerchant.total, 15000);
    const unknownBearer = fee({});
    assert.equal(adjustment(unknownBearer, /transaction fee/i).inTotal, false);
    assert.equal(unknownBearer.total, 15000);
  });

  it('merchantDeliveryFee is shown but never added', () => {
    const r = receiptFromInstruction(
      instruction({ merchantDeliveryFee: 700, paymentAmount: 15000 }),
    );
    const line = adjustment(r, /delivery/i);
    assert.equal(line.amount, 700);
    assert.equal(line.inTotal, false);
    assert.equal(r.total, 15000);
    assert.deepEqual(r.warnings, []);
  });

  it('PWD and SC labels, masked card, name and validity', () => {
    const pwd = receiptFromInstruction(
      instruction({
        discountType: '2',
        discountAmount: 3000,
        discountNo: 'PWD-0123-456789',
        discounterName: 'Juan',
        discountValidityPeriod: '2028-06-30',
      }),
    );
    assert.match(pwd.discount!.label, /PWD/);
    assert.doesNotMatch(pwd.discount!.label, /SC/);
    assert.equal(pwd.discount!.cardNo, '***********6789');
    assert.equal(pwd.discount!.discounterName, 'Juan');
    assert.equal(pwd.discount!.validity, '2028-06-30');
    assert.equal(pwd.total, 12000);

    const sc = receiptFromInstruction(
      instruction({
        discountType: 4,
        discountAmount: 3000,
        discountNo: '1234',
        discounterName: 'Lola',
      }),
    );
    assert.match(sc.discount!.label, /SC/);
    assert.equal(sc.discount!.cardNo, '****');
    assert.equal(sc.discount!.validity, null);
  });

  it('a discount amount without a type is still a discount', () => {
    const r = receiptFromInstruction(instruction({ discountAmount: 500 }));
    assert.equal(r.discount?.amount, -500);
    assert.equal(r.total, 14500);
  });

  it('no discount line when there is neither an amount nor a type', () => {
    assert.equal(receiptFromInstruction(instruction({ discountAmount: 0 })).discount, null);
  });

  it('amounts that do not add up: warning, and the given paymentAmount is kept', () => {
    const r = receiptFromInstruction(instruction({ serviceFee: 1000, paymentAmount: 99999 }));
    assert.equal(r.total, 16000); // 15000 + 1000 from the lines
    assert.equal(r.amountPaid, 99999);
    const w = mismatch(r);
    assert.equal(w.length, 1);
    assert.match(w[0]!, /99999/);
    assert.match(w[0]!, /16000/);
  });

  it('no paymentAmount: no amount paid and no warning', () => {
    const r = receiptFromInstruction(instruction());
    assert.equal(r.amountPaid, null);
    assert.deepEqual(r.warnings, []);
  });

  it('channel: a table code gets its display name, an unknown code is shown as itself', () => {
    for (const [code, name] of Object.entries(PAYMENT_CHANNELS)) {
      const r = receiptFromInstruction(instruction({ ...ONLINE, paymentChannel: code }));
      assert.equal(r.payment.channel, name);
      assert.notEqual(name, code);
    }
    for (const code of ['CHANNEL_Z_NEW', 'constructor', 'toString']) {
      const r = receiptFromInstruction(instruction({ ...ONLINE, paymentChannel: code }));
      assert.equal(r.payment.channel, code);
    }
  });

  it('customPrintContext keeps its lines; CRLF becomes LF; trailing blank lines go', () => {
    const r = receiptFromInstruction(
      instruction({ customPrintContext: 'Line one\r\n  Line two indented\r\n\r\nLine four\n\n' }),
    );
    assert.equal(r.customContent, 'Line one\n  Line two indented\n\nLine four');
    assert.equal(
      receiptFromInstruction(instruction({ customPrintContext: ' \n ' })).customContent,
      null,
    );
  });

  it('control characters in text fields are removed, each with a warning naming the field', () => {
    const r = receiptFromInstruction(
      instruction(
        {
          orderType: 3,
          deliveryFee: 0,
          packingFee: 0,
          productInfo: [
            { productName: 'Plain', price: 100, quantity: 1 },
            { productName: 'Ado\x1Bp\x00\x19bo', price: 100, quantity: 1 },
          ],
          userName: 'Ju\x07an',
          userPhone: '0917\x1D',
          userAddress: 'Rizal\x9B Ave',
          customPrintContext: 'Hello\x1B@\nWorld\x10\x14',
          discountType: 2,
          discountNo: 'PWD\x1B-1234',
          discounterName: 'Lo\x7Fla',
          discountValidityPeriod: '2028\x0C-01-01',
          paymentTransactionId: 'CASH\x1B1',
        },
        { pickUpNo: 'A\x1B1', takeoutNo: 'T\x1C&9' },
      ),
    );
    assert.equal(r.items[0]!.name, 'Plain');
    assert.equal(r.items[1]!.name, 'Adopbo');
    assert.deepEqual(r.takeout, { userName: 'Juan', userPhone: '0917', userAddress: 'Rizal Ave' });
    assert.equal(r.customContent, 'Hello@\nWorld');
    assert.equal(r.discount!.cardNo, '****1234'); // "PWD-1234" after cleaning: 8 characters
    assert.equal(r.discount!.discounterName, 'Lola');
    assert.equal(r.discount!.validity, '2028-01-01');
    assert.equal(r.payment.merchantOrderNo, 'CASH1');
    assert.equal(r.pickUpNo, 'A1');
    assert.equal(r.takeoutNo, 'T&9');
    const fields = [
      'order.productInfo[1].productName',
      'order.userName',
      'order.userPhone',
      'order.userAddress',
      'order.customPrintContext',
      'order.discountNo',
      'order.discounterName',
      'order.discountValidityPeriod',
      'order.paymentTransactionId',
      'pickUpNo',
      'takeoutNo',
    ];
    for (const field of fields) {
      assert.equal(
        r.warnings.filter((w) => w.startsWith(`${field}:`)).length,
        1,
        `${field} in ${JSON.stringify(r.warnings)}`,
      );
    }
    assert.ok(!r.warnings.some((w) => w.startsWith('order.productInfo[0]')));
    // Nothing else warned: the amounts add up (no paymentAmount) and no other field changed.
    assert.equal(r.warnings.length, fields.length);
    const everyText = JSON.stringify(r);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters
    assert.doesNotMatch(everyText.replace(/\\n/g, ''), /[\u0000-\u001F\u007F-\u009F]|\\u00/);
  });

  it('a name made only of control characters prints as ?', () => {
    const r = receiptFromInstruction(
      instruction({ productInfo: [{ productName: '\x1B\x1B', price: 100, quantity: 1 }] }),
    );
    assert.equal(r.items[0]!.name, '?');
    assert.match(r.warnings[0]!, /order\.productInfo\[0\]\.productName/);
  });
});

describe('receiptFromRecord: fixtures', () => {
  it('record-options-remark: variant name, options with prices, references, status, remark', () => {
    const r = fixtureRecord('record-options-remark');
    assert.equal(r.source, 'record');
    assert.equal(r.orderNo, 'O202611240999');
    assert.equal(r.banner, null);
    assert.equal(r.createTime, '2026-11-24 19:30:00');
    assert.equal(r.paymentTime, '2026-11-24 19:31:10');
    assert.deepEqual(r.items[0], {
      name: 'Milk tea (Large)', // variant 1: product (sku)
      quantity: 2,
      unitPrice: 15000, // price 12000 + optionAmount 3000 per unit
      lineTotal: 30000,
      options: [
        {
          name: 'Toppings',
          items: [
            { name: 'Pearls', price: 2000 },
            { name: 'Pudding', price: 1000 },
          ],
        },
        { name: 'Sugar', items: [{ name: 'Less sugar', price: 0 }] }, // a list of one name
      ],
      sku: 'P10-L', // skuNo, for the kitchen ticket
    });
    assert.deepEqual(r.items[1], {
      name: 'Beef tapa', // variant 2: the product name alone
      quantity: 1,
      unitPrice: 25500,
      lineTotal: 25500,
      options: [],
      sku: null, // skuNo null
    });
    assert.equal(r.subtotal, 55500);
    assert.deepEqual(adjustment(r, /service/i), {
      label: 'Service fee',
      amount: 2000,
      inTotal: true,
    });
    // The handling fee's bearer is not in the record: shown, not added. Zero fees print nothing.
    const handling = adjustment(r, /handling/i);
    assert.equal(handling.amount, 150);
    assert.equal(handling.inTotal, false);
    assert.equal(r.adjustments.length, 2);
    assert.ok(r.discount);
    assert.match(r.discount.label, /merchant/i); // record discountType 2
    assert.equal(r.discount.amount, -2000);
    assert.equal(r.total, 55500); // totalAmount; 55500 + 2000 - 2000 from the lines too
    assert.equal(r.amountPaid, 55500);
    assert.deepEqual(r.warnings, []);
    assert.deepEqual(r.references, [
      { label: 'Receipt no.', value: 'RCPT-000999' },
      { label: 'Serial no.', value: '999' },
      { label: 'Guests', value: '3' },
    ]);
    assert.match(r.payment.way!, /online/i);
    assert.match(r.payment.way!, /cpm/i); // payProductType 6
    assert.equal(r.payment.channel, PAYMENT_CHANNELS.CHANNEL_B_CPM); // channelName null: by code
    assert.equal(r.payment.status, 'Paid');
    assert.equal(
      r.remark,
      'Birthday celebration - please bring the cake with candles after the mains.\nNo peanuts for the guest at seat 2 (allergy!).',
    );
    assert.equal(r.pickUpNo, null);
    assert.equal(r.takeout, null);
  });

  it('record-refunded-empty-remark: lessVat negative, SC, refund references, Refunded', () => {
    const r = fixtureRecord('record-refunded-empty-remark');
    assert.equal(r.subtotal, 35700); // 23700 + 4 x 3000
    const lessVat = adjustment(r, /vat/i);
    assert.equal(lessVat.amount, -360);
    assert.equal(lessVat.inTotal, true);
    assert.match(r.discount!.label, /SC/); // record discountType 4
    assert.equal(r.discount!.amount, -5000);
    // 35700 - 5000 - 360 = 30340 = realAmount: no warning; total as the service gives it.
    assert.deepEqual(r.warnings, []);
    assert.equal(r.total, 35700);
    assert.equal(r.amountPaid, 30340);
    assert.deepEqual(r.references, [
      { label: 'Receipt no.', value: 'RCPT-000555' },
      { label: 'Serial no.', value: '555' },
      { label: 'Refund receipt no.', value: 'RF-000555' },
      { label: 'Refunded', value: '2026-11-23 12:40:00' },
    ]);
    assert.equal(r.payment.status, 'Refunded');
    assert.equal(r.payment.way, 'Offline'); // payProductType 0
    assert.equal(r.payment.channel, null);
    assert.equal(r.remark, null); // ""
  });

  it('record-cjk-options: CJK variant name, surcharge counts, channelName preferred', () => {
    const r = fixtureRecord('record-cjk-options');
    const item = r.items[0]!;
    assert.equal(item.name, '牛肉面 (大碗)');
    assert.equal(item.unitPrice, 20300); // 18800 + 1500
    assert.equal(item.lineTotal, 40600);
    assert.deepEqual(item.options, [
      { name: '辣度', items: [{ name: '微辣', price: 0 }] },
      { name: '加料', items: [{ name: '卤蛋', price: 1500 }] },
    ]);
    assert.deepEqual(adjustment(r, /surcharge/i), {
      label: 'Surcharge',
      amount: 1000,
      inTotal: true,
    });
    assert.equal(r.total, 41600);
    assert.deepEqual(r.warnings, []);
    assert.equal(r.payment.channel, 'Payment app G');
    assert.equal(r.remark, '不要香菜');
  });
});

describe('receiptFromRecord: hand-built', () => {
  const sku = (fields: Record<string, unknown>) => ({
    categoryNo: 'C1',
    productNo: 'P1',
    productName: 'Milk tea',
    variant: 1,
    skuName: 'Large',
    count: 1,
    price: 10000,
    optionAmount: 0,
    ...fields,
  });

  it('optionItemName given as a list is joined', () => {
    const r = receiptFromRecord(
      record({
        skuList: [
          sku({
            optionList: [
              { optionName: 'Ice', optionItemList: [{ optionItemName: ['Less', 'crushed'] }] },
            ],
          }),
        ],
      }),
    );
    assert.deepEqual(r.items[0]!.options, [
      { name: 'Ice', items: [{ name: 'Less, crushed', price: null }] },
    ]);
    assert.equal(r.items[0]!.name, 'Milk tea (Large)');
  });

  it('variant 1 whose SKU name equals the product name prints the name once', () => {
    const r = receiptFromRecord(record({ skuList: [sku({ skuName: 'Milk tea' })] }));
    assert.equal(r.items[0]!.name, 'Milk tea');
  });

  it('without a product name the SKU name is used', () => {
    const r = receiptFromRecord(record({ skuList: [sku({ productName: null, variant: 2 })] }));
    assert.equal(r.items[0]!.name, 'Large');
  });

  it('lessVat is negative whatever its sign; surcharge and fee', () => {
    const r = receiptFromRecord(
      record({ lessVat: -250, surcharge: 300, fee: 40, realAmount: 10050 }),
    );
    assert.equal(adjustment(r, /vat/i).amount, -250);
    assert.equal(adjustment(r, /surcharge/i).amount, 300);
    assert.equal(r.total, 10050); // 10000 - 250 + 300; the handling fee is not added
    assert.deepEqual(r.warnings, []);
  });

  it('amounts that do not add up: warning; realAmount kept as paid', () => {
    const r = receiptFromRecord(record({ realAmount: 12345 }));
    assert.equal(r.amountPaid, 12345);
    const w = mismatch(r);
    assert.equal(w.length, 1);
    assert.match(w[0]!, /12345/);
    assert.match(w[0]!, /10000/);
  });

  it('totalAmount given is printed as given', () => {
    const r = receiptFromRecord(record({ totalAmount: 11111 }));
    assert.equal(r.total, 11111);
  });

  it('an unknown channel code without a name is shown as itself', () => {
    const r = receiptFromRecord(record({ channelCode: 'CHANNEL_Q_NEW', channelName: null }));
    assert.equal(r.payment.channel, 'CHANNEL_Q_NEW');
  });

  it('payment status names follow order-api §3', () => {
    const names = [
      'Unpaid',
      'Paid',
      'Payment failed',
      'Refunding',
      'Refunded',
      'Refund pending',
      'Refund failed',
      'Cancel refund',
    ];
    names.forEach((name, i) => {
      assert.equal(receiptFromRecord(record({ paymentStatus: i + 1 })).payment.status, name);
    });
  });

  it('control characters in record fields are removed, each with a warning naming the field', () => {
    const r = receiptFromRecord(
      record({
        receiptNo: 'R\x1B1',
        remark: 'No\x1Bp onions\r\nplease\x07',
        skuList: [
          sku({
            productName: 'Milk\x1D tea',
            skuName: 'Lar\x00ge',
            optionList: [
              {
                optionName: 'Top\x10pings',
                optionItemList: [{ optionItemName: 'Pe\x9Barls', price: 100 }],
              },
            ],
          }),
        ],
      }),
    );
    assert.equal(r.items[0]!.name, 'Milk tea (Large)');
    assert.deepEqual(r.items[0]!.options, [
      { name: 'Toppings', items: [{ name: 'Pearls', price: 100 }] },
    ]);
    assert.equal(r.remark, 'Nop onions\nplease');
    assert.deepEqual(r.references[0], { label: 'Receipt no.', value: 'R1' });
    for (const field of [
      'skuList[0].productName',
      'skuList[0].skuName',
      'skuList[0].optionList[0].optionName',
      'skuList[0].optionList[0].optionItemList[0].optionItemName',
      'remark',
      'receiptNo',
    ]) {
      assert.equal(
        r.warnings.filter((w) => w.startsWith(`${field}:`)).length,
        1,
        `${field} in ${JSON.stringify(r.warnings)}`,
      );
    }
  });
});
