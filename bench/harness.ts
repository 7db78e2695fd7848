/**
 * A small benchmark harness. Every figure is reported beside a baseline measured in the same run,
 * on the same machine, as a ratio: absolute numbers drift between machines, ratios much less.
 */
import { writeFileSync } from 'node:fs';

export interface Measurement {
  name: string;
  opsPerSec: number;
  samples: number;
}

export interface Comparison {
  group: string;
  subject: Measurement;
  baseline: Measurement;
  /** subject ops/s divided by baseline ops/s: 1.0 = as fast as the baseline. */
  ratio: number;
}

export interface Subject {
  name: string;
  fn: () => unknown;
}

/** Runs `fn` repeatedly for at least `minMs` (after a warm-up) and returns operations per second. */
export function measure(name: string, fn: () => unknown, minMs = 1000): Measurement {
  return measureTogether([{ name, fn }], minMs, 1)[0]!;
}

/**
 * Measures functions that are compared with each other in alternating rounds (A B, then B A, ...),
 * each for `minMs` in all, so that a machine that speeds up or slows down during the run weighs on
 * each alike. Measured one after the other, the first one measured ran up to 2x slower here during
 * its first second (CPU frequency, a neighbour on the host), which decided some ratios.
 * Each function's rate is its best round's (decision 313): what the machine takes away (the other
 * core's work, a collection started by the other function) only ever slows a round, so the best
 * one is the least disturbed. The mean over rounds moved "open" between 0.49x and 0.69x from run
 * to run on a 2-core machine another job used; the best round, 0.72-0.73x.
 */
export function measureTogether(
  subjects: readonly Subject[],
  minMs = 1000,
  rounds = 8,
): Measurement[] {
  for (const { fn } of subjects) {
    const warmUntil = performance.now() + Math.min(200, minMs / 5);
    while (performance.now() < warmUntil) fn();
  }
  const samples = subjects.map(() => 0);
  const best = subjects.map(() => 0);
  const forward = subjects.map((_, i) => i);
  const backward = [...forward].reverse();
  for (let round = 0; round < rounds; round++) {
    for (const i of round % 2 === 0 ? forward : backward) {
      const fn = subjects[i]!.fn;
      const start = performance.now();
      let now = start;
      let n = 0;
      while (now - start < minMs / rounds) {
        for (let k = 0; k < 16; k++) fn();
        n += 16;
        now = performance.now();
      }
      samples[i]! += n;
      best[i] = Math.max(best[i]!, (n * 1000) / (now - start));
    }
  }
  return subjects.map((s, i) => ({
    name: s.name,
    opsPerSec: best[i]!,
    samples: samples[i]!,
  }));
}

/** Runs a benchmark's clean-up steps, last first; each is best effort, the next still runs. */
export async function cleanUp(steps: Array<() => Promise<unknown> | unknown>): Promise<void> {
  for (const step of [...steps].reverse()) {
    try {
      await step();
    } catch {
      // best effort: the next step still runs
    }
  }
}

export function compare(group: string, subject: Measurement, baseline: Measurement): Comparison {
  return { group, subject, baseline, ratio: subject.opsPerSec / baseline.opsPerSec };
}

function fmt(n: number): string {
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2);
}

/** Prints the table to stdout and writes `path` as JSON. */
export function report(comparisons: readonly Comparison[], path: string): void {
  const rows = comparisons.map((c) => [
    c.group,
    `${c.subject.name}: ${fmt(c.subject.opsPerSec)}/s`,
    `${c.baseline.name}: ${fmt(c.baseline.opsPerSec)}/s`,
    `${c.ratio.toFixed(3)}x`,
  ]);
  const header = ['benchmark', 'subject', 'baseline (same run)', 'ratio'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(header));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const r of rows) console.log(line(r));
  const json = {
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    at: new Date().toISOString(),
    results: comparisons,
  };
  writeFileSync(path, `${JSON.stringify(json, null, 2)}\n`);
}

/** A `--name` value of a run script that must be a positive number; exits 2 naming it otherwise. */
export function positiveArg(name: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) {
    process.stderr.write(`--${name}: must be a positive number (got ${JSON.stringify(value)})\n`);
    process.exit(2);
  }
  return n;
}
