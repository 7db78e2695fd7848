/**
 * Prometheus metrics of one agent (issue 17 item 5, issue 42 item 7), with prom-client, the client
 * the Prometheus community keeps for Node. Two sources, never mixed within one metric:
 * - counters (and the latency histogram) follow what the rooms announce (the spooler's
 *   transitions, the inbox's refusals and duplicates, catch-up's rounds, the broker's connects),
 *   from the agent's start: a counter resets on restart, as Prometheus expects;
 * - gauges are read at each scrape from the store, the monitors and the clock, so they always match
 *   what the status shows and survive a restart (the last print time is the store's).
 * Every per-printer series is labelled `printer` with the role, as jobs name it (a printer serving
 * two roles appears under both), so queue, age and state of one role join on that label. No
 * label holds customer data or a secret: roles, states, outcomes and the agent's stable codes.
 *
 * The process metrics are prom-client's defaults (process_start_time_seconds, resident memory,
 * the event loop's lag, heap, GC), registered once per process: an agent started again in the
 * same process (tests) shares them instead of starting a second event-loop monitor.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { RoundSummary } from '../catchup/poller.js';
import type { Job, JobReason, StoredJobState } from '../jobs/job.js';
import type { PrinterQueueStats } from '../jobs/store.js';
import { PRINTER_STATES, type PrinterState } from '../protocol/print-protocol.js';

export interface MetricsSources {
  storeId: string;
  version: string;
  /** The roles the configured printers serve (the others' jobs are unrouted). */
  roles: readonly string[];
  /** Whether catch-up runs: its series exist (at zero) only then. */
  catchUp: boolean;
  jobsByState(): Record<StoredJobState, number>;
  /** The store's queue figures per role (JobStore.queueStats): served roles and any with jobs. */
  queues(): PrinterQueueStats[];
  /** Each served role with the state of the printer serving it. */
  printerStates(): Array<{ printer: string; state: PrinterState }>;
  /** Whether that state lets the printer print (printer/status.ts blocksPrinting). */
  canPrint(state: PrinterState): boolean;
  brokerConnected(): boolean;
  clockSynchronized(): boolean;
}

/**
 * Why a message was refused, from the agent's stable codes (errors.ts): the few reasons a chain
 * alerts on, so a new code of the same kind does not change a dashboard.
 */
export const REJECTION_REASONS = {
  SIGNATURE_INVALID: 'forged',
  IDENTITY_MISMATCH: 'wrong_store',
  TOO_LARGE: 'too_large',
  STALE_ORDER: 'stale',
  ENVELOPE_INVALID: 'malformed',
  PARAM_NOT_JSON: 'malformed',
  PARAM_INVALID: 'malformed',
} as const satisfies Record<string, string>;
type RejectionReason = (typeof REJECTION_REASONS)[keyof typeof REJECTION_REASONS];

const CATCH_UP_RECORD_OUTCOMES = ['queued', 'duplicate', 'stale', 'rejected'] as const;
const FINISHED = ['printed', 'failed', 'unconfirmed'] as const;

let processRegistry: Registry | null = null;

