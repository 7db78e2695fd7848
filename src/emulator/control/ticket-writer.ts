/**
 * Writes each completed (cut) ticket to a directory, numbered from 1 like the summary line:
 *   DIR/0001.txt         plain text, column-exact (renderText)
 *   DIR/0001.styled.txt  the same with style marks (renderStyledText)
 *   DIR/0001.json        everything the decoder kept (ticketToJson, image rows included)
 *   DIR/0001.bin         the raw bytes of the ticket as received, `byteStart..byteEnd`
 *
 * Raw bytes: the printer core keeps no copy of its input, only each ticket's offsets in it, so the
 * writer records what the links deliver (`capture(offset, bytes)`, wired to `LinkSlot` 'deliver')
 * and forgets every byte before the end of the last written ticket. Bytes that reached the printer
 * some other way leave a gap; the ticket is then written with `rawComplete: false`.
 *
 * Files are written synchronously, each to a temporary name and then renamed, so whoever watches
 * the directory never sees half a file, and nothing is pending at shutdown.
 *
 * Tickets hold customer data (names, phone numbers, addresses): every file is 0600, and a
 * directory the writer creates is 0700 (issue 40 item 9). A directory that already exists is left
 * as its owner set it (decision 231): it may be the caller's own, and the files are private in it.
 */
import { EventEmitter } from 'node:events';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PRIVATE_DIRECTORY_MODE, PRIVATE_FILE_MODE } from '../../host/private-file.js';
import type { Ticket } from '../core/paper.js';
import { renderJson, renderStyledText, renderText, ticketSummary } from '../core/render.js';
import type { VirtualPrinter } from '../core/virtual-printer.js';

export interface TicketFiles {
  txt: string;
  styled?: string;
  json: string;
  bin: string;
}

export interface WrittenTicket {
  /** 1-based, as in the file names and the summary. */
  number: number;
  /** `ticket 1: 12 lines, 1 code, 0 images, partial cut, 0 warnings` */
  summary: string;
  files: TicketFiles;
  /** Length of the .bin file. */
  rawBytes: number;
  /** False when some of the ticket's bytes were not captured (see the module comment). */
  rawComplete: boolean;
}

export interface TicketWriterOptions {
  /** Output directory; created 0700 if missing (with any missing parents). */
  dir: string;
  /** Also write NNNN.styled.txt. Default true. */
  styled?: boolean;
}

export interface TicketWriterEvents {
  written: [ticket: WrittenTicket];
  /** A file could not be written; the emulator goes on. */
  failure: [error: Error, ticketNumber: number];
}

interface Chunk {
  offset: number;
  bytes: Uint8Array;
}

export class TicketWriter extends EventEmitter<TicketWriterEvents> {
  readonly dir: string;
  readonly written: WrittenTicket[] = [];
  private readonly styled: boolean;
  private chunks: Chunk[] = [];
  private closed = false;

  constructor(
    readonly printer: VirtualPrinter,
    options: TicketWriterOptions,
  ) {
    super();
    this.dir = resolve(options.dir);
    this.styled = options.styled ?? true;
    mkdirSync(this.dir, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
    printer.on('ticket', this.onTicket);
  }

  /** Records bytes the printer received at `offset` of its input stream. */
  capture(offset: number, bytes: Uint8Array): void {
    if (this.closed || bytes.length === 0) return;
    this.chunks.push({ offset, bytes: Uint8Array.from(bytes) });
  }

  /** Stops listening; files already written stay. */
  close(): void {
    this.closed = true;
    this.printer.off('ticket', this.onTicket);
    this.chunks = [];
  }

  private readonly onTicket = (ticket: Ticket): void => {
    const number = ticket.index + 1;
    try {
      this.written.push(this.write(ticket));
      this.emit('written', this.written.at(-1)!);
    } catch (err) {
      this.emit('failure', err instanceof Error ? err : new Error(String(err)), number);
    }
  };

  private write(ticket: Ticket): WrittenTicket {
    const number = ticket.index + 1;
    const base = join(this.dir, String(number).padStart(4, '0'));
    const end = ticket.byteEnd ?? this.printer.decoder.received;
    const { bytes, complete } = this.slice(ticket.byteStart, end);
    this.forgetBefore(end);

    const files: TicketFiles = { txt: `${base}.txt`, json: `${base}.json`, bin: `${base}.bin` };
    if (this.styled) files.styled = `${base}.styled.txt`;
    // .txt last: a watcher that waits for it finds the others already there.
    writeAtomically(files.bin, bytes);
    writeAtomically(files.json, renderJson(ticket, { imageRows: true }));
    if (files.styled) writeAtomically(files.styled, renderStyledText(ticket));
    writeAtomically(files.txt, renderText(ticket));

    const summary = complete
      ? ticketSummary(ticket)
      : `${ticketSummary(ticket)} (raw bytes incomplete)`;
    return { number, summary, files, rawBytes: bytes.length, rawComplete: complete };
  }

  /** The captured bytes in [start, end), and whether every one of them was captured. */
  private slice(start: number, end: number): { bytes: Uint8Array; complete: boolean } {
    const out = new Uint8Array(Math.max(0, end - start));
    let covered = 0;
    for (const { offset, bytes } of this.chunks) {
      const from = Math.max(start, offset);
      const to = Math.min(end, offset + bytes.length);
      if (from >= to) continue;
      out.set(bytes.subarray(from - offset, to - offset), from - start);
      covered += to - from;
    }
    return { bytes: out, complete: covered === out.length };
  }

  private forgetBefore(offset: number): void {
    const kept: Chunk[] = [];
    for (const chunk of this.chunks) {
      const end = chunk.offset + chunk.bytes.length;
      if (end <= offset) continue;
      if (chunk.offset < offset) {
        kept.push({ offset, bytes: chunk.bytes.subarray(offset - chunk.offset) });
      } else {
        kept.push(chunk);
      }
    }
    this.chunks = kept;
  }
}

/** Through `NAME.tmp`, made afresh 0600 (a file left by a crash would keep its own mode). */
function writeAtomically(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.tmp`;
  rmSync(tmp, { force: true });
  writeFileSync(tmp, data, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
  renameSync(tmp, path);
}
