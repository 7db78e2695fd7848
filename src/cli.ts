#!/usr/bin/env node
/**
 * The command line's entry: runs the program (`src/cli/program.ts`) on this process's streams,
 * environment and working directory, and exits with the code it returns.
 */
import { processIo } from './cli/io.js';
import { main } from './cli/program.js';

process.exitCode = await main(process.argv.slice(2), processIo());
