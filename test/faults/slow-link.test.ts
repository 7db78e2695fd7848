/**
 * Fault matrix row 12, a slow link at 9600 baud (960 bytes per second), with the agent as a child
 * process: a serial port (socat pty pair) configured at 9600 baud with the emulator's slow-link
 * switch pacing it, and a TCP printer behind our proxy throttled to the same rate. A 50-item
 * receipt takes several seconds to cross.
 *
 * Invariant: slowness is not failure: every job prints exactly once, confirmed (`printed`), with
 * no timeout-driven `waiting`, `unconfirmed` or POSSIBLE DUPLICATE copy.
 *
 * Beyond the matrix: a job that spends longer on the line than the agent waits for its
 * confirmation (counted from when the last byte left the agent; the wait is set to 3 s here with
 * `printers[].confirmTimeoutSec`, so one 50-item receipt, ~4.5 KB, ~5 s at 960 B/s, is longer).
 * It may end `unconfirmed` though it printed, but it is never sent again, so nothing prints twice.
 * The late answer to that job's `GS r 1` must not pass for the next job's confirmation: the next
 * job is confirmed only once it is on paper (test/printer/late-confirmation.test.ts covers the
 * same at unit level).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { skipWithoutSocat, waitFor } from '../../harness/waiting.js';
import { type FaultStore, faultSuite } from './harness.js';

const BPS = 960;

const bigOrder = (name: string) => ({
  productInfo: Array.from({ length: 50 }, (_, i) => ({
    productName: `Dish ${name} big item ${i + 1}`,
    price: 1000 + i,
    quantity: 1 + (i % 3),
  })),
});

/** Publishes small, big, small orders and checks each printed once, confirmed, in order. */
async function slowBurst(s: FaultStore): Promise<void> {
  await waitFor('printer ready', () => s.printerState() === 'ready', 20_000);
  await s.publish(1);
  await s.publish(2, bigOrder(s.name));
  await s.publish(3);
  await s.waitForState(3, 'printed', 45_000);
  for (const n of [1, 2, 3]) assert.deepEqual(s.states(n), ['queued', 'printing', 'printed']);
  assert.deepEqual(s.printedOrders(), [s.orderNo(1), s.orderNo(2), s.orderNo(3)]);
  for (const p of s.prints()) assert.deepEqual(p.markings, [], JSON.stringify(p));
  assert.equal(s.emulator.paper.tickets.length, 3);
  s.assertInvariants();
}

describe('row 12: slow link at 9600 baud (child process)', { skip: skipWithoutMosquitto() }, () => {
  const env = faultSuite();

  it('row 12: serial port at 9600 baud: every job printed once, confirmed', {
    skip: skipWithoutSocat(),
  }, async () => {
    const s = await env.stores.create({ name: 'r12s', broker: env.broker, serialBaudRate: 9600 });
    s.endpoint.slot.setSlowLink(BPS);
    await s.startOnline();
    await slowBurst(s);
    assert.ok(
      (s.endpoint.slot.link?.deliveredBytes ?? 0) > 5000,
      'the big receipt crossed the slow line',
    );
  });

  it('row 12: TCP printer behind a link throttled to 960 B/s: every job printed once, confirmed', async () => {
    const s = await env.stores.create({
      name: 'r12t',
      broker: env.broker,
      printerProxy: { throttleBps: BPS },
    });
    await s.startOnline();
    await slowBurst(s);
    assert.ok(s.printerProxy!.forwarded.up > 5000, 'the big receipt crossed the throttled link');
  });

  it('row 12: a job longer on the line than the confirmation wait: reported, never sent twice; the next job is confirmed only once it is on paper', async () => {
    const s = await env.stores.create({
      name: 'r12l',
      broker: env.broker,
      printerProxy: { throttleBps: BPS },
      // The technician's knob: a 3 s wait, so one big receipt outlasts it (15 s would need four).
      configure: (c) => {
        (c.printers as Array<Record<string, unknown>>)[0]!.confirmTimeoutSec = 3;
      },
    });
    await s.startOnline();
    await waitFor('printer ready', () => s.printerState() === 'ready', 20_000);
    // A 50-item receipt: about 4.5 KB, about 5 s on the line, longer than the 3 s wait.
    await s.publish(1, bigOrder(s.name));
    await waitFor(
      'the long job reported',
      () => s.states(1).includes('printed') || s.states(1).includes('unconfirmed'),
      45_000,
    );
    const outcome = s.states(1).at(-1);
    await s.publish(2);
    let nextOnPaperWhenConfirmed: boolean | null = null;
    await waitFor(
      'the next job reported',
      () => {
        const done = s.states(2).includes('printed') || s.states(2).includes('unconfirmed');
        if (s.states(2).includes('printed') && nextOnPaperWhenConfirmed === null)
          nextOnPaperWhenConfirmed = s.printedOrders().includes(s.orderNo(2));
        return done;
      },
      45_000,
    );
    await waitFor('all on paper', () => s.emulator.paper.tickets.length === 2, 30_000);
    if (process.env.FAULTS_DEBUG) console.log({ outcome, nextOnPaperWhenConfirmed });
    assert.deepEqual(s.states(1), ['queued', 'printing', outcome], 'never waiting, never re-sent');
    assert.equal(s.printsByOrder().get(s.orderNo(1))?.length, 1, 'the long job, once');
    assert.equal(s.printsByOrder().get(s.orderNo(2))?.length, 1);
    for (const p of s.prints()) assert.deepEqual(p.markings, [], JSON.stringify(p));
    s.assertInvariants();
    // The late `GS r 1` answer to the long job did not pass for the next job's confirmation.
    assert.deepEqual(s.states(2), ['queued', 'printing', 'printed']);
    assert.equal(nextOnPaperWhenConfirmed, true, 'confirmed only once on paper');
  });
});
