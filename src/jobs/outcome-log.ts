/**
 * One log line per transition the spooler records (issue 17), so "did order X print?" is answered
 * from the journal: `jobs: printed orderNo=O-1 jobId=P-1 printer=receipt attempt=1 ms=412`. Printed
 * at info; waiting (a printer fault or an unreachable printer, tried again later) at warning;
 * unconfirmed (sent, the printer never confirmed it) and failed at error; printing at debug.
 */
import type { Logger } from '../logging.js';
import { type Job, markingWords } from './job.js';

export function logTransition(log: Logger, job: Job, now: number = Date.now()): void {
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
      log.warn(
        { ...facts, ...reason, ...retry, ...(job.held ? { held: true } : {}) },
        job.held ? 'held for a person (printer-agent jobs retry)' : 'waiting for the printer',
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
