/**
 * Property test of the whole rendering (issue 3, "Done when"): for random valid orders and both
 * paper widths, no line exceeds the column count and every item name appears in full across its
 * wrapped lines; and text never becomes the drawer kick `1B 70`. The same holds for kitchen
 * tickets (issue 18) of random parts of those orders, for random roles.
 *
 * Orders are built from CREATE_LIMITS (order-api 2.9 and §8) and obey the conditional rules of
 * order-api 4.2; every generated instruction is validated with printInstructionSchema, so an
 * invalid generator fails loudly instead of testing nothing. Column counts are those of
 * escpos-notes "Paper and columns" (203 dpi, font A: 58 mm 32, 80 mm 48).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { PAYMENT_CHANNELS } from '../../src/protocol/codes.js';
import { CREATE_LIMITS } from '../../src/protocol/create-params.js';
import { printInstructionSchema } from '../../src/protocol/print-protocol.js';
import { charsetFor } from '../../src/receipt/charset.js';
import { receiptOptions } from '../../src/receipt/options.js';
import { getProfile, profileColumns } from '../../src/receipt/profile.js';
import { renderReceipt } from '../../src/receipt/render.js';
import { displayWidth } from '../../src/receipt/width.js';

const L = CREATE_LIMITS;
const NUM_RUNS = 200;

/** Profiles under test and their font A columns, from escpos-notes "Paper and columns". */
const PROFILES = [
  { id: 'generic-58mm', columns: 32 },
  { id: 'generic-80mm', columns: 48 },
  { id: 'pos-5890-gb18030', columns: 32 },
] as const;

// ---------------------------------------------------------------------------------------------
// Text arbitraries

const cp = (min: number, max: number) =>
  fc.integer({ min, max }).map((c) => String.fromCodePoint(c));
const ALNUM = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'];
const ACCENTED = [...'éèàçñüöÉÑÜaeiou'];

const asciiWord = fc.string({ unit: fc.constantFrom(...ALNUM), minLength: 1, maxLength: 10 });
/** A word longer than any line (no break opportunity inside). */
const longWord = fc.string({ unit: fc.constantFrom(...ALNUM), minLength: 33, maxLength: 50 });
/** CJK unified ideographs of the GB2312/GBK range: printable on the CJK profile. */
const cjkRun = fc.string({ unit: cp(0x4e00, 0x9fa5), minLength: 1, maxLength: 20 });
const emoji = cp(0x1f600, 0x1f64f);
const accentedWord = fc.string({ unit: fc.constantFrom(...ACCENTED), minLength: 1, maxLength: 10 });
/** Characters the charset maps (currency to ISO code, typography to ASCII) or keeps. */
const misc = fc.constantFrom('₱', '₱5', '“', '”', '–', '…', '&', '(', ')', '#', '€', '½', 'Ａ');

const token = fc.oneof(
  { weight: 5, arbitrary: asciiWord },
  { weight: 1, arbitrary: longWord },
  { weight: 3, arbitrary: cjkRun },
  { weight: 1, arbitrary: emoji },
  { weight: 2, arbitrary: accentedWord },
  { weight: 1, arbitrary: misc },
);

/** Tokens joined by a space or by nothing (CJK next to Latin), at most `max` code points. */
const textOf = (max: number, maxTokens = 8) =>
  fc
    .array(fc.tuple(token, fc.constantFrom(' ', ' ', ' ', '')), {
      minLength: 1,
      maxLength: maxTokens,
    })
    .map((parts) => {
      const joined = parts.map(([t, sep], i) => (i === 0 ? t : sep + t)).join('');
      return [...joined].slice(0, max).join('');
    });

const productName = textOf(L.productName.max);
const intIn = (r: { min: number; max: number }) =>
  fc.oneof(fc.constant(r.min), fc.constant(r.max), fc.integer(r));
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const fee = opt(intIn(L.fee));
const amount = opt(intIn(L.amount));
const timestamp = fc
  .date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2035-12-31T23:59:59Z') })
  .filter((d) => !Number.isNaN(d.getTime()))
  .map((d) => d.toISOString().slice(0, 19).replace('T', ' '));

// ---------------------------------------------------------------------------------------------
// A valid print instruction (print-protocol §4 with create parameters of order-api 2.9 / 4.2)

