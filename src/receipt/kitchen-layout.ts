/**
 * The kitchen ticket (issue 18): what a cook needs to make an order and a runner to hand it out,
 * read at arm's length from a printer by the stove: the station, the markings, how the order is
 * called (order type, pick-up code, takeout number), then each dish with its quantity in large
 * print, its options and SKU, and the free text. Nothing about money: no prices, no totals, no
 * payment, no QR. It is written on the receipt's sheet in the receipt's styles, so the markings
 * look the same on both and every line fits the columns the same way.
 */
import { AgentError } from '../errors.js';
import { RECEIPT_MAX_LINES } from '../protocol/limits.js';
import type { Charset } from './charset.js';
import {
  BIG,
  BOLD,
  type Layout,
  layoutLength,
  MARK,
  PLAIN,
  printCallout,
  printMarkings,
  printPaperEnd,
  type Segment,
  Sheet,
  TALL_BOLD,
} from './layout.js';
import type { Receipt, ReceiptItem, ReceiptMarkings } from './model.js';
import { type PrinterProfile, profileColumns } from './profile.js';
import { displayWidth, wrap } from './width.js';

export interface KitchenLayoutInput {
  receipt: Receipt;
  profile: PrinterProfile;
  charset: Charset;
  /** The printer role the ticket is for (`kitchen`, `bar`): printed in capitals at the top. */
  role: string;
  /** Indexes into `receipt.items` this ticket lists; null or absent: every item. */
  items?: readonly number[] | null;
  /** Minutes since the order was placed, given when the job prints late; shown from 1 on. */
  placedMinutesAgo?: number | null;
  markings?: ReceiptMarkings;
}

/**
 * Beside a quantity that leaves fewer columns than this, a name would wrap into a narrow column:
 * it goes below the quantity instead (only absurd counts of an order record get there).
 */
const MIN_NAME_COLUMNS = 10;
/** Options and SKU sit this far in when the name is under its quantity. */
const UNDER_INDENT = 2;

export function layoutKitchenTicket(input: KitchenLayoutInput): Layout {
  const { receipt: r, profile } = input;
  const columns = profileColumns(profile);
  const sheet = new Sheet(columns, input.charset);
  const listed = listedItems(r, input.items);

  printMarkings(sheet, input.markings);
  sheet.text(input.role.toUpperCase(), { style: BOLD, align: 'center' });
  sheet.rule('=');
  // How the order is called out, as large as on the receipt the customer holds.
  printCallout(sheet, r);
  sheet.row('Order no.', r.orderNo);
  if (r.createTime) sheet.row('Ordered', r.createTime);
  // A late ticket says how long the guest has waited: the kitchen puts it first.
  const ago = placedAgo(input.placedMinutesAgo);
  if (ago) sheet.text(` ${ago} `, { style: MARK, align: 'center' });
  sheet.rule();

  for (const item of listed) printItem(sheet, item);
  sheet.rule();
  sheet.text(countLine(listed, r.items, input.role), { style: BOLD });

  if (r.customContent) {
    sheet.rule();
    sheet.freeText(
      r.customContent,
      r.source === 'instruction' ? 'order.customPrintContext' : 'customContent',
    );
  }
  if (r.remark) {
    sheet.rule();
    sheet.text('Remark:', { style: BOLD });
    // Bold: a remark is often for the cook (an allergy, no coriander).
    sheet.freeText(r.remark, 'remark', { style: BOLD, indent: 2 });
  }

  // Before the cut: the beep belongs to this ticket (the emulator's paper and its per-ticket files
  // show it there), and the cut follows within milliseconds, so the ticket is ready to take.
  if (profile.buzzer) sheet.commands.push({ kind: 'buzzer' });
  printPaperEnd(sheet, profile);
  sheet.finish();
  const length = layoutLength(sheet.commands);
  if (length > RECEIPT_MAX_LINES) {
    // As on receipts: only item data can get here, and items are never cut.
    throw new AgentError(
      'RENDER_FAILED',
      `the kitchen ticket of order ${r.orderNo} would take ${length} lines of paper, more than the ${RECEIPT_MAX_LINES} a ticket may (items are never cut)`,
    );
  }
  return { columns, commands: sheet.commands, warnings: sheet.warnings, notices: sheet.notices };
}

