/**
 * Crash fault points for the crash tests (reliability fault matrix rows 1-3 and 19). A point kills
 * the process with SIGKILL (no cleanup, no flush: as close to a power cut as a test gets) when the
 * environment variable `PRINTER_AGENT_FAULT` names it, optionally with the pass to fire at:
 * `PRINTER_AGENT_FAULT=after-insert:3` kills on the third insert.
 *
 * Inert unless that variable is set: the variable is read once at start-up, and each point costs
 * one comparison. A production unit never sets it.
 *
 * One setting rides on the same variable for the disk-full test of the agent as a child process
 * (row 14), which has no other way in: `PRINTER_AGENT_FAULT=max-pages:N` opens the job database
 * with `max_page_count` N, so SQLite answers SQLITE_FULL as on a full disk. A value below the
 * database's size holds it at its size (`max-pages:1`: nothing may grow).
 *
 * And one for the store-error test (guarantee 11: the daemon stays up and says what is wrong):
 * `PRINTER_AGENT_FAULT=store-fails-while:PATH` makes every job store read and write fail like a
 * disk I/O error while the file PATH exists, so the test can switch the fault on and off.
 */
import { existsSync } from 'node:fs';

export const FAULT_POINTS = [
  /** A print instruction was received and verified, before its insert is committed (no ack yet). */
  'inbox-before-commit',
  /** An insert committed, before the call returns (so before the caller could ack). */
  'after-insert',
  /** The job is committed as `printing`, before a byte is sent. */
  'after-mark-printing',
  /** The printer confirmed the job, before `printed` is committed. */
  'after-print-before-commit',
  /** The PUBACK of a stored instruction was handed to the socket (power-cut loop, issue 39). */
  'after-ack',
  /** A job event reached the broker, before its outbox row is acknowledged (issue 39). */
  'outbox-after-publish',
  /** A retention batch was committed, before the next (issue 39; retention runs soon after start). */
  'retention-batch',
  /** A schema migration was committed, before the next one (issue 39). */
  'after-migration',
] as const;
export type FaultPoint = (typeof FAULT_POINTS)[number];

function parse(value: string | undefined): { point: string; at: number; argument: string } | null {
  if (!value) return null;
  const colon = value.indexOf(':');
  const point = colon < 0 ? value : value.slice(0, colon);
  const argument = colon < 0 ? '1' : value.slice(colon + 1);
  const n = Number(argument);
  return { point, at: Number.isInteger(n) && n >= 1 ? n : 1, argument };
}

const armed = parse(process.env.PRINTER_AGENT_FAULT);
let passes = 0;

export function faultPoint(point: FaultPoint): void {
  if (armed === null || armed.point !== point) return;
  passes++;
  if (passes >= armed.at) process.kill(process.pid, 'SIGKILL');
}

/**
 * Retention runs an hour after start and hourly; for its fault point it runs a second after
 * start, so a test reaches it (the power-cut loop, issue 39).
 */
export function faultRetentionSoon(): boolean {
  return armed !== null && armed.point === 'retention-batch';
}

/** `N` of `PRINTER_AGENT_FAULT=max-pages:N`, else null (see the module comment). */
export function faultMaxPages(): number | null {
  return armed !== null && armed.point === 'max-pages' ? armed.at : null;
}

const failingWhile =
  armed !== null && armed.point === 'store-fails-while' && armed.argument !== ''
    ? armed.argument
    : null;

/** True while `PRINTER_AGENT_FAULT=store-fails-while:PATH` is set and PATH exists. */
export function faultStoreFailing(): boolean {
  return failingWhile !== null && existsSync(failingWhile);
}
