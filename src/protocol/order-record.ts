/**
 * Order records as the query operation returns them (order-api 2.5-2.8). Optional fields may be
 * null ("may be null" in the spec) or absent. The agent prints catch-up orders from these records,
 * and the reference service builds them from its stored orders.
 */
import { z } from 'zod';
import {
  ORDER_STATUS,
  ORDER_TYPE,
  PAY_PRODUCT_TYPE,
  PAYMENT_STATUS,
  RECORD_DISCOUNT_TYPE,
  SKU_VARIANT,
} from './codes.js';
import { timestamp } from './time.js';
import { code, int, refusingLookAlikes, typeError } from './validation.js';

const str = () => z.string({ error: typeError('a string') });
const optStr = () => str().nullish();
/** Amounts in records: integer cents; discounts may be expressed as negative adjustments. */
const money = () => int(-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
const optMoney = () => money().nullish();

/** 2.8. The spec lists optionItemName's type as a list but the sample carries a string: accept both. */
export const optionItemSchema = z.object({
  optionItemNo: optStr(),
  optionItemName: z
    .union([str(), z.array(str())], { error: 'must be a string or a list of strings' })
    .nullish(),
  price: optMoney(),
});

/** 2.7 */
export const optionSchema = z.object({
  optionNo: optStr(),
  optionName: optStr(),
  optionItemList: z.array(optionItemSchema).nullish(),
});

/** 2.6 */
export const skuSchema = z.object({
  categoryNo: str(),
  categoryName: optStr(),
  productNo: str(),
  productName: optStr(),
  variant: code(SKU_VARIANT),
  skuNo: optStr(),
  skuName: str(),
  count: int(0, Number.MAX_SAFE_INTEGER),
  price: money(),
  optionAmount: money(),
  optionList: z.array(optionSchema).nullish(),
});

/**
 * A record's orderInnerNo is the orderNo of its jobs: no look-alike of another (print-protocol
 * v1.2 §10). The spec gives it no length, so none is added here.
 */
const orderInnerNo = refusingLookAlikes(str().min(1, 'must not be empty'));

/** 2.5 */
export const orderRecordSchema = z.object({
  orderInnerNo,
  restaurantNo: str(),
  branchIdentifier: str(),
  orderSerialNumber: int(0, Number.MAX_SAFE_INTEGER),
  channelCode: optStr(),
  channelName: optStr(),
  payProductType: code(PAY_PRODUCT_TYPE).nullish(),
  discountAmount: optMoney(),
  fee: optMoney(),
  serviceFee: optMoney(),
  packageFee: optMoney(),
  deliveryFee: optMoney(),
  merchantDeliveryFee: optMoney(),
  realAmount: money(),
  totalAmount: optMoney(),
  orderStatus: code(ORDER_STATUS),
  paymentStatus: code(PAYMENT_STATUS),
  customerNum: int(0, Number.MAX_SAFE_INTEGER).nullish(),
  createTime: timestamp,
  completeTime: timestamp.nullish(),
  paymentTime: timestamp,
  refundTime: timestamp.nullish(),
  discountType: code(RECORD_DISCOUNT_TYPE).nullish(),
  receiptNo: optStr(),
  refundReceiptNo: optStr(),
  skuList: z.array(skuSchema, {
    error: typeError('an array'),
  }),
  remark: optStr(),
  lessVat: optMoney(),
  surcharge: optMoney(),
  /**
   * Extension beyond order-api 2.5 (issue 40, decision 227): the order's type as created (2.9),
   * which a record otherwise lacks, so catch-up routes an order as its instruction would. The
   * reference service sends it; a service that does not leaves the record's type unknown.
   */
  orderType: code(ORDER_TYPE).nullish(),
});

export type OptionItem = z.output<typeof optionItemSchema>;
export type SkuOption = z.output<typeof optionSchema>;
export type Sku = z.output<typeof skuSchema>;
/**
 * A record this agent already stored, read back to print it: the look-alike rule on orderInnerNo
 * is for what arrives (decision 238).
 */
export const storedOrderRecordSchema = orderRecordSchema.extend({
  orderInnerNo: str().min(1, 'must not be empty'),
});

export type OrderRecord = z.output<typeof orderRecordSchema>;
