/**
 * Two Duplex streams wired back to back, like a socketpair: what one side writes the other reads.
 * Node 20 has no `stream.duplexPair()` (added in 22.6), so the in-process endpoint carries its own.
 *
 * Back-pressure is real: a write completes only once the other side's reader has taken the chunk
 * (its `push()` accepted it, or it asked for more with `_read()`), so pausing one side's reading
 * eventually makes the other side's `write()` return false, as a full socket buffer does.
 *
 * Ending one side (`end()`) ends the other side's readable part; destroying one side destroys the
 * other, like a connection that is torn down.
 */
import { Duplex } from 'node:stream';

class PairEnd extends Duplex {
  peer: PairEnd | undefined;
  /** The peer's write waiting for this side's reader to want more. */
  private waitingWrite: (() => void) | undefined;

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error) => void) {
    const peer = this.peer;
    if (!peer || peer.destroyed) {
      callback(Object.assign(new Error('the other end is closed'), { code: 'EPIPE' }));
      return;
    }
    if (peer.push(chunk)) callback();
    else peer.waitingWrite = callback;
  }

  override _read(): void {
    const resume = this.waitingWrite;
    this.waitingWrite = undefined;
    resume?.();
  }

  override _final(callback: (error?: Error) => void): void {
    this.peer?.push(null);
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const peer = this.peer;
    this.peer = undefined;
    this.waitingWrite = undefined;
    if (peer && !peer.destroyed) {
      peer.peer = undefined;
      peer.destroy();
    }
    callback(error);
  }
}

/** Returns two connected ends: `[a, b]`, bytes written to `a` are read from `b` and back. */
export function duplexPair(): [Duplex, Duplex] {
  const a = new PairEnd();
  const b = new PairEnd();
  a.peer = b;
  b.peer = a;
  return [a, b];
}
