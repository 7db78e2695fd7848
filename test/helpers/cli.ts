/**
 * The CLI two ways. `runCliInProcess` runs the program (`src/cli/program.ts`) in this process with
 * captured streams, its own environment and directory: what most CLI tests need, without the
 * time each child process spends loading every dependency. `runCli` spawns it as a child process,
 * the way a person or a script would: for the smoke tests of the real entry, and for whatever
 * needs a process of its own (a daemon, signals, another process on the same file).
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { cliEntry, SOURCE_CLI } from '../../harness/child-entry.js';
import { main } from '../../src/cli/program.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `printer-agent ARGS` in a child process: a bundle of the current sources (test/helpers/
 * child-entry.ts) by default; `source` runs src/cli.ts through tsx (a checkout's entry, for its
 * smoke tests), `compiled` the build in `dist/` (`npm run build`).
 */
export function runCli(
  args: readonly string[],
  options: {
    input?: string;
    compiled?: boolean;
    source?: boolean;
    cwd?: string;
    env?: NodeJS.ProcessEnv;
  } = {},
): CliResult {
  const entry = options.compiled
    ? [join(ROOT, 'dist', 'cli.js')]
    : options.source
      ? SOURCE_CLI
      : cliEntry();
  const result = spawnSync(process.execPath, [...entry, ...args], {
    cwd: options.cwd ?? ROOT,
    env: options.env ?? process.env,
    input: options.input ?? '',
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

export interface InProcessResult extends CliResult {
  status: number;
  /** stdout as written, for binary output (`render --format escpos`). */
  stdoutBytes: Buffer;
}

function capture(): { stream: Writable; bytes(): Buffer } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
  return { stream, bytes: () => Buffer.concat(chunks) };
}

function ended(stream: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.once('error', reject);
    stream.end(resolve);
  });
}

const WATCHED_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'unhandledRejection'] as const;

/** What a command run in this process must leave as it found it (variable names, not values). */
function processState() {
  return {
    exitCode: String(process.exitCode),
    cwd: process.cwd(),
    env: Object.entries(process.env)
      .map(([name, value]) => `${name}:${value?.length}`)
      .sort()
      .join(' '),
    listeners: WATCHED_EVENTS.map((event) => `${event}:${process.listenerCount(event)}`).join(' '),
  };
}

/**
 * `printer-agent ARGS` in this process, answering like `runCli`. `env` replaces the environment
 * the command sees (default: a copy of this process's); `cwd` is where relative paths start
 * (default: the repository root, as for `runCli`); `input` is standard input. Throws when the
 * command changed this process (exit code, directory, environment, signal handlers), which would
 * leak into the tests after it.
 */
export async function runCliInProcess(
  args: readonly string[],
  options: { input?: string | Buffer; cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<InProcessResult> {
  const stdout = capture();
  const stderr = capture();
  const input = Buffer.from(options.input ?? '');
  let stdin: Readable | undefined;
  const exitCode = process.exitCode;
  const before = processState();
  const status = await main(args, {
    stdout: stdout.stream,
    stderr: stderr.stream,
    get stdin() {
      stdin ??= Readable.from([input]);
      return stdin;
    },
    readStdin: () => input,
    env: options.env ?? { ...process.env },
    cwd: options.cwd ?? ROOT,
    // A long-running command's logs: captured with stdout, never on this process's fd 1.
    logs: stdout.stream,
  });
  await Promise.all([ended(stdout.stream), ended(stderr.stream)]);
  stdin?.destroy();
  const after = processState();
  const changed = (Object.keys(before) as Array<keyof typeof before>).filter(
    (key) => before[key] !== after[key],
  );
  if (changed.length > 0) {
    process.exitCode = exitCode;
    throw new Error(
      `printer-agent ${args.join(' ')} changed this process: ${changed
        .map((key) =>
          key === 'env' ? 'the environment' : `${key} ${before[key]} -> ${after[key]}`,
        )
        .join('; ')}`,
    );
  }
  const bytes = stdout.bytes();
  return {
    status,
    stdout: bytes.toString('utf8'),
    stdoutBytes: bytes,
    stderr: stderr.bytes().toString('utf8'),
  };
}
