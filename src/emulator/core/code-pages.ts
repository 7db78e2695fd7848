/**
 * Character tables of the emulated printer: the `ESC t n` code pages (0x80-0xFF), the `ESC R n`
 * international character sets (a dozen ASCII positions), and the double-byte decoding used in
 * Kanji/Chinese mode (`FS &`).
 *
 * The `ESC t` table is data, not code: Epson's numbering is the default, and a clone that
 * renumbers its pages (many do, see escpos-notes "read the table from the printer profile") gets
 * its own table passed to the decoder.
 */
import iconv from 'iconv-lite';

export interface CodePage {
  /** Name as printed in the printer's manual, e.g. `PC858`. */
  name: string;
  /** iconv-lite encoding that decodes the page's 256 bytes, e.g. `cp858`. */
  encoding: string;
}

/** `ESC t n` number -> code page. */
export type CodePageTable = Readonly<Record<number, CodePage>>;

/** Pseudo-encoding name of Epson's Katakana page, which iconv-lite does not have. */
export const KATAKANA = 'epson-katakana';

/**
 * Epson's `ESC t` numbering (ESC/POS reference, "ESC t: Select character code table"), limited to
 * the pages iconv-lite can decode plus Katakana (built here). Missing numbers (Hiragana 6, Kanji 7/8, PC851 11,
 * PC853 12, Thai 20-26, TCVN-3 30/31, PC1098 41, PC1118 42, PC1119 43, KZ-1048 53, user-defined
 * 254/255) make the decoder keep the previous page and record a warning.
 */
export const EPSON_CODE_PAGES: CodePageTable = Object.freeze({
  0: { name: 'PC437', encoding: 'cp437' },
  1: { name: 'Katakana', encoding: KATAKANA },
  2: { name: 'PC850', encoding: 'cp850' },
  3: { name: 'PC860', encoding: 'cp860' },
  4: { name: 'PC863', encoding: 'cp863' },
  5: { name: 'PC865', encoding: 'cp865' },
  13: { name: 'PC857', encoding: 'cp857' },
  14: { name: 'PC737', encoding: 'cp737' },
  15: { name: 'ISO8859-7', encoding: 'iso88597' },
  16: { name: 'WPC1252', encoding: 'windows1252' },
  17: { name: 'PC866', encoding: 'cp866' },
  18: { name: 'PC852', encoding: 'cp852' },
  19: { name: 'PC858', encoding: 'cp858' },
  32: { name: 'PC720', encoding: 'cp720' },
  33: { name: 'WPC775', encoding: 'cp775' },
  34: { name: 'PC855', encoding: 'cp855' },
  35: { name: 'PC861', encoding: 'cp861' },
  36: { name: 'PC862', encoding: 'cp862' },
  37: { name: 'PC864', encoding: 'cp864' },
  38: { name: 'PC869', encoding: 'cp869' },
  39: { name: 'ISO8859-2', encoding: 'iso88592' },
  40: { name: 'ISO8859-15', encoding: 'iso885915' },
  44: { name: 'PC1125', encoding: 'cp1125' },
  45: { name: 'WPC1250', encoding: 'windows1250' },
  46: { name: 'WPC1251', encoding: 'windows1251' },
  47: { name: 'WPC1253', encoding: 'windows1253' },
  48: { name: 'WPC1254', encoding: 'windows1254' },
  49: { name: 'WPC1255', encoding: 'windows1255' },
  50: { name: 'WPC1256', encoding: 'windows1256' },
  51: { name: 'WPC1257', encoding: 'windows1257' },
  52: { name: 'WPC1258', encoding: 'windows1258' },
});

const tables = new Map<string, readonly string[]>();

/**
 * Epson page 1 (Katakana): ASCII, block and box-drawing graphics at 0x80-0x9F (receiptline draws
 * its rules with 0x95 `─`, 0x96 `│` and the corners at 0x98-0x9F), JIS X 0201 half-width katakana
 * at 0xA1-0xDF, more graphics and kanji for dates and money at 0xE0-0xFE (the NEC/JIS layout
 * Epson follows; 0xE0-0xFF from the character code table, not cross-checked on hardware (?)).
 */
