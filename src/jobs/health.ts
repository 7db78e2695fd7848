/**
 * The agent's health: the faults that must never vanish (reliability guarantee 11, issue 13 item
 * 7) and the warnings, kept for the status document (print-protocol §7), which
 * `status-document.ts` builds from them, the printers' monitors and the job store's figures.
 *
 * - Faults come from three places: the inbox or the reporter could not use the store (disk full,
 *   database error), the spooler could not record a transition, or the queue figures for the
 *   status could not be read. Each is logged once (a fault that persists is logged again at most
 *   once a minute, with the number of repeats) and shown as the status `fault` until the same
 *   source works again. Precedence: the store fault, then the spooler's, then the figures'.
 * - Building the status never throws: unreadable figures show the last ones read.
 * - Warnings are problems that do not stop printing, found at start (LOGO_UNREADABLE: receipts go
 *   out without the logo) or while running (FONT_MISSING: a character no raster font has prints
 *   as `?`): shown in `warnings` from then on, never as the `fault`, which says the agent cannot
 *   work normally.
 *
 * It announces `change` when something the status shows changed; the composition root has the
 * reporter publish then.
 */
import { EventEmitter } from 'node:events';
import { type AgentError, errorMessage, isAgentError } from '../errors.js';
import type { Logger } from '../logging.js';
import type { AgentStatus } from '../protocol/print-protocol.js';
import type { Spooler } from './spooler.js';
import { type Reason, type StatusPrinter, statusDocument } from './status-document.js';
import type { JobStore, PrinterQueueStats } from './store.js';

export interface HealthOptions {
  store: Pick<JobStore, 'queueStats'>;
  printers: readonly StatusPrinter[];
  storeId: string;
  version: string;
  startedAt: string;
  /** Problems found at start that do not stop printing, shown for as long as the agent runs. */
  warnings?: readonly Reason[];
  now?: () => number;
}

/** A repeated log line: the first time, then at most once a minute with the count between. */
class Throttle {
  private last = { key: '', at: 0, repeats: 0 };

  constructor(private readonly now: () => number) {}

  /** The repeats to report when the line should be logged now, or null to stay quiet. */
  take(key: string): number | null {
    const now = this.now();
    if (key !== this.last.key || now - this.last.at >= 60_000) {
      const repeats = key === this.last.key ? this.last.repeats : 0;
      this.last = { key, at: now, repeats: 0 };
      return repeats;
    }
    this.last.repeats++;
    return null;
  }

  reset(): void {
    this.last = { key: '', at: 0, repeats: 0 };
  }
}

export class Health extends EventEmitter<{ change: [] }> {
  /** The inbox or the reporter could not use the store: until it works again. */
  private storeFaultReason: Reason | null = null;
  /** The spooler's latest fault, until the store answers it again. */
  private spoolerFault: Reason | null = null;
  /** Reading the queue figures failed: the last good figures are shown. */
  private figuresFault: Reason | null = null;
  private lastStats: PrinterQueueStats[] = [];
  private readonly now: () => number;
  private readonly spoolerLog: Throttle;
  private readonly warnings: Reason[];

  constructor(
    private readonly options: HealthOptions,
    private readonly log: Logger,
  ) {
    super();
    this.now = options.now ?? Date.now;
    this.spoolerLog = new Throttle(this.now);
    this.warnings = [...(options.warnings ?? [])];
  }

  /** A problem found while running that does not stop printing: shown from now on, once a code. */
  addWarning(reason: Reason): void {
    if (this.warnings.some((w) => w.code === reason.code)) return;
    this.warnings.push({ ...reason });
    this.emit('change');
  }

  /** The inbox or the reporter: the store refused (`error`) or works again (null). */
  storeFault(error: AgentError | null): void {
    const reason = error?.toReason() ?? null;
    if (reason?.code === this.storeFaultReason?.code) return;
    this.storeFaultReason = reason;
    this.emit('change');
  }

  /** Logs and shows what the spooler reports: faults, recoveries, unrouted jobs, notices. */
  watch(spooler: Spooler): void {
    spooler.on('fault', (error, context) => {
      const reason: Reason = isAgentError(error)
        ? error.toReason()
        : // Not a catalogue error: a bug, not an outage. Named as such, not as a printer fault.
          { code: 'INTERNAL_ERROR', message: error.message };
      const repeats = this.spoolerLog.take(
        `${context.printer}\n${context.jobId}\n${reason.code}\n${reason.message}`,
      );
      if (repeats !== null)
        this.log.error(
          {
            printer: context.printer,
            jobId: context.jobId,
            code: reason.code,
            err: reason.message,
            ...(repeats > 0 ? { repeated: repeats } : {}),
          },
          'spooler fault',
        );
      if (reason.code !== this.spoolerFault?.code || reason.message !== this.spoolerFault.message) {
        this.spoolerFault = reason;
        this.emit('change');
      }
    });
    spooler.on('recovered', () => {
      this.spoolerLog.reset();
      if (!this.spoolerFault) return;
      this.log.info({ code: this.spoolerFault.code }, 'job store answering again: fault cleared');
      this.spoolerFault = null;
      this.emit('change');
    });
    spooler.on('unrouted', (role, jobs) => {
      this.log.warn(
        { role, jobs: jobs.map((j) => j.jobId), code: 'NO_PRINTER_FOR_ROLE' },
        `no configured printer serves role ${role}: ${jobs.length} job(s) wait until one does`,
      );
      this.emit('change');
    });
    spooler.on('notices', (job, notices) => {
      for (const notice of notices)
        this.log.warn(
          { jobId: job.jobId, orderNo: job.orderNo, printer: job.printer, code: notice.code },
          notice.message,
        );
    });
  }

  /** print-protocol §7 (status-document.ts); never throws. */
  status(): AgentStatus {
    const { printers, storeId, version, startedAt } = this.options;
    try {
      this.lastStats = this.options.store.queueStats([
        ...new Set(printers.flatMap((p) => p.roles)),
      ]);
      if (this.figuresFault) this.log.info('queue figures readable again');
      this.figuresFault = null;
    } catch (error) {
      const reason: Reason = isAgentError(error)
        ? error.toReason()
        : { code: 'STORE_FAILED', message: errorMessage(error) };
      if (this.figuresFault?.message !== reason.message)
        this.log.error({ code: reason.code, err: reason.message }, 'cannot read the queue figures');
      this.figuresFault = { code: reason.code, message: `status: ${reason.message}` };
    }
    return statusDocument({
      storeId,
      version,
      startedAt,
      printers,
      stats: this.lastStats,
      fault: this.storeFaultReason ?? this.spoolerFault ?? this.figuresFault,
      warnings: this.warnings,
      at: this.now(),
    });
  }
}
