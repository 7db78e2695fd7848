/**
 * Cuts the incoming byte stream into frames (a run of printable bytes, one control byte, one
 * complete command, or one unknown sequence) without executing anything. Chunks may end anywhere,
 * also inside a command's length-prefixed data: the framer keeps the incomplete tail and waits
 * until the command's length rule has the bytes it asked for.
 *
 * Framing is what a printer does as data arrives in its receive buffer; the decoder executes the
 * frames in order, possibly much later (while offline the buffer is held).
 */
import { type CommandSpec, isCommandPrefix, lookupCommand } from './command-syntax.js';

interface FrameBase {
  /** Stream offset of the frame's first byte. */
  offset: number;
  bytes: Uint8Array;
}

export type Frame =
  /** Printable bytes (0x20 and above), possibly a partial run: runs are cut at chunk ends. */
  | (FrameBase & { kind: 'text' })
  /** One control byte other than a command prefix: LF, CR, HT, FF, CAN, NUL, ... */
  | (FrameBase & { kind: 'control' })
  | (FrameBase & { kind: 'command'; spec: CommandSpec })
  /** A prefix with an unknown second byte: the two bytes (one when the second is a control). */
  | (FrameBase & { kind: 'unknown' });

const INITIAL_CAPACITY = 4096;

export class Framer {
  private buf = new Uint8Array(INITIAL_CAPACITY);
  private start = 0;
  private end = 0;
  /** Stream offset of `buf[start]`. */
  private base = 0;
  /** Bytes (from `start`) needed before parsing is worth retrying. */
  private need = 0;

  /** Bytes received but not yet framed (an incomplete command). */
  get pendingBytes(): number {
    return this.end - this.start;
  }

  /** Total bytes received so far: the stream offset of the next byte. */
  get received(): number {
    return this.base + (this.end - this.start);
  }

  /** Appends `chunk` and emits every frame it completes, in stream order. */
  push(chunk: Uint8Array, emit: (frame: Frame) => void): void {
    this.append(chunk);
    if (this.end - this.start < this.need) return;
    this.need = 0;
    while (this.start < this.end) {
      const frame = this.next();
      if (!frame) break;
      emit(frame);
    }
    this.compact();
  }

  /** Drops the incomplete tail, e.g. when the buffers are cleared. */
  discardPending(): void {
    this.base += this.end - this.start;
    this.start = this.end;
    this.need = 0;
  }

  private next(): Frame | undefined {
    const b = this.buf[this.start]!;
    if (b >= 0x20) {
      // A printable run up to the next control byte or the end of what has arrived.
      let j = this.start + 1;
      while (j < this.end && this.buf[j]! >= 0x20) j++;
      return this.take('text', j - this.start);
    }
    if (!isCommandPrefix(b)) return this.take('control', 1);
    if (this.end - this.start < 2) {
      this.need = 2;
      return undefined;
    }
    const second = this.buf[this.start + 1]!;
    const spec = lookupCommand(b, second);
    if (!spec) {
      // Resynchronise: a printable second byte belongs to the unknown command; a control byte
      // (LF, another ESC, ...) starts the next frame, so a stray prefix costs one byte.
      return this.take('unknown', second >= 0x20 && b !== 0x10 ? 2 : 1);
    }
    const length = typeof spec.length === 'number' ? spec.length : spec.length(this.peek);
    if (typeof length !== 'number') {
      this.need = length.need;
      return undefined;
    }
    if (this.end - this.start < length) {
      this.need = length;
      return undefined;
    }
    const frame = this.take('command', length) as FrameBase & { kind: 'command' };
    return { ...frame, spec };
  }

  private readonly peek = (i: number): number | undefined => {
    const at = this.start + i;
    return at < this.end ? this.buf[at] : undefined;
  };

  private take(kind: 'text' | 'control' | 'unknown' | 'command', length: number): Frame {
    const bytes = this.buf.slice(this.start, this.start + length);
    const frame = { kind, offset: this.base, bytes } as Frame;
    this.start += length;
    this.base += length;
    return frame;
  }

  private append(chunk: Uint8Array): void {
    if (this.end + chunk.length > this.buf.length) {
      const live = this.end - this.start;
      const capacity = Math.max(this.buf.length, (live + chunk.length) * 2);
      const next = new Uint8Array(capacity);
      next.set(this.buf.subarray(this.start, this.end));
      this.buf = next;
      this.start = 0;
      this.end = live;
    }
    this.buf.set(chunk, this.end);
    this.end += chunk.length;
  }

  private compact(): void {
    if (this.start === this.end) {
      this.start = 0;
      this.end = 0;
      if (this.buf.length > INITIAL_CAPACITY * 4) this.buf = new Uint8Array(INITIAL_CAPACITY);
    }
  }
}
