/**
 * What the tests of drawn lines need: system fonts that have CJK and Thai as well as Latin
 * (Debian packages fonts-dejavu-core and fonts-unifont; .ci/run installs them). With DejaVu
 * alone, such characters print as `?` (issue 42 item 13), so these tests skip, saying why.
 */
import { LineRasterizer } from '../../src/receipt/raster-text.js';

export const FONTS_SKIP =
  'needs system fonts with CJK and Thai (Debian packages fonts-dejavu-core and fonts-unifont)';

/** `false` to run, or the skip message when the system's fonts lack CJK or Thai. */
export function skipWithoutFonts(): false | string {
  const fonts = LineRasterizer.fromSystem();
  return fonts && [...'中ผب'].every((ch) => fonts.covers(ch)) ? false : FONTS_SKIP;
}
