/**
 * The demo's sample orders: what a small Filipino restaurant's POS would send to the order API
 * (order-api 2.9, 4.2) after the customer paid. Between them they show the three order types,
 * cash and online payment with a channel, a service fee, delivery and packing fees, a fee the
 * customer bears and one the store bears, and a promo and a senior-citizen discount.
 *
 * Amounts are cents (order-api conventions); `paymentAmount` is computed from the lines the same
 * way the receipt adds them up, so every receipt's TOTAL equals the amount paid.
 */
import type { CreateParamsInput } from '../protocol/create-params.js';
import { multiplyCents, sumCents } from '../protocol/money.js';
import { formatTimestamp } from '../protocol/time.js';

export interface SampleOrder {
  /** For people: `table order, cash`. */
  label: string;
  param: CreateParamsInput;
}

type Item = { productName: string; price: number; quantity: number };

interface Template {
  label: string;
  items: Item[];
  /** Everything but productInfo, paymentAmount and the per-order ids and times. */
  fields: Omit<
    CreateParamsInput,
    | 'productInfo'
    | 'paymentAmount'
    | 'paymentTransactionId'
    | 'transactionId'
    | 'transactionCreateTime'
    | 'transactionReturnTime'
  >;
  online: boolean;
}

const TEMPLATES: readonly Template[] = [
  {
    label: 'table order, paid in cash, 10% service fee',
    items: [
      { productName: 'Sinigang na Baboy', price: 34_500, quantity: 1 },
      { productName: 'Chicken Inasal', price: 22_900, quantity: 2 },
      { productName: 'Garlic Rice', price: 4_500, quantity: 3 },
      { productName: 'Calamansi Juice', price: 6_500, quantity: 2 },
    ],
    fields: {
      orderType: 1,
      paymentWay: '2',
      serviceFee: 10_680,
      customPrintContext: 'Table 12 - 3 guests',
    },
    online: false,
  },
  {
    label: 'queue order, e-wallet QR, 10% promo',
    items: [
      { productName: 'Pork Sisig', price: 26_500, quantity: 1 },
      { productName: 'Pancit Bihon', price: 21_000, quantity: 1 },
      { productName: 'Halo-halo', price: 12_500, quantity: 2 },
      { productName: 'Iced Tea (large)', price: 7_500, quantity: 1 },
    ],
    fields: {
      orderType: 2,
      paymentWay: '1',
      // Empty: the service generates the pick-up code (order-api 4.2 rule 5).
      pickUpNum: '',
      paymentChannel: 'CHANNEL_B_DYNAMIC_QR',
      paymentPlatform: 'PayPlatform',
      discountType: '1',
      promoDiscountType: 1,
      discountAmount: 8_000,
      transactionFee: 600,
      transactionFeeType: 1,
      customPrintContext: 'Please wait for your code on the screen.',
    },
    online: true,
  },
  {
    label: 'takeout delivery, national QR, senior citizen discount',
    items: [
      { productName: 'Lechon Kawali', price: 32_000, quantity: 1 },
      { productName: 'Kare-Kare', price: 38_500, quantity: 1 },
      { productName: 'Plain Rice', price: 4_000, quantity: 2 },
      { productName: 'Buko Pandan', price: 9_500, quantity: 1 },
    ],
    fields: {
      orderType: 3,
      paymentWay: '1',
      deliveryFee: 4_900,
      packingFee: 1_500,
      merchantDeliveryFee: 2_000,
      userName: 'Maria Clara Santos',
      userPhone: '+63 917 555 0142',
      userAddress: 'Unit 12B, Green Residences, 1234 Taft Avenue, Malate, Manila',
      paymentChannel: 'CHANNEL_A_DYNAMIC_QR',
      paymentPlatform: 'PayPlatform',
      discountType: '4',
      discountAmount: 8_800,
      discountNo: 'SC-778899001',
      discounterName: 'Jose Rizal Mercado',
      transactionFee: 1_190,
      transactionFeeType: 2,
    },
    online: true,
  },
];

/** The order the printed `curl` command creates: a quick breakfast at the counter. */
const CURL_TEMPLATE: Template = {
  label: 'queue order, paid in cash',
  items: [
    { productName: 'Tapsilog', price: 18_500, quantity: 1 },
    { productName: 'Kape Barako', price: 7_000, quantity: 1 },
  ],
  fields: {
    orderType: 2,
    paymentWay: '2',
    pickUpNum: '',
    customPrintContext: 'Created with curl',
  },
  online: false,
};

/** What the customer pays, added up like the receipt does (receipt/from-instruction.ts). */
export function amountPaid(param: CreateParamsInput): number {
  const subtotal = sumCents(...param.productInfo.map((p) => multiplyCents(p.price, p.quantity)));
  const customerFee = Number(param.transactionFeeType) === 2 ? param.transactionFee : 0;
  return sumCents(
    subtotal,
    param.serviceFee,
    param.packingFee,
    param.deliveryFee,
    customerFee,
    param.discountAmount == null ? 0 : -param.discountAmount,
  );
}

function build(template: Template, id: string, now: Date, timeZone?: string): SampleOrder {
  const param: CreateParamsInput = {
    productInfo: template.items.map((item) => ({ ...item })),
    ...template.fields,
    paymentTransactionId: `POS-${id}`,
  };
  if (template.online) {
    // The customer scanned, paid, and the payment platform answered a few seconds later.
    param.transactionId = `TXN-${id}`;
    param.transactionCreateTime = formatTimestamp(new Date(now.getTime() - 45_000), timeZone);
    param.transactionReturnTime = formatTimestamp(new Date(now.getTime() - 30_000), timeZone);
  }
  param.paymentAmount = amountPaid(param);
  return { label: template.label, param };
}

/**
 * `count` sample orders, cycling through the templates. `runId` makes the merchant order numbers
 * of one demo run unique (order-api 2.9: paymentTransactionId is the merchant's order number).
 */
export function sampleOrders(
  count: number,
  runId: string,
  now = new Date(),
  timeZone?: string,
): SampleOrder[] {
  return Array.from({ length: count }, (_, i) =>
    build(
      TEMPLATES[i % TEMPLATES.length]!,
      `${runId}-${String(i + 1).padStart(3, '0')}`,
      now,
      timeZone,
    ),
  );
}

export function curlOrder(runId: string, now = new Date(), timeZone?: string): SampleOrder {
  return build(CURL_TEMPLATE, `${runId}-CURL`, now, timeZone);
}
