#!/usr/bin/env -S node --single-threaded-gc
/**
 * The command line's entry: runs the program (`src/cli/program.ts`) on this process's streams,
 * environment and working directory, and exits with the code it returns.
 *
 * The line above is how `printer-agent` starts (the unit's ExecStart, the package's
 * /usr/bin/printer-agent link): V8 collects garbage on the main thread instead of on helper
 * threads, 0.05-0.1 ms less CPU per printed job for a heap of ~15 MB (decision 213). Node refuses
 * the flag in NODE_OPTIONS and crashes when it is set at run time, so it is given here; `env -S`
 * (coreutils 8.30, Debian 10) splits the line. `node dist/cli.js` runs without it.
 */
import { processIo } from './cli/io.js';
import { main } from './cli/program.js';

process.exitCode = await main(process.argv.slice(2), processIo());
