/**
 * The print instruction for a created order (print-protocol §4), in the envelope of §3: the same
 * appId and storeKey as the merchant's request, `param` signed with the service private key over
 * the exact string. `order` is the merchant's param as sent, not our normalized copy, so the
 * receipt shows what the merchant signed.
 *
 * v1.1: `storeId` (the store's derived id, the one its topic uses) is inside the signed param, so
 * a genuine instruction for one store cannot be re-wrapped in another store's envelope. `printer`
 * is left out: the store's own routing decides which printer prints a receipt.
 */
import {
  buildEnvelope,
  DEFAULT_SIGNATURE_SCHEME,
  type RsaKey,
  type SignatureScheme,
} from '../protocol/index.js';
import type { StoredOrder } from './store.js';

export interface SignedInstruction {
  jobId: string;
  storeId: string;
  /** The MQTT message body: the signed envelope as JSON text. */
  body: string;
}

/** One instruction per order, so the orderNo's day and sequence make the jobId unique. */
export function jobIdFor(orderNo: string): string {
  return `P${orderNo.slice(1, 9)}-${orderNo.slice(9)}`;
}

export function buildPrintInstruction(
  order: StoredOrder,
  storeId: string,
  serviceKey: RsaKey,
  scheme: SignatureScheme = DEFAULT_SIGNATURE_SCHEME,
): SignedInstruction {
  const jobId = jobIdFor(order.orderNo);
  const param = {
    storeId,
    jobId,
    orderNo: order.orderNo,
    pickUpNo: order.pickUpNo,
    takeoutNo: order.takeoutNo,
    createTime: order.createTime,
    order: JSON.parse(order.rawParam),
    copies: 1,
  };
  const envelope = buildEnvelope({
    appId: order.appId,
    storeKey: order.storeKey,
    param,
    key: serviceKey,
    scheme,
  });
  return { jobId, storeId, body: JSON.stringify(envelope) };
}
