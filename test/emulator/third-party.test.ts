/**
 * The emulator decodes byte streams made by independent ESC/POS libraries, not only ours:
 * ReceiptPrinterEncoder (used freely here, beyond what our renderer asks of it) and receiptline.
 * No warnings, and the content comes out as text, codes and events.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import ReceiptPrinterEncoder from '@point-of-sale/receipt-printer-encoder';
import receiptline from 'receiptline';
import { renderText, type Ticket, VirtualPrinter } from '../../src/emulator/index.js';

function decodeAll(bytes: Uint8Array, columns: number): Ticket[] {
  const printer = new VirtualPrinter({ columns });
  printer.write(bytes);
  return printer.tickets();
}

function noWarnings(tickets: readonly Ticket[]): void {
  for (const t of tickets)
    assert.deepEqual(t.warnings, [], `ticket ${t.index} decoded without warnings`);
}

describe('bytes from ReceiptPrinterEncoder', () => {
  it('styles, code pages, table, barcode, QR, drawer pulse and cut', () => {
    const encoder = new ReceiptPrinterEncoder({ printerModel: 'epson-tm-t88vi', newline: '\n' });
    const bytes = encoder
      .initialize()
      .codepage('cp858')
      .line('Plain line')
      .bold(true)
      .line('Bold line')
      .bold(false)
      .underline(true)
      .line('Underlined')
      .underline(false)
      .invert(true)
      .line('Inverted')
      .invert(false)
      .size(2, 2)
      .line('BIG')
      .size(1, 1)
      .align('center')
      .line('Centered')
      .align('left')
      .line('Euro € and pound £')
      .table(
        [
          { width: 30, align: 'left' },
          { width: 12, align: 'right' },
        ],
        [['Coffee', '3.50']],
      )
      .barcode('3130630574613', 'ean13', 60)
      .qrcode('https://example.com/o/123')
      .pulse()
      .cut()
      .encode();
    const tickets = decodeAll(bytes, 42);
    noWarnings(tickets);
    const ticket = tickets[0]!;
    assert.ok(ticket.cut, 'the first ticket ends with the cut');
    assert.ok(
      tickets.slice(1).every((t) => t.lines.every((l) => l.text.trim() === '')),
      'nothing printed after the cut',
    );
    const text = renderText(ticket);
    for (const expected of [
      'Plain line',
      'Bold line',
      'Underlined',
      'Inverted',
      'BIG',
      'Centered',
      'Euro € and pound £',
      'Coffee',
    ]) {
      assert.ok(text.includes(expected), `${expected} in ${text}`);
    }
    const byText = (s: string) => ticket.lines.find((l) => l.text.includes(s));
    assert.ok(byText('Bold line')?.runs.every((r) => r.bold));
    assert.ok(byText('Underlined')?.runs.every((r) => r.underline === 1));
    assert.ok(byText('Inverted')?.runs.every((r) => r.reverse));
    assert.ok(byText('BIG')?.runs.every((r) => r.width === 2 && r.height === 2));
    assert.deepEqual(
      ticket.codes.map((c) => [c.symbology, c.content]),
      [
        ['EAN13', '3130630574613'],
        ['QR', 'https://example.com/o/123'],
      ],
    );
    assert.equal(ticket.events.filter((e) => e.type === 'drawer').length, 1);
    assert.equal(ticket.events.filter((e) => e.type === 'cut').length, 1);
  });
});

describe('bytes from receiptline', () => {
  // In receiptline `-` is a rule and `=` a paper cut; a QR code is drawn as a raster image.
  const doc = [
    '{width:*,10}',
    '^^Kusina ni Lola',
    'Receipt no. | 000123',
    '-',
    'Adobo | 185.00',
    '"Halo-halo" | 95.00',
    '_Underlined_ | `inverted`',
    '-',
    '^TOTAL | 280.00',
    '{code:O202611250001;option:code128,2,72,hri}',
    '{code:https://example.com/r/1;option:qrcode,4,m}',
    '=',
  ].join('\n');

  for (const encoding of ['cp437', 'multilingual'] as const) {
    it(`a receipt in ${encoding}`, () => {
      const out = receiptline.transform(doc, {
        cpl: 42,
        encoding,
        command: 'escpos',
        cutting: true,
      });
      const tickets = decodeAll(Buffer.from(out, 'latin1'), 42);
      noWarnings(tickets);
      const ticket = tickets[0]!;
      assert.ok(ticket.cut, 'one receipt, ended by the cut');
      const text = renderText(ticket);
      for (const expected of [
        'Kusina ni Lola',
        'Adobo',
        '185.00',
        'Halo-halo',
        'TOTAL',
        '280.00',
        '─'.repeat(42),
      ]) {
        assert.ok(text.includes(expected), `${expected} in\n${text}`);
      }
      assert.deepEqual(
        ticket.codes.map((c) => [c.symbology, c.content]),
        [['CODE128', 'O202611250001']],
      );
      assert.equal(ticket.images.length, 1, 'the QR code arrives as one raster image');
      const title = ticket.lines.find((l) => l.text.includes('Kusina ni Lola'));
      assert.ok(
        title?.runs.some((r) => r.text.includes('Kusina') && r.height >= 2),
        'the ^^ title is enlarged',
      );
      const underlined = ticket.lines.find((l) => l.text.includes('Underlined'));
      assert.ok(underlined?.runs.some((r) => r.text.includes('Underlined') && r.underline > 0));
      assert.ok(underlined?.runs.some((r) => r.text.includes('inverted') && r.reverse));
    });
  }
});
