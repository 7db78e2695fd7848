/**
 * Dedupe (reliability guarantee 3): a job's business keys, looked up in the job rows and, for
 * jobs retention removed, in `dedupe_ledger`. Unique keys on jobId, on (orderNo, printer role) for
 * payment receipts (print-protocol v1.1 §4), on commandId; an insert that meets one is a
 * `duplicate` and changes nothing. Separate because both sides of the ledger live here: the
 * lookup the insert runs and the keys a pruned job leaves behind (`remember`, called by pruning),
 * so the ledger's key format has one owner. Both run inside the caller's write transaction.
 */
import { type Job, type JobKind, type JobRow, jobFromRow } from '../job.js';
import type { JobDatabase } from './database.js';

export type DedupeKey = 'jobId' | 'orderNo' | 'commandId';

/** What a duplicate insert found: the stored job's facts (also when only the ledger has them). */
export interface ExistingJob {
  id: number;
  jobId: string;
  orderNo: string | null;
  commandId: string | null;
  printer: string;
  kind: string;
  state: string;
  createdAt: number;
  printedAt: number | null;
  /** The job row was removed by retention; only its dedupe keys remain. */
  pruned: boolean;
}

export interface Duplicate {
  status: 'duplicate';
  matchedOn: DedupeKey;
  existing: ExistingJob;
  /** The stored job; null when it was pruned. */
  job: Job | null;
}

/** The keys of a job about to be stored. */
export interface JobKeys {
  kind: JobKind;
  jobId: string;
  orderNo: string | null;
  commandId: string | null;
  printer: string;
}

interface LedgerRow {
  key_kind: DedupeKey;
  job_row: number;
  job_id: string;
  order_no: string | null;
  command_id: string | null;
  printer: string;
  kind: string;
  state: string;
  created_at: number;
  printed_at: number | null;
}

export class Dedupe {
  constructor(private readonly db: JobDatabase) {}

  /** Inside a write transaction: the stored job (or pruned job's keys) one of `row`'s keys meets. */
  find(row: JobKeys): Duplicate | null {
    // print-protocol v1.1 §4: a payment receipt is one per (orderNo, printer role).
    const receipt = row.kind === 'receipt' && row.orderNo !== null;
    const checks: Array<[DedupeKey, string | null, string, unknown[], string | null]> = [
      ['jobId', row.jobId, 'SELECT * FROM jobs WHERE job_id = ?', [row.jobId], row.jobId],
      [
        'commandId',
        row.commandId,
        'SELECT * FROM jobs WHERE command_id = ?',
        [row.commandId],
        row.commandId,
      ],
      [
        'orderNo',
        receipt ? row.orderNo : null,
        "SELECT * FROM jobs WHERE kind = 'receipt' AND order_no = ? AND printer = ?",
        [row.orderNo, row.printer],
        receipt ? orderLedgerKey(row.orderNo!, row.printer) : null,
      ],
    ];
    for (const [key, value, sql, args, ledgerKey] of checks) {
      if (value === null) continue;
      const stored = this.db.statement(sql).get(...args) as JobRow | undefined;
      if (stored) {
        const job = jobFromRow(stored);
        return { status: 'duplicate', matchedOn: key, job, existing: existingFrom(job) };
      }
      const ledger = this.db
        .statement('SELECT * FROM dedupe_ledger WHERE key_kind = ? AND key = ?')
        .get(key, ledgerKey) as LedgerRow | undefined;
      if (ledger) {
        return {
          status: 'duplicate',
          matchedOn: key,
          job: null,
          existing: {
            id: ledger.job_row,
            jobId: ledger.job_id,
            orderNo: ledger.order_no,
            commandId: ledger.command_id,
            printer: ledger.printer,
            kind: ledger.kind,
            state: ledger.state,
            createdAt: ledger.created_at,
            printedAt: ledger.printed_at,
            pruned: true,
          },
        };
      }
    }
    return null;
  }

  /**
   * Inside a write transaction, before the job row `r` is deleted: its keys move to the ledger so
   * that a replay still meets `duplicate` (fault matrix row 16).
   */
  remember(r: JobRow, now: number): void {
    const ledger = this.db.statement(
      `INSERT OR REPLACE INTO dedupe_ledger
         (key_kind, key, job_row, job_id, order_no, command_id, printer, kind, state, created_at, printed_at, pruned_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const keys: Array<[DedupeKey, string | null]> = [
      ['jobId', r.job_id],
      ['commandId', r.command_id],
      [
        'orderNo',
        r.kind === 'receipt' && r.order_no !== null ? orderLedgerKey(r.order_no, r.printer) : null,
      ],
    ];
    for (const [kind, key] of keys) {
      if (key === null) continue;
      ledger.run(
        kind,
        key,
        r.id,
        r.job_id,
        r.order_no,
        r.command_id,
        r.printer,
        r.kind,
        r.state,
        r.created_at,
        r.printed_at,
        now,
      );
    }
  }
}

export function existingFrom(job: Job): ExistingJob {
  return {
    id: job.id,
    jobId: job.jobId,
    orderNo: job.orderNo,
    commandId: job.commandId,
    printer: job.printer,
    kind: job.kind,
    state: job.state,
    createdAt: job.createdAt,
    printedAt: job.printedAt,
    pruned: false,
  };
}

/** The dedupe ledger's key of a receipt: one per order and printer role (a role has no '/'). */
function orderLedgerKey(orderNo: string, role: string): string {
  return `${role}/${orderNo}`;
}
