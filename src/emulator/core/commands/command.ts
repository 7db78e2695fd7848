/**
 * The shape of a command handler. Each family of commands (modes, character tables, paper
 * movement, images, codes, status and real-time, printer control) is a table from command name to
 * handler, one handler per command, as ReceiptPrinterEncoder keeps one method per command and
 * MQTT.js one handler per packet type. A handler gets an `Execution` (print state, paper, the
 * actions that reach beyond one command) and the command, and touches nothing else.
 *
 * `Execution` is an interface the executor implements, not the executor class: the handlers
 * depend on this file only, and the executor on the handlers, so the two do not import each
 * other (issue 44 item 7), and a handler can be run against a stand-in.
 */
import type { CodePageTable } from '../code-pages.js';
import type { Frame } from '../framer.js';
import type { HostQuery } from '../host-query.js';
import type { VirtualPaper } from '../paper.js';
import type { KeptState, PrintState } from '../print-state.js';

export interface ExecutorOptions {
  codePages: CodePageTable;
  powerOnCodePage: number;
  powerOnMultiByte: boolean;
}

/** A double-byte or UTF-8 character whose first bytes have arrived (commands/text.ts). */
export interface PendingChar {
  bytes: number[];
  offset: number;
}

/** What a command handler may read and do: implemented by `CommandExecutor` (executor.ts). */
export interface Execution {
  readonly paper: VirtualPaper;
  /** The print modes `ESC @` resets. */
  state: PrintState;
  /** What `ESC @` keeps: macro, user-defined characters, real-time pulse permission... */
  readonly kept: KeptState;
  readonly options: Readonly<ExecutorOptions>;
  /** Frame being executed: warnings raised by the paper are attributed to it. */
  executing: Frame | undefined;
  pendingChar: PendingChar | undefined;
  /** Executes one frame in order (a macro's replay). */
  run(frame: Frame): void;
  warn(frame: Frame, message: string): void;
  /** Runs `run` only at the beginning of a line, else warns that the command was ignored. */
  atLineStart(frame: Frame, run: () => void): void;
  /** Ends the ticket after the frame being executed. */
  cut(event: { type: 'cut'; cut: 'full' | 'partial'; command: string; feedDots?: number }): void;
  /** Hands an in-order query to the host. */
  query(q: HostQuery): void;
  /** Power-on modes again (`ESC @`). */
  reset(): void;
  /** Passes alignment, margin, print area and line spacing on to the paper's next line. */
  syncPaper(): void;
}

export interface Command {
  frame: Frame;
  /** `ESC !`; for the length-prefixed families with the function letter: `GS ( k`. */
  name: string;
  /** The command's bytes, prefix included (`frame.bytes`). */
  bytes: Uint8Array;
  /** The first parameter byte (the third byte), 0 when there is none. */
  n: number;
}

export type CommandHandler = (x: Execution, c: Command) => void;

export type CommandFamily = Readonly<Record<string, CommandHandler>>;

/** A little-endian 16-bit parameter (`nL nH`) at `i`; missing bytes count as 0. */
export function u16(b: Uint8Array, i: number): number {
  return (b[i] ?? 0) + 256 * (b[i + 1] ?? 0);
}
