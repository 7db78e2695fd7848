/**
 * Round trip: every golden receipt rendered by the receipt module is decoded by the emulator
 * (which was built from the command reference, not from our encoder) back to the same text
 * twin, and the meaning survives: sizes, bold, QR content, one cut, no drawer, no warnings. A `₱`
 * comes back as the user-defined character the job defined for it (paperText).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderText, type Ticket, VirtualPrinter } from '../../src/emulator/index.js';
import { getProfile } from '../../src/receipt/profile.js';
import { renderReceipt } from '../../src/receipt/render.js';
import { paperText } from '../helpers/paper-text.js';
import { GOLDEN_CASES, loadFixture, STORE_OPTIONS } from '../helpers/receipts.js';

/** Cut tickets, and the open ticket (paper still in the printer after the last cut). */
function decode(bytes: Uint8Array, profileId: string): { tickets: Ticket[]; open: Ticket } {
  const profile = getProfile(profileId);
  const printer = new VirtualPrinter({
    columns: profile.fonts.A.columns,
    columnsFontB: profile.fonts.B?.columns,
  });
  assert.equal(printer.write(bytes), true);
  return { tickets: [...printer.paper.tickets], open: printer.paper.current };
}

/** The line whose printed text (trimmed) is `text`. */
function lineWith(ticket: Ticket, text: string) {
  const line = ticket.lines.find((l) => l.text.trim() === text);
  assert.ok(line, `no printed line ${JSON.stringify(text)}`);
  return line;
}

describe('receipt bytes decode back to the text twin', () => {
  for (const c of GOLDEN_CASES) {
    for (const profileId of c.profiles) {
      it(`${c.name} on ${profileId}`, () => {
        const profile = getProfile(profileId);
        const rendered = renderReceipt({
          source: loadFixture(c.fixture),
          profile,
          options: c.options ?? STORE_OPTIONS,
          markings: c.markings,
        });
        const { tickets, open } = decode(rendered.bytes, profileId);
        // A printer with a cutter ends the receipt with one cut; without one, it stays open.
        const ticket = profile.cutter === 'none' ? open : tickets[0];
        assert.ok(ticket);
        assert.equal(tickets.length, profile.cutter === 'none' ? 0 : 1);
        assert.equal(paperText(ticket), rendered.text);
        assert.deepEqual(ticket.warnings, [], 'the emulator understood every command');
        assert.equal(
          ticket.events.filter((e) => e.type === 'drawer').length,
          0,
          'never opens the drawer',
        );
        if (profile.cutter !== 'none') {
          assert.deepEqual(
            ticket.events
              .filter((e) => e.type === 'cut')
              .map((e) => (e.type === 'cut' ? e.cut : '')),
            [profile.cutter],
          );
        }
        const options = c.options ?? STORE_OPTIONS;
        if (options.qr) {
          assert.deepEqual(
            ticket.codes.map((code) => [code.symbology, code.content]),
            [['QR', rendered.receipt.orderNo]],
          );
        }
        // The money line a cashier looks for is bold, double height.
        const total = ticket.lines.find((l) => l.text.startsWith('TOTAL'));
        assert.ok(total);
        assert.ok(
          total.runs.some(
            (r) => r.text.startsWith('TOTAL') && r.bold && r.height === 2 && r.width === 1,
          ),
        );
        if (rendered.receipt.pickUpNo) {
          const code = lineWith(
            ticket,
            rendered.receipt.pickUpNo.slice(0, Math.floor(profile.fonts.A.columns / 2)),
          );
          assert.ok(
            code.runs.some((r) => r.bold && r.width === 2 && r.height === 2),
            'pick-up code in large print',
          );
        }
        if (c.markings?.reprint) {
          const mark = lineWith(ticket, `REPRINT #${c.markings.reprint.count}`);
          assert.ok(
            mark.runs.some((r) => r.reverse && r.bold),
            'the REPRINT marking is reversed and bold',
          );
        }
      });
    }
  }

  it('CJK names reach a CJK printer as GB18030 text, not as question marks', () => {
    const rendered = renderReceipt({
      source: loadFixture('table-cjk'),
      profile: getProfile('pos-5890-gb18030'),
      options: STORE_OPTIONS,
    });
    const { open } = decode(rendered.bytes, 'pos-5890-gb18030');
    const text = renderText(open);
    for (const name of [
      '白切鸡 Hainanese Chicken',
      '扬州炒饭',
      '酸辣汤（大份）',
      '谢谢光临！欢迎再次光临。',
    ]) {
      assert.ok(text.includes(name), `${name} printed`);
    }
  });
});
