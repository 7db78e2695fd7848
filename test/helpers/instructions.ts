/**
 * Print instructions for the end-to-end suites that drive a store by name (the fault matrix, the
 * broker conformance suite): ids derived from the store's name and the order number, created now.
 * Imports nothing from src/jobs/, so the conformance suite can load it before it sets its fault
 * points up (test/brokers/conformance.ts).
 */
import { formatTimestamp } from '../../src/protocol/time.js';

type Json = Record<string, unknown>;

/** `yyyy-MM-dd HH:mm:ss` now, in the host's zone: what the agent (no zone configured) reads. */
export function nowCreateTime(offsetMs = 0): string {
  return formatTimestamp(new Date(Date.now() + offsetMs));
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
