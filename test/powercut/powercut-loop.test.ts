/**
 * Fault matrix row 19, power loss (issue 39, item 2), in the suite: the power-cut loop
 * (test/powercut/loop.ts) with one cut in each phase of the agent's life, on forgetfs (a card
 * that loses what was not synced). `npm run powercut -- --cuts N` runs it longer (CI: 30 cuts).
 * `POWERCUT_SEED=N` replays a failing run's moments.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Mosquitto, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { forgetfsSkip } from './forgetfs.js';
import { PHASES, runPowerCutLoop } from './loop.js';

const SEED = Number(process.env.POWERCUT_SEED ?? Math.floor(Math.random() * 2 ** 31));

describe('row 19: power cuts on a card that forgets (child process)', {
  skip: skipWithoutMosquitto() || forgetfsSkip(),
}, () => {
  it(`a cut in every phase: nothing acknowledged lost, nothing printed twice unmarked, nothing stuck (seed ${SEED})`, {
    timeout: 600_000,
  }, async () => {
    const broker = await Mosquitto.start({ persistence: true });
    try {
      const summary = await runPowerCutLoop({ cuts: PHASES.length, seed: SEED, broker });
      assert.equal(summary.cuts, PHASES.length);
      for (const phase of PHASES)
        assert.equal(
          summary.phases[phase]!.landed,
          1,
          `the cut in ${phase} did not land where aimed: ${JSON.stringify(summary.phases)}`,
        );
      assert.ok(summary.acknowledged >= 20, `${summary.acknowledged} acknowledged`);
      assert.equal(summary.lost, 0, JSON.stringify(summary));
      assert.equal(summary.unmarkedDuplicates, 0, JSON.stringify(summary));
      assert.equal(summary.stuck, 0, JSON.stringify(summary));
      assert.equal(summary.integrityChecks, PHASES.length);
    } finally {
      await broker.stop();
    }
  });
});
