/**
 * The code tables of the order API, with display names for receipts and logs. Keys are the wire
 * values; the section of order-api.md each table comes from is named beside it.
 */

/** order-api §3 orderStatus. */
export const ORDER_STATUS = {
  1: 'Pending acceptance',
  2: 'Accepted',
  3: 'Completed',
  4: 'Cancelled',
} as const;

/** order-api §3 paymentStatus. */
export const PAYMENT_STATUS = {
  1: 'Unpaid',
  2: 'Paid',
  3: 'Payment failed',
  4: 'Refunding',
  5: 'Refunded',
  6: 'Refund pending',
  7: 'Refund failed',
  8: 'Cancel refund',
} as const;

/** order-api 2.5 payProductType. */
export const PAY_PRODUCT_TYPE = {
  0: 'Offline',
  1: 'Payment link',
  2: 'Bill payment',
  3: 'Bank transfer',
  4: 'Static QR',
  5: 'Dynamic QR',
  6: 'CPM',
  7: 'Balance',
} as const;

/** order-api 2.9 discountType of the create parameters (sent as a string). */
export const CREATE_DISCOUNT_TYPE = {
  1: 'Promo discount',
  2: 'PWD discount',
  4: 'SC discount',
} as const;

/** order-api 2.5 discountType of an order record: a different table from the create one. */
export const RECORD_DISCOUNT_TYPE = {
  1: 'PWD discount',
  2: 'Merchant discount',
  3: 'PWD discount per person',
  4: 'SC discount',
  5: 'SC discount per person',
  6: 'Coupon',
} as const;

/** order-api 2.9 promoDiscountType. */
export const PROMO_DISCOUNT_TYPE = {
  1: 'Whole order discount',
  2: 'Product discount',
} as const;

/** order-api 2.9 orderType. */
export const ORDER_TYPE = {
  1: 'Table order',
  2: 'Queue order',
  3: 'Takeout order',
} as const;

/** order-api 2.9 paymentWay. */
export const PAYMENT_WAY = {
  1: 'Online',
  2: 'Offline',
} as const;

/** order-api 2.9 transactionFeeType: who bears the online transaction fee. */
export const TRANSACTION_FEE_TYPE = {
  1: 'Merchant',
  2: 'Customer',
} as const;

/** order-api 2.6 variant (multiple specifications). */
export const SKU_VARIANT = {
  1: 'Yes',
  2: 'No',
} as const;

/**
 * order-api 4.3 payment channel codes with a printable name. The spec lists Bank A twice with the
 * same code; it is one channel. Codes outside this table are accepted (new channels appear
 * before documents are updated) and shown by their code.
 */
export const PAYMENT_CHANNELS = {
  CHANNEL_A_DYNAMIC_QR: 'National QR (dynamic)',
  CHANNEL_B_URL: 'E-wallet B (web)',
  CHANNEL_C_URL: 'Ride-hailing wallet (web)',
  CHANNEL_D_URL: 'Bank A (web)',
  CHANNEL_E_URL: 'Bank B (web)',
  CHANNEL_F_URL: 'E-wallet F (web)',
  CHANNEL_G_URL: 'Payment app G (web)',
  CHANNEL_B_DYNAMIC_QR: 'E-wallet B (dynamic QR)',
  CHANNEL_B_CPM: 'E-wallet B (scan QR)',
} as const;

export type OrderType = keyof typeof ORDER_TYPE;
export type PaymentWay = keyof typeof PAYMENT_WAY;
export type CreateDiscountType = keyof typeof CREATE_DISCOUNT_TYPE;
export type RecordDiscountType = keyof typeof RECORD_DISCOUNT_TYPE;
export type PaymentChannelCode = keyof typeof PAYMENT_CHANNELS;

/** Named constants for the values the rules of order-api 4.2 branch on. */
export const ORDER_TYPE_TABLE = 1;
export const ORDER_TYPE_QUEUE = 2;
export const ORDER_TYPE_TAKEOUT = 3;
export const PAYMENT_WAY_ONLINE = 1;
export const PAYMENT_WAY_OFFLINE = 2;
export const DISCOUNT_PROMO = 1;
export const DISCOUNT_PWD = 2;
export const DISCOUNT_SC = 4;

/** Display name of a code, or `Unknown (n)` for a value outside the table. */
export function displayName(table: Readonly<Record<number, string>>, value: number): string {
  return table[value] ?? `Unknown (${value})`;
}

/** Display name of a payment channel; an unknown code is shown as itself. */
export function channelName(code: string): string {
  // Own keys only: a code like `constructor` must not resolve to an Object.prototype member.
  return Object.hasOwn(PAYMENT_CHANNELS, code)
    ? (PAYMENT_CHANNELS as Record<string, string>)[code]!
    : code;
}
