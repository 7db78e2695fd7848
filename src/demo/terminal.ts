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
