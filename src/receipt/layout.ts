/**
 * Layout: a receipt and a printer profile become a list of layout commands, one per printed line
 * (plus QR, feed, cut and buzzer). Every line is already mapped to what the printer can print,
 * wrapped and padded to the exact column count, so the ESC/POS encoder and the text twin render
 * the same thing and tests can assert on meaning before bytes. The kitchen ticket
 * (kitchen-layout.ts) is written on the same sheet, in the same styles.
 *
 * Alignment is done with spaces in normal size, never with `ESC a`, so that the text twin is
 * column-exact and a line's position never depends on printer state. Only what is not text (the
 * QR code, the store's logo) is placed with `ESC a`, set just before it and reset just after.
 */

import { AgentError } from '../errors.js';
import { FREE_TEXT_MAX_LINES, QR_CODE_LINES, RECEIPT_MAX_LINES } from '../protocol/limits.js';
import { formatMoney, type MoneyFormat } from '../protocol/money.js';
import type { Charset } from './charset.js';
import type { Receipt, ReceiptMarkings } from './model.js';
import type { LogoAlign, MonoImage, ReceiptOptions } from './options.js';
import { type PrinterProfile, profileColumns } from './profile.js';
import { displayWidth, wrap } from './width.js';

export interface Style {
  bold: boolean;
  underline: boolean;
  invert: boolean;
  /** Character width and height multipliers (`GS !`). */
  width: 1 | 2;
  height: 1 | 2;
}

export const PLAIN: Style = { bold: false, underline: false, invert: false, width: 1, height: 1 };

export interface Segment {
  text: string;
  style: Style;
}

export type LayoutCommand =
  | { kind: 'line'; segments: Segment[] }
  | { kind: 'qr'; data: string }
  /**
   * A 1-bit raster (`GS v 0`), at most RASTER_BAND_DOTS high: the store's logo, split in bands.
   * `width` is a multiple of 8; `data` is MonoImage's packing.
   */
  | ({ kind: 'image'; align: LogoAlign } & MonoImage)
  | { kind: 'feed'; lines: number }
  | { kind: 'cut'; type: 'partial' | 'full' }
  /** Sound the profile's buzzer (`profile.buzzer` says how); only kitchen tickets beep. */
  | { kind: 'buzzer' };

/** Something the service should hear about a job that still prints (job event `warnings`). */
export interface LayoutNotice {
  code: 'CONTENT_CUT';
  message: string;
}

export interface Layout {
  columns: number;
  commands: LayoutCommand[];
  /** Printing problems found while laying out: unprintable characters, missing capabilities. */
  warnings: string[];
  /** Reported with the job's events: free text cut at FREE_TEXT_MAX_LINES (CONTENT_CUT). */
  notices: LayoutNotice[];
}

/** Dots of one text line of font A: what an image's height counts for in lines. */
export const LINE_DOTS = 24;
/**
 * The tallest raster sent in one `GS v 0`: 240 dots (10 lines, 30 mm at 203 dpi, 17 KB at 576
 * dots wide). Cheap printers take a raster whole into a small receive buffer, and some clones
 * read only yL of the height, so an image is sent in bands that stay under 256 rows.
 */
export const RASTER_BAND_DOTS = 240;

/** Lines of paper one copy takes, as RECEIPT_MAX_LINES counts them. */
export function layoutLength(commands: readonly LayoutCommand[]): number {
  let lines = 0;
  for (const c of commands) {
    if (c.kind === 'line') lines += c.segments.some((s) => s.style.height === 2) ? 2 : 1;
    else if (c.kind === 'image') lines += Math.ceil(c.height / LINE_DOTS);
    else if (c.kind === 'qr') lines += QR_CODE_LINES;
    else if (c.kind === 'feed') lines += c.lines;
  }
  return lines;
}

type Align = 'left' | 'center' | 'right';

/**
 * Lays out lines for one printer; the only place that knows about columns. Every document (the
 * receipt, the kitchen ticket, the test page) is written on one, so all of them fit alike.
 */
