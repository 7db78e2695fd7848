/**
 * `npm run bench`: runs every benchmark, prints a table of ratios against baselines measured in
 * the same run and writes bench/results.json. `--quick` shortens each measurement; `--only NAME`
 * (protocol, receipt, printer, jobs, e2e, footprint; repeatable) runs only those.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchEndToEnd } from './e2e.bench.js';
import { benchFootprint } from './footprint.bench.js';
import { type Comparison, report } from './harness.js';
import { benchJobs } from './jobs.bench.js';
import { benchPrinterLinks } from './printer.bench.js';
import { benchProtocol } from './protocol.bench.js';
import { benchReceipt } from './receipt.bench.js';

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
report(results, join(dirname(fileURLToPath(import.meta.url)), 'results.json'));
