/**
 * Fault matrix row 19, power loss: a burst of 500 instructions while the agent (a child process)
 * is SIGKILLed and restarted at random moments (20 times in CI's own step, 10 in `npm test`; see
 * below), through start-up, receiving and printing alike: every other kill at a random moment
 * after the process started, the others at a random moment after that life printed its first
 * ticket (so some always land while printing, however slowly a busy machine starts the agent).
 * The broker keeps its session (persistence on, as in a store).
 *
 * Invariants: every order the broker acknowledged is printed; an order printed more than once is
 * marked on every extra copy (POSSIBLE DUPLICATE); the job database passes
 * `PRAGMA integrity_check` after the last kill.
 *
 * The kill moments come from a seeded generator; a failure names the seed, and `KILL_SEED=N`
 * replays the same schedule.
 *
 * Kills: 10 in `npm test` (five from start-up on, five while printing: every moment the loop
 * aims at); CI runs the 20 in a step of its own, `KILL_LOOP_KILLS=20` (decision 258).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import Database from '../../src/host/sqlite.js';
import { faultSuite } from './harness.js';

const ORDERS = 500;
const KILLS = Number(process.env.KILL_LOOP_KILLS ?? 10);
if (!Number.isSafeInteger(KILLS) || KILLS < 2)
  throw new Error(`KILL_LOOP_KILLS must be an integer of at least 2, got ${KILLS}`);
const SEED = Number(process.env.KILL_SEED ?? Math.floor(Math.random() * 2 ** 31));

/** mulberry32: small, seeded, good enough to spread kill moments. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('row 19: kill loop during a burst (child process)', {
  skip: skipWithoutMosquitto(),
}, () => {
  const env = faultSuite({ persistence: true });

  it(`row 19: ${ORDERS} instructions, ${KILLS} SIGKILLs at random moments: all printed, extra copies marked, integrity ok (seed ${SEED})`, {
    timeout: 300_000,
  }, async () => {
    const next = random(SEED);
    const s = await env.stores.create({ name: 'r19', broker: env.broker });
    await s.startOnline();
    // The whole burst goes to the broker at once; the agent works through it while it dies.
    const publishing = Promise.all(Array.from({ length: ORDERS }, (_, i) => s.publish(i + 1)));

    let kills = 0;
    let printedBeforeLastKill = 0;
    while (kills < KILLS) {
      const agent = s.agent!;
      if (kills % 2 === 0) {
        // Anywhere from start-up (the first second is mostly process start) to well into printing.
        await new Promise((r) => setTimeout(r, 200 + Math.floor(next() * 2300)));
      } else {
        // While printing, whatever the machine's load: once this life put a ticket on paper (a
        // busy machine may take longer than 2.5 s to start the agent), a random moment later.
        const tickets = s.emulator.paper.tickets.length;
        await waitFor(
          `life ${kills + 1} printing (seed ${SEED})`,
          // (or the burst is all on paper already: then it dies idle, which is a moment too)
          () =>
            s.emulator.paper.tickets.length > tickets ||
            s.emulator.paper.tickets.length >= ORDERS ||
            !agent.alive,
          60_000,
        );
        await new Promise((r) => setTimeout(r, Math.floor(next() * 1000)));
      }
      if (!agent.alive) throw new Error(`the agent exited by itself (seed ${SEED})\n${s.tail()}`);
      agent.child.kill('SIGKILL');
      const exit = await agent.exited;
      assert.equal(exit.signal, 'SIGKILL');
      kills++;
      printedBeforeLastKill = s.printedOrders().length;
      s.startAgent();
    }
    await publishing;
    assert.equal(s.acked.size, ORDERS, 'the broker acknowledged the whole burst');
    assert.ok(
      printedBeforeLastKill > 0,
      `the kills happened while printing, not only at start-up (seed ${SEED})`,
    );

    await waitFor(
      `every order printed after ${KILLS} kills (seed ${SEED})`,
      () => s.printedOrders().length >= ORDERS,
      180_000,
    );
    s.assertInvariants();

    await s.stopAgent('SIGKILL');
    const db = new Database(join(s.stateDir, 'jobs.db'), { readonly: true });
    try {
      assert.deepEqual(db.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
      const lost = db
        .prepare("SELECT COUNT(*) AS n FROM jobs WHERE kind = 'receipt' AND job_id LIKE 'P-r19-%'")
        .get() as { n: number };
      assert.equal(lost.n, ORDERS, 'one stored receipt job per order, none lost, none doubled');
    } finally {
      db.close();
    }
  });
});
