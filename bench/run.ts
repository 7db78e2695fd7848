/**
 * `npm run bench`: runs every benchmark, prints a table of ratios against baselines measured in
 * the same run and writes bench/results.json. `--quick` shortens each measurement.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchEndToEnd } from './e2e.bench.js';
import { report } from './harness.js';
import { benchJobs } from './jobs.bench.js';
import { benchPrinterLinks } from './printer.bench.js';
import { benchProtocol } from './protocol.bench.js';
import { benchReceipt } from './receipt.bench.js';

const quick = process.argv.includes('--quick');
const minMs = quick ? 200 : 2000;
const results = [
  ...benchProtocol(minMs),
  ...benchReceipt(minMs),
  ...(await benchPrinterLinks(quick)),
  ...(await benchJobs(minMs)),
  ...(await benchEndToEnd(quick)),
];
report(results, join(dirname(fileURLToPath(import.meta.url)), 'results.json'));
