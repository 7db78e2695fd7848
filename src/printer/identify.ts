/**
 * Asking a printer who it is (issue 41 item 2): `DLE EOT 1..4` for its condition, `GS I` for its
 * identity. Pure printer side: what the printer answered and what went wrong, nothing about
 * profiles (that is the receipt room's `proposeProfile`).
 *
 * `GS I n` (ESC/POS reference, "Transmit printer ID"):
 * - n = 1, 2, 3 (or 49..51): one byte `0xx0xxxx`: model ID, type ID (bit0 two-byte characters,
 *   bit1 autocutter), ROM version ID. Clones often copy Epson's bytes: weak evidence.
 * - n = 65..68: an information block `5F text 00`: firmware version, maker, model name, serial.
 *   Many cheap printers ignore these (silence); a noisy line or a device that is no printer
 *   answers bytes of another shape (garbage), reported as such and never read as a name.
 * `GS I` is answered in order with the data: an offline printer answers it only once online, so it
 * is not asked then. Every wait is one `timeoutMs`; a printer silent to both `DLE EOT 1` and
 * `GS I 1` is asked nothing more, so a port that never answers costs two waits, and the worst case
 * (answers that each stop short) is eleven.
 */
import { AgentError } from '../errors.js';
import { DLE_EOT, decodeStatus, isStatusByte, type PrinterCondition } from './status.js';
import type { Transport } from './transport.js';

export const GS_I = (n: number): Uint8Array => Uint8Array.of(0x1d, 0x49, n);

/** The information requests asked, in this order: names first, they decide the profile. */
export const INFO_REQUESTS = [
  ['manufacturer', 0x42],
  ['model', 0x43],
  ['firmware', 0x41],
  ['serial', 0x44],
] as const;

/** Longest information text accepted; a longer run without its NUL is not a reply. */
export const MAX_INFO_LENGTH = 80;

/** A `GS I n` (n = 1..3) reply byte: bits 4 and 7 clear. A `DLE EOT` reply never is one. */
export function isIdByte(b: number): boolean {
  return (b & 0x90) === 0;
}

export type InfoBlock =
  | { kind: 'text'; text: string }
  | { kind: 'incomplete' }
  | { kind: 'garbage'; reason: string };

/** Short hex of what came, for the line that says a reply was garbage. */
export function hexPreview(bytes: readonly number[], max = 12): string {
  const shown = bytes
    .slice(0, max)
    .map((b) => b.toString(16).padStart(2, '0'))
    .join(' ');
  return bytes.length > max ? `${shown} …` : shown;
}

/**
 * Reads an information block `5F text 00` out of the bytes received so far. Bytes before the
 * header are tolerated (a late status byte); text must be printable ASCII up to the NUL.
 */
export function parseInfoBlock(bytes: readonly number[]): InfoBlock {
  const start = bytes.indexOf(0x5f);
  if (start < 0) {
    return bytes.length > MAX_INFO_LENGTH
      ? { kind: 'garbage', reason: `${bytes.length} bytes without a 5F header` }
      : { kind: 'incomplete' };
  }
  const chars: number[] = [];
  for (let i = start + 1; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === 0x00) return { kind: 'text', text: String.fromCharCode(...chars).trim() };
    if (b < 0x20 || b > 0x7e)
      return { kind: 'garbage', reason: `byte ${hexPreview([b])} inside the text` };
    chars.push(b);
    if (chars.length > MAX_INFO_LENGTH)
      return { kind: 'garbage', reason: `more than ${MAX_INFO_LENGTH} characters without a NUL` };
  }
  return { kind: 'incomplete' };
}

/** What a printer said about itself; null where it said nothing usable. */
export interface PrinterAnswers {
  /** The transport's description (never credentials). */
  printer: string;
  /** The link could be opened. */
  reachable: boolean;
  /** Its condition from `DLE EOT`, or null when it never answered one. */
  status: PrinterCondition | null;
  modelId: number | null;
  typeId: number | null;
  versionId: number | null;
  /** From the type ID: bit0 two-byte (CJK) characters, bit1 autocutter. */
  twoByteCharacters: boolean | null;
  autocutter: boolean | null;
  manufacturer: string | null;
  model: string | null;
  firmware: string | null;
  serial: string | null;
  /** Requests answered with bytes of another shape: each a clear line. */
  garbage: string[];
  /** Everything else worth a line: silence, offline, the link dropping. */
  problems: string[];
}

export function emptyAnswers(printer: string, reachable: boolean): PrinterAnswers {
  return {
    printer,
    reachable,
    status: null,
    modelId: null,
    typeId: null,
    versionId: null,
    twoByteCharacters: null,
    autocutter: null,
    manufacturer: null,
    model: null,
    firmware: null,
    serial: null,
    garbage: [],
    problems: [],
  };
}

/** Whether anything at all was learnt: a status, an ID byte or a name. */
export function learntAnything(a: PrinterAnswers): boolean {
  return (
    a.status !== null ||
    a.modelId !== null ||
    a.typeId !== null ||
    a.versionId !== null ||
    a.manufacturer !== null ||
    a.model !== null ||
    a.firmware !== null ||
    a.serial !== null
  );
}

type Reply<T> =
  | { kind: 'answer'; value: T }
  | { kind: 'silent' }
  | { kind: 'garbage'; bytes: number[] };

type Accept<T> = (seen: number[]) => { done: true; value: T } | { done: false; garbage?: boolean };

