/**
 * Builds byte streams for the emulator tests. Commands are written as hex numbers straight from
 * the ESC/POS command reference (with a comment naming each), text as ASCII strings.
 */

import type { DecoderOptions } from '../../src/emulator/index.js';
import {
  EscPosDecoder,
  type HostQuery,
  type RealtimeCommand,
  type Ticket,
  ticketToJson,
} from '../../src/emulator/index.js';

export type Part = number | string | Uint8Array | readonly Part[];

/** Concatenates numbers (one byte each), ASCII strings, byte arrays and nested lists of those. */
export function bytes(...parts: Part[]): Uint8Array {
  const out: number[] = [];
  const add = (p: Part): void => {
    if (typeof p === 'number') {
      if (!Number.isInteger(p) || p < 0 || p > 255) throw new Error(`not a byte: ${p}`);
      out.push(p);
    } else if (typeof p === 'string') {
      for (const ch of p) {
        const code = ch.charCodeAt(0);
        if (code > 0x7f) throw new Error(`not ASCII: ${ch}`);
        out.push(code);
      }
    } else if (p instanceof Uint8Array) {
      out.push(...p);
    } else {
      for (const q of p) add(q);
    }
  };
  for (const p of parts) add(p);
  return Uint8Array.from(out);
}

export interface Decoded {
  decoder: EscPosDecoder;
  /** Cut tickets, then the open one. */
  tickets: Ticket[];
  /** The open ticket (everything when nothing was cut). */
  open: Ticket;
  queries: HostQuery[];
  realtime: RealtimeCommand[];
}

/** Decodes `chunks` in order with a fresh decoder, recording queries and real-time commands. */
export function decode(chunks: Uint8Array | Uint8Array[], options: DecoderOptions = {}): Decoded {
  const queries: HostQuery[] = [];
  const realtime: RealtimeCommand[] = [];
  const decoder = new EscPosDecoder(options, {
    query: (q) => queries.push(q),
    realtime: (c) => realtime.push(c),
  });
  for (const chunk of Array.isArray(chunks) ? chunks : [chunks]) decoder.write(chunk);
  const open = decoder.paper.current;
  return { decoder, tickets: [...decoder.paper.tickets, open], open, queries, realtime };
}

/** A comparable picture of everything a decode produced (tickets, pending line, replies asked). */
export function snapshot(d: Decoded): unknown {
  return {
    tickets: d.tickets.map((t) => ticketToJson(t, { imageRows: true })),
    pending: d.decoder.paper.pendingLine() ?? null,
    queries: d.queries.map((q) => (q.kind === 'process-id' ? { ...q, id: [...q.id] } : q)),
    realtime: d.realtime,
  };
}

/** Splits `data` at the given (sorted, deduplicated) offsets. */
export function splitAt(data: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.filter((c) => c > 0 && c < data.length))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(data.subarray(prev, p));
    prev = p;
  }
  out.push(data.subarray(prev));
  return out;
}

/** One chunk per byte. */
export function byteByByte(data: Uint8Array): Uint8Array[] {
  return Array.from(data, (b) => Uint8Array.of(b));
}
