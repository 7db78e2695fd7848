/**
 * The one set of limits both sides enforce (print-protocol v1.1 §9 "limits agree end to end"):
 * the reference order service refuses a create that breaks one, and the agent refuses (or, for
 * paper length, cuts and reports) what breaks the same bound. Each number is written once, here,
 * and documented in docs/decisions.md and docs/protocol.md.
 */

/**
 * print-protocol v1.1 §4 freshness: the default anti-replay age of an MQTT instruction, in days.
 * Always shorter than an order is remembered (finished jobs are kept `retention.printedDays`, at
 * least 1, and their dedupe keys DEDUPE_LEDGER_DAYS more), so a replay is either a duplicate or
 * stale, never printed unmarked.
 */
export const ANTI_REPLAY_DEFAULT_DAYS = 7;
/** Days the dedupe keys of a pruned job are still remembered; the anti-replay age's upper bound. */
export const DEDUPE_LEDGER_DAYS = 90;

/** print-protocol §3: default size limit of an MQTT message body (the agents' limit). */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024;

/**
 * The MQTT 5 `maximumPacketSize` the agent asks the broker for. Well above the message limit on
 * purpose: an MQTT 5 broker silently drops a packet larger than the client's maximum, and the
 * agent must still see an oversized instruction to report it (`rejected`, TOO_LARGE, with its
 * orderNo when the signature holds). Never below 1 MiB; twice the message limit when that is more.
 */
export function mqttMaxPacketBytes(maxMessageBytes: number): number {
  return Math.max(1024 * 1024, 2 * maxMessageBytes);
}

/** print-protocol §9: JSON nested deeper than this is refused before anything walks it. */
export const MAX_JSON_DEPTH = 32;

/**
 * Free text the merchant writes (`customPrintContext`): at most this many characters (code
 * points), refused beyond by the service and the agent alike. order-api 2.9 gives no length; this
 * is ours. An order record's `remark` (2.5) has no limit of its own (the 4 MiB answer bounds it);
 * on paper both are cut at FREE_TEXT_MAX_LINES.
 */
export const FREE_TEXT_MAX_CHARS = 2000;

/**
 * Paper: a free-text block (custom print content, remark) prints at most this many lines once
 * laid out; the rest is cut, the cut is marked on the receipt and reported (CONTENT_CUT). Items,
 * amounts and payment lines are never cut.
 */
export const FREE_TEXT_MAX_LINES = 40;

/**
 * Paper: the most lines one copy of a receipt may take once free text is cut (about 2.5 m at
 * 4.2 mm a line). An instruction within the create limits (50 products of 50 characters, bounded
 * fields, free text cut at FREE_TEXT_MAX_LINES) stays far below it on 58 and 80 mm paper; only an
 * order record with absurd item data can reach it, and that receipt is refused (RENDER_FAILED)
 * rather than cut, because items and amounts are never cut. A double-height line counts twice and
 * a QR code as QR_CODE_LINES.
 */
export const RECEIPT_MAX_LINES = 600;
/** What a QR code counts for against RECEIPT_MAX_LINES (a model 2 code at size 6 is ~25 mm). */
export const QR_CODE_LINES = 8;

/** print-protocol §8: a catch-up response body is read up to this many bytes, never more. */
export const QUERY_RESPONSE_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The deepest nesting of arrays and objects in a JSON text, scanning at most until `limit` is
 * passed (so a hostile 20,000-deep text costs one pass and no recursion). Strings are skipped with
 * their escapes, so brackets inside them do not count. The text need not be valid JSON: this runs
 * before `JSON.parse`, which reports syntax itself.
 */
export function jsonDepth(text: string, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // Jump to the closing quote: the next quote after an even run of backslashes. Most of a
      // signed instruction is string content; indexOf skips it far faster than a loop per
      // character (the scan runs on every message before JSON.parse; issue 16).
      for (;;) {
        const quote = text.indexOf('"', i + 1);
        if (quote < 0) return deepest;
        let backslash = quote - 1;
        while (text.charCodeAt(backslash) === 0x5c /* \ */) backslash--;
        i = quote;
        if ((quote - 1 - backslash) % 2 === 0) break;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return deepest;
}

/**
 * True when `text` holds more than `max` of `{` and `[` together, counting those inside strings
 * too. Nesting never exceeds the number of openers, so `false` proves the text shallow enough;
 * `indexOf` runs at memory speed, where the full scan stops at every quote of every string (an
 * instruction's param, escaped inside the envelope, has hundreds; issue 16).
 */
function moreOpenersThan(text: string, max: number): boolean {
  let count = 0;
  for (const opener of ['{', '[']) {
    for (let i = text.indexOf(opener); i >= 0; i = text.indexOf(opener, i + 1)) {
      if (++count > max) return true;
    }
  }
  return false;
}

/** True when `text` nests arrays/objects deeper than `max` (default MAX_JSON_DEPTH). */
export function tooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  return moreOpenersThan(text, max) && jsonDepth(text, max) > max;
}
