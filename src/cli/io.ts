/**
 * What a command may use of the world around it, and small I/O helpers every command shares.
 *
 * Commands never reach for `process.stdout`, `process.env` or `process.cwd()` themselves: they get
 * a `CliIo`, so the same program runs as the real process (`processIo()`, from `src/cli.ts`) and
 * inside a test with captured streams and its own environment (`test/helpers/cli.ts`).
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { DestinationStream } from 'pino';
import { AgentError, errorMessage } from '../errors.js';

/** A stream the CLI writes to; `isTTY` and `columns` shape the help text like a terminal's. */
/** sysexits.h EX_CONFIG: what `run` exits with when the config keeps it from starting. */
export const EXIT_CONFIG = 78;

export type CliOutput = Writable & { isTTY?: boolean; columns?: number };

export interface CliIo {
  readonly stdout: CliOutput;
  readonly stderr: CliOutput;
  /** Standard input as a stream: the emulator's typed commands. */
  readonly stdin: Readable & { isTTY?: boolean };
  /** All of standard input at once: a `-` file argument, read like a file. */
  readStdin(): Buffer;
  /** The environment: PRINTER_AGENT_* settings, PATH for the tools doctor runs. */
  readonly env: NodeJS.ProcessEnv;
  /** The directory relative paths on the command line are relative to. */
  readonly cwd: string;
  /** Where a long-running command's log lines go; unset: fd 1 through pino's own writer. */
  readonly logs?: DestinationStream;
  /**
   * How to run this program again (node, its flags, the script): for a command that writes a
   * script calling `printer-agent` the way it was itself run (the demo's new-order script).
   * Unset: `printer-agent` from PATH.
   */
  readonly entry?: readonly string[];
}

/** One run of the program: its I/O and the exit code a command sets beyond success and failure. */
export interface CliContext {
  readonly io: CliIo;
  /** 0 unless a command says otherwise (printer not ready 3, unconfirmed 4, doctor or config 1). */
  exitCode: number;
}

/** The real process's I/O. stdin is touched only when a command asks for it. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    // A getter: making process.stdin for a command that never reads it would switch a piped fd 0
    // to non-blocking, and readFileSync(0) of a later `-` argument would fail with EAGAIN.
    get stdin() {
      return process.stdin;
    },
    readStdin: () => readFileSync(0),
    env: process.env,
    cwd: process.cwd(),
    // tsx's flags are absolute paths; `--import tsx` is resolved from `cwd`.
    entry: [process.execPath, ...process.execArgv, ...process.argv.slice(1, 2)],
  };
}

/**
 * A command-line path for the file system. Kept as given when the process already works in
 * `io.cwd` (so messages name the file the way the person wrote it); else resolved against it.
 */
export function pathIn(io: CliIo, path: string): string {
  if (isAbsolute(path) || resolve(path) === resolve(io.cwd, path)) return path;
  return resolve(io.cwd, path);
}

/** Reads a file, or standard input for `-`. Errors name the file and the reason. */
export function readInput(io: CliIo, path: string): string {
  try {
    return path === '-' ? io.readStdin().toString('utf8') : readFileSync(pathIn(io, path), 'utf8');
  } catch (cause) {
    const reason = (cause as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new AgentError('INPUT_INVALID', `${path}: cannot read (${reason})`, { cause });
  }
}

/** Parses a file that must hold one JSON object. */
export function readJsonObject(io: CliIo, path: string): Record<string, unknown> {
  const raw = readInput(io, path);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (cause) {
    const detail = errorMessage(cause);
    throw new AgentError('INPUT_INVALID', `${path}: is not valid JSON (${detail})`, { cause });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AgentError('INPUT_INVALID', `${path}: must contain a JSON object`);
  }
  return value as Record<string, unknown>;
}

/** A secret from a flag or from a file (first line, trimmed); the file form keeps it out of `ps`. */
export function secretFrom(
  io: CliIo,
  value: string | undefined,
  file: string | undefined,
  name: string,
): string | undefined {
  if (value !== undefined && file !== undefined) {
    throw new AgentError('INPUT_INVALID', `--${name} and --${name}-file: give one, not both`);
  }
  if (file !== undefined) {
    const secret = readInput(io, file).split(/\r?\n/, 1)[0]?.trim() ?? '';
    if (secret === '') throw new AgentError('INPUT_INVALID', `--${name}-file ${file}: is empty`);
    return secret;
  }
  return value;
}
