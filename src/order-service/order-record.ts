/**
 * Builds the order records of the query result (order-api 2.5-2.8) from a stored order. The
 * stored order keeps the create parameters exactly as signed; they are re-validated here with the
 * shared schema, which also normalizes the tolerated sample quirks (codes sent as strings).
 */
import {
  type CreateParams,
  channelName,
  DISCOUNT_PROMO,
  DISCOUNT_PWD,
  DISCOUNT_SC,
  multiplyCents,
  type OrderRecord,
  PAYMENT_WAY_OFFLINE,
  storedCreateParamsSchema,
  sumCents,
} from '../protocol/index.js';
import type { RegisteredStore } from './config.js';
import type { StoredOrder } from './store.js';

/** The create table's discountType (2.9) mapped onto the record table's (2.5), which differ. */
const RECORD_DISCOUNT: Record<number, number> = {
  [DISCOUNT_PROMO]: 2, // merchant custom discount
  [DISCOUNT_PWD]: 1, // pwd
  [DISCOUNT_SC]: 4, // sc discount entire order
};

export function storedParams(order: StoredOrder): CreateParams {
  // Validated before it was stored, so a failure here is a corrupted database: let it throw. An
  // order stored before v1.2 may hold a look-alike paymentTransactionId (§10): still its record.
  return storedCreateParamsSchema.parse(JSON.parse(order.rawParam));
}

export function toOrderRecord(order: StoredOrder, store: RegisteredStore): OrderRecord {
  const p = storedParams(order);
  const goods = sumCents(...p.productInfo.map((x) => multiplyCents(x.price, x.quantity)));
  const totalAmount = sumCents(goods, p.serviceFee, p.packingFee, p.deliveryFee);
  // realAmount is what was paid: the merchant's paymentAmount, else the total less the discount.
  const realAmount = p.paymentAmount ?? Math.max(0, totalAmount - (p.discountAmount ?? 0));
  return {
    orderInnerNo: order.orderNo,
    restaurantNo: store.restaurantNo,
    branchIdentifier: store.branchIdentifier,
    orderSerialNumber: order.serial,
    channelCode: p.paymentChannel ?? null,
    channelName: p.paymentChannel ? channelName(p.paymentChannel) : null,
    payProductType: p.paymentWay === PAYMENT_WAY_OFFLINE ? 0 : null,
    discountAmount: p.discountAmount ?? null,
    fee: p.transactionFee ?? null,
    serviceFee: p.serviceFee ?? null,
    packageFee: p.packingFee ?? null,
    deliveryFee: p.deliveryFee ?? null,
    merchantDeliveryFee: p.merchantDeliveryFee ?? null,
    realAmount,
    totalAmount,
    orderStatus: order.orderStatus,
    paymentStatus: order.paymentStatus,
    customerNum: null,
    createTime: order.createTime,
    completeTime: null,
    paymentTime: p.transactionReturnTime ?? order.createTime,
    refundTime: null,
    discountType: p.discountType != null ? (RECORD_DISCOUNT[p.discountType] ?? null) : null,
    receiptNo: order.receiptNo,
    refundReceiptNo: null,
    skuList: p.productInfo.map((x, i) => ({
      categoryNo: 'C0',
      productNo: String(i + 1),
      productName: x.productName,
      variant: 2,
      skuName: x.productName,
      count: x.quantity,
      price: x.price,
      optionAmount: 0,
      optionList: [],
    })),
    remark: '',
    orderType: p.orderType,
  };
}
