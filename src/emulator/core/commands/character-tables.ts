/**
 * Character tables and how characters are read: the `ESC t` code page, the `ESC R` international
 * set, Kanji/Chinese double-byte mode and its print modes (`FS &`, `FS .`, `FS !`, `FS -`, `FS S`,
 * `FS W`), UTF-8 mode (`FS ( C` fn 48), and user-defined characters (`ESC &` defines, `ESC %`
 * selects, `ESC ?` deletes).
 *
 * A user-defined character prints its glyph, which the ticket keeps (`Ticket.userDefined`); its
 * text is a private-use stand-in for its font and code (`userDefinedChar`). The emulator cannot
 * know what a glyph means, and recognising glyphs from a table of its own would only check the
 * host's drawing against the same drawing: tests look at the dots instead.
 */

import { INTERNATIONAL_CHARACTER_SETS } from '../code-pages.js';
import type { Frame } from '../framer.js';
import { type FontName, type PaperUserDefined, userDefinedChar } from '../paper.js';
import type { CommandFamily, Execution } from './command.js';
import { columnsToBitmap } from './images.js';

export const characterTables: CommandFamily = {
  'ESC t'(x, { frame, n }) {
    if (!x.options.codePages[n]) {
      return x.warn(frame, `code page ${n} is not in the printer's table: ignored`);
    }
    x.state.codePage = n;
  },
  'ESC R'(x, { frame, n }) {
    if (!INTERNATIONAL_CHARACTER_SETS[n]) {
      x.warn(frame, `international character set ${n} not emulated: ASCII kept`);
    }
    x.state.international = n;
  },
  // Kanji / Chinese double-byte mode on ...
  'FS &'(x) {
    x.state.multiByte = true;
  },
  // ... and off.
  'FS .'(x) {
    x.state.multiByte = false;
  },
  // Kanji print mode: bit2 double width, bit3 double height, bit7 underline.
  'FS !'(x, { n }) {
    const m = x.state.modes;
    m.kanjiWidth = n & 0x04 ? 2 : 1;
    m.kanjiHeight = n & 0x08 ? 2 : 1;
    m.kanjiUnderline = n & 0x80 ? 1 : 0;
  },
  'FS -'(x, { n }) {
    x.state.modes.kanjiUnderline = (n % 48 <= 2 ? n % 48 : 0) as 0 | 1 | 2;
  },
  'FS S'(x, { bytes: b }) {
    x.state.modes.kanjiLeft = b[2]!;
    x.state.modes.kanjiRight = b[3]!;
  },
  'FS W'(x, { n }) {
    x.state.modes.kanjiWidth = n & 1 ? 2 : 1;
    x.state.modes.kanjiHeight = n & 1 ? 2 : 1;
  },
  // fn 48: select the character encoding system, m = 1 one-byte, m = 2 UTF-8.
  'FS ( C'(x, { bytes: b }) {
    if (b[5] === 0x30) {
      const m = b[6]! % 48;
      x.state.utf8 = m === 2;
    }
  },
  // Select (bit 0 set) or cancel the user-defined character set.
  'ESC %'(x, { n }) {
    x.state.userDefined = (n & 1) !== 0;
  },
  // ESC & y c1 c2 [x d1..d(y*x)] for c1..c2: glyphs for the font selected now, in column format.
  'ESC &'(x, { frame, bytes: b }) {
    defineUserCharacters(x, frame, b);
  },
  // ESC ? n: delete the definition of code n in the selected font; n prints from the font again.
  'ESC ?'(x, { n }) {
    x.state.userDefinedChars[x.state.modes.fontB ? 'B' : 'A'].delete(n);
  },
};

/**
 * `ESC &` (ESC/POS reference): y = 3 bytes per dot column, 0x20 <= c1 <= c2 <= 0x7E, x up to the
 * font's cell width (x = 0 defines a blank); a definition out of range is ignored as a whole.
 * Defining characters clears the downloaded bit image (`GS *`): they share the printer's memory.
 */
function defineUserCharacters(x: Execution, frame: Frame, b: Uint8Array): void {
  const [y, c1, c2] = [b[2]!, b[3]!, b[4]!];
  const font: FontName = x.state.modes.fontB ? 'B' : 'A';
  const cell = font === 'B' ? x.paper.geometry.fontB : x.paper.geometry.fontA;
  if (y !== 3 || c1 < 0x20 || c2 > 0x7e || c1 > c2) {
    x.warn(frame, `ESC &: y ${y}, codes ${c1}-${c2} out of range (y 3, 32-126): ignored`);
    return;
  }
  const defined: PaperUserDefined[] = [];
  let at = 5;
  for (let code = c1; code <= c2; code++) {
    const width = b[at]!;
    if (width > cell.width) {
      x.warn(frame, `ESC &: ${width} dot columns in a ${cell.width}-dot font: ignored`);
      return;
    }
    const bitmap = columnsToBitmap(b.subarray(at + 1, at + 1 + y * width), width, y, 1, 1);
    // A 17-dot font B cell prints only the top dot of the third byte.
    const height = Math.min(bitmap.height, cell.height);
    const data = bitmap.data.slice(0, Math.ceil(width / 8) * height);
    defined.push({ char: userDefinedChar(code, font), code, font, width, height, data });
    at += 1 + y * width;
  }
  for (const udc of defined) x.state.userDefinedChars[font].set(udc.code, udc);
  x.kept.downloaded = undefined;
}
