/**
 * Text never becomes a command (reliability guarantee 9). Every data field passes through here
 * before layout: C0 controls (below 0x20), DEL (0x7F), C1 controls (0x80-0x9F), and invisible
 * format characters (zero-width, bidi overrides) are removed. Only the encoder emits command
 * bytes, and only for what the layout asks.
 *
 * Multi-line fields (custom print content, remark) keep their line breaks as structure: the
 * layout splits on them; they never reach the encoder as bytes.
 */

// C0 except \n, DEL, C1, and invisible format characters (ALM, ZWSP..RLM, bidi embeddings/isolates, variation selectors,
// word joiner and friends, BOM). Tabs are turned into spaces before this runs.
const UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u061C\u200B-\u200F\u202A-\u202E\u2060-\u206F\uFEFF]|\p{Variation_Selector}/gu;

export interface Sanitized {
  text: string;
  /** How many characters were removed: a reason to warn, since merchants do not intend them. */
  removed: number;
}

/** Sanitizes a single-line field: line breaks become spaces, tabs become spaces. */
export function sanitizeLine(value: string): Sanitized {
  return sanitizeText(value.replace(/\r\n|\r|\n/g, ' '));
}

/** Sanitizes a multi-line field: line breaks normalized to `\n` and kept. */
export function sanitizeMultiline(value: string): Sanitized {
  return sanitizeText(value.replace(/\r\n|\r/g, '\n'));
}

function sanitizeText(value: string): Sanitized {
  let removed = 0;
  const stripped = value.replace(/\t/g, ' ').replace(UNSAFE, () => {
    removed++;
    return '';
  });
  // NFC after stripping, so an invisible character between a letter and its accent does not keep
  // them apart: a decomposed "é" (e + U+0301) becomes one printable character.
  return { text: stripped.normalize('NFC'), removed };
}
