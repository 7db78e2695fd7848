/** What the demo shows in the terminal: receipts framed as paper, and a ready-to-paste curl. */
import { displayWidth, padEnd } from '../receipt/width.js';

/** The receipt's text framed to the paper width, so the paper's edges show. */
export function paperBox(text: string, columns: number, indent = '  '): string {
  const lines = text.replace(/\n$/, '').split('\n');
  const width = Math.max(columns, ...lines.map((l) => displayWidth(l)));
  const rule = '─'.repeat(width + 2);
  return [
    `${indent}┌${rule}┐`,
    ...lines.map((line) => `${indent}│ ${padEnd(line, width)} │`),
    `${indent}└${rule}┘`,
  ].join('\n');
}

/** One shell word: single-quoted, with each `'` closed, escaped and reopened (POSIX sh). */
export function shellQuote(value: string): string {
  return `'${value.split("'").join(`'\\''`)}'`;
}

/** A one-line curl that POSTs `body` as JSON and prints the response with a newline after it. */
export function curlCommand(url: string, body: string): string {
  return [
    'curl -s -w',
    shellQuote('\\n'),
    '-X POST',
    shellQuote(url),
    '-H',
    shellQuote('Content-Type: application/json'),
    '--data-raw',
    shellQuote(body),
  ].join(' ');
}

/** The order number printed on a receipt (`Order no.   O202611250001`), or null. */
export function orderNoOnReceipt(text: string): string | null {
  return /^Order no\.\s+(\S+)\s*$/m.exec(text)?.[1] ?? null;
}

/** What the new-order script needs: how to run `printer-agent`, and the store's keys and URL. */
export interface NewOrderScript {
  /** `printer-agent` as argv (node, its flags, the script), run from `cwd`. */
  entry: readonly string[];
  cwd: string;
  /** The create param as the POS sends it; its paymentTransactionId is replaced at each run. */
  param: { paymentTransactionId: string } & Record<string, unknown>;
  appId: string;
  keyFile: string;
  storeKeyFile: string;
  /** The order service's create URL. */
  url: string;
}

/**
 * A POSIX sh script that creates one more order at each run (issue 42 item 14): the demo's curl
 * repeats one paymentTransactionId, the create's idempotency key (order-api 4.2), so running it
 * again answers the same order and prints nothing new. The script makes the id new (the time and
 * the script's process id: no two runs share both) and signs the param as a POS does
 * (`printer-agent sign`, the store key from its file), then POSTs it like the curl.
 */
export function newOrderScript(s: NewOrderScript): string {
  const MARK = '@@PAYMENT_TRANSACTION_ID@@';
  const [before, after] = JSON.stringify({ ...s.param, paymentTransactionId: MARK }).split(MARK);
  const q = shellQuote;
  return [
    '#!/bin/sh',
    '# One more order for the demo store, created as a POS creates it: the param signed with the',
    "# app's key (printer-agent sign), then POSTed to the order service. Each run is a new order: its",
    '# paymentTransactionId (the idempotency key of a create) ends in the time and this process id.',
    'set -e',
    `cd ${q(s.cwd)}`,
    `id=${q(s.param.paymentTransactionId)}"-$(date +%s)-$$"`,
    `printf '%s' ${q(before!)}"$id"${q(after!)} |`,
    `  ${[...s.entry, 'sign', '--key', s.keyFile, '--app-id', s.appId, '--store-key-file', s.storeKeyFile, '-'].map(q).join(' ')} |`,
    `  curl -s -w ${q('\\n')} -X POST ${q(s.url)} -H ${q('Content-Type: application/json')} --data-binary @-`,
    '',
  ].join('\n');
}
