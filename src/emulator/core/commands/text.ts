/**
 * The frames that are not commands: printable bytes, decoded into glyphs through the selected
 * character table (`ESC t` code page, `ESC R` international set, Kanji/GB18030 double-byte mode,
 * UTF-8 mode, or a user-defined glyph while `ESC % 1` is on) and laid on the paper in the current
 * print modes; and single control bytes (`LF`, `HT`, `FF`, `CR`, ...). A multi-byte character
 * may arrive across frames and chunks: its first bytes wait on the executor (`pendingChar`), and
 * a command that interrupts it prints a replacement glyph.
 */
import {
  decodeGb18030,
  decodeUtf8,
  EPSON_CODE_PAGES,
  gb18030Length,
  INTERNATIONAL_CHARACTER_SETS,
  isGb18030Lead,
  singleByteTable,
  utf8Length,
} from '../code-pages.js';
import { hex } from '../command-syntax.js';
import type { Frame } from '../framer.js';
import type { Glyph, PaperUserDefined, TextStyle } from '../paper.js';
import { cellsOf } from '../text-width.js';
import type { Execution, PendingChar } from './command.js';

export function printText(x: Execution, frame: Frame): void {
  const { bytes } = frame;
  for (let i = 0; i < bytes.length; i++) textByte(x, bytes[i]!, frame.offset + i);
}

export function controlByte(x: Execution, frame: Frame): void {
  const b = frame.bytes[0]!;
  switch (b) {
    case 0x0a: // LF: print the buffer and feed one line.
      x.paper.lineFeed(x.state.lineSpacing);
      return;
    case 0x0d: // CR: ignored with auto line feed disabled (the default on Epson).
    case 0x00: // NUL: no operation.
      return;
    case 0x09: // HT
      x.paper.tab(x.state.tabs);
      return;
    case 0x0c: // FF: prints in page mode, ignored in standard mode.
      if (x.state.pageMode) {
        x.state.pageMode = false;
        x.paper.flushLine();
      }
      return;
    case 0x18: // CAN: page mode only.
      return;
    default:
      x.warn(frame, `control byte ${hex([b])} has no meaning in ESC/POS: ignored`);
  }
}

function textByte(x: Execution, b: number, offset: number): void {
  const st = x.state;
  const mb = x.pendingChar;
  if (mb) {
    continueChar(x, mb, b, offset);
    return;
  }
  if (st.utf8 && b >= 0x80) {
    if (utf8Length(b) === 0) {
      x.paper.warn({ offset, bytes: hex([b]), message: 'not a UTF-8 lead byte' });
      glyph(x, '\uFFFD', false, { offset, bytes: [b] });
      return;
    }
    x.pendingChar = { bytes: [b], offset };
    return;
  }
  if (st.multiByte && !st.utf8 && isGb18030Lead(b)) {
    x.pendingChar = { bytes: [b], offset };
    return;
  }
  const udc = userDefinedAt(x, b);
  if (udc) glyph(x, udc.char, false, { offset, bytes: [b] }, udc);
  else glyph(x, singleByteChar(x, b), false, { offset, bytes: [b] });
}

/**
 * The user-defined character `b` prints while the set is selected (`ESC % 1`): the one defined
 * for the current font; an undefined code prints from the resident font (ESC/POS reference).
 */
function userDefinedAt(x: Execution, b: number): PaperUserDefined | undefined {
  const st = x.state;
  if (!st.userDefined) return undefined;
  return st.userDefinedChars[st.modes.fontB ? 'B' : 'A'].get(b);
}

/** A further byte of a pending UTF-8 or double-byte character. */
function continueChar(x: Execution, mb: PendingChar, b: number, offset: number): void {
  const utf8 = x.state.utf8;
  mb.bytes.push(b);
  // The character's length in bytes; 0 when b cannot continue it (UTF-8 continues with 10xxxxxx).
  const length = utf8
    ? (b & 0xc0) === 0x80
      ? utf8Length(mb.bytes[0]!)
      : 0
    : gb18030Length(mb.bytes[0]!, mb.bytes[1]!);
  if (length === 0) {
    // b cannot continue the character: the character prints incomplete and b starts afresh.
    mb.bytes.pop();
    flushMultiByte(x);
    textByte(x, b, offset);
    return;
  }
  if (mb.bytes.length < length) return;
  if (utf8) {
    const char = decodeUtf8(Uint8Array.from(mb.bytes));
    x.pendingChar = undefined;
    glyph(x, char, cellsOf(char) === 2, mb);
    return;
  }
  const char = decodeGb18030(Uint8Array.from(mb.bytes));
  x.pendingChar = undefined;
  if (char.includes('\uFFFD')) {
    x.paper.warn({ offset: mb.offset, bytes: hex(mb.bytes), message: 'not a GB18030 character' });
  }
  glyph(x, char, true, mb);
}

/** An incomplete multi-byte character interrupted by a command prints as a replacement glyph. */
export function flushMultiByte(x: Execution): void {
  const mb = x.pendingChar;
  if (!mb) return;
  x.pendingChar = undefined;
  x.paper.warn({
    offset: mb.offset,
    bytes: hex(mb.bytes),
    message: 'incomplete double-byte character',
  });
  glyph(x, '\uFFFD', !x.state.utf8, mb);
}

function singleByteChar(x: Execution, b: number): string {
  const st = x.state;
  if (b < 0x80) {
    const intl = INTERNATIONAL_CHARACTER_SETS[st.international];
    const ascii = String.fromCharCode(b === 0x7f ? 0x20 : b);
    return intl?.map[ascii] ?? ascii;
  }
  const page = x.options.codePages[st.codePage] ?? EPSON_CODE_PAGES[0]!;
  return singleByteTable(page.encoding)[b]!;
}

/** Lays one character on the paper; `from` is where its bytes were in the stream. */
function glyph(
  x: Execution,
  char: string,
  wide: boolean,
  from: PendingChar,
  userDefined?: PaperUserDefined,
): void {
  const m = x.state.modes;
  const font = m.fontB ? x.paper.geometry.fontB : x.paper.geometry.fontA;
  const style: TextStyle = {
    font: m.fontB ? 'B' : 'A',
    bold: m.emphasized || m.doubleStrike,
    underline: wide ? m.kanjiUnderline : m.underline,
    width: wide ? m.kanjiWidth : m.width,
    height: wide ? m.kanjiHeight : m.height,
    reverse: m.reverse,
    upsideDown: m.upsideDown,
    rotated: m.rotated,
  };
  const width = wide
    ? (font.width * 2 + m.kanjiLeft + m.kanjiRight) * m.kanjiWidth
    : (font.width + m.charSpacing) * m.width;
  const g: Glyph = userDefined ? { char, width, style, userDefined } : { char, width, style };
  // A warning the paper raises while placing it (a wrap that ends a line holding an ESC * image,
  // a user-defined glyph printed again) names this character, not the text frame around it:
  // frames are cut at chunk ends, and how the bytes arrived must not change what the paper says.
  const outer = x.executing;
  x.executing = { kind: 'text', offset: from.offset, bytes: Uint8Array.from(from.bytes) };
  try {
    x.paper.put(g);
  } finally {
    x.executing = outer;
  }
}
