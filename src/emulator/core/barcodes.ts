/**
 * What the printer knows of barcodes and 2-D symbols: the `GS k` symbology numbers, the `GS ( k`
 * symbol types, and the CODE128 code-set prefixes (`{A` `{B` `{C`) that Epson requires in the
 * data, decoded back to the human-readable content.
 */

/** `GS k m` symbology names (ESC/POS reference, "GS k"): form A m = 0..6, form B m = 65..79. */
export const BARCODE_SYMBOLOGIES: Readonly<Record<number, string>> = Object.freeze({
  0: 'UPC-A',
  1: 'UPC-E',
  2: 'EAN13',
  3: 'EAN8',
  4: 'CODE39',
  5: 'ITF',
  6: 'CODABAR',
  65: 'UPC-A',
  66: 'UPC-E',
  67: 'EAN13',
  68: 'EAN8',
  69: 'CODE39',
  70: 'ITF',
  71: 'CODABAR',
  72: 'CODE93',
  73: 'CODE128',
  74: 'GS1-128',
  75: 'GS1 DataBar Omnidirectional',
  76: 'GS1 DataBar Truncated',
  77: 'GS1 DataBar Limited',
  78: 'GS1 DataBar Expanded',
  79: 'CODE128 auto',
});

/** `GS ( k` cn -> symbol type. */
export const SYMBOL_TYPES: Readonly<Record<number, string>> = Object.freeze({
  48: 'PDF417',
  49: 'QR',
  50: 'MaxiCode',
  51: 'GS1 DataBar',
  52: 'Composite',
  53: 'Aztec',
  54: 'DataMatrix',
});

export interface Code128Text {
  /** The encoded characters, code-set switches, shifts and FNC codes removed. */
  text: string;
  /** Why the data is not what Epson accepts (no leading code set, bad byte in set C), if so. */
  problem?: string;
}

/**
 * Decodes CODE128 data as Epson's `GS k 73` takes it: the data starts with a code-set
 * selection (`{A`, `{B`, `{C`); `{S` shifts one character between A and B; `{1`..`{4` are FNC1..4;
 * `{{` is a literal `{` in sets A and B; in set C each byte 0..99 stands for two digits.
 */
export function decodeCode128(data: Uint8Array): Code128Text {
  let set: 'A' | 'B' | 'C' | undefined;
  let shift = false;
  let text = '';
  let problem: string | undefined;
  for (let i = 0; i < data.length; i++) {
    const b = data[i]!;
    if (b === 0x7b && i + 1 < data.length) {
      const c = String.fromCharCode(data[i + 1]!);
      if (c === 'A' || c === 'B' || c === 'C') {
        set = c;
        i++;
        continue;
      }
      if (c === 'S' || c === '1' || c === '2' || c === '3' || c === '4') {
        if (c === 'S') shift = true;
        i++;
        continue;
      }
      if (c === '{' && set !== 'C') {
        text += '{';
        i++;
        continue;
      }
    }
    if (set === undefined) {
      problem ??= 'CODE128 data must start with a code set selection ({A, {B or {C)';
      text += String.fromCharCode(b);
      continue;
    }
    if (set === 'C' && !shift) {
      if (b > 99) problem ??= `byte ${b} is not a value of code set C (0-99)`;
      text += b <= 99 ? String(b).padStart(2, '0') : String.fromCharCode(b);
      continue;
    }
    shift = false;
    text += String.fromCharCode(b);
  }
  return problem ? { text, problem } : { text };
}
