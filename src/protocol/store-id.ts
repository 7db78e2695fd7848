import { createHash, createHmac } from 'node:crypto';
import { contractFacts, text } from './validation.js';

/**
 * print-protocol v1.2 §10: an appId holds no `:`, the separator of the store id's input, so no two
 * (appId, storeKey) pairs derive the same id (`a:b` + `c` and `a` + `b:c` would).
 */
export const APP_ID_RULE = "must not contain ':' (the store id is sha256(appId:storeKey))";

/** Whether `appId` keeps the store id unambiguous (`APP_ID_RULE`). */
export function isUnambiguousAppId(appId: string): boolean {
  return !appId.includes(':');
}

/**
 * An appId as the service, the agent's config and every envelope take it: 1 to 64 characters
 * (order-api 2.1), no `:`.
 */
export const appIdSchema = text(1, 64).refine(isUnambiguousAppId, APP_ID_RULE);
contractFacts.add(appIdSchema, { minLength: 1, maxLength: 64, pattern: '^[^:]*$' });

/**
 * print-protocol §1: the store's id on the broker, the first 16 hex digits of
 * `sha256(appId + ":" + storeKey)`. It names the store's topics without revealing the storeKey.
 */
export function deriveStoreId(appId: string, storeKey: string): string {
  return createHash('sha256').update(`${appId}:${storeKey}`, 'utf8').digest('hex').slice(0, 16);
}

/**
 * The agent's MQTT client id when the config names none. A broker's password and ACL files cannot
 * tie a client id to a user (Mosquitto, EMQX: docs/store-credentials.md), so any store's login that
 * knows another store's client id can take over its persistent session and lose its queued
 * instructions. A derived storeId is as unguessable as the storeKey behind it, so the id stays
 * `printer-agent-<storeId>` (sessions kept across the upgrade); a storeId set by hand (a store
 * number) gets a suffix only the storeKey yields (decision 195).
 */
export function defaultClientId(storeId: string, storeKey: string, derived: boolean): string {
  if (derived) return `printer-agent-${storeId}`;
  const suffix = createHmac('sha256', storeKey).update('mqtt-client-id').digest('hex').slice(0, 12);
  return `printer-agent-${storeId}-${suffix}`;
}
