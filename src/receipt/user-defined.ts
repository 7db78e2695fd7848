/**
 * User-defined characters (`ESC &`, `ESC %`; issue 18): glyphs the host downloads into the
 * printer's font, printed in place of a code while the user-defined set is selected. The peso
 * sign is in no Epson code page (escpos-notes "Currency signs"), so on a profile with
 * `userDefinedCharacters` it is drawn here, one font A cell of 12 x 24 dots, and a receipt
 * prints it as text in one column, like any other character:
 *
 *   ESC & 3 50 50 0C d1..d36   once per job, after ESC @ (which clears every definition)
 *   ESC % 1  50  ESC % 0       each run of ₱: with the set selected, 0x50 prints the glyph
 *
 * The code it stands on is `P` (0x50). `ESC &` accepts only 0x20-0x7E (ESC/POS reference), and
 * the sanitizer passes every one of those, so there is no code a receipt never prints; the
 * positions above 0x7E that a code page spends on box drawing cannot be defined. So the choice
 * is made for when something goes wrong instead: the set is selected only around the ₱ itself
 * (every other `P` is printed with the set cancelled), and a printer that takes the definition but
 * ignores `ESC %` prints `P125.00`, the way the peso is written by hand in the Philippines, where
 * a backtick or a tilde would print `` `125.00 `` (`` ` `` and `~` also change with `ESC R`).
 * Only this one code is defined, so nothing else can change shape while the set is selected.
 */

const ESC = 0x1b;

export interface UserDefinedCharacter {
  /** The character it prints. */
  readonly char: string;
  /** The code it replaces while the user-defined set is selected (0x20-0x7E). */
  readonly code: number;
  /** The glyph, top row first: `#` a black dot, `.` a white one; 24 rows of 12 (font A). */
  readonly rows: readonly string[];
}

/** Font A: 12 x 24 dots, 3 bytes per dot column (`ESC & y` with y = 3). */
const FONT_A = { width: 12, height: 24 } as const;

/**
 * `₱`: a P of the digits' height (rows 3-19, the stem two dots wide) crossed by two bars that
 * stand out to the left of the stem. Column 11 stays white, as in the resident font, so the sign
 * does not touch the digit after it.
 */
export const PESO_SIGN: UserDefinedCharacter = {
  char: '₱',
  code: 0x50,
  rows: [
    '............',
    '............',
    '............',
    '..#######...',
    '..########..',
    '..##....###.',
    '###########.',
    '..##.....##.',
    '..##.....##.',
    '###########.',
    '..##....###.',
    '..########..',
    '..#######...',
    '..##........',
    '..##........',
    '..##........',
    '..##........',
    '..##........',
    '..##........',
    '..##........',
    '............',
    '............',
    '............',
    '............',
  ],
};

/** The characters a profile with `userDefinedCharacters` prints this way. */
export const USER_DEFINED_CHARACTERS: readonly UserDefinedCharacter[] = [PESO_SIGN];

/** `ESC % 1`: select the user-defined character set. */
export const SELECT_USER_DEFINED = [ESC, 0x25, 1] as const;
/** `ESC % 0`: back to the resident font. */
export const CANCEL_USER_DEFINED = [ESC, 0x25, 0] as const;

/**
 * The glyph as `ESC &` takes it: for each dot column, left to right, 3 bytes top to bottom, the
 * most significant bit the top dot.
 */
export function glyphColumns(udc: UserDefinedCharacter): number[] {
  checkGlyph(udc);
  const bytes: number[] = [];
  for (let x = 0; x < FONT_A.width; x++) {
    for (let k = 0; k < FONT_A.height / 8; k++) {
      let byte = 0;
      for (let bit = 0; bit < 8; bit++) {
        if (udc.rows[k * 8 + bit]![x] === '#') byte |= 0x80 >> bit;
      }
      bytes.push(byte);
    }
  }
  return bytes;
}

/** The `ESC &` bytes of each character, made on first use: every job that prints it sends them. */
const definitions = new WeakMap<UserDefinedCharacter, readonly number[]>();

/** `ESC & 3 c c 12 d1..d36`: defines one character in font A (the font the encoder selects). */
export function defineBytes(udc: UserDefinedCharacter): readonly number[] {
  let bytes = definitions.get(udc);
  if (!bytes) {
    bytes = [ESC, 0x26, FONT_A.height / 8, udc.code, udc.code, FONT_A.width, ...glyphColumns(udc)];
    definitions.set(udc, bytes);
  }
  return bytes;
}

function checkGlyph(udc: UserDefinedCharacter): void {
  const shape = udc.rows.length === FONT_A.height && udc.rows.every((r) => /^[#.]{12}$/.test(r));
  if (!shape || udc.code < 0x20 || udc.code > 0x7e) {
    throw new RangeError(
      `user-defined ${udc.char}: needs 24 rows of 12 '#'/'.' and a code in 0x20-0x7E`,
    );
  }
}
