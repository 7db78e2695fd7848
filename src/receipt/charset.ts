/**
 * What a printer can print. Each profile prints text in one single-byte code page, plus CJK
 * through `FS &` + GB18030 when it has a CJK font. Text is mapped before layout, so widths are
 * right and nothing is lost silently:
 * - common typography the code pages lack is transliterated (curly quotes, dashes, ellipsis);
 * - currency signs become the ISO code (`₱` -> `PHP`; escpos-notes "Currency signs"), except
 *   on a profile with user-defined characters, which prints `₱` as a glyph the job downloads
 *   (user-defined.ts): one column, like a code-page character;
 * - wide CJK characters stay when the profile has a CJK font (encoded later as GB18030);
 * - anything else becomes `?` and is reported, so the job carries a warning.
 *
 * Code-page positions 0x00-0x1F and 0x7F hold graphics in PC437 and friends (`←` is 0x1B, ESC),
 * so characters that would encode there are never printable: text must never produce a command.
 */
import { createRequire } from 'node:module';
import CodepageEncoder, { type Codepage } from '@point-of-sale/codepage-encoder';
import type Iconv from 'iconv-lite';
import type { PrinterProfile } from './profile.js';
import { USER_DEFINED_CHARACTERS, type UserDefinedCharacter } from './user-defined.js';
import { charWidth } from './width.js';

export const REPLACEMENT = '?';

/** Currency signs that single-byte code pages mostly lack, by ISO 4217 code. */
export const CURRENCY_CODES: Readonly<Record<string, string>> = {
  '₱': 'PHP',
  '₹': 'INR',
  '₩': 'KRW',
  '₺': 'TRY',
  '₽': 'RUB',
  '₴': 'UAH',
  '₦': 'NGN',
  '₫': 'VND',
  '฿': 'THB',
  '₪': 'ILS',
  '₸': 'KZT',
  '₼': 'AZN',
  '₾': 'GEL',
  '৳': 'BDT',
  '₭': 'LAK',
  '₮': 'MNT',
  '₡': 'CRC',
  '₵': 'GHS',
  '₲': 'PYG',
  '€': 'EUR',
  '£': 'GBP',
  '¥': 'JPY',
};

const TRANSLITERATIONS: Readonly<Record<string, string>> = {
  '\u00A0': ' ',
  '\u2002': ' ',
  '\u2003': ' ',
  '\u2009': ' ',
  '\u202F': ' ',
  '\u2010': '-',
  '\u2011': '-',
  '\u2012': '-',
  '\u2013': '-',
  '\u2014': '-',
  '\u2015': '-',
  '\u2212': '-',
  '\u2018': "'",
  '\u2019': "'",
  '\u201A': "'",
  '\u201B': "'",
  '\u201C': '"',
  '\u201D': '"',
  '\u201E': '"',
  '\u2026': '...',
  '\u2022': '*',
  '\u00D7': 'x',
};

export interface MappedText {
  text: string;
  /** Characters replaced by `?`, each once, in order of appearance. */
  unprintable: string[];
}

/** What the raster fonts can draw (`LineRasterizer`). */
export interface DrawableCharacters {
  /** Whether a font has `ch`: drawing one none has prints an empty box (issue 42 item 13). */
  covers(ch: string): boolean;
}

export interface CharsetOptions {
  /**
   * Lines can be drawn as raster images (a rasterizer with fonts is there): a character the
   * printer cannot print from its fonts stays in the text, and its line is drawn (`drawn`), if
   * the fonts have it (`DrawableCharacters`; `true`: any character). One they lack is `?`.
   */
  raster?: boolean | DrawableCharacters | null;
}