const instructionArb = fc
  .record({
    orderNo: fc.string({ unit: fc.constantFrom(...ALNUM), minLength: 1, maxLength: 64 }),
    products: fc.array(
      fc.record({
        productName,
        price: intIn(L.productPrice),
        quantity: intIn(L.productQuantity),
      }),
      // size 'max': lengths spread over the whole 1..50 range, not only small arrays.
      { minLength: L.productInfo.min, maxLength: L.productInfo.max, size: 'max' },
    ),
    orderType: fc.constantFrom(1, 2, 3),
    paymentWay: fc.constantFrom(1, 2, '1', '2'),
    serviceFee: fee,
    merchantDeliveryFee: fee,
    deliveryFee: fee,
    packingFee: fee,
    requiredDelivery: intIn(L.fee),
    requiredPacking: intIn(L.fee),
    pickUpNo: opt(textOf(L.pickUpNum.max)),
    pickUpNum: opt(fc.oneof(fc.constant(''), textOf(L.pickUpNum.max))),
    takeoutNo: textOf(50),
    userName: opt(textOf(L.userName.max)),
    userPhone: opt(
      fc.string({ unit: fc.constantFrom(...'0123456789 +-'), minLength: 1, maxLength: 20 }),
    ),
    userAddress: opt(textOf(L.userAddress.max, 30)),
    customPrintContext: opt(fc.array(fc.oneof(fc.constant(''), textOf(300, 30)), { maxLength: 5 })),
    paymentChannel: fc.oneof(
      fc.constantFrom(...Object.keys(PAYMENT_CHANNELS)),
      fc.string({ unit: fc.constantFrom(...ALNUM, '_'), minLength: 1, maxLength: 60 }),
    ),
    paymentTransactionId: fc.string({
      unit: fc.constantFrom(...ALNUM, '-'),
      minLength: 1,
      maxLength: 50,
    }),
    paymentAmount: amount,
    discountAmount: amount,
    discountType: opt(fc.constantFrom(1, 2, 4, '1', '2', '4')),
    promoDiscountType: opt(fc.constantFrom(1, 2)),
    discountNo: fc.string({ unit: fc.constantFrom(...ALNUM, '-'), minLength: 1, maxLength: 40 }),
    discounterName: textOf(L.discounterName.max),
    discountValidityPeriod: fc.constantFrom('2028-06-30', '2027-01-01'),
    transactionFee: amount,
    transactionFeeType: opt(fc.constantFrom(1, 2, '1', '2')),
    transactionId: opt(fc.string({ unit: fc.constantFrom(...ALNUM), minLength: 1, maxLength: 50 })),
    paymentPlatform: opt(textOf(60)),
    transactionCreateTime: timestamp,
    transactionReturnTime: timestamp,
  })
  .map((g) => {
    const takeout = g.orderType === 3;
    const online = Number(g.paymentWay) === 1;
    const discountType = g.discountType === undefined ? undefined : Number(g.discountType);
    const order: Record<string, unknown> = {
      productInfo: g.products,
      orderType: g.orderType,
      paymentWay: g.paymentWay,
      paymentTransactionId: g.paymentTransactionId,
      serviceFee: g.serviceFee,
      merchantDeliveryFee: g.merchantDeliveryFee,
      // 4.2 rule 2: takeout orders carry deliveryFee and packingFee.
      deliveryFee: takeout ? (g.deliveryFee ?? g.requiredDelivery) : g.deliveryFee,
      packingFee: takeout ? (g.packingFee ?? g.requiredPacking) : g.packingFee,
      userName: g.userName,
      userPhone: g.userPhone,
      userAddress: g.userAddress,
      customPrintContext: g.customPrintContext?.join('\n'),
      paymentAmount: g.paymentAmount,
      discountAmount: g.discountAmount,
      discountType: g.discountType,
      transactionFee: g.transactionFee,
      transactionFeeType: g.transactionFeeType,
      transactionId: g.transactionId,
      paymentPlatform: g.paymentPlatform,
    };
    if (g.orderType === 2) order.pickUpNum = g.pickUpNum;
    // 4.2 rule 3: online payment carries the channel and both transaction times.
    if (online) {
      order.paymentChannel = g.paymentChannel;
      order.transactionCreateTime = g.transactionCreateTime;
      order.transactionReturnTime = g.transactionReturnTime;
    }
    // 4.2 rule 4: PWD and SC carry the card number and name; PWD also the validity.
    if (discountType === 2 || discountType === 4) {
      order.discountNo = g.discountNo;
      order.discounterName = g.discounterName;
      if (discountType === 2) order.discountValidityPeriod = g.discountValidityPeriod;
    }
    if (discountType === 1) order.promoDiscountType = g.promoDiscountType;
    return printInstructionSchema.parse({
      jobId: 'P-PROP-1',
      orderNo: g.orderNo,
      pickUpNo: g.orderType === 2 ? (g.pickUpNo ?? null) : null,
      takeoutNo: takeout ? g.takeoutNo : null,
      createTime: '2026-11-25 12:00:00',
      order,
    });
  });

const optionsArb = fc
  .record({
    header: fc.array(textOf(80, 12), { minLength: 1, maxLength: 3 }),
    footer: fc.array(textOf(80, 12), { maxLength: 2 }),
  })
  .map((o) => receiptOptions({ ...o, qr: true }));

// ---------------------------------------------------------------------------------------------

const squeeze = (s: string) => s.replace(/\s+/g, '');

/** The text-twin lines between the rule after the order references and the Subtotal row. */
function itemRegion(lines: readonly string[], columns: number): string[] {
  const orderNo = lines.findIndex((l) => l.startsWith('Order no.'));
  assert.ok(orderNo >= 0, 'an "Order no." row');
  const rule = '-'.repeat(columns);
  const start = lines.findIndex((l, i) => i > orderNo && l === rule);
  assert.ok(start > orderNo, 'a rule after the references');
  const end = lines.findIndex((l, i) => i > start && l.startsWith('Subtotal'));
  assert.ok(end > start, 'a Subtotal row after the items');
  return lines.slice(start + 1, end);
}

