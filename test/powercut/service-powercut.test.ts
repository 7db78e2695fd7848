/**
 * Issue 39, item 3: the reference order service on SQLite through power cuts (service-loop.ts):
 * a create that was answered is never lost, and no order number ever stands for two instructions.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Mosquitto, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { forgetfsSkip } from './forgetfs.js';
import { runServicePowerCutLoop, SERVICE_PHASES } from './service-loop.js';

const SEED = Number(process.env.POWERCUT_SEED ?? Math.floor(Math.random() * 2 ** 31));
const CUTS = SERVICE_PHASES.length * 2;

describe('the order service through power cuts (child process)', {
  skip: skipWithoutMosquitto() || forgetfsSkip(),
}, () => {
  it(`answered creates survive every cut, each published under one order number (seed ${SEED})`, {
    timeout: 300_000,
  }, async () => {
    const broker = await Mosquitto.start({ persistence: true });
    try {
      const summary = await runServicePowerCutLoop({ cuts: CUTS, seed: SEED, broker });
      assert.equal(summary.cuts, CUTS);
      assert.equal(summary.landed, CUTS, JSON.stringify(summary));
      assert.ok(summary.answered >= 15, JSON.stringify(summary));
      assert.equal(summary.lost, 0, JSON.stringify(summary));
      assert.equal(summary.publishedTwice, 0, JSON.stringify(summary));
      assert.equal(summary.neverPublished, 0, JSON.stringify(summary));
    } finally {
      await broker.stop();
    }
  });
});
