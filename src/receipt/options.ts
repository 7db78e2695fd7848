/**
 * What the store configures about its receipts (the `receipt` section of the agent's config):
 * header and footer lines, currency format, and whether to print a QR code of the order number.
 * The store's logo is named by the config (`receipt.logo`, LogoSettings) but reaches the layout
 * only as 1-bit images converted once at start (`ReceiptOptions.logo`, receipt/logo.ts).
 */
import { z } from 'zod';
import { moneyFormatSchema } from '../protocol/money.js';
import type { LineRasterizer } from './raster-text.js';

const printedLine = z.string().max(200, 'must be at most 200 characters');

export const receiptOptionsSchema = z.object({
  header: z
    .array(printedLine)
    .max(10, 'must have at most 10 lines')
    .default([])
    .describe(
      'Lines printed centered at the top (store name first, in large type; address, tax id...).',
    ),
  footer: z
    .array(printedLine)
    .max(10, 'must have at most 10 lines')
    .default([])
    .describe('Lines printed centered at the bottom.'),
  money: moneyFormatSchema.prefault({}).describe('How amounts in cents are printed.'),
  qr: z.boolean().default(false).describe('Print a QR code of the order number at the bottom.'),
  rasterLines: z
    .boolean()
    .default(true)
    .describe(
      'Print a line holding characters the printer cannot print (CJK without a CJK font, Thai, ' +
        'Arabic...) as an image of the line, with the system fonts (fonts-dejavu-core, ' +
        'fonts-unifont): about 1.7 KB per line on 80 mm paper, 1.8 s at 9600 baud. false: such ' +
        'characters print as ?.',
    ),
});

/** A 1-bit image: rows top to bottom, ceil(width / 8) bytes each, MSB leftmost, 1 = black. */
export interface MonoImage {
  width: number;
  height: number;
  data: Uint8Array;
}

export const LOGO_ALIGNS = ['center', 'left', 'right'] as const;
export type LogoAlign = (typeof LOGO_ALIGNS)[number];
/** Bounds of `receipt.logo.widthMm`; wider than a printer prints is printed at its print width. */
export const LOGO_WIDTH_MM = { min: 10, max: 80 } as const;

/** The config's `receipt.logo` (config/schema.ts validates it; receipt/logo.ts reads the file). */
export interface LogoSettings {
  /** PNG or SVG file (absolute once the config is loaded). */
  file: string;
  /** Printed width; absent: the printer's whole print width. */
  widthMm?: number | undefined;
  align: LogoAlign;
}

/** The store's logo as the layout prints it: converted at start, one image per printer profile. */
export interface ReceiptLogo {
  align: LogoAlign;
  /** By profile id; profiles of one print width share one image. */
  images: ReadonlyMap<string, MonoImage>;
}

export type ReceiptOptions = z.output<typeof receiptOptionsSchema> & {
  /**
   * Runtime only, never from the config (which names the file: LogoSettings): the logo printed at
   * the top of each payment receipt. Absent or null: no logo.
   */
  logo?: ReceiptLogo | null;
  /**
   * Runtime only: draws lines holding characters no code page carries (CJK without a CJK font,
   * Thai, Arabic...) as raster images (issue 18, receipt/raster-text.ts). Absent or null: such
   * characters print as `?` with a warning.
   */
  rasterizer?: LineRasterizer | null;
};
export type ReceiptOptionsInput = z.input<typeof receiptOptionsSchema>;

export function receiptOptions(input: ReceiptOptionsInput = {}): ReceiptOptions {
  return receiptOptionsSchema.parse(input);
}