function hasDrawerKick(bytes: Uint8Array): boolean {
  for (let i = 0; i + 1 < bytes.length; i++) {
    if (bytes[i] === 0x1b && bytes[i + 1] === 0x70) return true;
  }
  return false;
}

describe('layout properties over random valid orders', () => {
  for (const { id, columns } of PROFILES) {
    const profile = getProfile(id);
    const charset = charsetFor(profile);

    it(`${id}: ${columns} columns from the profile`, () => {
      assert.equal(profileColumns(profile), columns);
    });

    it(`${id}: no line wider than ${columns} columns, every name in full and in order, no drawer kick`, () => {
      fc.assert(
        fc.property(instructionArb, optionsArb, (instruction, options) => {
          const rendered = renderReceipt({
            source: { kind: 'instruction', instruction },
            profile,
            options,
          });
          assert.equal(rendered.layout.columns, columns);

          // (a) every printed line fits, counting double-width styles on the layout commands...
          let qrs = 0;
          for (const command of rendered.layout.commands) {
            if (command.kind === 'qr') {
              qrs++;
              assert.equal(command.data, instruction.orderNo);
            }
            if (command.kind !== 'line') continue;
            const width = command.segments.reduce(
              (sum, s) => sum + displayWidth(s.text) * s.style.width,
              0,
            );
            assert.ok(
              width <= columns,
              `layout line ${JSON.stringify(command.segments.map((s) => s.text).join(''))} is ${width} columns`,
            );
          }
          assert.equal(qrs, 1);
          // ...and on the text twin (the QR placeholder is not printed text).
          const lines = rendered.text.replace(/\n$/, '').split('\n');
          for (const line of lines) {
            if (line.startsWith('[QR: ')) continue;
            assert.ok(
              displayWidth(line) <= columns,
              `text line ${JSON.stringify(line)} is ${displayWidth(line)} columns`,
            );
          }

          // (b) each item's printable name, whitespace aside, in the items block, in order.
          const region = squeeze(itemRegion(lines, columns).join('\n'));
          let from = 0;
          for (const [i, product] of instruction.order.productInfo.entries()) {
            const printable = squeeze(charset.map(product.productName).text);
            assert.ok(printable.length > 0);
            const at = region.indexOf(printable, from);
            assert.ok(at >= 0, `item ${i} ${JSON.stringify(printable)} not found in order`);
            from = at + printable.length;
          }

          // (c) no text ever turns into the drawer kick.
          assert.equal(hasDrawerKick(rendered.bytes), false);
        }),
        { numRuns: NUM_RUNS },
      );
    });

    it(`${id}: kitchen tickets fit ${columns} columns, list the chosen names in full and in order`, () => {
      const ticketArb = instructionArb.chain((instruction) =>
        fc.record({
          instruction: fc.constant(instruction),
          items: fc.option(
            fc.uniqueArray(fc.integer({ min: 0, max: instruction.order.productInfo.length - 1 }), {
              minLength: 1,
            }),
            { nil: null },
          ),
          role: fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/),
          placedMinutesAgo: fc.option(fc.integer({ min: 0, max: 10_000 }), { nil: null }),
        }),
      );
      fc.assert(
        fc.property(ticketArb, ({ instruction, items, role, placedMinutesAgo }) => {
          const rendered = renderReceipt({
            source: { kind: 'instruction', instruction },
            profile,
            options: receiptOptions(),
            document: { layout: 'kitchen', role, items, placedMinutesAgo },
          });
          for (const command of rendered.layout.commands) {
            assert.notEqual(command.kind, 'qr');
            if (command.kind !== 'line') continue;
            const width = command.segments.reduce(
              (sum, s) => sum + displayWidth(s.text) * s.style.width,
              0,
            );
            assert.ok(width <= columns, `layout line is ${width} columns`);
          }
          for (const line of rendered.text.split('\n'))
            assert.ok(displayWidth(line) <= columns, `text line ${JSON.stringify(line)}`);

          // Names are the only tall, single-width text of a kitchen ticket.
          const names = squeeze(
            rendered.layout.commands
              .flatMap((c) => (c.kind === 'line' ? c.segments : []))
              .filter((s) => s.style.height === 2 && s.style.width === 1)
              .map((s) => s.text)
              .join(''),
          );
          const chosen = new Set(items ?? instruction.order.productInfo.map((_, i) => i));
          let from = 0;
          for (const [i, product] of instruction.order.productInfo.entries()) {
            if (!chosen.has(i)) continue;
            const printable = squeeze(charset.map(product.productName).text);
            const at = names.indexOf(printable, from);
            assert.ok(at >= 0, `item ${i} ${JSON.stringify(printable)} not found in order`);
            from = at + printable.length;
          }
          assert.equal(hasDrawerKick(rendered.bytes), false);
        }),
        { numRuns: NUM_RUNS },
      );
    });
  }
});
