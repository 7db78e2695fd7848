/**
 * Fault matrix row 14, disk full, with the agent as a child process. The database cannot be
 * shrunk from outside, so the agent is started with `PRINTER_AGENT_FAULT=max-pages:1`
 * (src/jobs/fault-points.ts, inert unless set): the job database is held at its size, and SQLite
 * answers SQLITE_FULL exactly as on a full disk. "Space returns" is a restart without the variable.
 * (The store-level test is test/jobs/store-disk-full.test.ts.)
 *
 * Invariant: an instruction the store cannot keep is not acknowledged (the broker keeps it and
 * delivers it again), the fault is in the retained status, the daemon stays up, and once space
 * returns the instruction prints, once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { faultSuite } from './harness.js';

const NOT_STORED = 'cannot store the message: not acknowledged';

describe('row 14: disk full (child process)', { skip: skipWithoutMosquitto() }, () => {
  const env = faultSuite({ persistence: true });

  it('row 14: database full: no ack, fault in the status, redelivered and printed after space returns', async () => {
    const s = await env.stores.create({ name: 'r14', broker: env.broker });
    const full = await s.startOnline({ PRINTER_AGENT_FAULT: 'max-pages:1' });
    // About 10 KB within the protocol's limits (50 products, 2000 characters of free text; `é` is
    // 2 bytes in UTF-8): it needs new pages, which the held database cannot get. Text a code page
    // carries on purpose: this row is about the store, and a receipt of 200 raster lines (CJK on
    // the generic profile) takes seconds of CPU to draw, long enough on a loaded CI machine to
    // outlast any deadline here (the rasterizer has its own tests).
    await s.publish(1, {
      productInfo: Array.from({ length: 50 }, (_, i) => ({
        productName: `${i} ${'Crème brûlée '.repeat(3)}`,
        price: 10000,
        quantity: 1,
      })),
      customPrintContext: 'é'.repeat(2000),
    });

    await waitFor(
      'STORE_FULL in the status',
      () =>
        s.statuses.some((x) => (x.fault as { code?: string } | undefined)?.code === 'STORE_FULL'),
      20_000,
    );
    // Not acknowledged: the broker delivers it again and again (each time on a new connection,
    // since the agent drops the link to get it back).
    await waitFor(
      'the broker delivered it again',
      () => s.output.split(NOT_STORED).length - 1 >= 3,
      20_000,
    );
    assert.ok(full.alive, 'the daemon stays up while the disk is full');
    assert.deepEqual(s.states(1), [], 'never stored, never reported queued');
    assert.equal(s.emulator.tickets().length, 0);

    // Space returns.
    await s.stopAgent('SIGKILL');
    await s.startOnline();
    await s.waitForState(1, 'printed');
    assert.deepEqual(s.states(1), ['queued', 'printing', 'printed']);
    await waitFor(
      'a status without the fault',
      () => s.statuses.at(-1)?.online === true && s.statuses.at(-1)?.fault == null,
      20_000,
    );
    assert.equal(s.prints().length, 1);
    s.assertInvariants();
  });
});
