/**
 * `npm run bench`: runs every benchmark, prints a table of ratios against baselines measured in
 * the same run and writes bench/results.json. `--quick` shortens each measurement; `--only NAME`
 * (protocol, receipt, printer, jobs, e2e, footprint; repeatable) runs only those. Exits 1 when a
 * ratio falls below 0.8x its goal (bench/goals.ts): CI runs `--quick` as a guard (issue 43).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { scriptEntry } from '../harness/child-entry.js';
import { benchEndToEnd } from './e2e.bench.js';
import { benchFootprint } from './footprint.bench.js';
import { checkGoals, formatGoalChecks, GUARD_FACTOR } from './goals.js';
import { type Comparison, report } from './harness.js';

const HERE = dirname(fileURLToPath(import.meta.url));
// The in-process groups, bundled as production code is (bench/in-process.ts, decision 209).
const inProcessEntry = scriptEntry(join(HERE, 'in-process.ts'));
const { benchJobs, benchPrinterLinks, benchProtocol, benchReceipt } = (await import(
  pathToFileURL(inProcessEntry[inProcessEntry.length - 1]!).href
)) as typeof import('./in-process.js');

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string', multiple: true },
  },
});
const quick = args.quick!;
const minMs = quick ? 200 : 2000;
const BENCHES: Record<string, () => Comparison[] | Promise<Comparison[]>> = {
  protocol: () => benchProtocol(minMs),
  receipt: () => benchReceipt(minMs),
  printer: () => benchPrinterLinks(quick),
  jobs: () => benchJobs(minMs),
  e2e: () => benchEndToEnd(quick),
  footprint: () => benchFootprint(quick),
};
const unknown = (args.only ?? []).filter((name) => !(name in BENCHES));
if (unknown.length > 0) {
  console.error(`--only: ${unknown.join(', ')}: not one of ${Object.keys(BENCHES).join(', ')}`);
  process.exit(2);
}
const results: Comparison[] = [];
for (const [name, bench] of Object.entries(BENCHES))
  if (!args.only || args.only.includes(name)) results.push(...(await bench()));
// A quick run is a guard, not a measurement to publish: the README's table is made from a full
// run's results.json, which a quick one must not overwrite.
report(results, join(HERE, quick ? 'results.quick.json' : 'results.json'));
const checks = checkGoals(results, !args.only);
console.log(
  `\ngoals (a ratio below ${GUARD_FACTOR}x its goal fails):\n${formatGoalChecks(checks)}`,
);
if (checks.some((c) => !c.ok)) {
  console.error('bench: a ratio fell below 0.8x its goal (bench/goals.ts)');
  process.exitCode = 1;
}
