/**
 * Issue 18, a late kitchen ticket says how long the guest has waited, from the spooler's clock
 * through renderJob to the paper: a kitchen job stored at one time and printed later (the
 * spooler's `now` ahead of the store's) prints LATE and `placed N min ago` with N the whole
 * minutes since the job was stored, white on black, as the emulator decodes it. A ticket that is
 * not late has no such line, and a payment receipt never has one.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { waitFor } from '../../harness/waiting.js';
import { renderText, type Ticket } from '../../src/emulator/index.js';
import { Spooler, type SpoolerOptions } from '../../src/jobs/spooler.js';
import type { JobStore } from '../../src/jobs/store.js';
import { emulatedPrinter, instruction, OPTIONS, openStore, PROFILE } from './fixtures.js';

const MINUTE = 60_000;
const KITCHEN = { role: 'kitchen', layout: 'kitchen', items: null } as const;

const cleanup: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const fn of cleanup.reverse()) await fn();
});

/** A store whose clock stands at `at()`, and a printer on the emulator for the kitchen role. */
async function rig(name: string, at: () => number) {
  const store = openStore(name, { now: at });
  cleanup.push(() => store.close());
  const printer = await emulatedPrinter();
  cleanup.push(() => printer.close());
  return { store, printer };
}

function spooler(store: JobStore, printers: SpoolerOptions['printers'], now: () => number) {
  const s = new Spooler({
    store,
    printers,
    receiptOptions: OPTIONS,
    backoff: { initialMs: 20, maxMs: 200 },
    pollIntervalMs: 50,
    lateAfterMs: 15 * MINUTE,
    now,
  });
  cleanup.push(() => s.stop());
  return s;
}

/** The paper's ticket of an order (its `Order no.` line). */
function ticketOf(tickets: readonly Ticket[], orderNo: string): Ticket {
  const found = tickets.filter((t) => renderText(t).includes(orderNo));
  assert.equal(found.length, 1, `one ticket of ${orderNo}`);
  return found[0]!;
}

const placedLine = (ticket: Ticket) =>
  ticket.lines.find((l) => /placed .* ago/.test(l.text)) ?? null;

describe('spooler: a late kitchen ticket says how long ago the order was placed', () => {
  it('stored at T, printed at T + 37 min 30 s: LATE and `placed 37 min ago` on paper', async () => {
    // The store's clock: now, as the order's createTime (one minute before) is (issue 37).
    const stored = Date.now();
    const { store, printer } = await rig('kitchen-late', () => stored);
    const order = instruction(1);
    store.enqueueInstruction(order, { route: KITCHEN });
    // A payment receipt of another order, as late: LATE, but no "placed" line (receipts show times).
    store.enqueueInstruction(instruction(2));
    const s = spooler(
      store,
      [
        { id: 'kitchen', printer: printer.printer, profile: PROFILE },
        { id: 'receipt', printer: printer.printer, profile: PROFILE },
      ],
      // The spooler's clock when the jobs' turn comes.
      () => stored + 37 * MINUTE + 30_000,
    );
    s.start();
    await waitFor(
      'both printed',
      () =>
        store.getByJobId('P-00001')?.state === 'printed' &&
        store.getByJobId('P-00002')?.state === 'printed',
    );
    const kitchenJob = store.getByJobId('P-00001')!;
    assert.equal(kitchenJob.printer, 'kitchen');
    assert.equal(kitchenJob.layout, 'kitchen');
    assert.equal(kitchenJob.state, 'printed');
    assert.deepEqual(kitchenJob.markings, { late: true });

    const tickets = printer.emulator.tickets();
    const ticket = ticketOf(tickets, 'O-00001');
    const text = renderText(ticket);
    assert.match(text, /^ +KITCHEN *$/m, 'the kitchen ticket, not the receipt');
    assert.match(text, /^\s*LATE\s*$/m, 'marked LATE');
    const line = placedLine(ticket);
    assert.ok(line, `a "placed ... ago" line on the ticket:\n${text}`);
    assert.equal(line.text.trim(), 'placed 37 min ago');
    const run = line.runs.find((r) => r.text.includes('placed'))!;
    assert.deepEqual([run.reverse, run.bold], [true, true], 'white on black, bold: a marking');
    // Right under the order time, above the items.
    const lines = ticket.lines.map((l) => l.text);
    const at = lines.indexOf(line.text);
    assert.equal(lines[at - 1]?.replace(/ +/, ' '), `Ordered ${order.createTime}`);
    assert.ok(lines.findIndex((l) => l.includes('Item 1')) > at, 'before the items');

    const receipt = ticketOf(tickets, 'O-00002');
    assert.match(renderText(receipt), /^\s*LATE\s*$/m, 'the late receipt is marked LATE');
    assert.equal(placedLine(receipt), null, 'no "placed ... ago" on a payment receipt');
  });

  it('over an hour: `placed 2 h 5 min ago`', async () => {
    const stored = Date.now();
    const { store, printer } = await rig('kitchen-late-hours', () => stored);
    store.enqueueInstruction(instruction(3), { route: KITCHEN });
    const s = spooler(
      store,
      [{ id: 'kitchen', printer: printer.printer, profile: PROFILE }],
      () => stored + 125 * MINUTE + 59_000,
    );
    s.start();
    await waitFor('printed', () => store.getByJobId('P-00003')?.state === 'printed');
    const line = placedLine(ticketOf(printer.emulator.tickets(), 'O-00003'));
    assert.equal(line?.text.trim(), 'placed 2 h 5 min ago');
  });

  it('on time (5 min, LATE after 15): neither LATE nor `placed ... ago`', async () => {
    const stored = Date.now();
    const { store, printer } = await rig('kitchen-on-time', () => stored);
    store.enqueueInstruction(instruction(4), { route: KITCHEN });
    const s = spooler(
      store,
      [{ id: 'kitchen', printer: printer.printer, profile: PROFILE }],
      () => stored + 5 * MINUTE,
    );
    s.start();
    await waitFor('printed', () => store.getByJobId('P-00004')?.state === 'printed');
    const ticket = ticketOf(printer.emulator.tickets(), 'O-00004');
    assert.doesNotMatch(renderText(ticket), /LATE/);
    assert.equal(placedLine(ticket), null);
    assert.deepEqual(store.getByJobId('P-00004')!.markings, {});
  });
});
