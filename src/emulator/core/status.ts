/**
 * The status responder: pure functions from the printer's state to the exact bytes a real
 * Epson-compatible printer sends back (escpos-notes "Status").
 *
 * Every reply keeps its command's fixed bits, which is how a host tells replies apart:
 * `DLE EOT` bytes are `0xx1xx10` (`(b & 0x93) == 0x12`), `GS r` / `GS I` bytes `0xx0xxxx`, the first
 * byte of an automatic status back `0xx1xx00`, its other three `0xx0xxxx`.
 */
import type { HostQuery } from './host-query.js';
import type { RealtimeCommand } from './realtime.js';

export interface PrinterState {
  /** The roll is nearly used up: reported, printing goes on. */
  paperNearEnd: boolean;
  /** No paper: offline, printing stops. */
  paperOut: boolean;
  /** Cover open: offline. */
  coverOpen: boolean;
  /** Forced offline (e.g. a test that wants the offline bit without a cause). */
  offline: boolean;
  /** Autocutter error: recoverable with `DLE ENQ 1/2`; offline meanwhile. */
  autocutterError: boolean;
  /** Unrecoverable error (e.g. head thermistor): offline until power-off. */
  unrecoverableError: boolean;
  /**
   * Drawer kick-out connector pin 3 reads high: `DLE EOT 1` answers `16` instead of `12`. Many
   * real Epsons do so with no drawer attached, and whether high means open depends on the drawer.
   */
  drawerPinHigh: boolean;
  /** Paper being fed with the FEED button: offline while it lasts. */
  feedButton: boolean;
  /** Answers nothing at all, like many cheap printers. */
  mute: boolean;
}

export const NORMAL_STATE: Readonly<PrinterState> = Object.freeze({
  paperNearEnd: false,
  paperOut: false,
  coverOpen: false,
  offline: false,
  autocutterError: false,
  unrecoverableError: false,
  drawerPinHigh: false,
  feedButton: false,
  mute: false,
});

/** Offline: the printer holds received data in its buffer and prints nothing. */
export function isOffline(s: PrinterState): boolean {
  return (
    s.offline ||
    s.paperOut ||
    s.coverOpen ||
    s.autocutterError ||
    s.unrecoverableError ||
    s.feedButton
  );
}

/** True for a byte that has the fixed bits of a `DLE EOT` reply. */
export function isRealtimeStatusByte(b: number): boolean {
  return (b & 0x93) === 0x12;
}

/**
 * `DLE EOT n` reply (ESC/POS reference, "DLE EOT"; escpos-notes table). Bits of several faults
 * combine: paper out with the cover open answers n=2 as 0x12 | 0x04 | 0x20 = 0x36.
 */
export function realtimeStatus(s: PrinterState, n: 1 | 2 | 3 | 4): number {
  let b = 0x12;
  switch (n) {
    case 1: // printer status
      if (s.drawerPinHigh) b |= 0x04;
      if (isOffline(s)) b |= 0x08;
      if (s.feedButton) b |= 0x40;
      return b;
    case 2: // offline cause
      if (s.coverOpen) b |= 0x04;
      if (s.feedButton) b |= 0x08;
      if (s.paperOut) b |= 0x20; // printing stopped by paper end
      if (s.autocutterError || s.unrecoverableError) b |= 0x40; // an error occurred
      return b;
    case 3: // error cause
      if (s.autocutterError) b |= 0x08;
      if (s.unrecoverableError) b |= 0x20;
      return b;
    case 4: // paper roll sensor: near end (bits 2+3); paper out (bits 5+6) also reads near end
      if (s.paperNearEnd || s.paperOut) b |= 0x0c;
      if (s.paperOut) b |= 0x60;
      return b;
  }
}

/** `GS r 1` / `ESC v`: paper sensor status, `03` near end, `0C` paper end. */
export function paperSensorStatus(s: PrinterState): number {
  let b = 0x00;
  if (s.paperNearEnd || s.paperOut) b |= 0x03;
  if (s.paperOut) b |= 0x0c;
  return b;
}

/** `GS r 2` / `ESC u 0`: drawer kick-out connector, bit 0 = pin 3 high. */
export function drawerStatus(s: PrinterState): number {
  return s.drawerPinHigh ? 0x01 : 0x00;
}

/**
 * Automatic status back, 4 bytes (ESC/POS reference, "GS a"):
 * 1st `0xx1xx00`: bit2 drawer pin 3, bit3 offline, bit5 cover open, bit6 paper fed by FEED button;
 * 2nd: bit1 FEED button pushed, bit3 autocutter error, bit5 unrecoverable error;
 * 3rd: bits 0-1 roll near end, bits 2-3 roll end; 4th: reserved, 0.
 */
