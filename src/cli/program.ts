/**
 * The command line as a program without side effects: `buildProgram` assembles the command groups
 * of `src/cli/` around the I/O it is given, `main` runs one command line and returns the exit code:
 * 0 success, 1 a typed failure (`CODE: message` on stderr), 2 a usage error (unknown command,
 * missing or invalid option); printer commands add 3 (printer not ready) and 4 (sent but not
 * confirmed). `src/cli.ts` runs it on the real process; tests run it in their own process with
 * captured streams (test/helpers/cli.ts), the way the order service's `buildApp()` is tested.
 */
import { Command, CommanderError } from 'commander';
import { isAgentError } from '../errors.js';
import { VERSION } from '../version.js';
import { registerConfig } from './config.js';
import { registerDemo } from './demo.js';
import { registerDoctor } from './doctor.js';
import { registerEmulator } from './emulator.js';
import { registerEnvelopes } from './envelopes.js';
import type { CliContext, CliIo, CliOutput } from './io.js';
import { registerJobs } from './jobs.js';
import { registerKeys } from './keys.js';
import { registerOrderService } from './order-service.js';
import { registerPrinter } from './printer.js';
import { registerRender } from './render.js';
import { registerRun } from './run.js';

/** A terminal's width, else commander's default of 80 columns. */
function helpWidth(stream: CliOutput): number {
  return (stream.isTTY ? stream.columns : undefined) ?? 80;
}

export function buildProgram(context: CliContext): Command {
  const { io } = context;
  const program = new Command('printer-agent')
    .description('Store print agent: signed MQTT print instructions to ESC/POS receipt printers')
    // Before any subcommand is added: subcommands copy the output settings and the exit override.
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      getOutHelpWidth: () => helpWidth(io.stdout),
      getErrHelpWidth: () => helpWidth(io.stderr),
      // Our help has no colour, and commander's own check would read the process environment.
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    })
    .version(VERSION, '-V, --version', 'print the version')
    .showHelpAfterError('(run with --help for usage)')
    // Subcommands inherit this; main() maps commander's exits to our exit codes.
    .exitOverride();
  registerKeys(program, context);
  registerEnvelopes(program, context);
  registerRender(program, context);
  registerEmulator(program, context);
  registerPrinter(program, context);
  registerRun(program, context);
  registerConfig(program, context);
  registerJobs(program, context);
  registerDoctor(program, context);
  registerOrderService(program, context);
  registerDemo(program, context);
  return program;
}

/** Runs one command line (without the program name) and returns its exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const context: CliContext = { io, exitCode: 0 };
  try {
    await buildProgram(context).parseAsync([...argv], { from: 'user' });
    // Commands with outcomes beyond success (printer not ready, job unconfirmed) set exitCode.
    return context.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here with exit code 0.
      return error.exitCode === 0 ? 0 : 2;
    }
    if (isAgentError(error)) {
      io.stderr.write(`${error.code}: ${error.message}\n`);
      return 1;
    }
    io.stderr.write(
      `INTERNAL: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return 1;
  }
}
