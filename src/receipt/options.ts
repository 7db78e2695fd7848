/**
 * What the store configures about its receipts (the `receipt` section of the agent's config):
 * header and footer lines, currency format, and whether to print a QR code of the order number.
 */
import { z } from 'zod';
import { moneyFormatSchema } from '../protocol/money.js';

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
});

export type ReceiptOptions = z.output<typeof receiptOptionsSchema>;
export type ReceiptOptionsInput = z.input<typeof receiptOptionsSchema>;

export function receiptOptions(input: ReceiptOptionsInput = {}): ReceiptOptions {
  return receiptOptionsSchema.parse(input);
}