export class Sheet {
  readonly commands: LayoutCommand[] = [];
  readonly warnings: string[] = [];
  readonly notices: LayoutNotice[] = [];
  private readonly unprintable = new Set<string>();

  constructor(
    readonly columns: number,
    private readonly charset: Charset,
  ) {}

  /** Printable form of a data text; unprintable characters are remembered for one warning. */
  printable(text: string): string {
    const mapped = this.charset.map(text);
    for (const ch of mapped.unprintable) this.unprintable.add(ch);
    return mapped.text;
  }

  finish(): void {
    if (this.unprintable.size > 0) {
      const list = [...this.unprintable]
        .map((ch) => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`)
        .join(', ');
      this.warnings.push(`characters not printable on this printer were replaced by '?': ${list}`);
    }
  }

  blank(): void {
    this.commands.push({ kind: 'line', segments: [] });
  }

  rule(char = '-'): void {
    this.commands.push({
      kind: 'line',
      segments: [{ text: char.repeat(this.columns), style: PLAIN }],
    });
  }

  private pushLine(text: string, style: Style, align: Align, indent = 0): void {
    const used = displayWidth(text) * style.width;
    const free = Math.max(0, this.columns - used - indent);
    const pad = indent + (align === 'center' ? Math.floor(free / 2) : align === 'right' ? free : 0);
    const segments: Segment[] = [];
    if (pad > 0) segments.push({ text: ' '.repeat(pad), style: PLAIN });
    if (text !== '') segments.push({ text, style });
    this.commands.push({ kind: 'line', segments });
  }

  /** A paragraph of data text, wrapped to the width available at this character size. */
  text(value: string, options: { style?: Style; align?: Align; indent?: number } = {}): void {
    const style = options.style ?? PLAIN;
    const indent = options.indent ?? 0;
    const room = Math.max(1, Math.floor((this.columns - indent) / style.width));
    for (const line of wrap(this.printable(value), room))
      this.pushLine(line, style, options.align ?? 'left', indent);
  }

  /**
   * Free text (custom print content, remark): paragraphs separated by line breaks, at most
   * FREE_TEXT_MAX_LINES lines on paper (print-protocol v1.1 §9). Longer text keeps its first lines
   * and ends with a marked line saying how much was cut; the cut is reported as a notice. Only
   * free text is ever cut: items, amounts and payment lines never are.
   */
  freeText(value: string, field: string, options: { style?: Style; indent?: number } = {}): void {
    const start = this.commands.length;
    const room = Math.max(1, this.columns - (options.indent ?? 0));
    // A character takes at least one column, so this much of a paragraph already fills more lines
    // than may print: longer paragraphs are never wrapped whole (an order record's remark has no
    // length limit of its own; a 3 MB one must not cost seconds and hundreds of MB to lay out).
    const cap = (FREE_TEXT_MAX_LINES + 1) * room;
    const paragraphs = value.split('\n');
    for (const paragraph of paragraphs) {
      this.text(paragraph.length > cap ? headOf(paragraph, cap) : paragraph, options);
      if (this.commands.length - start > FREE_TEXT_MAX_LINES) break;
    }
    if (this.commands.length - start <= FREE_TEXT_MAX_LINES) return;
    // How much was cut, for the marking and the report: exact for paragraphs of a sane length,
    // a lower bound for longer ones.
    let total = 0;
    let exact = true;
    for (const paragraph of paragraphs) {
      if (paragraph.length > cap) {
        exact = false;
        total += Math.ceil(paragraph.length / room);
      } else total += Math.max(1, wrap(this.printable(paragraph), room).length);
    }
    const kept = FREE_TEXT_MAX_LINES - 1;
    const more = total - kept;
    this.commands.length = start + kept;
    // Short enough for one line of 58 mm paper (32 columns) whatever the count.
    this.text(` CUT: ${more}${exact ? '' : '+'} line${more === 1 ? '' : 's'} not printed `, {
      style: MARK,
      align: 'center',
    });
    this.notices.push({
      code: 'CONTENT_CUT',
      message: `${field}: ${exact ? '' : 'at least '}${total} lines on paper, the first ${kept} printed (at most ${FREE_TEXT_MAX_LINES} per free-text block)`,
    });
  }

  /**
   * A label on the left and a value on the right (`Subtotal ... ₱300.00`). When both do not fit
   * on one line, the label wraps beside the value; when the value alone is too wide, it goes on
   * its own right-aligned line(s) below the label.
   */
  row(label: string, value: string, options: { style?: Style; indent?: number } = {}): void {
    const style = options.style ?? PLAIN;
    const indent = options.indent ?? 0;
    const left = this.printable(label);
    const right = this.printable(value);
    const room = Math.floor((this.columns - indent) / style.width);
    const rightWidth = displayWidth(right);
    const minLeft = Math.min(displayWidth(left), 8);
    if (rightWidth + 1 + minLeft > room) {
      this.text(label, { style, indent });
      for (const line of wrap(right, room)) this.pushLine(line, style, 'right');
      return;
    }
    const lines = wrap(left, room - rightWidth - 1);
    lines.forEach((line, i) => {
      const segments: Segment[] = [];
      if (indent > 0) segments.push({ text: ' '.repeat(indent), style: PLAIN });
      if (i === 0) {
        const gap = room - displayWidth(line) - rightWidth;
        segments.push({ text: line + ' '.repeat(gap) + right, style });
      } else if (line !== '') {
        segments.push({ text: line, style });
      }
      this.commands.push({ kind: 'line', segments });
    });
  }

  qr(data: string): void {
    this.commands.push({ kind: 'qr', data });
  }

  /** A 1-bit image, in bands of at most RASTER_BAND_DOTS rows (views of its data, no copies). */
  image(image: MonoImage, align: LogoAlign): void {
    const stride = Math.ceil(image.width / 8);
    for (let top = 0; top < image.height; top += RASTER_BAND_DOTS) {
      const height = Math.min(RASTER_BAND_DOTS, image.height - top);
      const data = image.data.subarray(top * stride, (top + height) * stride);
      this.commands.push({ kind: 'image', align, width: stride * 8, height, data });
    }
  }
}

/** The first `length` UTF-16 units of `text`, never ending inside a surrogate pair. */
function headOf(text: string, length: number): string {
  const code = text.charCodeAt(length - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? length - 1 : length);
}

export const BOLD: Style = { ...PLAIN, bold: true };
/** Order type, pick-up code, takeout number, kitchen quantities: read from across the counter. */
export const BIG: Style = { ...PLAIN, bold: true, width: 2, height: 2 };
export const TALL_BOLD: Style = { ...PLAIN, bold: true, height: 2 };
/** Markings (REPRINT, POSSIBLE DUPLICATE, LATE, CUT): white on black, so nobody misses them. */
export const MARK: Style = { ...PLAIN, bold: true, invert: true };

/**
 * The markings, first on every document: whoever hands out the receipt or the dish must see them.
 */
export function printMarkings(sheet: Sheet, markings: ReceiptMarkings = {}): void {
  const m = markings;
  if (m.reprint) {
    sheet.text(` REPRINT #${m.reprint.count} `, { style: MARK, align: 'center' });
    sheet.text(`Original: ${m.reprint.originalTime}`, { align: 'center' });
  }
  if (m.possibleDuplicate) sheet.text(' POSSIBLE DUPLICATE ', { style: MARK, align: 'center' });
  if (m.late) sheet.text(' LATE ', { style: MARK, align: 'center' });
  if (m.lateOrder) {
    // Staff must not take a days-old order for a new one: when it was placed, and how long ago.
    sheet.text(`placed ${m.lateOrder.placed}`, { style: BOLD, align: 'center' });
    sheet.text(m.lateOrder.ago, { style: BOLD, align: 'center' });
  }
  if (m.reprint || m.possibleDuplicate || m.late) sheet.blank();
}

/** How the order is called out, large: order type, pick-up code, takeout number. */
export function printCallout(sheet: Sheet, r: Receipt): void {
  if (r.banner) sheet.text(r.banner, { style: BIG, align: 'center' });
  if (r.pickUpNo) {
    sheet.text('PICK-UP CODE', { style: BOLD, align: 'center' });
    sheet.text(r.pickUpNo, { style: BIG, align: 'center' });
  }
  if (r.takeoutNo) {
    sheet.text('TAKEOUT NO.', { style: BOLD, align: 'center' });
    sheet.text(r.takeoutNo, { style: BIG, align: 'center' });
  }
  if (r.banner || r.pickUpNo || r.takeoutNo) sheet.rule();
}

/** The end of the paper: a cut where the model has a cutter, else a feed past the tear bar. */
export function printPaperEnd(sheet: Sheet, profile: PrinterProfile): void {
  if (profile.cutter === 'none')
    sheet.commands.push({ kind: 'feed', lines: profile.tearFeedLines });
  else sheet.commands.push({ kind: 'cut', type: profile.cutter });
}

/** The money format to print with: the symbol when the printer can print it, else the ISO code. */
function printableMoney(format: MoneyFormat, charset: Charset): MoneyFormat {
  if (format.display !== 'symbol') return format;
  const sample = formatMoney(-123456, format);
  const printable = [...sample].every((ch) => charset.inCodepage(ch));
  return printable ? format : { ...format, display: 'code' };
}

export interface LayoutInput {
  receipt: Receipt;
  profile: PrinterProfile;
  charset: Charset;
  options: ReceiptOptions;
  markings?: ReceiptMarkings;
}

export function layoutReceipt(input: LayoutInput): Layout {
  const { receipt: r, profile, charset, options } = input;
  const columns = profileColumns(profile);
  const sheet = new Sheet(columns, charset);
  const moneyFormat = printableMoney(options.money, charset);
  const money = (cents: number) => formatMoney(cents, moneyFormat);

  // The store's logo (converted at start for this profile's width), then the header.
  const logo = options.logo;
  const logoImage = logo?.images.get(profile.id);
  if (logo && logoImage) sheet.image(logoImage, logo.align);

  // Header: the store name large, then address, tax id...
  options.header.forEach((line, i) => {
    sheet.text(line, { style: i === 0 ? TALL_BOLD : PLAIN, align: 'center' });
  });
  if (options.header.length > 0) sheet.rule('=');

  printMarkings(sheet, input.markings);
  printCallout(sheet, r);

  sheet.row('Order no.', r.orderNo);
  if (r.createTime) sheet.row('Created', r.createTime);
  if (r.paymentTime) sheet.row('Paid', r.paymentTime);
  for (const ref of r.references) sheet.row(ref.label, ref.value);
  sheet.rule();

  for (const item of r.items) {
    sheet.text(item.name, { style: BOLD });
    sheet.row(`${item.quantity} x ${money(item.unitPrice)}`, money(item.lineTotal), { indent: 2 });
    for (const option of item.options) {
      for (const opt of option.items) {
        const label = option.name ? `+ ${option.name}: ${opt.name}` : `+ ${opt.name}`;
        if (opt.price !== null && opt.price !== 0)
          sheet.row(label, money(opt.price), { indent: 4 });
        else sheet.text(label, { indent: 4 });
      }
    }
  }
  sheet.rule();

  sheet.row('Subtotal', money(r.subtotal));
  for (const a of r.adjustments) sheet.row(a.label, money(a.amount));
  if (r.discount) {
    sheet.row(r.discount.label, money(r.discount.amount));
    if (r.discount.discounterName) sheet.row('Name', r.discount.discounterName, { indent: 2 });
    if (r.discount.cardNo) sheet.row('Card no.', r.discount.cardNo, { indent: 2 });
    if (r.discount.validity) sheet.row('Valid until', r.discount.validity, { indent: 2 });
  }
  sheet.rule('=');
  sheet.row('TOTAL', money(r.total), { style: TALL_BOLD });
  if (r.amountPaid !== null) sheet.row('Amount paid', money(r.amountPaid));
  sheet.rule();

  const p = r.payment;
  const paymentRows: Array<[string, string | null]> = [
    ['Payment', p.way],
    ['Channel', p.channel],
    ['Status', p.status],
    ['Transaction ID', p.transactionId],
    ['Merchant order no.', p.merchantOrderNo],
    ['Platform', p.platform],
    ['Transaction created', p.transactionCreated],
    ['Transaction closed', p.transactionClosed],
  ];
  const shown = paymentRows.filter((row): row is [string, string] => row[1] !== null);
  for (const [label, value] of shown) sheet.row(label, value);
  if (shown.length > 0) sheet.rule();

  if (r.takeout) {
    sheet.text('DELIVERY', { style: BOLD });
    if (r.takeout.userName) sheet.row('Name', r.takeout.userName);
    if (r.takeout.userPhone) sheet.row('Phone', r.takeout.userPhone);
    if (r.takeout.userAddress) {
      sheet.text('Address:');
      sheet.text(r.takeout.userAddress, { indent: 2 });
    }
    sheet.rule();
  }

  if (r.customContent) {
    sheet.freeText(
      r.customContent,
      r.source === 'instruction' ? 'order.customPrintContext' : 'customContent',
    );
    sheet.rule();
  }
  if (r.remark) {
    sheet.text('Remark:', { style: BOLD });
    sheet.freeText(r.remark, 'remark', { indent: 2 });
    sheet.rule();
  }

  for (const line of options.footer) sheet.text(line, { align: 'center' });
  if (options.qr) {
    if (profile.qr) {
      sheet.blank();
      sheet.qr(r.orderNo);
    } else {
      sheet.warnings.push(`QR code skipped: profile ${profile.id} cannot print QR codes`);
    }
  }

  printPaperEnd(sheet, profile);
  sheet.finish();
  const length = layoutLength(sheet.commands);
  if (length > RECEIPT_MAX_LINES) {
    // Only item data can get here (free text is cut above), and items are never cut.
    throw new AgentError(
      'RENDER_FAILED',
      `the receipt of order ${r.orderNo} would take ${length} lines of paper, more than the ${RECEIPT_MAX_LINES} a receipt may (items and amounts are never cut)`,
    );
  }
  return { columns, commands: sheet.commands, warnings: sheet.warnings, notices: sheet.notices };
}

/**
 * The test page of the `test-print` command (print-protocol §5): who is printing, with which
 * profile and code page, a currency and character check line, a column ruler, styles and a QR
 * code: what a technician needs to see that a printer is set up right.
 */
export function layoutTestPage(input: {
  profile: PrinterProfile;
  charset: Charset;
  options: ReceiptOptions;
  agentVersion: string;
}): Layout {
  const { profile, charset, options } = input;
  const columns = profileColumns(profile);
  const sheet = new Sheet(columns, charset);
  const moneyFormat = printableMoney(options.money, charset);
  sheet.text('TEST PAGE', { style: BIG, align: 'center' });
  sheet.rule('=');
  sheet.row('Agent', `printer-agent ${input.agentVersion}`);
  sheet.row('Profile', profile.id);
  sheet.text(profile.name, { indent: 2 });
  sheet.row('Columns', `${columns} (font ${profile.font})`);
  sheet.row(
    'Code page',
    `${profile.codepage} (ESC t ${profile.codepageNumbers[profile.codepage]})`,
  );
  sheet.row('CJK font', profile.cjk ? profile.cjk.encoding : 'none');
  sheet.row('Cutter', profile.cutter);
  sheet.rule();
  sheet.row('Currency', formatMoney(12345, moneyFormat));
  sheet.row('Negative', formatMoney(-5, moneyFormat));
  sheet.text('Characters: é ñ ü ç € £ ¥ ₱');
  if (profile.cjk) sheet.text('CJK: 打印测试 收据');
  sheet.commands.push({
    kind: 'line',
    segments: [
      {
        text: Array.from({ length: columns }, (_, i) => String((i + 1) % 10)).join(''),
        style: PLAIN,
      },
    ],
  });
  sheet.text('Bold', { style: BOLD });
  sheet.text('Large', { style: BIG });
  sheet.text('Reverse', { style: MARK });
  if (profile.qr) {
    sheet.blank();
    sheet.qr('printer-agent test page');
  }
  printPaperEnd(sheet, profile);
  sheet.finish();
  return { columns, commands: sheet.commands, warnings: sheet.warnings, notices: sheet.notices };
}