/** Sends `request` and reads until `accept` finds a reply or `timeoutMs` passes. */
async function ask<T>(
  transport: Transport,
  request: Uint8Array,
  timeoutMs: number,
  accept: Accept<T>,
): Promise<Reply<T>> {
  transport.discardInput();
  await transport.write(request, timeoutMs);
  const deadline = performance.now() + timeoutMs;
  const seen: number[] = [];
  for (;;) {
    const left = deadline - performance.now();
    if (left <= 0) break;
    const bytes = await transport.read(left);
    if (bytes.length === 0) break;
    // A device that floods the line is bounded by the deadline and by what is kept.
    if (seen.length < 4 * MAX_INFO_LENGTH) seen.push(...bytes.subarray(0, 4 * MAX_INFO_LENGTH));
    const verdict = accept(seen);
    if (verdict.done) return { kind: 'answer', value: verdict.value };
    if (verdict.garbage) return { kind: 'garbage', bytes: seen };
  }
  return seen.length === 0 ? { kind: 'silent' } : { kind: 'garbage', bytes: seen };
}

/** The first byte of the right shape; other bytes (stray, late) are skipped, not misread. */
const byteReply =
  (shape: (b: number) => boolean): Accept<number> =>
  (seen) => {
    const b = seen.find(shape);
    return b === undefined ? { done: false } : { done: true, value: b };
  };
const statusReply = byteReply(isStatusByte);
const idReply = byteReply(isIdByte);

const infoReply: Accept<string> = (seen) => {
  const block = parseInfoBlock(seen);
  if (block.kind === 'text') return { done: true, value: block.text };
  return { done: false, garbage: block.kind === 'garbage' };
};

/**
 * Asks the printer on an open `transport` for its status and identity. Throws only what the
 * transport throws when the link fails (the caller turns that into a problem line).
 */
export async function askIdentity(
  transport: Transport,
  timeoutMs: number,
  answers: PrinterAnswers = emptyAnswers(transport.description, true),
): Promise<PrinterAnswers> {
  const garbage = (what: string, bytes: number[]) =>
    answers.garbage.push(
      `${what}: answered ${bytes.length} bytes that are no reply (${hexPreview(bytes)})`,
    );

  const first = await ask(transport, DLE_EOT(1), timeoutMs, statusReply);
  if (first.kind === 'answer') {
    const bytes: { printer: number; offline?: number; error?: number; paper?: number } = {
      printer: first.value,
    };
    for (const [n, key] of [
      [2, 'offline'],
      [3, 'error'],
      [4, 'paper'],
    ] as const) {
      const reply = await ask(transport, DLE_EOT(n), timeoutMs, statusReply);
      if (reply.kind === 'answer') bytes[key] = reply.value;
    }
    answers.status = decodeStatus(bytes);
  } else if (first.kind === 'garbage') {
    garbage('DLE EOT 1', first.bytes);
  } else {
    answers.problems.push(`no reply to DLE EOT within ${timeoutMs} ms`);
  }

  const state = answers.status?.state;
  if (state !== undefined && state !== 'ready' && state !== 'paper-near-end') {
    answers.problems.push(
      `the printer is ${state}: it answers GS I only once it is online again, so it was not asked`,
    );
    return answers;
  }

  const modelId = await ask(transport, GS_I(1), timeoutMs, idReply);
  if (modelId.kind === 'answer') {
    answers.modelId = modelId.value;
    const typeId = await ask(transport, GS_I(2), timeoutMs, idReply);
    if (typeId.kind === 'answer') {
      answers.typeId = typeId.value;
      answers.twoByteCharacters = (typeId.value & 0x01) !== 0;
      answers.autocutter = (typeId.value & 0x02) !== 0;
    } else if (typeId.kind === 'garbage') garbage('GS I 2', typeId.bytes);
    const versionId = await ask(transport, GS_I(3), timeoutMs, idReply);
    if (versionId.kind === 'answer') answers.versionId = versionId.value;
    else if (versionId.kind === 'garbage') garbage('GS I 3', versionId.bytes);
  } else if (modelId.kind === 'garbage') {
    garbage('GS I 1', modelId.bytes);
  } else {
    answers.problems.push(`no reply to GS I 1 within ${timeoutMs} ms`);
    if (first.kind === 'silent') {
      answers.problems.push('silent to DLE EOT and GS I: nothing more was asked');
      return answers;
    }
  }

  let answered = 0;
  for (const [field, n] of INFO_REQUESTS) {
    const reply = await ask(transport, GS_I(n), timeoutMs, infoReply);
    if (reply.kind === 'answer') {
      answered++;
      // An empty block is a model that keeps no such text.
      if (reply.value !== '') answers[field] = reply.value;
      continue;
    }
    if (reply.kind === 'garbage') garbage(`GS I ${n}`, reply.bytes);
    // A model that ignores the information requests ignores them all: one wait, not four.
    if (answered === 0) {
      if (reply.kind === 'silent')
        answers.problems.push(`no reply to GS I ${n} (${field}) within ${timeoutMs} ms`);
      break;
    }
  }
  return answers;
}

/** The link failing midway: what was learnt stays, with a line saying why the rest is missing. */
export function linkFailure(answers: PrinterAnswers, error: unknown): PrinterAnswers {
  if (
    error instanceof AgentError &&
    ['PRINTER_UNREACHABLE', 'PRINTER_DISCONNECTED', 'TRANSPORT_TIMEOUT'].includes(error.code)
  ) {
    answers.problems.push(`${error.code}: ${error.message}`);
    return answers;
  }
  throw error;
}
