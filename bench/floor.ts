/**
 * The floor of this design (issue 16): what no correct agent can skip, done as plainly as it can
 * be, so that every millisecond the agent spends above it is ours to remove. Per job:
 *
 * - a durable commit of the job before the broker is acknowledged (`FloorStore.insert`), and one
 *   before the first byte is sent and one after the confirmation (`FloorStore.mark`): a plain
 *   better-sqlite3 table, WAL with synchronous=FULL, as the job store runs;
 * - the printer's status before sending: the same four `DLE EOT n` round trips the agent makes;
 * - the pre-rendered receipt bytes, then the confirmation round trip (`GS r 1`, or `GS ( H` with a
 *   process id, as the profile says).
 *
 * No signature check, schema, outbox or reporting: those are the agent's work above the floor.
 */

import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import Database from '../src/host/sqlite.js';

export class FloorStore {
  private readonly db: Database.Database;
  private readonly insertStmt: Database.Statement;
  private readonly markStmt: Database.Statement;

  constructor(dir: string) {
    this.db = new Database(join(dir, 'floor.db'));
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY, job_id TEXT UNIQUE, state TEXT, payload TEXT, updated_at INTEGER)',
    );
    this.insertStmt = this.db.prepare(
      "INSERT INTO jobs (job_id, state, payload, updated_at) VALUES (?, 'queued', ?, ?)",
    );
    this.markStmt = this.db.prepare('UPDATE jobs SET state = ?, updated_at = ? WHERE job_id = ?');
  }

  /** One commit (autocommit statement, synchronous=FULL). */
  insert(jobId: string, payload: string): void {
    this.insertStmt.run(jobId, payload, Date.now());
  }

  mark(jobId: string, state: 'printing' | 'printed'): void {
    this.markStmt.run(state, Date.now(), jobId);
  }

  close(): void {
    this.db.close();
  }
}

/** A bare socket to the printer with the round trips the design needs. */
export class FloorPrinter {
  private received: number[] = [];
  private wake: (() => void) | null = null;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (data: Buffer) => {
      this.received.push(...data);
      this.wake?.();
    });
  }

  static async open(port: number): Promise<FloorPrinter> {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.setNoDelay(true);
    await new Promise((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new FloorPrinter(socket);
  }

  /** Waits until the bytes received hold `count` bytes, and takes them. */
  private async take(count: number): Promise<number[]> {
    while (this.received.length < count) {
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
    return this.received.splice(0, count);
  }

  /** The four `DLE EOT n` round trips of a status query. */
  async status(): Promise<void> {
    for (const n of [1, 2, 3, 4]) {
      this.socket.write(Uint8Array.of(0x10, 0x04, n));
      await this.take(1);
    }
  }

  write(bytes: Uint8Array): void {
    this.socket.write(bytes);
  }

  /** The confirmation round trip after the cut. */
  async confirm(mode: 'status' | 'process-id'): Promise<void> {
    if (mode === 'status') {
      this.socket.write(Uint8Array.of(0x1d, 0x72, 0x01));
      await this.take(1);
      return;
    }
    this.socket.write(
      Uint8Array.of(0x1d, 0x28, 0x48, 0x06, 0x00, 0x30, 0x30, 0x31, 0x32, 0x33, 0x34),
    );
    await this.take(7); // 37 22 '1' '2' '3' '4' 00
  }

  /** One job: status, bytes, confirmation, with its two commits around the print. */
  async print(
    store: FloorStore,
    jobId: string,
    bytes: Uint8Array,
    confirm: 'status' | 'process-id',
  ): Promise<void> {
    store.mark(jobId, 'printing');
    await this.status();
    this.write(bytes);
    await this.confirm(confirm);
    store.mark(jobId, 'printed');
  }

  close(): void {
    this.socket.destroy();
  }
}

/**
 * mqtt.js's `handleMessage` for the floor: each job committed before its PUBACK, then printed
 * one at a time with its pre-rendered bytes (`receipts` by jobId).
 */
export function floorHandler(
  store: FloorStore,
  printer: FloorPrinter,
  receipts: ReadonlyMap<string, Uint8Array>,
): (packet: { payload: Buffer | string }, done: () => void) => void {
  let printing: Promise<void> = Promise.resolve();
  return (packet, done) => {
    const env = JSON.parse(packet.payload.toString()) as { param: string };
    const jobId = (JSON.parse(env.param) as { jobId: string }).jobId;
    store.insert(jobId, env.param);
    done(); // the PUBACK, after the commit
    const receipt = receipts.get(jobId);
    if (receipt) printing = printing.then(() => printer.print(store, jobId, receipt, 'status'));
  };
}
