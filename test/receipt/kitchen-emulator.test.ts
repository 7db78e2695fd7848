/**
 * Kitchen tickets on the loopback printer (issue 18): the bytes of a kitchen ticket, decoded by
 * the emulator (built from the command reference, not from our encoder), print the quantities
 * double width and double height beside the names, no amount, one beep where the profile has a
 * buzzer (none where it has not), and end as the profile says: a cut, or the tear-off feed on a
 * printer without a cutter. Receipts never beep.
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
import { getProfile, type PrinterProfile } from '../../src/receipt/profile.js';
import { type RenderDocument, renderReceipt } from '../../src/receipt/render.js';
import { loadFixture, STORE_OPTIONS } from '../helpers/receipts.js';

const KITCHEN: RenderDocument = { layout: 'kitchen', role: 'kitchen' };

function print(fixture: string, profile: PrinterProfile, document: RenderDocument = KITCHEN) {
  const rendered = renderReceipt({
    source: loadFixture(fixture),
    profile,
    options: STORE_OPTIONS,
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
