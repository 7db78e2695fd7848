/**
 * Decoding the real-time status replies of `DLE EOT n` (escpos-notes "Status") into the printer
 * states of print-protocol §7. Pure: the transport collects the bytes, this file reads them.
 *
 * Each reply is one byte with bit1 = bit4 = 1 and bit0 = bit7 = 0, so `(b & 0x93) === 0x12`
 * recognises it; anything else on the line (a stray or late byte, an ASB block) is not a reply.
 */
import type { PrinterState } from '../protocol/print-protocol.js';

export const DLE_EOT = (n: 1 | 2 | 3 | 4): Uint8Array => Uint8Array.of(0x10, 0x04, n);

export function isStatusByte(b: number): boolean {
  return (b & 0x93) === 0x12;
}

export interface StatusBytes {
  /** n=1 printer status; n=2 offline cause; n=3 error cause; n=4 roll paper sensor. */
  printer?: number;
  offline?: number;
  error?: number;
  paper?: number;
}

export interface PrinterCondition {
  state: PrinterState;
  paper: 'ok' | 'near-end' | 'out' | 'unknown';
  coverOpen: boolean | null;
  /** Drawer kick-out connector pin 3 (n=1 bit2); which level means "open" depends on the drawer. */
  drawerPinHigh: boolean | null;
  /** Human-readable causes, e.g. `autocutter error`, for logs and job reasons. */
  causes: string[];
}

const bit = (b: number | undefined, n: number): boolean | null =>
  b === undefined ? null : (b & (1 << n)) !== 0;

/**
 * The state from whichever replies arrived. Priority when several hold: error, cover open,
 * paper out, offline, paper near end (still prints), ready. Without any reply: unknown (many
 * cheap printers never answer; silence is not a fault).
 */
export function decodeStatus(bytes: StatusBytes): PrinterCondition {
  const { printer, offline, error, paper } = bytes;
  const causes: string[] = [];
  const any =
    printer !== undefined || offline !== undefined || error !== undefined || paper !== undefined;

  const recoverable = bit(error, 2) === true;
  const cutter = bit(error, 3) === true;
  const unrecoverable = bit(error, 5) === true;
  const autoRecoverable = bit(error, 6) === true;
  if (cutter) causes.push('autocutter error');
  if (unrecoverable) causes.push('unrecoverable error');
  if (recoverable) causes.push('recoverable error');
  if (autoRecoverable) causes.push('auto-recoverable error (e.g. head overheated)');

  const coverOpen = bit(offline, 2);
  if (coverOpen) causes.push('cover open');
  const paperEndStop = bit(offline, 5) === true;
  const paperOut = paper !== undefined ? (paper & 0x60) === 0x60 : paperEndStop ? true : null;
  const nearEnd = paper !== undefined ? (paper & 0x0c) === 0x0c : null;
  if (paperOut) causes.push('paper out');
  else if (nearEnd) causes.push('paper near end');
  const isOffline = bit(printer, 3) === true || bit(offline, 6) === true;
  if (isOffline && causes.length === 0) causes.push('offline');

  let state: PrinterState;
  if (!any) state = 'unknown';
  else if (cutter || unrecoverable || recoverable) state = 'error';
  else if (coverOpen) state = 'cover-open';
  else if (paperOut) state = 'paper-out';
  else if (isOffline || autoRecoverable) state = 'offline';
  else if (nearEnd) state = 'paper-near-end';
  else state = 'ready';

  return {
    state,
    paper: paperOut
      ? 'out'
      : nearEnd
        ? 'near-end'
        : paper !== undefined || offline !== undefined
          ? 'ok'
          : 'unknown',
    coverOpen,
    drawerPinHigh: bit(printer, 2),
    causes,
  };
}

/** States in which a job must not be sent: it would sit in the printer's buffer (or be lost). */
export function blocksPrinting(state: PrinterState): boolean {
  return state !== 'ready' && state !== 'paper-near-end' && state !== 'unknown';
}
