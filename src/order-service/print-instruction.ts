/**
 * The print instruction for a created order (print-protocol §4), in the envelope of §3: the same
 * appId and storeKey as the merchant's request, `param` signed with the service private key over
 * the exact string. `order` is the merchant's param as sent, not our normalized copy, so the
 * receipt shows what the merchant signed.
 */
import { buildEnvelope, type RsaKey } from '../protocol/index.js';
import type { StoredOrder } from './store.js';

export interface SignedInstruction {
  jobId: string;
  /** The MQTT message body: the signed envelope as JSON text. */
  body: string;
}

export function buildPrintInstruction(order: StoredOrder, serviceKey: RsaKey): SignedInstruction {
  // One instruction per order, so the orderNo's day and sequence make the jobId unique.
  const jobId = `P${order.orderNo.slice(1, 9)}-${order.orderNo.slice(9)}`;
  const param = {
    jobId,
    orderNo: order.orderNo,
    pickUpNo: order.pickUpNo,
    takeoutNo: order.takeoutNo,
    createTime: order.createTime,
    order: JSON.parse(order.rawParam),
    printer: 'receipt',
    copies: 1,
  };
  const envelope = buildEnvelope({
    appId: order.appId,
    storeKey: order.storeKey,
    param,
    key: serviceKey,
  });
  return { jobId, body: JSON.stringify(envelope) };
}