export interface Charset {
  readonly codepage: Codepage;
  /**
   * Characters printed as user-defined characters (`ESC &`, `ESC %`), by character: `₱` on a
   * profile with `userDefinedCharacters`, none otherwise. The encoder downloads and selects them.
   */
  readonly userDefined: ReadonlyMap<string, UserDefinedCharacter>;
  /**
   * True when `ch` prints in one column of the body font: from the code page, or as a
   * user-defined character standing on a code-page position.
   */
  inCodepage(ch: string): boolean;
  /** True when `ch` prints through the CJK font (`FS &` + GB18030). */
  isCjk(ch: string): boolean;
  /** The printable form of `text`. */
  map(text: string): MappedText;
  /**
   * True when `ch` is kept in the text only to be drawn: the line holding it prints as a raster
   * image (issue 18). Never true without the `raster` option.
   */
  drawn(ch: string): boolean;
  /** Code-page bytes of printable text (`map`) with no CJK and no user-defined character. */
  encode(text: string): Uint8Array;
  /**
   * True when every character of `text` is printable ASCII (0x20-0x7E) that the code page holds at
   * its own code: text that maps to itself, encodes byte for byte and is never drawn, CJK or
   * user-defined. Most of a receipt is such text; the checks per character cost a third of its
   * render time (issue 16).
   */
  plain(text: string): boolean;
}

/** Printable ASCII only (the empty text too). */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

const codepageBytes = new Map<string, ReadonlyMap<number, number>>();

/**
 * Each printable character's byte in the code page: the encoder library's table, read once per
 * code page (its own `encode` clones the whole definition and scans it for every piece of text:
 * over half of a receipt's render time, issue 16).
 */
function printableBytes(codepage: Codepage): ReadonlyMap<number, number> {
  let bytes = codepageBytes.get(codepage);
  if (!bytes) {
    const table = CodepageEncoder.getCodepoints(codepage, true);
    const map = new Map<number, number>();
    // A character the table also holds at 0x00-0x1F or 0x7F is encoded there (the first match),
    // as a control byte: PC850/858 have ¶ and § at 0x14/0x15 as well as at F4/F5.
    const atControl = new Set<number>();
    for (const byte of [...Array(0x20).keys(), 0x7f]) {
      const cp = table[byte];
      if (cp !== undefined) atControl.add(cp);
    }
    // ASCII 0x20-0x7E is the same in every code page the encoder offers us; above it, the table.
    // The first byte holding a character is the one the library would choose.
    for (let byte = 0x20; byte < table.length; byte++) {
      const cp = table[byte];
      if (byte !== 0x7f && cp !== undefined && cp !== 0 && !atControl.has(cp) && !map.has(cp))
        map.set(cp, byte);
    }
    bytes = map;
    codepageBytes.set(codepage, bytes);
  }
  return bytes;
}

let iconv: typeof Iconv | undefined;

/**
 * Text as GB18030, for profiles with a CJK font. iconv-lite is required on the first CJK character,
 * not imported: its 0.5 MB of code cost every agent about 1 MB of memory (decision 162), and most
 * printers never see a CJK character (issue 16). Required at run time from node_modules,
 * where the package ships it, so the bundle leaves it out of the agent's chunks.
 */
export function encodeGb18030(text: string): Buffer {
  iconv ??= createRequire(import.meta.url)('iconv-lite') as typeof Iconv;
  return iconv.encode(text, 'gb18030');
}

/** GB18030 two-byte characters only: the four-byte range is beyond what printer fonts carry. */
function gbTwoByte(ch: string): boolean {
  const bytes = encodeGb18030(ch);
  return bytes.length === 2 && bytes[0]! >= 0x81 && bytes[1]! >= 0x40;
}

/**
 * The user-defined characters a profile prints. The glyphs are drawn for font A's 12 x 24 cell,
 * the font the encoder selects; a profile whose body font is B keeps the ISO code.
 */
function userDefinedFor(profile: PrinterProfile): ReadonlyMap<string, UserDefinedCharacter> {
  if (!profile.userDefinedCharacters || profile.font !== 'A') return new Map();
  return new Map(USER_DEFINED_CHARACTERS.map((udc) => [udc.char, udc]));
}

/**
 * One charset per profile object and raster setting: building one (the user-defined map, the
 * ASCII check over 95 codes) for every receipt cost about 4% of its render (57.5 -> 55.3 us
 * in-process; issue 16). Profiles are not changed after loading (a changed profile is a new
 * object), and a charset holds nothing of a job: its only state is the cache of which wide
 * characters GB18030 has, one boolean per wide character ever printed (a menu's few hundred).
 */
