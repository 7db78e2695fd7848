/**
 * How many character cells a decoded character takes on the paper.
 *
 * A thermal printer prints every double-byte (Kanji/GB) code as a full-width glyph, two cells of
 * the ANK font, whatever Unicode says of the character (GBK A1A4 is U+00B7, "narrow" in
 * Unicode, yet printed in a 24x24 cell). So double-byte mode never asks this function. It is used
 * where the printer takes Unicode text (UTF-8 mode, `FS ( C` fn 48) and must itself choose a cell:
 * East Asian Wide and Fullwidth characters take two cells, everything else one (ambiguous
 * characters are narrow, as UAX #11 advises when the context is unknown).
 */
import { eastAsianWidth } from 'get-east-asian-width';

export function cellsOf(char: string): 1 | 2 {
  const cp = char.codePointAt(0);
  if (cp === undefined) return 1;
  return eastAsianWidth(cp);
}
