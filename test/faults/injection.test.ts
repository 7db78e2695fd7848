/**
 * Fault matrix row 17, ESC/POS injection through the whole pipeline: control bytes (ESC, GS,
 * DLE, FS, C1) in the product names, the customer fields and `customPrintContext` of a signed
 * instruction, published to the agent as a child process and printed on the emulator. (`remark`
 * only exists in order records, which come through catch-up; its injection is covered at the
 * renderer in test/receipt/injection.test.ts.)
 *
 * Invariant: no command byte from data reaches the printer: the emulator's decoder records no
 * drawer pulse, no buzzer, no extra cut or feed command, no unknown-command warning, the printer
 * state is untouched, and the text shows the fields with their control characters removed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import type { Ticket } from '../../src/emulator/index.js';
import { ESC_POS_PAYLOADS, stripControls } from '../helpers/receipts.js';
import { faultSuite } from './harness.js';

// The receipt tests' payloads, plus the buzzer, which only a whole pipeline could trigger.
const PAYLOADS = [...ESC_POS_PAYLOADS, '\x1BB\x03\x02'];

/** Commands in a ticket other than the receipt's own closing cut. */
function commandsFromData(ticket: Ticket): string[] {
  const found: string[] = [];
  for (const e of ticket.events) {
    if (e.type === 'drawer') found.push(`drawer pin ${e.pin}${e.realtime ? ' (real-time)' : ''}`);
    if (e.type === 'buzzer') found.push(`buzzer ${e.command}`);
  }
  const cuts = ticket.events.filter((e) => e.type === 'cut');
  if (cuts.length !== 1) found.push(`${cuts.length} cuts`);
  for (const w of ticket.warnings) found.push(`warning ${w.bytes}: ${w.message}`);
  return found;
}

describe('row 17: ESC/POS injection end to end (child process)', {
  skip: skipWithoutMosquitto(),
}, () => {
  const env = faultSuite();

  it('row 17: control bytes in names, customer fields and custom content never become commands', async () => {
    const s = await env.stores.create({ name: 'r17', broker: env.broker });
    await s.startOnline();
    const stateBefore = s.emulator.state;
    const names = PAYLOADS.map((p, i) => `Dish ${i} ${p}x`);
    const custom = `Thanks ${PAYLOADS.join(' | ')} end`;
    const injected = {
      productInfo: names.map((productName) => ({ productName, price: 1000, quantity: 1 })),
      orderType: 3,
      deliveryFee: 100,
      packingFee: 100,
      userName: `Juan ${PAYLOADS[0]}`,
      userPhone: `0917${PAYLOADS[4]}`,
      userAddress: `Mabini St ${PAYLOADS[2]}`,
      customPrintContext: custom,
    };
    // A clean order first: the baseline has no warnings and one cut per ticket.
    await s.publish(1);
    await s.waitForState(1, 'printed');
    await s.publish(2, injected);
    await s.waitForState(2, 'printed');

    const tickets = s.emulator.tickets();
    assert.equal(tickets.length, 2, 'one ticket each, no extra cut and no open ticket');
    assert.deepEqual(commandsFromData(tickets[0]!), [], 'the clean baseline');
    assert.deepEqual(commandsFromData(tickets[1]!), [], 'no command from data');
    assert.deepEqual(s.emulator.state, stateBefore, 'printer state untouched');

    const text = s.ticketTexts()[1]!;
    for (const name of names) {
      const shown = stripControls(name).replace(/\s+/g, ' ').trim();
      assert.ok(text.replace(/\s+/g, ' ').includes(shown), `"${shown}" on the receipt:\n${text}`);
    }
    assert.ok(text.includes('Thanks'), text);
    assert.ok(text.replace(/\s+/g, ' ').includes('end'), text);
    s.assertInvariants();
  });
});
