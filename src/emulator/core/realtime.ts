/**
 * Real-time commands: `DLE EOT n` (status), `DLE ENQ n` (error recovery) and `DLE DC4 fn`
 * (pulse, power-off, buffer clear). A printer processes them as they arrive, before the data
 * enters the receive buffer, so they work while the printer is offline or its buffer is held
 * (escpos-notes "Parsing").
 *
 * Epson recognises them by pattern on the incoming byte stream, even in the middle of another
 * command's data: raster bytes that happen to read `10 04 01` make the printer answer a status
 * byte, and the bytes still count as raster data. `RealtimeScanner` does that recognition on the
 * raw stream; `matchRealtime` is shared with the framer, which recognises the same commands at
 * command positions.
 */

export type RealtimeCommand =
  /** `DLE EOT n` (10 04 n), n = 1..4: one status byte (escpos-notes "Status"). */
  | { kind: 'status'; n: 1 | 2 | 3 | 4 }
  /** `DLE EOT 7 a` / `DLE EOT 8 a`: ink / peripheral status of a few models; not emulated. */
  | { kind: 'status-extended'; n: 7 | 8; a: number }
  /** `DLE ENQ n` (10 05 n): 1 = recover and go on printing, 2 = recover after clearing buffers. */
  | { kind: 'recover'; n: 1 | 2 }
  /** `DLE DC4 1 m t` (10 14 01 m t): drawer pulse on pin 2 (m=0) or 5 (m=1), t x 100 ms on and off. */
  | { kind: 'pulse'; pin: 2 | 5; onMs: number; offMs: number }
  /** `DLE DC4 2 1 8`: power-off sequence. */
  | { kind: 'power-off' }
  /** `DLE DC4 3 a b`: sound the buzzer (impact models). */
  | { kind: 'buzzer'; a: number; b: number }
  /** `DLE DC4 7 m`: transmit a specified status in real time (ASB formats); not emulated. */
  | { kind: 'transmit-status'; m: number }
  /** `DLE DC4 8 1 3 20 1 6 2 8`: clear the receive and print buffers; answered `37 25 00`. */
  | { kind: 'clear-buffers' };

export type RealtimeMatch =
  | { status: 'complete'; cmd: RealtimeCommand; length: number }
  | { status: 'partial' }
  | { status: 'invalid' };

const DLE = 0x10;
const EOT = 0x04;
const ENQ = 0x05;
const DC4 = 0x14;
const POWER_OFF = [DLE, DC4, 0x02, 0x01, 0x08];
const CLEAR_BUFFERS = [DLE, DC4, 0x08, 0x01, 0x03, 0x14, 0x01, 0x06, 0x02, 0x08];

/** Matches `seq` (starting at a DLE) against the real-time command patterns. */
export function matchRealtime(seq: ArrayLike<number>): RealtimeMatch {
  if (seq.length < 2) return seq[0] === DLE ? { status: 'partial' } : { status: 'invalid' };
  if (seq[0] !== DLE) return { status: 'invalid' };
  const fn = seq[1];
  if (seq.length < 3) return fn === EOT || fn === ENQ || fn === DC4 ? partial : invalid;
  const n = seq[2]!;
  if (fn === EOT) {
    if (n >= 1 && n <= 4) return complete({ kind: 'status', n: n as 1 | 2 | 3 | 4 }, 3);
    if (n === 7 || n === 8) {
      if (seq.length < 4) return partial;
      return complete({ kind: 'status-extended', n, a: seq[3]! }, 4);
    }
    return invalid;
  }
  if (fn === ENQ) {
    return n === 1 || n === 2 ? complete({ kind: 'recover', n }, 3) : invalid;
  }
  if (fn !== DC4) return invalid;
  switch (n) {
    case 1: {
      // m = 0 or 1 selects pin 2 or 5; 1 <= t <= 8 (ESC/POS reference, "DLE DC4 fn=1").
      if (seq.length >= 4 && seq[3] !== 0 && seq[3] !== 1) return invalid;
      if (seq.length < 5) return partial;
      const t = seq[4]!;
      if (t < 1 || t > 8) return invalid;
      return complete(
        { kind: 'pulse', pin: seq[3] === 0 ? 2 : 5, onMs: t * 100, offMs: t * 100 },
        5,
      );
    }
    case 2:
      return fixed(seq, POWER_OFF, { kind: 'power-off' });
    case 3:
      if (seq.length < 5) return partial;
      return complete({ kind: 'buzzer', a: seq[3]!, b: seq[4]! }, 5);
    case 7:
      if (seq.length < 4) return partial;
      return complete({ kind: 'transmit-status', m: seq[3]! }, 4);
    case 8:
      return fixed(seq, CLEAR_BUFFERS, { kind: 'clear-buffers' });
    default:
      return invalid;
  }
}

const partial: RealtimeMatch = { status: 'partial' };
const invalid: RealtimeMatch = { status: 'invalid' };

function complete(cmd: RealtimeCommand, length: number): RealtimeMatch {
  return { status: 'complete', cmd, length };
}

function fixed(seq: ArrayLike<number>, pattern: number[], cmd: RealtimeCommand): RealtimeMatch {
  const upTo = Math.min(seq.length, pattern.length);
  for (let i = 0; i < upTo; i++) if (seq[i] !== pattern[i]) return invalid;
  return seq.length < pattern.length ? partial : complete(cmd, pattern.length);
}

/** A real-time command found in the raw stream, with the stream offset just after its last byte. */
export interface RealtimeHit {
  cmd: RealtimeCommand;
  /** Offset of the command's first byte in the stream. */
  offset: number;
  /** Offset one past its last byte: the moment the printer has received it. */
  end: number;
}

/**
 * Finds real-time commands anywhere in the byte stream, across chunk boundaries, ignoring what
 * the bytes mean to other commands (Epson's behaviour; see the module comment).
 */
export class RealtimeScanner {
  private seq: number[] = [];
  private seqOffset = 0;

  /** Scans `chunk`, whose first byte has stream offset `base`; returns the commands completed. */
  scan(chunk: Uint8Array, base: number): RealtimeHit[] {
    const hits: RealtimeHit[] = [];
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (this.seq.length === 0) {
        if (b === DLE) {
          this.seq.push(b);
          this.seqOffset = base + i;
        }
        continue;
      }
      this.seq.push(b);
      const m = matchRealtime(this.seq);
      if (m.status === 'complete') {
        hits.push({ cmd: m.cmd, offset: this.seqOffset, end: base + i + 1 });
        this.seq = [];
      } else if (m.status === 'invalid') {
        // The byte that broke the pattern may itself open a new command.
        this.seq = b === DLE ? [b] : [];
        this.seqOffset = base + i;
      }
    }
    return hits;
  }
}
