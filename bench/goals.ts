/**
 * The performance goals (issue 16) as ratios against the baselines measured in the same run, and
 * the guard that keeps a release from quietly losing them (issue 43): `npm run bench` (CI runs
 * `--quick`) fails when a ratio falls below 0.8x its goal. 0.8x, not 1x: a quick run on a busy
 * 2-core machine moves ratios by 10-15% from run to run; a regression that matters (a receipt
 * rendered twice, a commit per job instead of per group, a start that loads the order service)
 * costs far more than 20%. The full run's table in the README is where goals are read as met.
 *
 * Every comparison's ratio is "higher is better" (rates, or 1000/ms and 1000/MB), so a goal is
 * the least ratio that meets it. Issue 16's goals in milliseconds and megabytes are kept as the
 * ratios they were against the baselines of the machine they were set on, so that they hold on
 * another machine or a busy one. A goal's ratio may depend on its comparison (`ratio(c)`).
 */
import type { Comparison } from './harness.js';

export const GUARD_FACTOR = 0.8;

export interface Goal {
  /** Which comparison: its group. */
  group: RegExp;
  /** What the goal is, for the table. */
  says: string;
  /** The least ratio that meets the goal, for this comparison (its baseline can set it). */
  ratio: (c: Comparison) => number;
}

export const GOALS: readonly Goal[] = [
  {
    group: /^render a 20-item receipt, vs receiptline$/,
    says: 'renders at least as fast as receiptline (1x)',
    ratio: () => 1,
  },
  {
    group: /^open a signed print instruction$/,
    says: 'opens an instruction at 0.8x node:crypto verify + JSON.parse',
    ratio: () => 0.8,
  },
  {
    group: /^backlog drain vs the floor of this design$/,
    says: "drains a backlog at 0.8x the floor's rate",
    ratio: () => 0.8,
  },
  {
    group: /^e2e latency p50, publish -> cut after [\d,]+ jobs, vs the floor of this design/,
    says: "p50 latency within 1.5x the floor's",
    ratio: () => 1 / 1.5,
  },
  {
    group: /^e2e latency p99, publish -> cut after [\d,]+ jobs, vs the floor of this design/,
    says: "p99 latency within 1.5x the floor's",
    ratio: () => 1 / 1.5,
  },
  {
    group: /^start: exec -> online, installed config/,
    says: 'with the config a package installs, online within 1.5x the start of bare Node + mqtt.js (issue 45)',
    ratio: () => 1 / 1.5,
  },
  {
    group: /^start from outside \(bench\/start-outside\.sh\): exec -> online/,
    says: 'measured from outside (shell clock, mosquitto_sub), online within 1.5x the start of bare Node + mqtt.js (issue 45)',
    ratio: () => 1 / 1.5,
  },
  {
    group: /^start: exec -> online, narrow config/,
    says: 'online within 1.5x the start of bare Node + mqtt.js (issue 16)',
    // ratio = bare ms / agent ms. Issue 16's 250 ms was set where bare Node took 152 ms (1.64x);
    // a ratio holds on a slower or busier machine, where an absolute time does not.
    ratio: () => 1 / 1.5,
  },
  {
    group: /^RSS \d+ s after start, idle/,
    says: "idle RSS within 1.8x bare Node's (issue 16: 70 MB where bare Node took 39 MB)",
    ratio: () => 1 / 1.8,
  },
  {
    group: /^agent RSS after [\d,]+ jobs/,
    says: 'RSS after the burst within 1.5x the idle RSS (issue 16: 90 MB after, 60 MB idle)',
    // ratio = idle MB / after MB.
    ratio: () => 1 / 1.5,
  },
];

export interface GoalCheck {
  goal: Goal;
  comparison: Comparison | undefined;
  /** The goal as a ratio, and the guard's floor (GUARD_FACTOR of it). */
  goalRatio: number | null;
  floor: number | null;
  ok: boolean;
}

/**
 * Each goal against the comparisons of a run. `complete`: every benchmark ran, so a goal with no
 * comparison fails (a renamed group must not turn the guard off); with `--only`, it is skipped.
 */
export function checkGoals(results: readonly Comparison[], complete: boolean): GoalCheck[] {
  const checks: GoalCheck[] = [];
  for (const goal of GOALS) {
    const matching = results.filter((c) => goal.group.test(c.group));
    if (matching.length === 0) {
      if (complete)
        checks.push({ goal, comparison: undefined, goalRatio: null, floor: null, ok: false });
      continue;
    }
    for (const comparison of matching) {
      const goalRatio = goal.ratio(comparison);
      const floor = goalRatio * GUARD_FACTOR;
      checks.push({ goal, comparison, goalRatio, floor, ok: comparison.ratio >= floor });
    }
  }
  return checks;
}

/** The guard's table and verdict lines. */
export function formatGoalChecks(checks: readonly GoalCheck[]): string {
  return checks
    .map((c) => {
      if (!c.comparison) return `FAIL ${c.goal.says}: no benchmark measured it (${c.goal.group})`;
      const verdict = c.ok ? 'ok  ' : 'FAIL';
      const met = c.comparison.ratio >= c.goalRatio! ? 'goal met' : 'goal not met';
      return `${verdict} ${c.goal.says}: ${c.comparison.ratio.toFixed(3)}x, goal ${c.goalRatio!.toFixed(3)}x (${met}), guard ${c.floor!.toFixed(3)}x`;
    })
    .join('\n');
}
