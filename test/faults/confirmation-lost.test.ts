/**
 * Fault matrix row 4, printed but the confirmation lost, with the agent as a child process. The
 * emulator prints the whole receipt (the cut arrives) and then the answer to the agent's
 * confirmation request (`GS r 1` after the cut, in order with the data) never comes back:
 *
 * - the link drops right at the cut (decisions 52): the agent cannot tell a whole print from a
 *   cut-short one, so its policy (`reprint-marked`) applies: `waiting` with PRINTER_DISCONNECTED,
 *   and a second copy marked POSSIBLE DUPLICATE once the printer is back;
 * - the link stays up but the answer is lost (the emulator goes mute at the cut): the job is
 *   `unconfirmed` with the reason UNCONFIRMED and is never sent again on its own (decisions 31).
 *
 * Invariant: a print the agent could not confirm is reported as such (never `printed`), and is
 * never printed again without a POSSIBLE DUPLICATE marking.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import type { Ticket } from '../../src/emulator/index.js';
import { faultSuite, type Json } from './harness.js';

describe('row 4: printed, confirmation lost (child process)', {
  skip: skipWithoutMosquitto(),
}, () => {
  const env = faultSuite();

  it('row 4: link dropped after the cut, before the reply: reprint-marked policy applied', async () => {
    const s = await env.stores.create({ name: 'r4a', broker: env.broker });
    await s.startOnline();
    await waitFor('printer ready', () => s.printerState() === 'ready', 15_000);
    const onTicket = (_ticket: Ticket) => {
      s.emulator.off('ticket', onTicket);
      // Inside the emulator's write(): the confirmation request after the cut finds no link.
      s.endpoint.slot.disconnect();
    };
    s.emulator.on('ticket', onTicket);
    await s.publish(1);
    await s.waitForState(1, 'printed');

    const events = s.eventsOf(1);
    assert.deepEqual(
      events.map((e) => e.state),
      ['queued', 'printing', 'waiting', 'printing', 'printed'],
    );
    const waiting = events[2]!;
    assert.equal(waiting.reason?.code, 'PRINTER_DISCONNECTED');
    assert.match(waiting.reason?.message ?? '', /POSSIBLE DUPLICATE/, 'the policy is reported');
    assert.deepEqual(events[3]!.markings, ['POSSIBLE DUPLICATE']);

    const prints = s.printsByOrder().get(s.orderNo(1))!;
    assert.equal(prints.length, 2, 'the whole first copy and the marked second one');
    assert.deepEqual(prints[0]!.markings, []);
    assert.deepEqual(prints[1]!.markings, ['POSSIBLE DUPLICATE']);
    s.assertInvariants();
  });

  it('row 4: reply lost on a live link: unconfirmed, reported, not printed again', async () => {
    const s = await env.stores.create({
      name: 'r4b',
      broker: env.broker,
      configure: (c) => {
        (c.printers as Json[])[0]!.confirmTimeoutSec = 3;
      },
    });
    await s.startOnline();
    await waitFor('printer ready', () => s.printerState() === 'ready', 15_000);
    const onTicket = (_ticket: Ticket) => {
      s.emulator.off('ticket', onTicket);
      s.emulator.setFault('mute', true);
    };
    s.emulator.on('ticket', onTicket);
    await s.publish(1);
    // The agent waits the configured 3 s for the confirmation.
    const unconfirmed = await s.waitForState(1, 'unconfirmed', 30_000);
    assert.equal(unconfirmed.reason?.code, 'UNCONFIRMED');
    assert.match(unconfirmed.reason?.message ?? '', /within 3000 ms/);
    assert.deepEqual(s.states(1), ['queued', 'printing', 'unconfirmed']);

    // The printer answers again; the queue goes on, the unconfirmed job is not sent again.
    s.emulator.setFault('mute', false);
    await s.publish(2);
    await s.waitForState(2, 'printed');
    assert.deepEqual(s.states(1), ['queued', 'printing', 'unconfirmed']);
    assert.equal(s.printsByOrder().get(s.orderNo(1))?.length, 1);
    assert.deepEqual(s.printedOrders(), [s.orderNo(1), s.orderNo(2)]);
    s.assertInvariants();
  });
});
