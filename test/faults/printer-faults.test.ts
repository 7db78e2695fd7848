/**
 * Fault matrix row 9, printer offline / paper out / cover open, with the agent as a child process
 * and the emulator's fault switches.
 *
 * Invariant: while the printer cannot print, the job at the head of its queue is `waiting` with
 * the reason code of the fault (PAPER_OUT, COVER_OPEN, PRINTER_OFFLINE), nothing is printed and
 * nothing is given up; the status shows the printer's state; once the fault clears, every job
 * prints, once, in the order the instructions arrived.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import type { FaultName } from '../../src/emulator/index.js';
import { faultSuite } from './harness.js';

const CASES: Array<{ fault: FaultName; code: string; state: string }> = [
  { fault: 'paper-out', code: 'PAPER_OUT', state: 'paper-out' },
  { fault: 'cover-open', code: 'COVER_OPEN', state: 'cover-open' },
  { fault: 'offline', code: 'PRINTER_OFFLINE', state: 'offline' },
];

describe('row 9: printer faults hold the queue (child process)', {
  skip: skipWithoutMosquitto(),
}, () => {
  const env = faultSuite();

  it('row 9: paper out, cover open, offline: waiting with the reason, then all print in order', async () => {
    const s = await env.stores.create({ name: 'r9', broker: env.broker });
    await s.startOnline();
    let n = 0;
    for (const { fault, code, state } of CASES) {
      s.emulator.setFault(fault, true);
      await waitFor(`${fault}: status ${state}`, () => s.printerState() === state, 15_000);
      const first = ++n;
      const second = ++n;
      await s.publish(first);
      await s.publish(second);
      const waiting = await s.waitForState(first, 'waiting');
      assert.equal(waiting.reason?.code, code, `${fault}: ${JSON.stringify(waiting.reason)}`);
      assert.ok(!s.printsByOrder().has(s.orderNo(first)), `${fault}: nothing printed`);
      assert.ok(!s.printsByOrder().has(s.orderNo(second)), `${fault}: nothing printed`);
      assert.ok(!s.states(second).includes('printing'), `${fault}: the second job waits its turn`);

      s.emulator.setFault(fault, false);
      await s.waitForState(second, 'printed');
      await waitFor(`${fault}: status ready`, () => s.printerState() === 'ready', 15_000);
      for (const k of [first, second]) {
        const states = s.states(k);
        assert.ok(!states.includes('failed') && !states.includes('unconfirmed'), states.join());
        assert.equal(states.filter((x) => x === 'printed').length, 1, states.join());
      }
    }
    // Arrival order on paper, each once, none marked.
    const expected = Array.from({ length: n }, (_, i) => s.orderNo(i + 1));
    assert.deepEqual(s.printedOrders(), expected);
    for (const p of s.prints()) assert.deepEqual(p.markings, [], JSON.stringify(p));
    assert.equal(s.emulator.paper.tickets.length, n);
    s.assertInvariants();
  });
});
