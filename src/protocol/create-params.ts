/**
 * The create parameters (order-api 2.9) with every limit of 2.9 and §8 and the conditional rules
 * of 4.2. The same schema validates the HTTP create request of the reference order service and
 * the `order` of every print instruction the agent receives (print-protocol §4).
 *
 * Tolerated on purpose, because the spec's own samples do it:
 * - `paymentWay`, `transactionFeeType` and `discountType` as a number or as a numeric string;
 * - the undocumented `paymentTransaction` field (kept, never interpreted);
 * - `null` for any optional field, meaning "not given" (Java clients serialize absent fields so);
 * - an empty `pickUpNum`, which 4.2 rule 5 defines as "let the service generate it".
 */
import { z } from 'zod';
import {
  CREATE_DISCOUNT_TYPE,
  DISCOUNT_PWD,
  DISCOUNT_SC,
  ORDER_TYPE,
  ORDER_TYPE_TAKEOUT,
  PAYMENT_WAY,
  PAYMENT_WAY_ONLINE,
  PROMO_DISCOUNT_TYPE,
  TRANSACTION_FEE_TYPE,
} from './codes.js';
import { FREE_TEXT_MAX_CHARS } from './limits.js';
import { timestamp } from './time.js';
import {
  cents,
  charCount,
  code,
  contractFacts,
  identifier,
  int,
  text,
  typeError,
  withCompiledTwin,
} from './validation.js';

/** Limits of order-api 2.9 and §8, named so tests and generators use the same numbers. */
export const CREATE_LIMITS = {
  productInfo: { min: 1, max: 50 },
  productName: { min: 1, max: 50 },
  productPrice: { min: 0, max: 1_000_000 },
  productQuantity: { min: 1, max: 1000 },
  fee: { min: 0, max: 10_000_000 },
  amount: { min: 0, max: 100_000_000 },
  pickUpNum: { min: 1, max: 50 },
  userName: { min: 1, max: 100 },
  userPhone: { min: 1, max: 20 },
  userAddress: { min: 1, max: 200 },
  paymentChannel: { min: 1, max: 200 },
  paymentTransactionId: { min: 1, max: 50 },
  discountNo: { min: 1, max: 200 },
  discounterName: { min: 1, max: 50 },
  discountValidityPeriod: { min: 1, max: 200 },
  transactionId: { min: 1, max: 50 },
  paymentPlatform: { min: 1, max: 200 },
  transactionTime: { min: 1, max: 200 },
} as const;

const L = CREATE_LIMITS;
const fee = () => cents(L.fee.max).nullish();
const amount = () => cents(L.amount.max).nullish();
const optText = (limit: { min: number; max: number }) => text(limit.min, limit.max).nullish();

export const productSchema = z.object({
  productName: text(L.productName.min, L.productName.max),
  price: int(L.productPrice.min, L.productPrice.max),
  quantity: int(L.productQuantity.min, L.productQuantity.max),
});

// 4.2 rule 5: empty means "generate one"; otherwise 1 to 50 characters. One string schema rather
// than a union with '', so a wrong type reports "must be a string", not a union-level message.
const pickUpNum = z
  .string({ error: 'must be a string' })
  .refine(
    (v) => v === '' || (charCount(v) >= L.pickUpNum.min && charCount(v) <= L.pickUpNum.max),
    `must be ${L.pickUpNum.min} to ${L.pickUpNum.max} characters`,
  );
// Empty or 1 to 50 is 0 to 50 (issue 19: what the contract documents state).
contractFacts.add(pickUpNum, { maxLength: L.pickUpNum.max });

// order-api 2.9 gives no length: ours (print-protocol v1.1 §9), enforced by the service and the
// agent alike; on paper it is further cut at FREE_TEXT_MAX_LINES lines (marked and reported).
const customPrintContext = z
  .string({ error: 'must be a string' })
  .refine(
    (value) => charCount(value) <= FREE_TEXT_MAX_CHARS,
    `must be at most ${FREE_TEXT_MAX_CHARS} characters`,
  );
contractFacts.add(customPrintContext, { maxLength: FREE_TEXT_MAX_CHARS });

