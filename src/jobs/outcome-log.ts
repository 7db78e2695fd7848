/**
 * One log line per transition the spooler records (issue 17), so "did order X print?" is answered
 * from the journal: `jobs: printed orderNo=O-1 jobId=P-1 printer=receipt attempt=1 ms=412`. Printed
 * at info; waiting (a printer fault or an unreachable printer, tried again later) at warning;
 * unconfirmed (sent, the printer never confirmed it) and failed at error; printing at debug.
 *
 * A job waiting for its printer is retried every few seconds (capped backoff, 30 s at most), and
 * every retry is a `waiting` transition: logged each time, one 2.5-minute paper-out filled the
 * journal with 13 warnings (issue 42 item 9). `TransitionLog` logs the waiting line once when the
 * job starts waiting or its reason changes (paper out, then cover open), then a reminder at most
 * every 10 minutes while it still waits; the retries in between go to debug.
 */
import type { Logger } from '../logging.js';
import { type Job, markingWords } from './job.js';

/** How often a job still waiting (for the same reason) is mentioned again at warning. */
export const WAITING_REMINDER_MS = 10 * 60_000;

/**
 * Jobs followed at once: only the head job of each printer's queue is retried, so a few; the
 * bound only keeps a job that left `waiting` unseen (purged by a person) from staying forever.
 */
const FOLLOWED_JOBS = 1000;

interface Waiting {
  /** What makes a new line when it changes: held or not, and the reason's code. */
  key: string;
  since: number;
  loggedAt: number;
}

/**
 * The spooler's transitions as journal lines, with the waiting lines of one outage logged once
 * (plus a reminder) instead of once per retry. `now` is the spooler's clock in tests.
 */
export class TransitionLog {
  private readonly waiting = new Map<number, Waiting>();
  private readonly now: () => number;
  private readonly reminderMs: number;

  constructor(
    private readonly log: Logger,
    options: { now?: () => number; reminderMs?: number } = {},
  ) {
    this.now = options.now ?? Date.now;
    this.reminderMs = options.reminderMs ?? WAITING_REMINDER_MS;
  }

  record(job: Job): void {
    const now = this.now();
    if (job.state === 'printing') {
      // A retry's attempt: the job still waits for the same outage until its outcome says else.
      logTransition(this.log, job, now);
      return;
    }
    if (job.state !== 'waiting') {
      this.waiting.delete(job.id);
      logTransition(this.log, job, now);
      return;
    }
    const key = `${job.held ? 'held' : 'waiting'}\n${job.lastError?.code ?? ''}`;
    const seen = this.waiting.get(job.id);
    if (seen === undefined || seen.key !== key) {
      this.waiting.delete(job.id);
      this.waiting.set(job.id, { key, since: now, loggedAt: now });
      if (this.waiting.size > FOLLOWED_JOBS)
        this.waiting.delete(this.waiting.keys().next().value as number);
      logTransition(this.log, job, now);
      return;
    }
    if (now - seen.loggedAt >= this.reminderMs) {
      seen.loggedAt = now;
      logTransition(this.log, job, now, { waitingMin: Math.floor((now - seen.since) / 60_000) });
      return;
    }
    if (this.log.isLevelEnabled('debug'))
      this.log.debug(
        {
          jobId: job.jobId,
          printer: job.printer,
          attempt: job.attempts,
          code: job.lastError?.code,
        },
        'still waiting for the printer (retry)',
      );
  }
}

/**
 * One line for one transition. `reminder`: the job has been waiting this long for the same reason
 * (`TransitionLog`): the line says "still".
 */
export function logTransition(
  log: Logger,
  job: Job,
  now: number = Date.now(),
  reminder?: { waitingMin: number },
): void {
  // Every job passes `printing`: nothing is built for a line the level leaves out (issue 16).
  if (job.state === 'printing' && !log.isLevelEnabled('debug')) return;
  const facts: Record<string, unknown> = {
    orderNo: job.orderNo ?? undefined,
    jobId: job.jobId,
    printer: job.printer,
    attempt: job.attempts,
    ...(job.kind !== 'receipt' ? { kind: job.kind } : {}),
  };
  // This attempt's time, from the job's turn on the printer to its outcome.
  const took = (end: number | null) =>
    job.printingAt !== null && end !== null ? { ms: Math.max(0, end - job.printingAt) } : {};
  const reason = job.lastError ? { code: job.lastError.code, reason: job.lastError.message } : {};
  const marked = markingWords(job.markings);
  switch (job.state) {
    case 'printed':
      log.info(
        { ...facts, ...took(job.printedAt), ...(marked.length > 0 ? { marked } : {}) },
        'printed',
      );
      return;
    case 'unconfirmed':
      log.error(
        { ...facts, ...took(job.finishedAt), ...reason },
        'sent but not confirmed by the printer: check the paper; it is not sent again by itself',
      );
      return;
    case 'failed':
      log.error({ ...facts, ...took(job.finishedAt), ...reason }, 'failed, not printed');
      return;
    case 'waiting': {
      const retry =
        job.nextAttemptAt !== null
          ? { retryInSec: Math.max(0, Math.round((job.nextAttemptAt - now) / 1000)) }
          : {};
      const what = job.held
        ? 'held for a person (printer-agent jobs retry)'
        : 'waiting for the printer';
      log.warn(
        { ...facts, ...reason, ...retry, ...(job.held ? { held: true } : {}), ...reminder },
        reminder ? `still ${what}` : what,
      );
      return;
    }
    case 'printing':
      log.debug(facts, 'printing');
      return;
    case 'queued':
      log.info({ ...facts, ...reason }, 'queued again');
      return;
  }
}
