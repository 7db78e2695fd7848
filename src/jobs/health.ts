/**
 * The agent's health: the status message (print-protocol §7) built from the printers' monitors and
 * the job store, and the faults that must never vanish (reliability guarantee 11, issue 13 item 7).
 *
 * - Faults come from three places: the inbox or the reporter could not use the store (disk full,
 *   database error), the spooler could not record a transition, or the queue figures for the
 *   status could not be read. Each is logged once (a fault that persists is logged again at most
 *   once a minute, with the number of repeats) and shown as the status `fault` until the same
 *   source works again. Precedence: the store fault, then the spooler's, then the figures'.
 * - Building the status never throws: unreadable figures show the last ones read.
 * - Jobs for a role no printer serves (NO_PRINTER_FOR_ROLE) are listed per role in `unrouted`; a
 *   printer's queue is the sum over the roles it serves (its id need not be a role).
 * - Warnings are problems found at start that do not stop printing (LOGO_UNREADABLE: receipts go
 *   out without the logo): shown in `warnings`, never as the `fault`, which says the agent cannot
 *   work normally.
 *
 * It announces `change` when something the status shows changed; the composition root has the
 * reporter publish then.
 */
import { EventEmitter } from 'node:events';
import { type AgentError, errorMessage, isAgentError } from '../errors.js';
import type { Logger } from '../logging.js';
import type { AgentStatus, PrinterStatus } from '../protocol/print-protocol.js';
import type { Spooler } from './spooler.js';
import type { JobStore, PrinterQueueStats } from './store.js';

type Reason = { code: string; message: string };

/** What the status needs of a printer: its roles and its monitor's latest condition. */
export interface HealthPrinter {
  id: string;
  roles: readonly string[];
  condition(): {
    state: PrinterStatus['state'];
    paper: PrinterStatus['paper'];
    coverOpen: boolean | null;
  } | null;
}

export interface HealthOptions {
  store: Pick<JobStore, 'queueStats'>;
  printers: readonly HealthPrinter[];
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

  constructor(
    private readonly options: HealthOptions,
    private readonly log: Logger,
  ) {
    super();
    this.now = options.now ?? Date.now;
    this.spoolerLog = new Throttle(this.now);
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

  /** print-protocol §7; never contains a secret, never throws. */
  status(): AgentStatus {
    const roles = new Set(this.options.printers.flatMap((p) => p.roles));
    try {
      this.lastStats = this.options.store.queueStats([...roles]);
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
    const stats = new Map(this.lastStats.map((s) => [s.printer, s]));
    const unrouted = this.lastStats
      .filter((s) => !roles.has(s.printer) && s.pending > 0)
      .map((s) => ({ role: s.printer, pending: s.pending, oldestPendingSec: s.oldestPendingSec }));
    const fault = this.storeFaultReason ?? this.spoolerFault ?? this.figuresFault;
    const warnings = this.options.warnings ?? [];
    return {
      online: true,
      storeId: this.options.storeId,
      agent: { version: this.options.version, startedAt: this.options.startedAt },
      printers: this.options.printers.map((p): PrinterStatus => {
        const condition = p.condition();
        const own = p.roles.map((r) => stats.get(r)).filter((q) => q !== undefined);
        const lastPrinted = Math.max(0, ...own.map((q) => q.lastPrintedAt ?? 0));
        return {
          id: p.id,
          roles: [...p.roles],
          state: condition?.state ?? 'unknown',
          paper: condition?.paper ?? 'unknown',
          coverOpen: condition?.coverOpen ?? null,
          queue: {
            pending: own.reduce((n, q) => n + q.pending, 0),
            oldestPendingSec: Math.max(0, ...own.map((q) => q.oldestPendingSec)),
          },
          lastPrintedAt: lastPrinted > 0 ? new Date(lastPrinted).toISOString() : null,
        };
      }),
      ...(unrouted.length > 0 ? { unrouted } : {}),
      ...(fault ? { fault } : {}),
      ...(warnings.length > 0 ? { warnings: warnings.map((w) => ({ ...w })) } : {}),
      at: new Date(this.now()).toISOString(),
    };
  }
}
