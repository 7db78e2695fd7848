/** Fixture orders and the standard receipt options the receipt tests render them with. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { orderRecordSchema } from '../../src/protocol/order-record.js';
import { printInstructionSchema } from '../../src/protocol/print-protocol.js';
import type { ReceiptMarkings } from '../../src/receipt/model.js';
import { type ReceiptOptions, receiptOptions } from '../../src/receipt/options.js';
import type { ReceiptSource, RenderDocument } from '../../src/receipt/render.js';
import { ROOT } from './cli.js';

export const ORDERS_DIR = join(ROOT, 'test', 'fixtures', 'orders');
export const GOLDEN_DIR = join(ROOT, 'test', 'fixtures', 'receipts');

export function loadFixture(name: string): ReceiptSource {
  const value = JSON.parse(readFileSync(join(ORDERS_DIR, `${name}.json`), 'utf8')) as Record<
    string,
    unknown
  >;
  return 'orderInnerNo' in value
    ? { kind: 'record', record: orderRecordSchema.parse(value) }
    : { kind: 'instruction', instruction: printInstructionSchema.parse(value) };
}

export const STORE_OPTIONS: ReceiptOptions = receiptOptions({
  header: ['Kusina ni Lola', '123 Mabini St., Ermita, Manila', 'VAT REG TIN 123-456-789-000'],
  footer: ['Salamat po!', 'This serves as your official receipt.'],
  qr: true,
});

export interface GoldenCase {
  name: string;
  fixture: string;
  profiles: string[];
  markings?: ReceiptMarkings;
  options?: ReceiptOptions;
}

const BOTH = ['generic-58mm', 'generic-80mm'];
const WITH_CJK = [...BOTH, 'pos-5890-gb18030'];

/** At least 12 varied orders on 58 mm and 80 mm (issue 3); CJK ones also on the CJK clone. */
export const GOLDEN_CASES: GoldenCase[] = [
  { name: 'table-offline-simple', fixture: 'table-offline-simple', profiles: BOTH },
  { name: 'queue-online-pwd', fixture: 'queue-online-pwd', profiles: BOTH },
  { name: 'takeout-online-sc', fixture: 'takeout-online-sc', profiles: BOTH },
  { name: 'table-cjk', fixture: 'table-cjk', profiles: WITH_CJK },
  { name: 'queue-fifty-products', fixture: 'queue-fifty-products', profiles: BOTH },
  { name: 'table-zero-prices-promo', fixture: 'table-zero-prices-promo', profiles: BOTH },
  { name: 'takeout-offline-long-custom', fixture: 'takeout-offline-long-custom', profiles: BOTH },
  { name: 'table-every-fee', fixture: 'table-every-fee', profiles: BOTH },
  { name: 'queue-online-quirks', fixture: 'queue-online-quirks', profiles: WITH_CJK },
  { name: 'record-options-remark', fixture: 'record-options-remark', profiles: BOTH },
  { name: 'record-refunded-empty-remark', fixture: 'record-refunded-empty-remark', profiles: BOTH },
  { name: 'record-cjk-options', fixture: 'record-cjk-options', profiles: WITH_CJK },
  {
    name: 'reprint-marked',
    fixture: 'table-offline-simple',
    profiles: BOTH,
    markings: { reprint: { count: 2, originalTime: '2026-11-25 11:02:15' } },
  },
  {
    name: 'duplicate-late-marked',
    fixture: 'takeout-online-sc',
    profiles: ['generic-58mm'],
    markings: { possibleDuplicate: true, late: true },
  },
  {
    name: 'plain-no-header-code-display',
    fixture: 'queue-online-pwd',
    profiles: ['epson-tm-t88vi'],
    options: receiptOptions({ money: { currency: 'PHP', locale: 'en-PH', display: 'code' } }),
  },
];

export type KitchenDocument = Extract<RenderDocument, { layout: 'kitchen' }>;

export interface KitchenCase {
  name: string;
  fixture: string;
  profiles: string[];
  document: KitchenDocument;
  markings?: ReceiptMarkings;
}

const KITCHEN: KitchenDocument = { layout: 'kitchen', role: 'kitchen' };

/**
 * Kitchen tickets (issue 18), written to `kitchen.<name>.<profile>.txt`: every order type, order
 * records with options, SKUs and a remark, CJK (also on the CJK clone, which has no cutter), a
 * part of an order for another station, the markings, and a late ticket.
 */
export const KITCHEN_CASES: KitchenCase[] = [
  {
    name: 'table-offline-simple',
    fixture: 'table-offline-simple',
    profiles: BOTH,
    document: KITCHEN,
  },
  { name: 'queue-online-pwd', fixture: 'queue-online-pwd', profiles: BOTH, document: KITCHEN },
  { name: 'takeout-online-sc', fixture: 'takeout-online-sc', profiles: BOTH, document: KITCHEN },
  {
    name: 'takeout-offline-long-custom',
    fixture: 'takeout-offline-long-custom',
    profiles: BOTH,
    document: KITCHEN,
  },
  { name: 'table-cjk', fixture: 'table-cjk', profiles: WITH_CJK, document: KITCHEN },
  {
    name: 'record-cjk-options',
    fixture: 'record-cjk-options',
    profiles: WITH_CJK,
    document: KITCHEN,
  },
  {
    name: 'record-options-remark',
    fixture: 'record-options-remark',
    profiles: BOTH,
    document: KITCHEN,
  },
  {
    name: 'queue-fifty-products',
    fixture: 'queue-fifty-products',
    profiles: ['generic-58mm'],
    document: KITCHEN,
  },
  {
    // Halo-halo and the water go to the bar; the adobo (item 0) to the kitchen.
    name: 'bar-subset',
    fixture: 'queue-online-pwd',
    profiles: BOTH,
    document: { layout: 'kitchen', role: 'bar', items: [1, 2] },
  },
  {
    name: 'reprint-marked',
    fixture: 'table-offline-simple',
    profiles: BOTH,
    document: KITCHEN,
    markings: { reprint: { count: 2, originalTime: '2026-11-25 11:02:15' } },
  },
  {
    name: 'late-placed',
    fixture: 'takeout-online-sc',
    profiles: BOTH,
    document: { ...KITCHEN, placedMinutesAgo: 25 },
    markings: { late: true },
  },
];

/**
 * ESC/POS commands a hostile or careless text field could carry, written from the command
 * reference: drawer kick (both pins), full and partial cut, real-time drawer pulse, real-time
 * status, Kanji mode, initialize, print mode, a C1 CSI, an ANSI escape, NUL/BEL/CR/VT/FF/DEL.
 */
export const ESC_POS_PAYLOADS: readonly string[] = [
  '\x1Bp\x00\x19\xFA',
  '\x1Bp\x01\x32\x32',
  '\x1DV\x00',
  '\x1DVB\x00',
  '\x10\x14\x01\x00\x05',
  '\x10\x04\x01',
  '\x1C&',
  '\x1B@',
  '\x1B!\x30',
  '\x9B31m',
  '\x1B[31m',
  '\x00\x07\r\x0B\x0C\x7F',
];

/**
 * What the sanitizer must make of a single-line field, written independently of the code under
 * test: a line break (CR, LF, CRLF) becomes a space, every other control character goes.
 */
export function stripControls(text: string): string {
  return (
    text
      .replace(/\r\n|\r|\n/g, ' ')
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the test's own definition of control characters
      .replace(/[\x00-\x1F\x7F-\x9F]/g, '')
  );
}
