/**
 * The command line as a program without side effects: `buildProgram` assembles the command groups
 * of `src/cli/` around the I/O it is given, `main` runs one command line and returns the exit code:
 * 0 success, 1 a typed failure (`CODE: message` on stderr), 2 a usage error (unknown command,
 * missing or invalid option); printer commands add 3 (printer not ready) and 4 (sent but not
 * confirmed), `printers identify` 5 (nothing could be learnt from the printer), and `run` 78
 * (EX_CONFIG: the config keeps it from starting; the unit does not restart it), as every command
 * on a config of a newer agent (CONFIG_TOO_NEW). `src/cli.ts` runs
 * it on the real process; tests run it in their own process with captured streams
 * (test/helpers/cli.ts), the way the order service's `buildApp()` is tested.
 */
import { Command, CommanderError } from 'commander';
import { isAgentError } from '../errors.js';
import { VERSION } from '../version.js';
import { type CliContext, type CliIo, type CliOutput, EXIT_CONFIG } from './io.js';

type Register = (program: Command, context: CliContext) => void;

/** Typed failures every command exits EX_CONFIG with (`run` adds its own config errors). */
const CONFIG_CLASS_CODES = new Set<string>(['NODE_UNSUPPORTED', 'CONFIG_TOO_NEW']);

/**
 * The command groups, in the order help lists them, with the top-level commands each adds. A group
 * is imported only when its command runs: `run` does not load the order service, the demo, doctor
 * or the emulator (issue 16: start time and memory on a Pi), and a test that runs `jobs list`
 * in-process does not load the agent. Help and unknown commands load them all.
 */
const GROUPS: ReadonlyArray<{ commands: readonly string[]; load: () => Promise<Register> }> = [
  { commands: ['keys'], load: async () => (await import('./keys.js')).registerKeys },
  { commands: ['broker'], load: async () => (await import('./broker.js')).registerBroker },
  {
    commands: ['sign', 'verify'],
    load: async () => (await import('./envelopes.js')).registerEnvelopes,
  },
  { commands: ['render'], load: async () => (await import('./render.js')).registerRender },
  { commands: ['emulator'], load: async () => (await import('./emulator.js')).registerEmulator },
  {
    commands: ['status', 'test-print', 'print', 'drawer'],
    load: async () => (await import('./printer.js')).registerPrinter,
  },
  {
    commands: ['printers'],
    load: async () => (await import('./printers.js')).registerPrinters,
  },
  { commands: ['run'], load: async () => (await import('./run.js')).registerRun },
  { commands: ['config'], load: async () => (await import('./config.js')).registerConfig },
  { commands: ['jobs'], load: async () => (await import('./jobs.js')).registerJobs },
  { commands: ['doctor'], load: async () => (await import('./doctor.js')).registerDoctor },
  { commands: ['setup'], load: async () => (await import('./setup.js')).registerSetup },
  {
    commands: ['order-service'],
    load: async () => (await import('./order-service.js')).registerOrderService,
  },
  { commands: ['demo'], load: async () => (await import('./demo.js')).registerDemo },
];

/** A terminal's width, else commander's default of 80 columns. */
function helpWidth(stream: CliOutput): number {
  return (stream.isTTY ? stream.columns : undefined) ?? 80;
}

/**
 * The program with the command groups `argv` needs: the one its first word names, or every group
 * when the first word is an option (`--help`, `--version`) or names no command (commander then
 * lists them all in its error and its suggestion).
 */
export async function buildProgram(
  context: CliContext,
  argv: readonly string[] = [],
): Promise<Command> {
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
  const named = GROUPS.find((group) => group.commands.includes(argv[0] ?? ''));
  for (const group of named ? [named] : GROUPS) (await group.load())(program, context);
  return program;
}

/** Runs one command line (without the program name) and returns its exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const context: CliContext = { io, exitCode: 0 };
  try {
    await (await buildProgram(context, argv)).parseAsync([...argv], { from: 'user' });
    // Commands with outcomes beyond success (printer not ready, job unconfirmed) set exitCode.
    return context.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here with exit code 0.
      return error.exitCode === 0 ? 0 : 2;
    }
    if (isAgentError(error)) {
      io.stderr.write(`${error.code}: ${error.message}\n`);
      // A Node that cannot run the agent is for a person to fix, like a config: EX_CONFIG, which
      // the unit does not restart (RestartPreventExitStatus=78). So is a config of a newer agent,
      // whichever command meets it (issue 43 item 7).
      return CONFIG_CLASS_CODES.has(error.code) ? EXIT_CONFIG : 1;
    }
    io.stderr.write(
      `INTERNAL: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return 1;
  }
}