const charsets = new WeakMap<
  PrinterProfile,
  { plain?: Charset; raster?: Charset; fonts?: WeakMap<DrawableCharacters, Charset> }
>();

export function charsetFor(profile: PrinterProfile, options: CharsetOptions = {}): Charset {
  let byMode = charsets.get(profile);
  if (!byMode) {
    byMode = {};
    charsets.set(profile, byMode);
  }
  const raster = options.raster ?? false;
  if (typeof raster === 'object') {
    byMode.fonts ??= new WeakMap();
    let charset = byMode.fonts.get(raster);
    if (!charset) {
      charset = buildCharset(profile, options);
      byMode.fonts.set(raster, charset);
    }
    return charset;
  }
  const mode = raster ? 'raster' : 'plain';
  byMode[mode] ??= buildCharset(profile, options);
  return byMode[mode];
}

function buildCharset(profile: PrinterProfile, options: CharsetOptions): Charset {
  const codepage = profile.codepage as Codepage;
  const bytes = printableBytes(codepage);
  const cjkCache = new Map<string, boolean>();
  const userDefined = userDefinedFor(profile);
  // Every code page we offer has ASCII at its own codes, and no user-defined character is ASCII;
  // checked, not assumed, so a table that differs only loses the shortcut.
  let asciiAtOwnCodes = true;
  for (let cp = 0x20; cp <= 0x7e; cp++)
    if (bytes.get(cp) !== cp || userDefined.has(String.fromCharCode(cp))) asciiAtOwnCodes = false;
  const plain = (text: string) => asciiAtOwnCodes && PRINTABLE_ASCII.test(text);
  const inCodepage = (ch: string) => bytes.has(ch.codePointAt(0) ?? -1) || userDefined.has(ch);
  const isCjk = (ch: string) => {
    if (!profile.cjk || charWidth(ch) !== 2) return false;
    let ok = cjkCache.get(ch);
    if (ok === undefined) {
      ok = gbTwoByte(ch);
      cjkCache.set(ch, ok);
    }
    return ok;
  };
  // Space and controls never need drawing (the sanitizer removed controls before layout).
  const raster = options.raster ?? false;
  const drawn = (ch: string) =>
    raster !== false &&
    ch > ' ' &&
    !inCodepage(ch) &&
    !isCjk(ch) &&
    (raster === true || raster.covers(ch));
  return {
    codepage,
    userDefined,
    inCodepage,
    isCjk,
    drawn,
    plain,
    map(text: string): MappedText {
      if (plain(text)) return { text, unprintable: [] };
      let out = '';
      const unprintable: string[] = [];
      const chars = [...text];
      for (let i = 0; i < chars.length; i++) {
        const ch = chars[i]!;
        if (inCodepage(ch) || isCjk(ch)) {
          out += ch;
          continue;
        }
        const iso = CURRENCY_CODES[ch];
        if (iso !== undefined) {
          // `₱50` reads as `PHP 50`, not `PHP50`.
          out += /[0-9]/.test(chars[i + 1] ?? '') ? `${iso} ` : iso;
          continue;
        }
        const translit = TRANSLITERATIONS[ch];
        if (translit !== undefined) {
          out += translit;
          continue;
        }
        // Compatibility forms (fullwidth Latin, ligatures, superscripts) print as their plain form.
        const compat = ch.normalize('NFKC');
        if (compat !== ch && [...compat].every((c) => inCodepage(c) || isCjk(c))) {
          out += compat;
          continue;
        }
        if (drawn(ch)) {
          // Printed as a picture of its line, as a person wrote it.
          out += ch;
          continue;
        }
        out += REPLACEMENT;
        if (!unprintable.includes(ch)) unprintable.push(ch);
      }
      return { text: out, unprintable };
    },
    encode(text: string): Uint8Array {
      const out = new Uint8Array(text.length);
      let length = 0;
      for (const ch of text) {
        const byte = bytes.get(ch.codePointAt(0)!);
        // `map` never lets such a character through; a `?` is what the library would print.
        out[length++] = byte ?? 0x3f;
      }
      return out.subarray(0, length);
    },
  };
}
