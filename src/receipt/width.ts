/**
 * Column arithmetic. A receipt printer prints on a fixed grid: East Asian wide and fullwidth
 * characters take two columns (get-east-asian-width decides, ambiguous ones count as narrow as
 * Unicode TR11 advises), combining marks take none. Wrapping never cuts a word when a line break
 * at a space exists, and never drops a character: a word longer than the line is split.
 */
import { eastAsianWidth } from 'get-east-asian-width';

const COMBINING = /\p{Mn}|\p{Me}/u;

/**
 * Below U+0300 every character takes one column: combining marks start there and wide ones at
 * U+1100. Receipts are mostly such text, and the width lookups were a sixth of a receipt's render
 * time (issue 16); test/receipt/text-helpers.test.ts checks the shortcut against the full rule.
 */
const NARROW_BELOW = 0x300;

export function charWidth(ch: string): number {
  if (ch.charCodeAt(0) < NARROW_BELOW) return 1;
  if (COMBINING.test(ch)) return 0;
  return eastAsianWidth(ch.codePointAt(0) ?? 0);
}

export function displayWidth(text: string): number {
  let i = 0;
  while (i < text.length && text.charCodeAt(i) < NARROW_BELOW) i++;
  if (i === text.length) return text.length;
  let width = i;
  for (const ch of text.slice(i)) width += charWidth(ch);
  return width;
}

/** Splits `text` into chunks of at most `width` columns without separating a character. */
function hardSplit(word: string, width: number): string[] {
  const out: string[] = [];
  let current = '';
  let used = 0;
  for (const ch of word) {
    const w = charWidth(ch);
    if (used + w > width && current !== '') {
      out.push(current);
      current = '';
      used = 0;
    }
    current += ch;
    used += w;
  }
  if (current !== '') out.push(current);
  return out;
}

/**
 * Wraps one paragraph to `width` columns. Breaks at spaces where possible; a CJK run may break
 * between any two characters (there are no spaces in CJK text); longer words are split.
 * Returns at least one line (possibly empty).
 */
export function wrap(text: string, width: number): string[] {
  if (width < 1) throw new RangeError('wrap width must be at least 1');
  const words = text.split(' ');
  const lines: string[] = [];
  let line = '';
  let used = 0;
  const flush = () => {
    lines.push(line);
    line = '';
    used = 0;
  };
  for (const word of words) {
    const w = displayWidth(word);
    const gap = line === '' ? 0 : 1;
    if (used + gap + w <= width) {
      line += (gap ? ' ' : '') + word;
      used += gap + w;
      continue;
    }
    if (w <= width && line !== '') {
      flush();
      line = word;
      used = w;
      continue;
    }
    // Longer than a line (or CJK text without spaces): fill the current line, then split.
    let rest = word;
    if (line !== '' && width - used - 1 >= 1) {
      const [head] = hardSplit(rest, width - used - 1);
      // hardSplit never returns an empty piece: a wide character alone may not fit the room left.
      if (head !== undefined && displayWidth(head) <= width - used - 1) {
        line += ` ${head}`;
        rest = rest.slice(head.length);
      }
    }
    if (line !== '') flush();
    const pieces = hardSplit(rest, width);
    for (const [i, piece] of pieces.entries()) {
      if (i < pieces.length - 1) lines.push(piece);
      else {
        line = piece;
        used = displayWidth(piece);
      }
    }
  }
  if (line !== '' || lines.length === 0) lines.push(line);
  return lines;
}

/** Pads `text` to exactly `width` columns (text must already fit). */
export function padEnd(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}

export function padStart(text: string, width: number): string {
  return ' '.repeat(Math.max(0, width - displayWidth(text))) + text;
}