export function asbStatus(s: PrinterState): Uint8Array {
  let b1 = 0x10;
  if (s.drawerPinHigh) b1 |= 0x04;
  if (isOffline(s)) b1 |= 0x08;
  if (s.coverOpen) b1 |= 0x20;
  if (s.feedButton) b1 |= 0x40;
  let b2 = 0x00;
  if (s.feedButton) b2 |= 0x02;
  if (s.autocutterError) b2 |= 0x08;
  if (s.unrecoverableError) b2 |= 0x20;
  return Uint8Array.of(b1, b2, paperSensorStatus(s), 0x00);
}

/** Bits of the ASB bytes that each `GS a n` bit enables (drawer, online/offline, error, paper). */
const ASB_MASKS: ReadonlyArray<readonly [number, number, number, number]> = [
  [0x04, 0x00, 0x00, 0x00],
  [0x68, 0x02, 0x00, 0x00],
  [0x00, 0x68, 0x00, 0x00],
  [0x00, 0x00, 0x0f, 0x00],
];

/** Whether the change from `a` to `b` is one that `GS a n` asked to be told about. */
export function asbChanged(a: PrinterState, b: PrinterState, n: number): boolean {
  const x = asbStatus(a);
  const y = asbStatus(b);
  return ASB_MASKS.some(
    (mask, bit) => (n & (1 << bit)) !== 0 && mask.some((m, i) => ((x[i]! ^ y[i]!) & m) !== 0),
  );
}

/** `GS ( H fn 48` reply: `37 22 d1 d2 d3 d4 00`. */
export function processIdReply(id: Uint8Array): Uint8Array {
  return Uint8Array.of(0x37, 0x22, ...id.subarray(0, 4), 0x00);
}

/** `DLE DC4 8` reply: buffer clear response `37 25 00`. */
export const BUFFER_CLEARED_REPLY = Uint8Array.of(0x37, 0x25, 0x00);

/** What `GS I n` reports. The defaults are an emulator's, not a real model's. */
export interface PrinterIdentity {
  /** n = 1 / 49: printer model ID (`0xx0xxxx`). */
  modelId: number;
  /** n = 2 / 50: type ID, bit0 two-byte characters, bit1 autocutter (`0xx0xxxx`). */
  typeId: number;
  /** n = 3 / 51: ROM version ID (`0xx0xxxx`). */
  versionId: number;
  /**
   * n = 65..69: firmware version, maker, model name, serial number, font of language; null for
   * a model that ignores that request (many clones answer only n = 1..3).
   */
  firmware: string | null;
  maker: string | null;
  model: string | null;
  serial: string | null;
  fonts: string | null;
}

export const DEFAULT_IDENTITY: Readonly<PrinterIdentity> = Object.freeze({
  modelId: 0x20,
  typeId: 0x02,
  versionId: 0x01,
  firmware: '1.00 ESC/POS',
  maker: 'EPSON',
  model: 'TM-T88V',
  serial: 'EMU0000001',
  fonts: '',
});

/**
 * `GS I n` reply: one id byte for n = 1..3 (or 49..51), or an information block `5F text 00` for
 * n = 65..69 (ESC/POS reference, "GS I", printer information B). Other n: no reply.
 */
export function printerIdReply(id: PrinterIdentity, n: number): Uint8Array | undefined {
  const single = { 1: id.modelId, 2: id.typeId, 3: id.versionId }[n > 48 ? n - 48 : n];
  if (single !== undefined && (n <= 3 || (n >= 49 && n <= 51))) return Uint8Array.of(single & 0x6f);
  const info = { 65: id.firmware, 66: id.maker, 67: id.model, 68: id.serial, 69: id.fonts }[n];
  if (info === undefined || info === null) return undefined;
  return Uint8Array.of(0x5f, ...Buffer.from(info, 'latin1'), 0x00);
}

/** The reply to an in-order query, or undefined when the printer sends nothing. */
export function respondToQuery(
  q: HostQuery,
  s: PrinterState,
  id: PrinterIdentity,
): Uint8Array | undefined {
  if (s.mute) return undefined;
  switch (q.kind) {
    case 'paper-sensor':
      return Uint8Array.of(paperSensorStatus(s));
    case 'drawer':
      return Uint8Array.of(drawerStatus(s));
    case 'ink':
      return undefined; // thermal printers have no ink status: the command is ignored
    case 'process-id':
      return processIdReply(q.id);
    case 'printer-id':
      return printerIdReply(id, q.n);
    case 'asb':
      return q.n !== 0 ? asbStatus(s) : undefined;
  }
}

/** The reply to a real-time command, or undefined. */
export function respondToRealtime(cmd: RealtimeCommand, s: PrinterState): Uint8Array | undefined {
  if (s.mute) return undefined;
  switch (cmd.kind) {
    case 'status':
      return Uint8Array.of(realtimeStatus(s, cmd.n));
    case 'clear-buffers':
      return BUFFER_CLEARED_REPLY;
    default:
      return undefined;
  }
}
