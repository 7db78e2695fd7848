#!/usr/bin/env node
/**
 * The command line. Each command group lives in `src/cli/`; this file only assembles them and
 * turns errors into exit codes: 0 success, 1 a typed failure (`CODE: message` on stderr),
 * 2 a usage error (unknown command, missing or invalid option); printer commands add 3 (printer
 * not ready) and 4 (sent but not confirmed).
 */
import { Command, CommanderError } from 'commander';
import { registerConfig } from './cli/config.js';
import { registerDemo } from './cli/demo.js';
import { registerDoctor } from './cli/doctor.js';
import { registerEmulator } from './cli/emulator.js';
import { registerEnvelopes } from './cli/envelopes.js';
import { registerJobs } from './cli/jobs.js';
import { registerKeys } from './cli/keys.js';
import { registerOrderService } from './cli/order-service.js';
import { registerPrinter } from './cli/printer.js';
import { registerRender } from './cli/render.js';
import { registerRun } from './cli/run.js';
import { isAgentError } from './errors.js';
import { VERSION } from './version.js';

export function buildProgram(): Command {
  const program = new Command('printer-agent')
    .description('Store print agent: signed MQTT print instructions to ESC/POS receipt printers')
    .version(VERSION, '-V, --version', 'print the version')
    .showHelpAfterError('(run with --help for usage)')
    // Subcommands inherit this; main() maps commander's exits to our exit codes.
    .exitOverride();
  registerKeys(program);
  registerEnvelopes(program);
  registerRender(program);
  registerEmulator(program);
  registerPrinter(program);
  registerRun(program);
  registerConfig(program);
  registerJobs(program);
  registerDoctor(program);
  registerOrderService(program);
  registerDemo(program);
  return program;
}

export async function main(argv: readonly string[]): Promise<number> {
  try {
    await buildProgram().parseAsync([...argv], { from: 'user' });
    // Commands with outcomes beyond success (printer not ready, job unconfirmed) set exitCode.
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here with exit code 0.
      return error.exitCode === 0 ? 0 : 2;
    }
    if (isAgentError(error)) {
      process.stderr.write(`${error.code}: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(
      `INTERNAL: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
