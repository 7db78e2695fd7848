/**
 * What the emulator's paper says, read the way our receipts mean it. The emulator cannot know
 * what a user-defined glyph stands for, so its text shows one as a private-use character (U+E000
 * + code in font A); our encoder prints `₱` as user-defined code `PESO_SIGN.code`. Before the
 * stand-in is read as `₱`, the glyph the emulator decoded from the `ESC &` bytes must be dot for
 * dot the one src/receipt/user-defined.ts draws.
 */
import assert from 'node:assert/strict';
import { bitmapRows, renderText, type Ticket, userDefinedChar } from '../../src/emulator/index.js';
import { PESO_SIGN } from '../../src/receipt/user-defined.js';

export const PESO_STAND_IN = userDefinedChar(PESO_SIGN.code, 'A');

/** `renderText(ticket)`, with our peso sign's stand-in read as `₱`. */
export function paperText(ticket: Ticket): string {
  const text = renderText(ticket);
  if (!text.includes(PESO_STAND_IN)) return text;
  const glyph = ticket.userDefined.find((u) => u.char === PESO_STAND_IN);
  assert.ok(glyph, 'the stand-in has a glyph on the ticket');
  assert.deepEqual(bitmapRows(glyph), PESO_SIGN.rows, 'the glyph the job defined for ₱');
  return text.replaceAll(PESO_STAND_IN, '₱');
}
