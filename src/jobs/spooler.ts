/**
 * The spooler (issue 6; reliability guarantees 4 and 5): one loop per printer id, each printing
 * its own FIFO one job at a time, like CUPS with `retry-current-job`. Loops share nothing but the
 * store, whose calls are short synchronous transactions, so a printer that hangs in a timeout or
 * sits out of paper never delays another.
 *
 * For each job at the head of a printer's queue:
 * 1. render it (permanent errors: `failed`, and the queue moves on);
 * 2. commit `printing` BEFORE the first byte, so that a crash from here on is visible at restart;
 * 3. print through the injected printer and commit the outcome: `printed` (confirmed),
 *    `unconfirmed` (sent, the printer stayed silent: recorded, never re-sent automatically; a
 *    link that dropped before the reply counts as a failure after sending), or `waiting` (not
 *    ready, unreachable, link lost: retried with capped exponential backoff and jitter, and at
 *    once when the printer's monitor reports it ready again; never given up). A failure after
 *    bytes went out keeps the job at the head and marks every later copy POSSIBLE DUPLICATE.
 *    A confirmed job's `printed` goes in the next job's `printing` commit when the queue holds
 *    one (one fsync per job in a backlog instead of two), else on its own at once (decision 206).
 *
 * At start, jobs left in `printing` by a crash are recovered by the configured policy: printed
 * again marked POSSIBLE DUPLICATE, or held for a person.
 *
 * Jobs for a role no configured printer serves (print-protocol v1.1 §4) are not left queued in
 * silence: they become `waiting` with NO_PRINTER_FOR_ROLE (one event per job, an `unrouted` event
 * for the log), at start, when one is stored, and every `unroutedSweepMs` (the CLI writes from
 * another process). They print once the agent runs with a printer for that role.
 *
 * Every problem the spooler works around is a `fault` event (the agent logs it and shows it in
 * the status); `recovered` follows once the store works again.
 */
import { EventEmitter } from 'node:events';
import { AgentError } from '../errors.js';
import type { ReceiptOptions } from '../receipt/options.js';
import { getProfile, type PrinterProfile } from '../receipt/profile.js';
import { faultPoint } from './fault-points.js';
import type { Job, JobReason } from './job.js';
import {
  type DrawerSettings,
  type RenderedJob,
  renderJob,
  type TestPageRenderer,
} from './render-job.js';
import {
  type BackoffOptions,
  backoffDelay,
  canPrint,
  classifyPrintFailure,
  DEFAULT_BACKOFF,
  failureReason,
  isLate,
  reasonForState,
} from './retry-policy.js';
import type { InterruptedPolicy, JobStore } from './store.js';

/**
 * What the spooler needs of a printer: `Printer` from `src/printer/` fits, and tests can pass
 * anything with the same contract. `print` resolves `printed` or `unconfirmed`, or throws an
 * AgentError: retryable ones are waited out; `details.sentBytes > 0` means the job may have
 * printed in part.
 */
export interface JobPrinter {
  print(
    bytes: Uint8Array,
  ): Promise<{ outcome: 'printed' } | { outcome: 'unconfirmed'; reason: string; cause?: string }>;
  /**
   * The printer's state without printing. Optional: when present, a retry first checks it, so a
   * printer that is still out of paper does not cost a `printing` -> `waiting` round per retry.
   */
  status?(): Promise<{ state: string; causes?: readonly string[] }>;
}

/** The part of `PrinterMonitor` the spooler listens to: its `change` events. */
export interface ReadinessMonitor {
  on(event: 'change', listener: (condition: { state: string }) => void): unknown;
  off(event: 'change', listener: (condition: { state: string }) => void): unknown;
}

export interface SpoolerPrinter {
  /** The printer role jobs name (print-protocol §4 `printer`). */
  id: string;
  printer: JobPrinter;
  /** The profile, or its id (looked up per job: a missing profile fails jobs, not the agent). */
  profile: PrinterProfile | string;
  monitor?: ReadinessMonitor;
}

