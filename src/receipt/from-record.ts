/**
 * Adapter: an order record from the query API (order-api 2.5-2.8) to the receipt model. Records
 * carry SKUs with options and option items, fees under slightly different names, and the
 * record's own discount table; they carry no order type, pick-up code or takeout details.
 */
import {
  channelName,
  displayName,
  PAY_PRODUCT_TYPE,
  PAYMENT_STATUS,
  RECORD_DISCOUNT_TYPE,
} from '../protocol/codes.js';
import { multiplyCents, sumCents } from '../protocol/money.js';
import type { OrderRecord } from '../protocol/order-record.js';
import { FieldCleaner } from './fields.js';
import { computeTotal, pushAmount } from './from-instruction.js';
import type { Receipt, ReceiptAmount, ReceiptDiscount, ReceiptItem } from './model.js';

export function receiptFromRecord(record: OrderRecord): Receipt {
  const clean = new FieldCleaner();

  const items: ReceiptItem[] = record.skuList.map((sku, i) => {
    const at = `skuList[${i}]`;
    const product = clean.line(sku.productName, `${at}.productName`);
    const skuName = clean.line(sku.skuName, `${at}.skuName`);
    // variant 1: the dish has several specifications and skuName says which one.
    const name =
      product === null
        ? (skuName ?? '?')
        : sku.variant === 1 && skuName !== null && skuName !== product
          ? `${product} (${skuName})`
          : product;
    // Decision: price is the unit price of the dish, optionAmount the options' extra per unit.
    const unitPrice = sumCents(sku.price, sku.optionAmount);
    return {
      name,
      quantity: sku.count,
      unitPrice,
      lineTotal: multiplyCents(unitPrice, sku.count),
      options: (sku.optionList ?? []).map((opt, j) => ({
        name: clean.line(opt.optionName, `${at}.optionList[${j}].optionName`),
        items: (opt.optionItemList ?? []).map((item, k) => {
          const raw = Array.isArray(item.optionItemName)
            ? item.optionItemName.join(', ')
            : item.optionItemName;
          return {
            name:
              clean.line(raw, `${at}.optionList[${j}].optionItemList[${k}].optionItemName`) ?? '?',
            price: item.price ?? null,
          };
        }),
      })),
      sku: clean.line(sku.skuNo, `${at}.skuNo`),
    };
  });
  const subtotal = sumCents(...items.map((i) => i.lineTotal));

  const adjustments: ReceiptAmount[] = [];
  pushAmount(adjustments, 'Service fee', record.serviceFee, true);
  pushAmount(adjustments, 'Packing fee', record.packageFee, true);
  pushAmount(adjustments, 'Delivery fee', record.deliveryFee, true);
  pushAmount(adjustments, 'Delivery fee (store)', record.merchantDeliveryFee, false);
  // The record does not say who bears the handling fee: shown, not added.
  pushAmount(adjustments, 'Payment handling fee', record.fee, false);
  pushAmount(adjustments, 'Surcharge', record.surcharge, true);
  if (record.lessVat != null && record.lessVat !== 0) {
    adjustments.push({ label: 'Less VAT', amount: -Math.abs(record.lessVat), inTotal: true });
  }

  let discount: ReceiptDiscount | null = null;
  if (
    (record.discountAmount != null && record.discountAmount !== 0) ||
    record.discountType != null
  ) {
    discount = {
      label:
        record.discountType != null
          ? displayName(RECORD_DISCOUNT_TYPE, record.discountType)
          : 'Discount',
      amount: record.discountAmount ? -Math.abs(record.discountAmount) : 0,
      discounterName: null,
      cardNo: null,
      validity: null,
    };
  }

  const computed = computeTotal(subtotal, adjustments, discount);
  const total = record.totalAmount ?? computed;
  if (computed !== record.realAmount) {
    clean.warnings.push(
      `amounts do not add up: the lines give ${computed} cents, realAmount is ${record.realAmount} cents`,
    );
  }

  const references: Array<{ label: string; value: string }> = [];
  const ref = (label: string, value: string | number | null | undefined, field: string) => {
    const text = value == null ? null : clean.line(String(value), field);
    if (text !== null) references.push({ label, value: text });
  };
  ref('Receipt no.', record.receiptNo, 'receiptNo');
  ref('Serial no.', record.orderSerialNumber, 'orderSerialNumber');
  ref('Guests', record.customerNum, 'customerNum');
  ref('Refund receipt no.', record.refundReceiptNo, 'refundReceiptNo');
  ref('Refunded', record.refundTime, 'refundTime');

  // An empty channelName falls back to the code's name from the table.
  const channel =
    clean.line(record.channelName, 'channelName') ??
    (record.channelCode != null
      ? clean.line(channelName(record.channelCode), 'channelCode')
      : null);
  const payProduct = record.payProductType;
  return {
    source: 'record',
    orderNo: clean.line(record.orderInnerNo, 'orderInnerNo') ?? '?',
    banner: null,
    pickUpNo: null,
    takeoutNo: null,
    references,
    createTime: record.createTime,
    paymentTime: record.paymentTime,
    items,
    subtotal,
    adjustments,
    discount,
    total,
    amountPaid: record.realAmount,
    payment: {
      way:
        payProduct == null
          ? null
          : payProduct === 0
            ? 'Offline'
            : `Online (${displayName(PAY_PRODUCT_TYPE, payProduct)})`,
      channel,
      status: displayName(PAYMENT_STATUS, record.paymentStatus),
      transactionId: null,
      merchantOrderNo: null,
      platform: null,
      transactionCreated: null,
      transactionClosed: null,
    },
    takeout: null,
    customContent: null,
    remark: clean.multiline(record.remark, 'remark'),
    warnings: clean.warnings,
  };
}
