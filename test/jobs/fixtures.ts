/**
 * Shared pieces of the jobs tests: small print instructions (small receipts keep the 1,000-job
 * tests fast), a store in a fresh temp dir, printers on emulator TCP endpoints, and a reader of
 * the emulator's paper that splits it into receipts, so tests can say "printed once, unmarked".
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database as SqliteDatabase } from 'better-sqlite3';
import {
  listenTcp,
  renderText,
  type TcpEndpoint,
  VirtualPrinter,
} from '../../src/emulator/index.js';
import { JobStore, type JobStoreOptions, type OutboxEntry } from '../../src/jobs/store.js';
import { openPrinter } from '../../src/printer/open-printer.js';
import type { ConfirmMode, Printer } from '../../src/printer/printer.js';
import {
  type PrintInstruction,
  printInstructionSchema,
} from '../../src/protocol/print-protocol.js';
import { formatTimestamp } from '../../src/protocol/time.js';
import { receiptOptions } from '../../src/receipt/options.js';

/** The first header line of every test receipt: the paper is split into receipts at it. */
export const HEADER = 'JOB TEST STORE';
export const OPTIONS = receiptOptions({ header: [HEADER] });
export const PROFILE = 'generic-80mm';

export function pad(n: number): string {
  return String(n).padStart(5, '0');
}

/** A one-line order: jobId `P-00001`, orderNo `O-00001` for n = 1. */
export function instruction(n: number, extra: Record<string, unknown> = {}): PrintInstruction {
  return printInstructionSchema.parse({
    jobId: `P-${pad(n)}`,
    orderNo: `O-${pad(n)}`,
    // Placed a minute ago by the host's clock: an order days old prints LATE (v1.2 §10), and no
    // test may depend on the date it runs on.
    createTime: formatTimestamp(new Date(Date.now() - 60_000)),
    order: {
      productInfo: [{ productName: `Item ${n}`, price: 1000 + n, quantity: 1 }],
      orderType: 1,
      paymentWay: 2,
      paymentTransactionId: `M-${n}`,
    },
    ...extra,
  });
}

const made: string[] = [];
// Each test file runs in its own process: its databases go when it exits.
process.once('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/**
 * A temp dir, removed after the file. `memory`: on tmpfs (/dev/shm) when there is one, where
 * fsync costs nothing: for tests of what thousands of commits leave behind (page reuse, sizes),
 * not of durability, which the crash and kill-loop tests prove on a real disk.
 */
export function tempDir(prefix: string, options: { memory?: boolean } = {}): string {
  const base = options.memory && existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  const dir = mkdtempSync(join(base, `pa-jobs-${prefix}-`));
  made.push(dir);
  return dir;
}

export function openStore(
  prefix: string,
  options: JobStoreOptions & { memory?: boolean } = {},
): JobStore {
  const { memory, ...rest } = options;
  return JobStore.open({ stateDir: tempDir(prefix, { memory }), ...rest });
}

export interface EmulatedPrinter {
  emulator: VirtualPrinter;
  endpoint: TcpEndpoint;
  printer: Printer;
  close(): Promise<void>;
}

/** A VirtualPrinter behind a TCP endpoint and a real `Printer` client on it. */
export async function emulatedPrinter(
  options: {
    confirm?: ConfirmMode;
    confirmTimeoutMs?: number;
    slowLinkBps?: number;
    realtimeStatus?: boolean;
  } = {},
): Promise<EmulatedPrinter> {
  const emulator = new VirtualPrinter({ columns: 48, columnsFontB: 64 });
  const endpoint = await listenTcp(emulator, {
    port: 0,
    ...(options.slowLinkBps ? { slowLinkBps: options.slowLinkBps } : {}),
  });
  const printer = openPrinter(
    endpoint.address,
    { confirm: options.confirm ?? 'process-id', realtimeStatus: options.realtimeStatus ?? true },
    { statusTimeoutMs: 300, confirmTimeoutMs: options.confirmTimeoutMs ?? 3000 },
  );
  return {
    emulator,
    endpoint,
    printer,
    async close() {
      await printer.close();
      await endpoint.close();
    },
  };
}

export interface PrintedReceipt {
  orderNo: string | null;
  possibleDuplicate: boolean;
  late: boolean;
  reprint: number | null;
  text: string;
}

/**
 * Everything on the emulator's paper (cut tickets and the open one), split into receipts at the
 * header line. A job cut short by a crash shows as a receipt without its end, possibly sharing a
 * ticket with the next one (no cut came between them): splitting at the header still tells
 * them apart.
 */
export function printedReceipts(emulator: VirtualPrinter): PrintedReceipt[] {
  const text = emulator
    .tickets()
    .map((t) => renderText(t))
    .join('\n');
  const parts: string[][] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === HEADER) parts.push([]);
    parts.at(-1)?.push(line);
  }
  return parts.map((lines) => {
    const body = lines.join('\n');
    return {
      orderNo: /Order no\.\s+(\S+)/.exec(body)?.[1] ?? null,
      possibleDuplicate: body.includes('POSSIBLE DUPLICATE'),
      late: /^\s*LATE\s*$/m.test(body),
      reprint: Number(/REPRINT #(\d+)/.exec(body)?.[1] ?? Number.NaN) || null,
      text: body,
    };
  });
}

/**
 * As the reporter does once the broker acknowledged `entries` (in order): skipped from now on, and
 * deleted at once (the sweep), so the file holds only what is unpublished.
 */
export function acknowledged(store: JobStore, entries: readonly OutboxEntry[]): void {
  const last = entries.at(-1);
  if (last === undefined) return;
  store.acknowledgeOutbox(last.id);
  store.sweepOutbox();
}

/**
 * Counts the store's commits from now on: checkpoints stop and the WAL starts empty, and the
 * returned function counts its commit frames (a frame header is 24 bytes after the 32-byte file
 * header; bytes 4-7 hold the database size after the commit on a commit's last frame, 0 on the
 * others).
 */
export function walCommitCounter(store: JobStore): () => number {
  const raw = (store as unknown as { db: { db: SqliteDatabase } }).db.db;
  raw.pragma('wal_autocheckpoint = 0');
  raw.pragma('wal_checkpoint(TRUNCATE)');
  return () => {
    const pageSize = Number(raw.pragma('page_size', { simple: true }));
    const wal = readFileSync(`${store.path}-wal`);
    let commits = 0;
    for (let at = 32; at + 24 <= wal.length; at += 24 + pageSize) {
      if (wal.readUInt32BE(at + 4) !== 0) commits++;
    }
    return commits;
  };
}