export interface SpoolerOptions {
  store: JobStore;
  printers: readonly SpoolerPrinter[];
  receiptOptions: ReceiptOptions;
  backoff?: BackoffOptions;
  /** A receipt stored longer ago than this when its turn comes prints marked LATE; null: never. */
  lateAfterMs?: number | null;
  /** IANA zone of the service's createTime (the day-scale LATE rule); default the host's. */
  timeZone?: string;
  /** What to do with jobs found in `printing` at start (a crash interrupted them). */
  interruptedPolicy?: InterruptedPolicy;
  /**
   * A print that ended `unconfirmed` because the link dropped before the reply: print it again
   * marked POSSIBLE DUPLICATE when the printer is back (default), or record it `unconfirmed` like
   * a printer that stays silent.
   */
  linkDroppedPolicy?: 'reprint-marked' | 'unconfirmed';
  /**
   * How often an idle loop looks at the database by itself. In-process inserts wake the loop at
   * once; this picks up jobs written by the CLI (another process).
   */
  pollIntervalMs?: number;
  renderTestPage?: TestPageRenderer;
  /**
   * The cash drawer (issue 41 item 4): payment receipts of these payment kinds on the receipt role
   * start with the kick-out pulse (render-job.ts says when it never does); absent or null: off.
   */
  drawer?: DrawerSettings | null;
  /** How often jobs for unserved roles are looked for besides start and inserts; default 10 s. */
  unroutedSweepMs?: number;
  now?: () => number;
  random?: () => number;
}

export const DEFAULT_LATE_AFTER_MS = 15 * 60_000;

interface SpoolerEvents {
  /** A transition the spooler committed (the job as stored afterwards). */
  transition: [job: Job];
  /** Something went wrong that the spooler works around (store errors while recording). */
  fault: [error: Error, context: { printer: string; jobId: string | null }];
  /** After a fault: the store answered again (a read after a read fault, a write after a write's). */
  recovered: [];
  /** Jobs for `role`, which no configured printer serves, were parked (NO_PRINTER_FOR_ROLE). */
  unrouted: [role: string, jobs: Job[]];
  /** An attempt started with notices to report (CONTENT_CUT...), also in its events' warnings. */
  notices: [job: Job, notices: JobReason[]];
}

/** One printer's loop state. */
class Lane {
  /** Consecutive failed attempts on this printer: the backoff exponent. */
  failures = 0;
  /** The monitor said "ready": try the head job now, whatever its next attempt time. */
  readyNow = false;
  /**
   * A job the printer confirmed whose `printed` is not committed yet: it goes with the next job's
   * `printing` (one commit for both), or on its own as soon as this lane has nothing to print at
   * once (decision 206).
   */
  confirmed: Job | null = null;
  done: Promise<void> = Promise.resolve();
  private wakeUp: (() => void) | null = null;
  private woken = false;

  constructor(readonly config: SpoolerPrinter) {}

  wake(): void {
    if (this.wakeUp) {
      const resolve = this.wakeUp;
      this.wakeUp = null;
      resolve();
    } else {
      // Not sleeping yet: the next sleep returns at once, so no wake-up is lost.
      this.woken = true;
    }
  }

  sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => {
          this.wakeUp = null;
          resolve();
        },
        Math.max(0, ms),
      );
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

export class Spooler extends EventEmitter<SpoolerEvents> {
  private readonly store: JobStore;
  private readonly lanes = new Map<string, Lane>();
  private readonly backoff: BackoffOptions;
  private readonly lateAfterMs: number | null;
  private readonly policy: InterruptedPolicy;
  private readonly linkDropped: 'reprint-marked' | 'unconfirmed';
  private readonly pollIntervalMs: number;
  private readonly now: () => number;
  private readonly random: () => number;
  private running = false;
  private readonly unsubscribe: Array<() => void> = [];
  /** The kind of store call that failed last, until one of that kind succeeds. */
  private faultedOn: 'read' | 'write' | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;
  private sweepQueued = false;

