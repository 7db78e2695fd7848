/**
 * Character tables and how characters are read: the `ESC t` code page, the `ESC R` international
 * set, Kanji/Chinese double-byte mode and its print modes (`FS &`, `FS .`, `FS !`, `FS -`, `FS S`,
 * `FS W`), UTF-8 mode (`FS ( C` fn 48), and user-defined characters (`ESC %`, `ESC &`), which the
 * emulator shows as the codes they replace.
 */
import { INTERNATIONAL_CHARACTER_SETS } from '../code-pages.js';
import type { CommandFamily } from './command.js';

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
  'ESC %'(x, { frame, n }) {
    x.state.userDefined = (n & 1) !== 0;
    if (x.state.userDefined) {
      x.warn(frame, 'user-defined characters are shown as the character codes they replace');
    }
  },
  'ESC &'() {
    // Defines user-defined characters: nothing to print, ESC % shows the codes they replace.
  },
};
