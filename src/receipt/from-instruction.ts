/**
 * Adapter: a print instruction (print-protocol §4: create parameters of order-api 2.9 plus
 * orderNo, pickUpNo, takeoutNo, createTime) to the receipt model.
 */
import {
  CREATE_DISCOUNT_TYPE,
  channelName,
  DISCOUNT_PROMO,
  displayName,
  ORDER_TYPE_QUEUE,
  ORDER_TYPE_TABLE,
  ORDER_TYPE_TAKEOUT,
  PAYMENT_WAY,
  PROMO_DISCOUNT_TYPE,
} from '../protocol/codes.js';
import { multiplyCents, sumCents } from '../protocol/money.js';
import type { PrintInstruction } from '../protocol/print-protocol.js';
import { FieldCleaner } from './fields.js';
import { maskCardNo, type Receipt, type ReceiptAmount, type ReceiptDiscount } from './model.js';

export const ORDER_TYPE_BANNERS: Readonly<Record<number, string>> = {
  [ORDER_TYPE_TABLE]: 'TABLE ORDER',
  [ORDER_TYPE_QUEUE]: 'QUEUE ORDER',
  [ORDER_TYPE_TAKEOUT]: 'TAKEOUT ORDER',
};

/** What a promo discount applies to, short enough for a 58 mm line (promoDiscountType). */
const PROMO_SCOPES: Readonly<Record<number, string>> = { 1: 'whole order', 2: 'products' };

const TRANSACTION_FEE_LABELS: Readonly<Record<number, string>> = {
  1: 'Transaction fee (store)',
  2: 'Transaction fee',
};

/** Adds a fee line when the amount is given and not zero. */
export function pushAmount(
  list: ReceiptAmount[],
  label: string,
  amount: number | null | undefined,
  inTotal: boolean,
): void {
  if (amount != null && amount !== 0) list.push({ label, amount, inTotal });
}

/** The customer's total computed from the lines: subtotal, fees they pay, minus the discount. */
export function computeTotal(
  subtotal: number,
  adjustments: readonly ReceiptAmount[],
  discount: ReceiptDiscount | null,
): number {
  return sumCents(
    subtotal,
    ...adjustments.filter((a) => a.inTotal).map((a) => a.amount),
    discount?.amount,
  );
}

export function receiptFromInstruction(instruction: PrintInstruction): Receipt {
  const o = instruction.order;
  const clean = new FieldCleaner();

  const items = o.productInfo.map((p, i) => ({
    name: clean.line(p.productName, `order.productInfo[${i}].productName`) ?? '?',
    quantity: p.quantity,
    unitPrice: p.price,
    lineTotal: multiplyCents(p.price, p.quantity),
    options: [],
    // Create parameters carry no SKU (order-api 2.9).
    sku: null,
  }));
  const subtotal = sumCents(...items.map((i) => i.lineTotal));

  const adjustments: ReceiptAmount[] = [];
  pushAmount(adjustments, 'Service fee', o.serviceFee, true);
  pushAmount(adjustments, 'Packing fee', o.packingFee, true);
  pushAmount(adjustments, 'Delivery fee', o.deliveryFee, true);
  pushAmount(adjustments, 'Delivery fee (store)', o.merchantDeliveryFee, false);
  if (o.transactionFee != null && o.transactionFee !== 0) {
    // Only a fee the customer bears (transactionFeeType 2) is part of what they pay.
    const label =
      (o.transactionFeeType != null && TRANSACTION_FEE_LABELS[o.transactionFeeType]) ||
      'Transaction fee (bearer not given)';
    adjustments.push({ label, amount: o.transactionFee, inTotal: o.transactionFeeType === 2 });
  }

  let discount: ReceiptDiscount | null = null;
  if ((o.discountAmount != null && o.discountAmount !== 0) || o.discountType != null) {
    let label =
      o.discountType != null ? displayName(CREATE_DISCOUNT_TYPE, o.discountType) : 'Discount';
    if (o.discountType === DISCOUNT_PROMO && o.promoDiscountType != null) {
      label += ` (${PROMO_SCOPES[o.promoDiscountType] ?? displayName(PROMO_DISCOUNT_TYPE, o.promoDiscountType)})`;
    }
    const cardNo = clean.line(o.discountNo, 'order.discountNo');
    discount = {
      label,
      amount: o.discountAmount ? -o.discountAmount : 0,
      discounterName: clean.line(o.discounterName, 'order.discounterName'),
      cardNo: cardNo === null ? null : maskCardNo(cardNo),
      validity: clean.line(o.discountValidityPeriod, 'order.discountValidityPeriod'),
    };
  }

  const total = computeTotal(subtotal, adjustments, discount);
  const amountPaid = o.paymentAmount ?? null;
  if (amountPaid !== null && amountPaid !== total) {
    clean.warnings.push(
      `amounts do not add up: the lines give ${total} cents, paymentAmount is ${amountPaid} cents`,
    );
  }

  const isTakeout = o.orderType === ORDER_TYPE_TAKEOUT;
  const takeout = {
    userName: clean.line(o.userName, 'order.userName'),
    userPhone: clean.line(o.userPhone, 'order.userPhone'),
    userAddress: clean.line(o.userAddress, 'order.userAddress'),
  };
  const hasTakeout =
    isTakeout ||
    takeout.userName !== null ||
    takeout.userPhone !== null ||
    takeout.userAddress !== null;
  const pickUpNum = o.pickUpNum === '' ? null : o.pickUpNum;

  return {
    source: 'instruction',
    orderNo: clean.line(instruction.orderNo, 'orderNo') ?? '?',
    banner: ORDER_TYPE_BANNERS[o.orderType] ?? null,
    pickUpNo: clean.line(instruction.pickUpNo ?? pickUpNum, 'pickUpNo'),
    takeoutNo: clean.line(instruction.takeoutNo, 'takeoutNo'),
    references: [],
    createTime: instruction.createTime,
    paymentTime: o.transactionReturnTime ?? null,
    items,
    subtotal,
    adjustments,
    discount,
    total,
    amountPaid,
    payment: {
      way: displayName(PAYMENT_WAY, o.paymentWay),
      channel:
        o.paymentChannel != null
          ? clean.line(channelName(o.paymentChannel), 'order.paymentChannel')
          : null,
      status: null,
      transactionId: clean.line(o.transactionId, 'order.transactionId'),
      merchantOrderNo: clean.line(o.paymentTransactionId, 'order.paymentTransactionId'),
      platform: clean.line(o.paymentPlatform, 'order.paymentPlatform'),
      transactionCreated: o.transactionCreateTime ?? null,
      transactionClosed: o.transactionReturnTime ?? null,
    },
    takeout: hasTakeout ? takeout : null,
    customContent: clean.multiline(o.customPrintContext, 'order.customPrintContext'),
    remark: null,
    warnings: clean.warnings,
  };
}
