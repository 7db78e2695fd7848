/**
 * The shape of a command handler. Each family of commands (modes, character tables, paper
 * movement, images, codes, status and real-time, printer control) is a table from command name to
 * handler, one handler per command, as ReceiptPrinterEncoder keeps one method per command and
 * MQTT.js one handler per packet type. A handler gets the executor (print state, paper, the
 * actions that reach beyond one command) and the command, and touches nothing else.
 */
import type { CommandExecutor } from '../executor.js';
import type { Frame } from '../framer.js';

export interface Command {
  frame: Frame;
  /** `ESC !`; for the length-prefixed families with the function letter: `GS ( k`. */
  name: string;
  /** The command's bytes, prefix included (`frame.bytes`). */
  bytes: Uint8Array;
  /** The first parameter byte (the third byte), 0 when there is none. */
  n: number;
}

export type CommandHandler = (x: CommandExecutor, c: Command) => void;

export type CommandFamily = Readonly<Record<string, CommandHandler>>;

/** A little-endian 16-bit parameter (`nL nH`) at `i`; missing bytes count as 0. */
export function u16(b: Uint8Array, i: number): number {
  return (b[i] ?? 0) + 256 * (b[i + 1] ?? 0);
}
