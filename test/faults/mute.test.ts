/**
 * Fault matrix row 11, a printer that never answers status (the emulator's `mute` switch: it
 * prints everything and sends nothing back, like cheap models without a back channel), with the
 * agent as a child process.
 *
 * Invariant: printing still works (silence is `unknown`, not "not ready", decisions 30); the
 * status says `unknown`; every job is `unconfirmed` (never `printed`: nobody confirmed it), none
 * is sent twice, and a job does not block the ones behind it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { faultSuite, type Json } from './harness.js';

describe('row 11: printer never answers status (child process)', {
  skip: skipWithoutMosquitto(),
}, () => {
  const env = faultSuite();

  it('row 11: mute printer: prints, state unknown, jobs unconfirmed, none sent twice', async () => {
    const s = await env.stores.create({
      name: 'r11',
      broker: env.broker,
      // The technician's knob (printers[].confirmTimeoutSec): 3 s instead of 15 per job here.
      configure: (c) => {
        (c.printers as Json[])[0]!.confirmTimeoutSec = 3;
      },
    });
    s.emulator.setFault('mute', true);
    await s.startOnline();
    await waitFor('status unknown', () => s.printerState() === 'unknown', 15_000);

    await s.publish(1);
    await s.publish(2);
    // Each job waits the configured 3 s for a confirmation that never comes.
    for (const n of [1, 2]) {
      const event = await s.waitForState(n, 'unconfirmed', 45_000);
      assert.equal(event.reason?.code, 'UNCONFIRMED');
      assert.match(event.reason?.message ?? '', /within 3000 ms/);
      assert.deepEqual(s.states(n), ['queued', 'printing', 'unconfirmed']);
    }
    assert.deepEqual(s.printedOrders(), [s.orderNo(1), s.orderNo(2)], 'both on paper, in order');
    for (const p of s.prints()) assert.deepEqual(p.markings, []);
    assert.equal(s.emulator.paper.tickets.length, 2);
    assert.equal(s.printerState(), 'unknown');
    s.assertInvariants();
  });
});
