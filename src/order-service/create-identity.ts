/**
 * Idempotent create (print-protocol v1.1 §9): a create is identified by (appId, storeKey,
 * paymentTransactionId), and a repeat answers the original order only when it asks for the same
 * order. "The same" is decided on the parsed parameters, never on bytes, because a POS that
 * retries after a timeout may serialize its request again:
 *
 * - key order, whitespace and JSON escapes do not matter (the param is parsed);
 * - the tolerated numeric strings are their numbers (`"2"` and `2` for paymentWay, discountType,
 *   transactionFeeType: the create schema's own normalization);
 * - `null` and an absent field are the same ("not given", as the create schema reads them), and
 *   an empty `pickUpNum` is absent too (order-api 4.2 rule 5: empty means "generate one");
 * - fields the create schema does not know are ignored (they never reach a receipt or a record).
 *
 * Everything else must be equal: strings exactly (no trimming, case folding or Unicode
 * normalization: they are printed as sent), numbers by value, `productInfo` in the same order (it
 * is the receipt's order), and the kept `paymentTransaction` value deeply.
 */
import { type CreateParams, createParamsSchema } from '../protocol/index.js';

type Canonical = Record<string, unknown>;

/** The comparable form of validated create parameters. */
export function canonicalCreate(params: CreateParams): Canonical {
  const out: Canonical = {};
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue;
    if (key === 'pickUpNum' && value === '') continue;
    out[key] = value;
  }
  return out;
}

/** Reads a stored order's raw param back into its comparable form; null when it no longer parses. */
export function canonicalStored(rawParam: string): Canonical | null {
  try {
    const parsed = createParamsSchema.safeParse(JSON.parse(rawParam));
    return parsed.success ? canonicalCreate(parsed.data) : null;
  } catch {
    return null;
  }
}

/** JSON with object keys sorted at every level: equal values give equal text. */
function stable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stable(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The top-level create fields whose values differ, sorted; empty when the two ask for the same
 * order. `original` null (a stored param that no longer validates) differs in everything.
 */
export function differingFields(original: Canonical | null, repeat: Canonical): string[] {
  if (original === null) return ['param'];
  const keys = new Set([...Object.keys(original), ...Object.keys(repeat)]);
  return [...keys].filter((k) => stable(original[k]) !== stable(repeat[k])).sort();
}