/** prom-client's process and Node metrics, set up on the first call only. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export class AgentMetrics {
  readonly registry: Registry;
  private readonly finished: Counter<'printer' | 'outcome'>;
  private readonly failed: Counter<'printer' | 'code'>;
  private readonly printSeconds: Histogram<'printer'>;
  private readonly rejected: Counter<'reason'>;
  private readonly duplicates: Counter;
  private readonly rounds: Counter<'outcome'>;
  private readonly records: Counter<'outcome'>;
  private readonly reconnects: Counter;
  private connects = 0;
  /** The queue figures of the scrape under way: one store read serves the four gauges. */
  private queues: PrinterQueueStats[] = [];
  private readonly sources: MetricsSources;

  constructor(sources: MetricsSources) {
    this.sources = sources;
    const own = new Registry();
    const registers = [own];
    new Gauge({
      name: 'printer_agent_info',
      help: 'The agent: version and store id (always 1).',
      labelNames: ['version', 'store_id'],
      registers,
    })
      .labels(sources.version, sources.storeId)
      .set(1);

    // Counters, from the rooms' events. Known label values start at 0, so that increase() and
    // rate() see the first event of a series too.
    this.finished = new Counter({
      name: 'printer_agent_jobs_finished_total',
      help: 'Jobs finished since the agent started, by printer role and outcome.',
      labelNames: ['printer', 'outcome'],
      registers,
    });
    for (const printer of sources.roles)
      for (const outcome of FINISHED) this.finished.inc({ printer, outcome }, 0);
    this.failed = new Counter({
      name: 'printer_agent_jobs_failed_total',
      help: 'Jobs the spooler gave up on (failed, not printed) since the agent started, by printer role and reason code.',
      labelNames: ['printer', 'code'],
      registers,
    });
    this.printSeconds = new Histogram({
      name: 'printer_agent_job_print_seconds',
      help: 'From an instruction stored (acknowledged to the broker) to its print confirmed.',
      labelNames: ['printer'],
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800],
      registers,
    });
    this.rejected = new Counter({
      name: 'printer_agent_instructions_rejected_total',
      help: 'MQTT instructions and commands refused, never printed, since the agent started, by reason: forged (signature), wrong_store (appId, storeKey or storeId), too_large, malformed, stale (older than the anti-replay age).',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of new Set(Object.values(REJECTION_REASONS)))
      this.rejected.inc({ reason }, 0);
    this.duplicates = new Counter({
      name: 'printer_agent_instructions_duplicate_total',
      help: 'MQTT instructions (per role they are routed to) and commands already stored, answered duplicate and not printed again, since the agent started.',
      registers,
    });
    this.rounds = new Counter({
      name: 'printer_agent_catchup_rounds_total',
      help: 'Catch-up rounds since the agent started, by outcome (ok, error).',
      labelNames: ['outcome'],
      registers,
    });
    this.records = new Counter({
      name: 'printer_agent_catchup_records_total',
      help: 'Order records catch-up read since the agent started, by outcome (queued, duplicate, stale, rejected).',
      labelNames: ['outcome'],
      registers,
    });
    if (sources.catchUp) {
      for (const outcome of ['ok', 'error']) this.rounds.inc({ outcome }, 0);
      for (const outcome of CATCH_UP_RECORD_OUTCOMES) this.records.inc({ outcome }, 0);
    }
    this.reconnects = new Counter({
      name: 'printer_agent_broker_reconnects_total',
      help: 'Connections to the MQTT broker after the first since the agent started.',
      registers,
    });

    // Gauges, read at each scrape.
    const queues = () => this.queues;
    const served = new Set(sources.roles);
    new Gauge({
      name: 'printer_agent_jobs',
      help: 'Jobs in the job store, by state.',
      labelNames: ['state'],
      registers,
      collect() {
        for (const [state, n] of Object.entries(sources.jobsByState())) this.set({ state }, n);
      },
    });
    new Gauge({
      name: 'printer_agent_queue_depth',
      help: 'Jobs not finished yet (queued, waiting, printing), by printer role.',
      labelNames: ['printer'],
      registers,
      collect() {
        this.reset();
        for (const q of queues()) this.set({ printer: q.printer }, q.pending);
      },
    });
    new Gauge({
      name: 'printer_agent_oldest_pending_job_age_seconds',
      help: 'Age of the oldest job not finished yet, by printer role (0 when none waits).',
      labelNames: ['printer'],
      registers,
      collect() {
        this.reset();
        for (const q of queues()) this.set({ printer: q.printer }, q.oldestPendingSec);
      },
    });
    new Gauge({
      name: 'printer_agent_last_print_timestamp_seconds',
      help: 'When the last job printed, by printer role (Unix time; absent when none is stored).',
      labelNames: ['printer'],
      registers,
      collect() {
        this.reset();
        for (const q of queues())
          if (q.lastPrintedAt !== null) this.set({ printer: q.printer }, q.lastPrintedAt / 1000);
      },
    });
    new Gauge({
      name: 'printer_agent_unrouted_jobs',
      help: 'Jobs waiting for a role no configured printer serves (NO_PRINTER_FOR_ROLE), by role.',
      labelNames: ['printer'],
      registers,
      collect() {
        this.reset();
        for (const q of queues())
          if (!served.has(q.printer) && q.pending > 0) this.set({ printer: q.printer }, q.pending);
      },
    });
    new Gauge({
      name: 'printer_agent_printer_state',
      help: '1 for the current state of the printer serving each role, 0 for the others.',
      labelNames: ['printer', 'state'],
      registers,
      collect() {
        this.reset();
        for (const p of sources.printerStates())
          for (const state of PRINTER_STATES)
            this.set({ printer: p.printer, state }, state === p.state ? 1 : 0);
      },
    });
    new Gauge({
      name: 'printer_agent_printer_ready',
      help: 'Whether the printer serving each role is in a state it prints in (1) or not (0: paper out, cover open, offline...).',
      labelNames: ['printer'],
      registers,
      collect() {
        this.reset();
        for (const p of sources.printerStates())
          this.set({ printer: p.printer }, sources.canPrint(p.state) ? 1 : 0);
      },
    });
    new Gauge({
      name: 'printer_agent_broker_connected',
      help: '1 while the agent is connected to the MQTT broker.',
      registers,
      collect() {
        this.set(sources.brokerConnected() ? 1 : 0);
      },
    });
    new Gauge({
      name: 'printer_agent_clock_synchronized',
      help: '1 while the system clock is known to be synchronized (instruction ages are checked), else 0.',
      registers,
      collect() {
        this.set(sources.clockSynchronized() ? 1 : 0);
      },
    });
    this.registry = Registry.merge([own, processMetrics()]);
  }

  /** A transition the spooler recorded. */
  transition(job: Job): void {
    if (job.state !== 'printed' && job.state !== 'failed' && job.state !== 'unconfirmed') return;
    this.finished.inc({ printer: job.printer, outcome: job.state });
    if (job.state === 'failed')
      this.failed.inc({ printer: job.printer, code: job.lastError?.code ?? 'PRINT_FAILED' });
    if (job.state === 'printed' && job.printedAt !== null)
      this.printSeconds.observe(
        { printer: job.printer },
        Math.max(0, job.printedAt - job.createdAt) / 1000,
      );
  }

  /** A message the inbox refused (rejected, or stored failed as a replay). */
  rejection(reason: JobReason): void {
    const known = REJECTION_REASONS as Record<string, RejectionReason>;
    this.rejected.inc({ reason: known[reason.code] ?? 'malformed' });
  }

  /** An instruction or command the inbox found stored already. */
  duplicate(): void {
    this.duplicates.inc();
  }

  round(summary: RoundSummary): void {
    this.rounds.inc({ outcome: summary.error ? 'error' : 'ok' });
    this.records.inc({ outcome: 'queued' }, summary.queued);
    this.records.inc({ outcome: 'duplicate' }, summary.duplicates);
    this.records.inc({ outcome: 'stale' }, summary.stale);
    this.records.inc({ outcome: 'rejected' }, summary.rejected);
  }

  /** The broker connection came up (each time). */
  connected(): void {
    if (this.connects++ > 0) this.reconnects.inc();
  }

  /** The exposition text of a scrape. */
  text(): Promise<string> {
    this.queues = this.sources.queues();
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
