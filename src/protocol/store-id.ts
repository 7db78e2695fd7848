import { createHash } from 'node:crypto';

/**
 * print-protocol §1: the store's id on the broker, the first 16 hex digits of
 * `sha256(appId + ":" + storeKey)`. It names the store's topics without revealing the storeKey.
 */
export function deriveStoreId(appId: string, storeKey: string): string {
  return createHash('sha256').update(`${appId}:${storeKey}`, 'utf8').digest('hex').slice(0, 16);
}
