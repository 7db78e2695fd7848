/**
 * Reading `jobs` rows into `Job`s, shared by the parts that insert, move and read jobs
 * (`insertion.ts`, `transitions.ts`, `queries.ts`). One instance per store, so its two caches
 * serve all three: the raw statements of every job's way (insert, head of the queue,
 * transitions), and the payload last parsed, which the spooler's head read and the two
 * transitions that follow it share (issue 16).
 */
import { AgentError } from '../../errors.js';
import {
  FINISHED_STATES,
  type Job,
  type JobColumns,
  type JobRow,
  jobColumns,
  jobFromRow,
  jobRowFromArray,
  PENDING_STATES,
} from '../job.js';
import { type JobDatabase, sqlList } from './database.js';

// The WHERE terms of the partial indexes jobs_active and jobs_done (migration 5): a query names
// the term verbatim for SQLite to use the index.
export const PENDING_SQL = sqlList(PENDING_STATES);
export const FINISHED_SQL = sqlList(FINISHED_STATES);

export class JobRows {
  /** See `row`: its statements by SQL text, with where their row's columns are. */
  private readonly statements = new Map<
    string,
    { statement: ReturnType<JobDatabase['prepareRaw']>; columns: JobColumns }
  >();
  /** See `toJob`. */
  private lastParsed: (Pick<Job, 'payload' | 'payloadProblem'> & { payloadText: string }) | null =
    null;

  constructor(private readonly db: JobDatabase) {}

  /**
   * The one `jobs` row of `sql` (`SELECT *` or `RETURNING *`), or undefined: for the statements
   * of every job's way (insert, head of the queue, transitions), built from the raw result
   * (`jobRowFromArray`, issue 16). Inside `read`/`write`'s function.
   */
  row(sql: string, params: unknown[]): JobRow | undefined {
    let prepared = this.statements.get(sql);
    if (!prepared) {
      const statement = this.db.prepareRaw(sql);
      prepared = { statement, columns: jobColumns(statement.columns().map((c) => c.name)) };
      this.statements.set(sql, prepared);
    }
    const row = prepared.statement.get(...params) as unknown[] | undefined;
    return row === undefined ? undefined : jobRowFromArray(row, prepared.columns);
  }

  /**
   * The job a row holds, its payload parsed once for the last payload text seen: the spooler reads
   * a job at the head of its queue and then moves it twice, each time with the same payload (issue
   * 16: one JSON.parse per job instead of three). Parsing is a function of the text alone.
   */
  toJob(row: JobRow): Job {
    const last = this.lastParsed;
    if (last !== null && last.payloadText === row.payload) return jobFromRow(row, last);
    const job = jobFromRow(row);
    this.lastParsed = {
      payloadText: row.payload,
      payload: job.payload,
      payloadProblem: job.payloadProblem,
    };
    return job;
  }

  /** Inside `read`/`write`'s function: the job `id`, or JOB_NOT_FOUND. */
  mustGet(id: number): Job {
    return this.toJob(this.mustGetRow(id));
  }

  /** Inside `read`/`write`'s function: the row of job `id`, or JOB_NOT_FOUND. */
  mustGetRow(id: number): JobRow {
    const row = this.db.statement('SELECT * FROM jobs WHERE id = ?').get(id) as JobRow | undefined;
    if (!row) throw new AgentError('JOB_NOT_FOUND', `no job with id ${id}`);
    return row;
  }
}
