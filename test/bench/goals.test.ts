/**
 * The performance guard (issue 43 item 10): every goal finds its benchmark in the last full run
 * (a renamed group must not switch the guard off quietly), a ratio under 0.8x its goal fails,
 * and the goals set in milliseconds and megabytes are read against the same run's baseline.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkGoals, GOALS, GUARD_FACTOR } from '../../bench/goals.js';
import type { Comparison } from '../../bench/harness.js';
import { ROOT } from '../helpers/cli.js';

const results = (
  JSON.parse(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8')) as {
    results: Comparison[];
  }
).results;

const comparison = (
  group: string,
  ratio: number,
  baselineOps = 1,
  subjectOps = ratio,
): Comparison => ({
  group,
  subject: { name: 'subject', opsPerSec: subjectOps, samples: 1 },
  baseline: { name: 'baseline', opsPerSec: baselineOps, samples: 1 },
  ratio,
});

describe('bench goals', () => {
  it('every goal matches a benchmark of the last full run, and that run passes the guard', () => {
    const checks = checkGoals(results, true);
    for (const goal of GOALS)
      assert.ok(
        checks.some((c) => c.goal === goal && c.comparison),
        `${goal.says}: no group of bench/results.json matches ${goal.group}`,
      );
    assert.deepEqual(
      checks.filter((c) => !c.ok).map((c) => c.goal.says),
      [],
    );
  });

  it('a ratio under 0.8x its goal fails; at the guard it passes', () => {
    const group = 'backlog drain vs the floor of this design';
    const at = (ratio: number) => checkGoals([comparison(group, ratio)], false)[0]!;
    assert.equal(at(0.8 * GUARD_FACTOR).ok, true);
    assert.equal(at(0.8 * GUARD_FACTOR - 0.001).ok, false);
    assert.equal(at(0.5).ok, false);
  });

  it('a missing benchmark fails a complete run and is skipped with --only', () => {
    assert.ok(checkGoals([], true).every((c) => !c.ok && !c.comparison));
    assert.equal(checkGoals([], true).length, GOALS.length);
    assert.deepEqual(checkGoals([], false), []);
  });

  it('start and RSS are read as ratios to bare Node, in a quick run as in a full one', () => {
    // Bare Node 150 ms, the agent 220 ms: 0.68x, within 1.5x; at 290 ms (0.517x) under the guard.
    // Both the installed config (issue 45) and the narrow one are held to it, each on its own.
    for (const config of ['installed', 'narrow']) {
      const start = (agentMs: number) =>
        checkGoals(
          [
            comparison(
              `start: exec -> online, ${config} config, median of 5 (1000/ms)`,
              150 / agentMs,
            ),
          ],
          false,
        );
      assert.equal(start(220).length, 1, config);
      assert.equal(start(220)[0]!.ok, true, config);
      assert.equal(start(290)[0]!.ok, false, config);
    }
    // The quick run measures idle RSS after 3 s, the full one after 10 s: both are guarded.
    for (const group of [
      'RSS 10 s after start, idle (1000/MB)',
      'RSS 3 s after start, idle (1000/MB)',
    ])
      assert.equal(checkGoals([comparison(group, 39 / 100)], false)[0]?.ok, false, group);
  });
});
