/**
 * Command dispatch: the families' handler tables merged into one and looked up by command name,
 * as MQTT.js's handlers/index.ts sends each packet type to its handler. The length-prefixed
 * families (`GS (`, `ESC (`, `FS (`) are looked up with their function letter (`GS ( k`). A
 * command no family handles is executed silently when its effect cannot show on paper (`SILENT`),
 * and otherwise skipped with a warning. A name claimed by two families, or one the framer never
 * produces (a typo), stops the module from loading: a handler cannot quietly shadow another or
 * never run, as a switch's duplicate or misspelt case would.
 */
import { isCommandName } from '../command-syntax.js';
import type { Frame } from '../framer.js';
import { characterTables } from './character-tables.js';
import { codes } from './codes.js';
import type { CommandFamily, CommandHandler, Execution } from './command.js';
import { images } from './images.js';
import { modes } from './modes.js';
import { paperMovement } from './paper-movement.js';
import { printerControl } from './printer-control.js';
import { statusAndRealtime } from './status-and-realtime.js';

/**
 * Commands whose effect is invisible on the emulated paper (print density, paper sensors,
 * panel buttons, colours, NV settings...): executed silently. Any other command the emulator
 * cannot show leaves a warning.
 */
const SILENT = new Set([
  'ESC <',
  'ESC U',
  'ESC c',
  'ESC r',
  'FS 2',
  'FS ?',
  'FS C',
  'FS g',
  'GS C',
  'GS E',
  'GS P',
  'GS b',
  'GS g',
  'GS j',
  'GS z',
  'GS ( C',
  'GS ( E',
  'GS ( K',
  'GS ( M',
  'GS ( N',
  'GS ( P',
  'GS ( Q',
  'GS ( z',
  'ESC ( Y',
  'FS ( A',
  'FS ( E',
  'FS ( L',
  'FS ( e',
]);

const LENGTH_PREFIXED = new Set(['GS (', 'ESC (', 'FS (']);

const HANDLERS = merge([
  modes,
  characterTables,
  paperMovement,
  images,
  codes,
  statusAndRealtime,
  printerControl,
]);

function merge(families: CommandFamily[]): ReadonlyMap<string, CommandHandler> {
  const all = new Map<string, CommandHandler>();
  for (const family of families) {
    for (const [name, handler] of Object.entries(family)) {
      if (!isKnown(name)) throw new Error(`${name} is not a command of command-syntax.ts`);
      if (all.has(name)) throw new Error(`${name} is handled by two command families`);
      all.set(name, handler);
    }
  }
  for (const name of SILENT) {
    if (!isKnown(name)) throw new Error(`${name} is not a command of command-syntax.ts`);
  }
  return all;
}

/** A name the framer can produce: `ESC !`, or a length-prefixed family's with its letter. */
function isKnown(name: string): boolean {
  const family = name.slice(0, -2);
  return LENGTH_PREFIXED.has(family) ? name.at(-2) === ' ' : isCommandName(name);
}

/** Executes one command frame named `name` (its syntax name, `GS (` for `GS ( k`). */
export function executeCommand(x: Execution, frame: Frame, name: string): void {
  const bytes = frame.bytes;
  const n = bytes[2] ?? 0;
  const lengthPrefixed = LENGTH_PREFIXED.has(name);
  const key = lengthPrefixed ? `${name} ${String.fromCharCode(n)}` : name;
  const handler = HANDLERS.get(key);
  if (handler) {
    handler(x, { frame, name: key, bytes, n });
  } else if (!SILENT.has(key)) {
    x.warn(frame, `${key} is not emulated: skipped${lengthPrefixed ? ' by its length' : ''}`);
  }
}