function katakanaTable(): string[] {
  const table = Array.from({ length: 256 }, (_, i) => (i < 0x80 ? String.fromCharCode(i) : ' '));
  const high = '▁▂▃▄▅▆▇█▏▎▍▌▋▊▉┼┴┬┤├▔─│▕┌┐└┘╭╮╰╯';
  [...high].forEach((ch, i) => {
    table[0x80 + i] = ch;
  });
  for (let b = 0xa1; b <= 0xdf; b++) table[b] = String.fromCharCode(0xff61 + (b - 0xa1));
  [...'═╞╪╡◢◣◥◤♠♥♦♣●○╱╲╳円年月日時分秒〒市区町村人▓'].forEach((ch, i) => {
    table[0xe0 + i] = ch;
  });
  table[0x7f] = ' ';
  return table;
}

/**
 * The 256 characters of a single-byte encoding, built once per encoding. Bytes below 0x20 never
 * reach it (they are control codes in ESC/POS). DEL (0x7F) has no printable glyph in the iconv
 * tables; it is kept as a blank column so the line keeps its width.
 */
export function singleByteTable(encoding: string): readonly string[] {
  const known = tables.get(encoding);
  if (known) return known;
  if (encoding === KATAKANA) {
    const table = katakanaTable();
    tables.set(encoding, table);
    return table;
  }
  const all = new Uint8Array(256);
  for (let i = 0; i < 256; i++) all[i] = i;
  const table = Array.from(iconv.decode(Buffer.from(all), encoding));
  if (table.length !== 256) throw new Error(`${encoding} is not a single-byte encoding`);
  table[0x7f] = ' ';
  tables.set(encoding, table);
  return table;
}

/**
 * `ESC R n` international character sets: the ASCII characters each set replaces (ESC/POS
 * reference, "ESC R"; the same substitutions as the ISO 646 national variants), keyed by the
 * ASCII character. Only sets whose substitutions are certain are listed; another `n` keeps ASCII
 * and records a warning.
 */
export const INTERNATIONAL_CHARACTER_SETS: Readonly<
  Record<number, { name: string; map: Readonly<Record<string, string>> }>
> = Object.freeze({
  0: { name: 'U.S.A.', map: {} },
  1: {
    name: 'France',
    map: { '@': 'à', '[': '°', '\\': 'ç', ']': '§', '{': 'é', '|': 'ù', '}': 'è', '~': '¨' },
  },
  2: {
    name: 'Germany',
    map: { '@': '§', '[': 'Ä', '\\': 'Ö', ']': 'Ü', '{': 'ä', '|': 'ö', '}': 'ü', '~': 'ß' },
  },
  3: { name: 'U.K.', map: { '#': '£' } },
  8: { name: 'Japan', map: { '\\': '¥' } },
  13: { name: 'Korea', map: { '\\': '₩' } },
  15: { name: 'China', map: { '\\': '¥' } },
});

/**
 * Length of the GB18030 sequence that starts with `lead` and continues with `second`:
 * 2 for GBK pairs (lead 81-FE, trail 40-7E or 80-FE), 4 for four-byte sequences (81-FE 30-39 ..),
 * 0 when `second` cannot continue a character (the lead byte is then printed as a replacement).
 */
export function gb18030Length(lead: number, second: number): 0 | 2 | 4 {
  if (lead < 0x81 || lead > 0xfe) return 0;
  if ((second >= 0x40 && second <= 0x7e) || (second >= 0x80 && second <= 0xfe)) return 2;
  if (second >= 0x30 && second <= 0x39) return 4;
  return 0;
}

/** True for a byte that opens a double-byte character in Kanji/Chinese mode (GBK/GB18030). */
export function isGb18030Lead(b: number): boolean {
  return b >= 0x81 && b <= 0xfe;
}

/** Decodes one complete GB18030 character (2 or 4 bytes); U+FFFD when the bytes name none. */
export function decodeGb18030(bytes: Uint8Array): string {
  const text = iconv.decode(Buffer.from(bytes), 'gb18030');
  return text === '' ? '\uFFFD' : text;
}

/** Expected length of a UTF-8 sequence from its first byte; 0 for a byte that cannot start one. */
export function utf8Length(lead: number): 0 | 1 | 2 | 3 | 4 {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

const utf8 = new TextDecoder('utf-8', { fatal: false });

/** Decodes one complete UTF-8 sequence; malformed sequences become U+FFFD. */
export function decodeUtf8(bytes: Uint8Array): string {
  return utf8.decode(bytes);
}
