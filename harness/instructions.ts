/**
 * Print instructions for the end-to-end suites that drive a store by name (the fault matrix, the
 * broker conformance suite): ids derived from the store's name and the order number, created now.
 * Imports nothing from src/jobs/, so the conformance suite can load it before it sets its fault
 * points up (test/brokers/conformance.ts).
 */
import { buildEnvelope } from '../src/protocol/envelope.js';
import { parseKey } from '../src/protocol/signing.js';
import { formatTimestamp } from '../src/protocol/time.js';

type Json = Record<string, unknown>;

/** `yyyy-MM-dd HH:mm:ss` now, in the host's zone: what the agent (no zone configured) reads. */
export function nowCreateTime(offsetMs = 0): string {
  return formatTimestamp(new Date(Date.now() + offsetMs));
}

/**
 * A clock for a service whose order numbers a test predicts (`O` + day + daily sequence): the
 * real clock, set back by a fixed amount when the host's day ends within `marginMs` of `start`,
 * so it reads at most `marginMs` before midnight when the test starts and the day in the numbers
 * cannot change for `marginMs`. The amount stays small on purpose: the agent dates the orders
 * against its own, real clock, and an order more than `catchUp.maxAgeMinutes` (60 by default)
 * behind it is stale (a 2 h hold once made every order of the last hour of the day stale).
 */
export function clockAwayFromMidnight(marginMs = 20 * 60_000, start = new Date()): () => Date {
  const hold = holdBeforeMidnight(start, marginMs);
  return () => new Date(Date.now() - hold);
}

/** How far back `clockAwayFromMidnight` sets a clock started at `start`: 0 to `marginMs`. */
export function holdBeforeMidnight(start: Date, marginMs: number): number {
  const sinceMidnight =
    ((start.getHours() * 60 + start.getMinutes()) * 60 + start.getSeconds()) * 1000 +
    start.getMilliseconds();
  return Math.max(0, sinceMidnight - (24 * 3_600_000 - marginMs));
}

export const storeJobId = (name: string, n: number) => `P-${name}-${n}`;
export const storeOrderNo = (name: string, n: number) => `O-${name}-${n}`;

/**
 * A valid print instruction (print-protocol §4) for order `n` of the store `name`, created now;
 * `order` fields override, and so do `extra` fields (storeId, createTime, printer...).
 */
export function storeInstruction(
  store: { storeId: string; name: string },
  n: number,
  order: Json = {},
  extra: Json = {},
): Json {
  return {
    storeId: store.storeId,
    jobId: storeJobId(store.name, n),
    orderNo: storeOrderNo(store.name, n),
    createTime: nowCreateTime(),
    order: {
      productInfo: [{ productName: `Dish ${store.name} ${n}`, price: 10000, quantity: 1 }],
      orderType: 1,
      paymentWay: 2,
      paymentTransactionId: `M-${store.name}-${n}`,
      ...order,
    },
    ...extra,
  };
}

/**
 * One order of one dish (12.00), signed as the service signs it (print-protocol §3), created now,
 * as the MQTT payload: what the package tests (packaging/install-test.ts, upgrade-test.ts) publish
 * to an installed agent.
 */
export function signedOrder(o: {
  appId: string;
  storeKey: string;
  privatePem: string;
  storeId: string;
  orderNo: string;
  productName: string;
}): string {
  const body = buildEnvelope({
    appId: o.appId,
    storeKey: o.storeKey,
    key: parseKey(o.privatePem, 'private'),
    param: {
      storeId: o.storeId,
      jobId: `job-${o.orderNo}`,
      orderNo: o.orderNo,
      createTime: nowCreateTime(),
      order: {
        productInfo: [{ productName: o.productName, price: 1200, quantity: 1 }],
        orderType: 1,
        paymentWay: 2,
        paymentTransactionId: `M-${o.orderNo}`,
      },
    },
  });
  return JSON.stringify(body);
}