  constructor(private readonly options: SpoolerOptions) {
    super();
    this.store = options.store;
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.lateAfterMs =
      options.lateAfterMs === undefined ? DEFAULT_LATE_AFTER_MS : options.lateAfterMs;
    this.policy = options.interruptedPolicy ?? 'reprint-marked';
    this.linkDropped = options.linkDroppedPolicy ?? 'reprint-marked';
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    for (const p of options.printers) {
      if (this.lanes.has(p.id)) {
        throw new AgentError(
          'INPUT_INVALID',
          `printer ${JSON.stringify(p.id)} is configured twice`,
        );
      }
      this.lanes.set(p.id, new Lane(p));
    }
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** Printer ids that have pending jobs but no loop (not configured): worth a status warning. */
  unknownPrinters(): string[] {
    return this.store.pendingPrinters().filter((p) => !this.lanes.has(p));
  }

  /**
   * Recovers interrupted jobs, then starts one loop per printer. Returns the recovered jobs.
   * Throws STORE_* when the recovery cannot be written: the agent must not print then.
   */
  start(): Job[] {
    if (this.running) return [];
    const recovered = this.store.recoverInterrupted(this.policy);
    this.running = true;
    const onJob = (printer: string) => {
      const lane = this.lanes.get(printer);
      if (lane) lane.wake();
      else this.queueSweep();
    };
    this.store.on('job', onJob);
    this.unsubscribe.push(() => this.store.off('job', onJob));
    this.sweepUnrouted();
    this.sweepTimer = setInterval(
      () => this.sweepUnrouted(),
      this.options.unroutedSweepMs ?? 10_000,
    );
    this.sweepTimer.unref();
    for (const lane of this.lanes.values()) {
      const monitor = lane.config.monitor;
      if (monitor) {
        const onChange = (condition: { state: string }) => {
          if (!canPrint(condition.state)) return;
          // Guarantee 5: retried at once when the printer comes back, not at the next backoff.
          lane.failures = 0;
          lane.readyNow = true;
          lane.wake();
        };
        monitor.on('change', onChange);
        this.unsubscribe.push(() => monitor.off('change', onChange));
      }
      lane.done = this.run(lane);
    }
    return recovered;
  }

  /** Stops the loops; a job being printed finishes (and is recorded) first. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
    for (const off of this.unsubscribe.splice(0)) off();
    for (const lane of this.lanes.values()) lane.wake();
    await Promise.all([...this.lanes.values()].map((l) => l.done));
  }

  /**
   * Parks the pending jobs of every role without a lane (print-protocol v1.1 §4 unknown role).
   * Never throws: a store error is a fault like any other.
   */
  sweepUnrouted(): void {
    if (!this.running) return;
    let roles: string[];
    try {
      roles = this.unknownPrinters();
      this.healthy('read');
    } catch (error) {
      this.fault(error, '(unrouted)', null, 'read');
      return;
    }
    for (const role of roles) {
      try {
        const jobs = this.store.markUnrouted(role, {
          code: 'NO_PRINTER_FOR_ROLE',
          message: `no configured printer serves role ${role}: waiting until one does (printers[].roles), then printed`,
        });
        if (jobs.length === 0) continue;
        // Only a write that wrote something says the store takes writes again (disk full lets
        // an empty transaction through).
        this.healthy('write');
        for (const job of jobs) this.emit('transition', job);
        this.emit('unrouted', role, jobs);
      } catch (error) {
        this.fault(error, role, null, 'write');
      }
    }
  }

  /** A sweep soon, after the insert that asked for it has returned (never on the ack path). */
  private queueSweep(): void {
    if (this.sweepQueued) return;
    this.sweepQueued = true;
    setImmediate(() => {
      this.sweepQueued = false;
      this.sweepUnrouted();
    });
  }

  private async run(lane: Lane): Promise<void> {
    while (this.running) {
      try {
        await this.step(lane);
      } catch (error) {
        // A bug, not an outage: reported like a fault, and the loop goes on (an exception here
        // must never become an unhandled rejection that takes the daemon down).
        this.fault(error, lane, null);
        await lane.sleep(this.pollIntervalMs);
      }
    }
    await this.recordConfirmed(lane);
  }

  /** One turn of a printer's loop: the head job, if any and due, printed. */
  private async step(lane: Lane): Promise<void> {
    let job: Job | null;
    try {
      job = this.store.head(lane.config.id);
      this.healthy('read');
    } catch (error) {
      this.fault(error, lane, null, 'read');
      await lane.sleep(this.pollIntervalMs);
      return;
    }
    if (!job) {
      await this.recordConfirmed(lane);
      await lane.sleep(this.pollIntervalMs);
      return;
    }
    if (job.state === 'waiting' && job.nextAttemptAt !== null && !lane.readyNow) {
      const wait = job.nextAttemptAt - this.now();
      if (wait > 0) {
        await this.recordConfirmed(lane);
        // Capped by the poll interval: a `jobs retry` from the CLI is seen within it.
        await lane.sleep(Math.min(wait, this.pollIntervalMs));
        return;
      }
    }
    lane.readyNow = false;
    const previous = lane.confirmed;
    try {
      await this.runJob(lane, job);
    } finally {
      // Every way out of this job but a `printing` commit that took the previous one along
      // records the previous one now.
      if (previous !== null && lane.confirmed === previous) await this.recordConfirmed(lane);
    }
  }

  private async runJob(lane: Lane, job: Job): Promise<void> {
    const { printer } = lane.config;
    if (lane.failures > 0 && printer.status) {
      const condition = await printer.status().catch(() => null);
      if (condition && !canPrint(condition.state)) {
        const detail = condition.causes?.length ? ` (${condition.causes.join(', ')})` : '';
        await this.retryLater(
          lane,
          job,
          reasonForState(condition.state, `${lane.config.id}: ${condition.state}${detail}`),
          false,
        );
        return;
      }
    }
    if (!this.running) return;

    let rendered: RenderedJob;
    try {
      rendered = await this.render(lane, job);
    } catch (error) {
      // The previous job's `printed` first: events in the order things happened.
      await this.recordConfirmed(lane);
      if (isStoreError(error)) {
        // Reading the reprint's original failed: the job is fine, the database is not.
        this.fault(error, lane, job.jobId, 'read');
        await lane.sleep(backoffDelay(1, this.backoff, this.random));
        return;
      }
      await this.commit(lane, job, () => this.store.markFailed(job.id, failureReason(error)));
      return;
    }

    const render = {
      markings: rendered.markings,
      warnings: rendered.warnings,
      notices: rendered.notices,
    };
    const confirmed = lane.confirmed;
    const printing = await this.commit(lane, job, () => {
      if (!confirmed) return this.store.markPrinting(job.id, render);
      const both = this.store.markPrintedThenPrinting(confirmed.id, job.id, render);
      lane.confirmed = null;
      return [both.printed, both.printing];
    });
    if (!printing) return;
    if (rendered.notices.length > 0) this.emit('notices', printing, rendered.notices);
    faultPoint('after-mark-printing');

    let outcome: Awaited<ReturnType<JobPrinter['print']>>;
    try {
      outcome = await printer.print(rendered.bytes);
    } catch (error) {
      const failure = classifyPrintFailure(error);
      if (failure.action === 'fail') {
        await this.commit(lane, job, () => this.store.markFailed(job.id, failure.reason));
        return;
      }
      await this.retryLater(lane, job, failure.reason, failure.possibleDuplicate);
      return;
    }
    faultPoint('after-print-before-commit');
    lane.failures = 0;
    if (outcome.outcome === 'printed') {
      // Recorded with the next job's `printing`, or on its own when there is none (decision 206).
      lane.confirmed = job;
    } else if (outcome.cause === 'link-dropped' && this.linkDropped === 'reprint-marked') {
      // The link went before the confirmation: bytes still in flight were lost with it, so the
      // receipt may be cut short. Printed again, marked, once the printer is back (fault matrix
      // row 10): a marked extra copy is better than a customer without a receipt.
      await this.retryLater(
        lane,
        job,
        {
          code: 'PRINTER_DISCONNECTED',
          message: `${lane.config.id}: ${outcome.reason}; printed again marked POSSIBLE DUPLICATE`,
        },
        true,
      );
    } else {
      const reason = { code: 'UNCONFIRMED', message: `${lane.config.id}: ${outcome.reason}` };
      await this.commit(lane, job, () => this.store.markUnconfirmed(job.id, reason));
    }
  }

  private render(lane: Lane, job: Job): Promise<RenderedJob> {
    const profile =
      typeof lane.config.profile === 'string'
        ? getProfile(lane.config.profile)
        : lane.config.profile;
    const now = this.now();
    return renderJob(job, {
      profile,
      options: this.options.receiptOptions,
      late: job.kind === 'receipt' && isLate(job.createdAt, now, this.lateAfterMs),
      waitedMinutes: Math.floor((now - job.createdAt) / 60_000),
      now,
      ...(this.options.timeZone !== undefined ? { timeZone: this.options.timeZone } : {}),
      original: (j) => (j.sourceJob === null ? null : this.store.get(j.sourceJob)),
      renderTestPage: this.options.renderTestPage,
      drawer: this.options.drawer ?? null,
    });
  }

  private async retryLater(
    lane: Lane,
    job: Job,
    reason: { code: string; message: string },
    possibleDuplicate: boolean,
  ): Promise<void> {
    lane.failures++;
    const next = this.now() + backoffDelay(lane.failures, this.backoff, this.random);
    await this.commit(lane, job, () =>
      this.store.markWaiting(job.id, reason, next, { possibleDuplicate }),
    );
  }

  /**
   * Records a transition, retrying while the database refuses (disk full, locked, broken): the
   * outcome of a print must not be dropped, and the next job must not start before it is
   * recorded. A state conflict (a person changed the job meanwhile) is reported and skipped.
   * When stopping, gives up after a few tries: the restart's recovery covers an unrecorded job.
   */
  private async commit(
    lane: Lane,
    job: Job,
    write: () => Job | readonly Job[],
  ): Promise<Job | null> {
    for (let attempt = 1; ; attempt++) {
      let written: Job | readonly Job[];
      try {
        written = write();
      } catch (error) {
        this.fault(error, lane, job.jobId, 'write');
        if (!isStoreError(error)) return null;
        if (!this.running && attempt >= 3) return null;
        await lane.sleep(backoffDelay(attempt, this.backoff, this.random));
        continue;
      }
      this.healthy('write');
      const jobs = Array.isArray(written) ? written : [written as Job];
      for (const updated of jobs) this.emit('transition', updated);
      return jobs[jobs.length - 1] ?? null;
    }
  }

  /** The lane's confirmed job, if one waits, recorded `printed` on its own commit. */
  private async recordConfirmed(lane: Lane): Promise<void> {
    const job = lane.confirmed;
    if (!job) return;
    await this.commit(lane, job, () => this.store.markPrinted(job.id));
    // Recorded, or given up (a conflict, or stopping with the store refusing): the restart's
    // recovery covers a job left in `printing`.
    lane.confirmed = null;
  }

  /**
   * Reports a fault; `on` says which kind of store call failed ('read' or 'write'), so the fault
   * is cleared only when a call of that kind succeeds again. A fault outside the store (a state
   * conflict, a bug) counts as a read: the next successful look at the queue clears it.
   */
  private fault(
    error: unknown,
    lane: Lane | string,
    jobId: string | null,
    on: 'read' | 'write' = 'read',
  ): void {
    const err = error instanceof Error ? error : new Error(String(error));
    if (this.faultedOn !== 'write') this.faultedOn = isStoreError(error) ? on : 'read';
    this.emit('fault', err, { printer: typeof lane === 'string' ? lane : lane.config.id, jobId });
  }

  /** A store call of kind `on` succeeded: a fault it answers is over. */
  private healthy(on: 'read' | 'write'): void {
    if (this.faultedOn === null) return;
    if (this.faultedOn === 'write' && on !== 'write') return;
    this.faultedOn = null;
    this.emit('recovered');
  }
}

function isStoreError(error: unknown): boolean {
  return (
    error instanceof AgentError && (error.code === 'STORE_FULL' || error.code === 'STORE_FAILED')
  );
}
