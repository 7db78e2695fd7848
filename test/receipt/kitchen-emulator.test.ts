/**
 * Kitchen tickets on the loopback printer (issue 18): the bytes of a kitchen ticket, decoded by
 * the emulator (built from the command reference, not from our encoder), print the quantities
 * double width and double height beside the names, no amount, one beep where the profile has a
 * buzzer (none where it has not), and end as the profile says: a cut, or the tear-off feed on a
 * printer without a cutter. Receipts never beep. The call-out at the top (order type, pick-up
 * code, takeout number) decodes double width and double height; with the system fonts, a CJK
 * item name on generic-80mm prints as a raster image of its line, never as `?`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type PaperLine,
  renderText,
  type TextRun,
  type Ticket,
  VirtualPrinter,
} from '../../src/emulator/index.js';
import { formatMoney } from '../../src/protocol/money.js';
import { buzzerBytes } from '../../src/receipt/encode.js';
import type { ReceiptOptions } from '../../src/receipt/options.js';
import { getProfile, type PrinterProfile } from '../../src/receipt/profile.js';
import { LineRasterizer } from '../../src/receipt/raster-text.js';
import { type RenderDocument, renderReceipt } from '../../src/receipt/render.js';
import { skipWithoutFonts } from '../helpers/fonts.js';
import { paperText } from '../helpers/paper-text.js';
import { loadFixture, STORE_OPTIONS } from '../helpers/receipts.js';

const KITCHEN: RenderDocument = { layout: 'kitchen', role: 'kitchen' };

function print(
  fixture: string,
  profile: PrinterProfile,
  document: RenderDocument = KITCHEN,
  options: ReceiptOptions = STORE_OPTIONS,
) {
  const rendered = renderReceipt({
    source: loadFixture(fixture),
    profile,
    options,
    document,
  });
  const printer = new VirtualPrinter({
    columns: profile.fonts.A.columns,
    columnsFontB: profile.fonts.B?.columns,
  });
  assert.equal(printer.write(rendered.bytes), true);
  const tickets = printer.tickets();
  const events = tickets.flatMap((t) => t.events);
  return { rendered, printer, tickets, events };
}

const buzzers = (events: Ticket['events']) => events.filter((e) => e.type === 'buzzer');

describe('kitchen ticket on the emulator', () => {
  const buzzerProfile = getProfile('generic-80mm-buzzer');

  it('generic-80mm-buzzer: large quantities, the names, no amount, one beep, then the cut', () => {
    const { rendered, printer, tickets, events } = print('record-options-remark', buzzerProfile);
    const ticket = printer.paper.tickets[0];
    assert.ok(ticket?.cut, 'the ticket was cut');
    assert.equal(renderText(ticket), rendered.text, 'the paper shows the text twin');
    assert.deepEqual(
      tickets.flatMap((t) => t.warnings),
      [],
      'the emulator understood every command',
    );

    for (const [quantity, name] of [
      ['2x', 'Milk tea (Large)'],
      ['1x', 'Beef tapa'],
    ] as const) {
      const line: PaperLine | undefined = ticket.lines.find((l) =>
        l.runs.some((r) => r.text.includes(name)),
      );
      assert.ok(line, `${name} printed`);
      const q: TextRun | undefined = line.runs.find((r) => r.text === quantity);
      assert.ok(q, `${quantity} beside ${name}`);
      assert.deepEqual([q.width, q.height, q.bold], [2, 2, true], `${quantity} double size, bold`);
      const n: TextRun | undefined = line.runs.find((r) => r.text.includes(name));
      assert.ok(n);
      assert.deepEqual([n.height, n.bold], [2, true], `${name} tall and bold`);
    }
    const text = renderText(ticket);
    assert.ok(text.includes('+ Toppings: Pearls') && text.includes('SKU P10-L'));
    assert.ok(!text.includes('PHP'), 'no currency');
    for (const cents of [12000, 15000, 30000, 25500, 55500, 2000])
      assert.ok(!text.includes(formatMoney(cents, { ...STORE_OPTIONS.money, display: 'code' })));
    assert.ok(!/\d\.\d\d/.test(text), 'no amount at all');
    assert.equal(ticket.codes.length, 0, 'no QR code');
    assert.equal(events.filter((e) => e.type === 'drawer').length, 0, 'never opens the drawer');

    // One beep with the profile's count and length, then the cut: the beep is this ticket's.
    assert.deepEqual(
      events.map((e) => e.type),
      ['buzzer', 'cut'],
    );
    assert.equal(tickets.length, 1, 'nothing after the cut');
    assert.deepEqual(
      buzzers(events).map((e) => (e.type === 'buzzer' ? [e.command, e.count, e.onMs] : [])),
      [['ESC B', 2, 200]],
    );
    assert.ok(
      Buffer.from(rendered.bytes).includes(Buffer.from([0x1b, 0x42, 2, 4])),
      'ESC B n t: 2 beeps of 4 x 50 ms',
    );
  });

  it("a profile with Epson's ESC ( A beeps through fn 48 with its count and length", () => {
    const profile: PrinterProfile = {
      ...buzzerProfile,
      buzzer: { command: 'ESC ( A', count: 3, durationMs: 300 },
    };
    const { rendered, events } = print('table-offline-simple', profile);
    assert.ok(
      Buffer.from(rendered.bytes).includes(
        Buffer.from([0x1b, 0x28, 0x41, 0x04, 0x00, 0x30, 0x33, 3, 3]),
      ),
    );
    assert.deepEqual(
      buzzers(events).map((e) => (e.type === 'buzzer' ? [e.command, e.count, e.onMs] : [])),
      [['ESC ( A', 3, 300]],
    );
  });

  it('generic-80mm (no buzzer): the same ticket, cut, and silent', () => {
    const quiet = print('record-options-remark', getProfile('generic-80mm'));
    const loud = print('record-options-remark', buzzerProfile);
    assert.equal(quiet.rendered.text, loud.rendered.text, 'the buzzer does not show on paper');
    assert.deepEqual(
      quiet.events.map((e) => e.type),
      ['cut'],
    );
    assert.equal(quiet.tickets.length, 1);
  });

  it('a printer without a cutter: the beep, then the tear-off feed and no cut', () => {
    const profile: PrinterProfile = { ...buzzerProfile, cutter: 'none', tearFeedLines: 5 };
    const { rendered, printer, events } = print('table-cjk', profile);
    assert.equal(printer.paper.tickets.length, 0, 'nothing cut');
    assert.deepEqual(
      events.map((e) => (e.type === 'feed' ? [e.type, e.command, e.lines] : [e.type])),
      [['buzzer'], ['feed', 'ESC d', 5]],
    );
    assert.equal(renderText(printer.paper.current), rendered.text);
    assert.ok(rendered.text.endsWith('Thank you, come again.\n\n\n\n\n\n'), 'five blank lines');
  });

  it('the call-out decodes double size: order type, pick-up code, takeout number', () => {
    /** The runs of the ticket's first lines (above the items) whose text is exactly `text`. */
    const runOf = (ticket: Ticket, text: string): TextRun => {
      const runs = ticket.lines.flatMap((l) => l.runs).filter((r) => r.text.trim() === text);
      assert.equal(runs.length, 1, `one run ${JSON.stringify(text)}`);
      return runs[0]!;
    };
    const size = (r: TextRun) => [r.width, r.height, r.bold];
    const cases: Array<[fixture: string, big: string[], labels: string[]]> = [
      ['queue-online-pwd', ['QUEUE ORDER', 'A023'], ['PICK-UP CODE']],
      ['takeout-online-sc', ['TAKEOUT ORDER', 'T0088'], ['TAKEOUT NO.']],
      ['table-offline-simple', ['TABLE ORDER'], []],
    ];
    for (const [fixture, big, labels] of cases) {
      const { tickets } = print(fixture, getProfile('generic-80mm'));
      const ticket = tickets[0]!;
      for (const text of big)
        assert.deepEqual(
          size(runOf(ticket, text)),
          [2, 2, true],
          `${fixture}: ${text} double size`,
        );
      // The labels are bold at normal size, so the number stands out under them.
      for (const text of labels)
        assert.deepEqual(size(runOf(ticket, text)), [1, 1, true], `${fixture}: ${text}`);
      // The call-out is the ticket's head: above the order number and the items.
      const lines = ticket.lines.map((l) => l.text);
      const orderLine = lines.findIndex((l) => l.startsWith('Order no.'));
      for (const text of big)
        assert.ok(lines.findIndex((l) => l.trim() === text) < orderLine, `${text} at the top`);
    }
  });

  it('generic-80mm with the system fonts: CJK item names print as line images, never `?`', {
    skip: skipWithoutFonts(),
  }, () => {
    const profile = getProfile('generic-80mm');
    const rasterizer = LineRasterizer.fromSystem();
    const drawn = print('table-cjk', profile, KITCHEN, { ...STORE_OPTIONS, rasterizer });
    const ticket = drawn.printer.paper.tickets[0]!;
    assert.deepEqual(
      drawn.tickets.flatMap((t) => t.warnings),
      [],
      'the emulator understood every command',
    );
    const text = paperText(ticket);
    assert.doesNotMatch(text, /\?/, `no replacement character on the ticket:\n${text}`);
    assert.ok(
      drawn.rendered.warnings.every((w) => !w.includes("'?'")),
      drawn.rendered.warnings.join('\n'),
    );
    // The four item lines (quantity and name, double height) and the CJK custom content line are
    // images as wide as the print area; the rest of the ticket stays text.
    const images = ticket.images.filter((i) => i.source === 'GS v 0');
    assert.deepEqual(
      images.map((i) => [i.width, i.height]),
      [
        [576, 48],
        [576, 48],
        [576, 48],
        [576, 48],
        [576, 24],
      ],
    );
    for (const image of images)
      assert.ok(
        image.data.some((b) => b !== 0),
        'ink on each line',
      );
    // Each item line's image stands where the item stands: between the rules around the items.
    const lines = text.split('\n');
    const itemImages = lines.flatMap((l, i) => (l === '[IMAGE 576x48]' ? [i] : []));
    assert.equal(itemImages.length, 4);
    assert.ok(lines[itemImages[0]! - 1]!.startsWith('---'), 'the first item under the rule');
    assert.equal(itemImages.at(-1)! - itemImages[0]!, 3, 'one item line after the other');
    assert.match(lines[itemImages.at(-1)! + 1] ?? '', /^-{48}$/, 'the rule under the last item');
    assert.match(text, /^ +KITCHEN$/m, 'Latin text stays text');
    assert.match(text, /^Thank you, come again\.$/m);
    // Without the rasterizer the same ticket prints the names as `?` (the fallback).
    const plain = print('table-cjk', profile, KITCHEN, { ...STORE_OPTIONS, rasterizer: null });
    assert.equal(plain.printer.paper.tickets[0]!.images.length, 0);
    assert.match(renderText(plain.printer.paper.tickets[0]!), /\?\?\?\?/);
  });

  it('the payment receipt never beeps, even on a printer with a buzzer', () => {
    const { events, tickets } = print('record-options-remark', buzzerProfile, {
      layout: 'receipt',
    });
    assert.equal(buzzers(events).length, 0);
    assert.equal(tickets.length, 1);
  });
});

describe('buzzer bytes', () => {
  it('ESC B n t: t in 50 ms units; ESC ( A fn 48 pattern 0x33: t in 100 ms units', () => {
    assert.deepEqual(
      buzzerBytes({ command: 'ESC B', count: 2, durationMs: 200 }),
      [0x1b, 0x42, 2, 4],
    );
    assert.deepEqual(
      buzzerBytes({ command: 'ESC B', count: 9, durationMs: 1000 }),
      [0x1b, 0x42, 9, 20],
    );
    assert.deepEqual(
      buzzerBytes({ command: 'ESC ( A', count: 1, durationMs: 50 }),
      [0x1b, 0x28, 0x41, 4, 0, 0x30, 0x33, 1, 1],
    );
    assert.deepEqual(
      buzzerBytes({ command: 'ESC ( A', count: 2, durationMs: 1000 }),
      [0x1b, 0x28, 0x41, 4, 0, 0x30, 0x33, 2, 10],
    );
  });
});