/**
 * The items a ticket lists, in the order's order. An index outside the order is a routing bug,
 * not something to print around: the ticket is refused rather than missing a dish.
 */
function listedItems(r: Receipt, indexes: readonly number[] | null | undefined): ReceiptItem[] {
  if (indexes == null) return r.items;
  const chosen = new Set<number>();
  for (const i of indexes) {
    if (!Number.isInteger(i) || i < 0 || i >= r.items.length) {
      throw new AgentError(
        'RENDER_FAILED',
        `the kitchen ticket of order ${r.orderNo} lists item ${i}, but the order has items 0 to ${r.items.length - 1}`,
      );
    }
    chosen.add(i);
  }
  if (chosen.size === 0) {
    throw new AgentError('RENDER_FAILED', `the kitchen ticket of order ${r.orderNo} lists no item`);
  }
  return r.items.filter((_, i) => chosen.has(i));
}

/**
 * `2x` in large print, then the name in tall bold beside it; a long name wraps in the columns
 * that remain, its further lines (and the options and SKU) indented under its first letter on
 * paper. The text twin writes the large quantity once, so there the name starts two columns
 * earlier than its continuation lines.
 */
function printItem(sheet: Sheet, item: ReceiptItem): void {
  const quantity = `${item.quantity}x`;
  let indent = displayWidth(quantity) * BIG.width + 1;
  if (sheet.columns - indent < MIN_NAME_COLUMNS) {
    sheet.text(quantity, { style: BIG });
    indent = UNDER_INDENT;
    sheet.text(item.name, { style: TALL_BOLD, indent });
  } else {
    wrap(sheet.printable(item.name), sheet.columns - indent).forEach((line, i) => {
      const segments: Segment[] =
        i === 0
          ? [
              { text: quantity, style: BIG },
              { text: ` ${line}`, style: TALL_BOLD },
            ]
          : [
              { text: ' '.repeat(indent), style: PLAIN },
              { text: line, style: TALL_BOLD },
            ];
      sheet.commands.push({ kind: 'line', segments: segments.filter((s) => s.text !== '') });
    });
  }
  for (const option of item.options) {
    for (const opt of option.items) {
      const label = option.name ? `+ ${option.name}: ${opt.name}` : `+ ${opt.name}`;
      sheet.text(label, { style: BOLD, indent });
    }
  }
  if (item.sku) sheet.text(`SKU ${item.sku}`, { indent });
}

/** Pieces, not lines: what a cook counts on the pass. A part of the order says it is a part. */
function countLine(listed: readonly ReceiptItem[], all: readonly ReceiptItem[], role: string) {
  const pieces = (items: readonly ReceiptItem[]) => items.reduce((n, i) => n + i.quantity, 0);
  const total = pieces(all);
  const plural = (n: number) => `item${n === 1 ? '' : 's'}`;
  if (listed.length === all.length) return `${total} ${plural(total)}`;
  return `${pieces(listed)} of ${total} ${plural(total)} (${role})`;
}

/** `placed 25 min ago`, `placed 2 h 5 min ago`; nothing under a minute. */
function placedAgo(minutes: number | null | undefined): string | null {
  if (minutes == null || !Number.isFinite(minutes) || minutes < 1) return null;
  const m = Math.floor(minutes);
  if (m < 60) return `placed ${m} min ago`;
  const rest = m % 60;
  return `placed ${Math.floor(m / 60)} h${rest === 0 ? '' : ` ${rest} min`} ago`;
}
