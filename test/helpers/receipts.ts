/** Fixture orders and the standard receipt options the receipt tests render them with. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { orderRecordSchema } from '../../src/protocol/order-record.js';
import { printInstructionSchema } from '../../src/protocol/print-protocol.js';
import type { ReceiptMarkings } from '../../src/receipt/model.js';
import { type ReceiptOptions, receiptOptions } from '../../src/receipt/options.js';
import type { ReceiptSource } from '../../src/receipt/render.js';
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
