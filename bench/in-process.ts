/**
 * The benchmark groups that measure in the bench's own process, as one module that bench/run.ts
 * loads bundled with the production build's options (harness/child-entry.ts): our code in
 * them (opening an instruction, rendering, the store and spooler, the floor beside them, the
 * emulator they print to) runs as `npm run build` compiles it, not as tsx transpiles the sources
 * (decision 209). The groups that start children (e2e, footprint) bundle those children
 * themselves. `TEST_CHILD_ENTRY=source` runs these from the sources, to compare.
 */
export { benchJobs } from './jobs.bench.js';
export { benchPrinterLinks } from './printer.bench.js';
export { benchProtocol } from './protocol.bench.js';
export { benchReceipt } from './receipt.bench.js';