const createParamsObject = z.object({
  productInfo: z
    .array(productSchema, {
      error: typeError('an array'),
    })
    .min(L.productInfo.min, `must have ${L.productInfo.min} to ${L.productInfo.max} entries`)
    .max(L.productInfo.max, `must have ${L.productInfo.min} to ${L.productInfo.max} entries`),
  serviceFee: fee(),
  orderType: code(ORDER_TYPE),
  paymentWay: code(PAYMENT_WAY, { lenient: true }),
  pickUpNum: pickUpNum.nullish(),
  merchantDeliveryFee: fee(),
  deliveryFee: fee(),
  packingFee: fee(),
  userName: optText(L.userName),
  userPhone: optText(L.userPhone),
  userAddress: optText(L.userAddress),
  customPrintContext: customPrintContext.nullish(),
  paymentChannel: optText(L.paymentChannel),
  // print-protocol v1.2 §10: the create's identity (v1.1 §9), so no look-alike of another one.
  paymentTransactionId: identifier(L.paymentTransactionId.min, L.paymentTransactionId.max),
  paymentAmount: amount(),
  discountAmount: amount(),
  discountType: code(CREATE_DISCOUNT_TYPE, { lenient: true }).nullish(),
  promoDiscountType: code(PROMO_DISCOUNT_TYPE).nullish(),
  discountNo: optText(L.discountNo),
  discounterName: optText(L.discounterName),
  discountValidityPeriod: optText(L.discountValidityPeriod),
  transactionFee: amount(),
  transactionFeeType: code(TRANSACTION_FEE_TYPE, { lenient: true }).nullish(),
  transactionId: optText(L.transactionId),
  paymentPlatform: optText(L.paymentPlatform),
  transactionCreateTime: timestamp.nullish(),
  transactionReturnTime: timestamp.nullish(),
  // In the create sample but not in the parameter list; meaning unknown, so kept and ignored.
  paymentTransaction: z.unknown().optional(),
});

type Draft = z.output<typeof createParamsObject>;

function requireField(
  p: Draft,
  ctx: z.core.$RefinementCtx<Draft>,
  field: keyof Draft,
  rule: string,
): void {
  const v = p[field];
  // An empty string already fails its length rule; reporting it twice would only confuse.
  if (v === undefined || v === null) {
    ctx.addIssue({ code: 'custom', path: [field], message: `is required ${rule}`, input: v });
  }
}

/**
 * The conditional rules of order-api 4.2, each reported on the field that is missing. (No closure
 * inside: this runs for every instruction.)
 */
function checkConditionalRules(p: Draft, ctx: z.core.$RefinementCtx<Draft>): void {
  if (p.orderType === ORDER_TYPE_TAKEOUT) {
    requireField(p, ctx, 'deliveryFee', 'for takeout orders (orderType 3)');
    requireField(p, ctx, 'packingFee', 'for takeout orders (orderType 3)');
  }
  if (p.paymentWay === PAYMENT_WAY_ONLINE) {
    requireField(p, ctx, 'paymentChannel', 'for online payment (paymentWay 1)');
    requireField(p, ctx, 'transactionCreateTime', 'for online payment (paymentWay 1)');
    requireField(p, ctx, 'transactionReturnTime', 'for online payment (paymentWay 1)');
  }
  if (p.discountType === DISCOUNT_PWD || p.discountType === DISCOUNT_SC) {
    const rule = `for ${p.discountType === DISCOUNT_PWD ? 'PWD' : 'SC'} discounts (discountType ${p.discountType})`;
    requireField(p, ctx, 'discountNo', rule);
    requireField(p, ctx, 'discounterName', rule);
    if (p.discountType === DISCOUNT_PWD) requireField(p, ctx, 'discountValidityPeriod', rule);
  }
}

/**
 * The create parameters without the `when` below: for the compiled twins of the schemas that hold
 * them (`withCompiledTwin`), never to validate on its own.
 */
export const createParamsTwin = createParamsObject.superRefine(checkConditionalRules);

// `when`: also run the 4.2 rules when a field has a type error (zod skips them by default), so one
// rejection lists every problem. The rules only compare values, so partly invalid input is safe.
export const createParamsSchema = withCompiledTwin(
  createParamsObject.superRefine(checkConditionalRules, {
    when: (payload) => typeof payload.value === 'object' && payload.value !== null,
  }),
  createParamsTwin,
);

/**
 * The create parameters of an order the service stored, read back for its query records: the same
 * rules but for v1.2 §10's on `paymentTransactionId`, which an order stored before v1.2 may break
 * and which stays its identity. Never for what arrives.
 */
export const storedCreateParamsSchema = createParamsObject
  .extend({
    paymentTransactionId: text(L.paymentTransactionId.min, L.paymentTransactionId.max),
  })
  .superRefine(checkConditionalRules);

/** Create parameters as the merchant may send them (numeric strings allowed where tolerated). */
export type CreateParamsInput = z.input<typeof createParamsSchema>;
/** Create parameters after validation: codes are numbers, absent fields undefined or null. */
export type CreateParams = z.output<typeof createParamsSchema>;
export type Product = z.output<typeof productSchema>;

/** order-api 2.10: the create result. `takeoutNo` is in the sample, not the field list. */
export const createResultSchema = z.object({
  orderNo: text(1, 64),
  pickUpNo: z.string().nullish(),
  takeoutNo: z.string().nullish(),
});
export type CreateResult = z.output<typeof createResultSchema>;
