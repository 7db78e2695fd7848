/**
 * Issue 13 item 6: jobs for a role no printer serves vanished (print-protocol v1.1 §4). Before, a
 * `kitchen` job on a store without a kitchen printer sat queued forever, logged nowhere, counted
 * nowhere (status: 0 pending), and the later `receipt` instruction for the same order was answered
 * `duplicate` and never printed: a paid order without its receipt. Status queue figures were also
 * wrong when a printer's id differs from its role.
 *
 * Now: dedupe is per (orderNo, role), so the receipt prints; the kitchen job is `waiting`
 * NO_PRINTER_FOR_ROLE (one event), logged with its role, counted in the status (`unrouted`), and
 * printed once the agent runs with a printer for that role. A printer's queue in the status is
 * the sum over the roles it serves.
 *
 * Real processes: the agent as a child process, Mosquitto, the emulator.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { type FaultStore, faultSuite, type Json } from '../faults/harness.js';

type Status = {
  online: boolean;
  printers?: Array<{ id: string; queue: { pending: number; oldestPendingSec: number } }>;
  unrouted?: Array<{ role: string; pending: number; oldestPendingSec: number }>;
};

/** Asks for a fresh status (the `status` command) and returns it. */
async function freshStatus(s: FaultStore, n: number): Promise<Status> {
  const from = s.statuses.length;
  await s.publishRaw(
    s.envelope(s.command({ commandId: `C-status-${n}`, type: 'status' })),
    s.t.command,
  );
  await waitFor(
    'a fresh status',
    () => s.statuses.slice(from).some((x) => x.online === true),
    20_000,
  );
  return s.statuses.slice(from).findLast((x) => x.online === true) as Status;
}

describe('printer roles (child process)', { skip: skipWithoutMosquitto() }, () => {
  const env = faultSuite();

  it('a job for an unserved role is reported, counted and printed later; the receipt of the same order prints', async () => {
    const s = await env.stores.create({
      name: 'roles',
      broker: env.broker,
      // The printer's id is not its role.
      configure: (c) => {
        (c.printers as Json[])[0]!.id = 'front';
        (c.printers as Json[])[0]!.roles = ['receipt'];
      },
    });
    await s.startOnline();

    // The kitchen ticket of order 1 first: nobody serves `kitchen`.
    await s.publish(1, {}, { jobId: 'P-roles-1-kitchen', printer: 'kitchen' });
    const waiting = await s.waitForState('P-roles-1-kitchen', 'waiting');
    assert.equal(waiting.reason?.code, 'NO_PRINTER_FOR_ROLE');
    assert.match(waiting.reason!.message, /no configured printer serves role kitchen/);
    // The log travels through a pipe, the event through the broker: either may arrive first.
    await waitFor('the unrouted job logged', () =>
      /"role":"kitchen".*no configured printer serves role kitchen/.test(s.output),
    );

    // The receipt of the same order is not a duplicate of the kitchen job: it prints.
    await s.publish(1);
    await s.waitForState(1, 'printed');
    assert.ok(!s.states(1).includes('duplicate'));

    // Another kitchen ticket: storing it runs the sweep of unserved roles again, with job 1
    // parked already. Its event comes after any the same sweep wrote for job 1 (the outbox is
    // published in order), so job 1 has been looked at again, and it is not reported again.
    // (The agent also sweeps every 10 s, a spooler default the config does not expose: the same
    // sweep, which this one exercises without a 10 s wait.)
    await s.publish(4, {}, { jobId: 'P-roles-4-kitchen', printer: 'kitchen' });
    await s.waitForState('P-roles-4-kitchen', 'waiting');
    assert.equal(
      s.states('P-roles-1-kitchen').filter((x) => x === 'waiting').length,
      1,
      'one event per job, not one per sweep',
    );

    // The status counts the kitchen job, and the printer's queue follows its roles.
    s.emulator.setFault('paper-out', true);
    await waitFor('paper out', () => s.printerState() === 'paper-out', 15_000);
    await s.publish(2);
    await s.publish(3);
    await s.waitForState(2, 'waiting');
    const status = await freshStatus(s, 1);
    assert.deepEqual(
      status.unrouted?.map((u) => [u.role, u.pending]),
      [['kitchen', 2]],
    );
    assert.deepEqual(
      status.printers?.map((p) => [p.id, p.queue.pending]),
      [['front', 2]],
      'the queue of printer front is that of its role receipt',
    );
    s.emulator.setFault('paper-out', false);
    await s.waitForState(3, 'printed');

    // The owner adds the kitchen role to the printer and restarts the agent: it prints.
    await s.stopAgent('SIGTERM');
    const config = JSON.parse(readFileSync(s.configPath, 'utf8')) as Json;
    (config.printers as Json[])[0]!.roles = ['receipt', 'kitchen'];
    writeFileSync(s.configPath, JSON.stringify(config), { mode: 0o600 });
    await s.startOnline();
    await s.waitForState('P-roles-1-kitchen', 'printed');
    await s.waitForState('P-roles-4-kitchen', 'printed');
    for (const kitchen of ['P-roles-1-kitchen', 'P-roles-4-kitchen'])
      assert.equal(s.states(kitchen).filter((x) => x === 'waiting').length, 1, kitchen);
    const after = await freshStatus(s, 2);
    assert.equal(after.unrouted, undefined, 'nothing unrouted any more');
    // Order 1 printed twice, once per role, neither a duplicate of the other.
    assert.equal(s.printsByOrder().get(s.orderNo(1))?.length, 2);
    s.copies.set(s.orderNo(1), 2); // one per role: the invariant's "copies asked for"
    s.assertInvariants({ expected: [1, 2, 3, 4].map((n) => s.orderNo(n)) });
  });
});
