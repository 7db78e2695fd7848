/**
 * Prometheus metrics of one agent (issue 17 item 5), with prom-client, the client the Prometheus
 * community keeps for Node. Counters and the latency histogram follow the spooler's transitions
 * and catch-up's rounds from the agent's start (a counter resets on restart, as Prometheus
 * expects); the gauges (jobs by state, queue depth, printer state, broker) are read at each scrape,
 * so they always match the store and the monitors.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RoundSummary } from '../catchup/poller.js';
import type { Job, StoredJobState } from '../jobs/job.js';
import { PRINTER_STATES, type PrinterState } from '../protocol/print-protocol.js';

export interface MetricsSources {
  storeId: string;
  version: string;
  jobsByState(): Record<StoredJobState, number>;
  queueDepth(): Array<{ printer: string; pending: number }>;
  printerStates(): Array<{ printer: string; state: PrinterState }>;
  brokerConnected(): boolean;
}

export class AgentMetrics {
  readonly registry = new Registry();
  private readonly outcomes: Counter<'printer' | 'outcome'>;
  private readonly printSeconds: Histogram<'printer'>;
  private readonly rounds: Counter<'outcome'>;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    new Gauge({
      name: 'printer_agent_info',
      help: 'The agent: version and store id (always 1).',
      labelNames: ['version', 'store_id'],
      registers,
    })
      .labels(sources.version, sources.storeId)
      .set(1);
    this.outcomes = new Counter({
      name: 'printer_agent_jobs_finished_total',
      help: 'Jobs finished since the agent started, by printer role and outcome.',
      labelNames: ['printer', 'outcome'],
      registers,
    });
    this.printSeconds = new Histogram({
      name: 'printer_agent_job_print_seconds',
      help: 'From an instruction stored (acknowledged to the broker) to its print confirmed.',
      labelNames: ['printer'],
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800],
      registers,
    });
    this.rounds = new Counter({
      name: 'printer_agent_catchup_rounds_total',
      help: 'Catch-up rounds since the agent started, by outcome.',
      labelNames: ['outcome'],
      registers,
    });
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
        for (const q of sources.queueDepth()) this.set({ printer: q.printer }, q.pending);
      },
    });
    new Gauge({
      name: 'printer_agent_printer_state',
      help: "1 for each printer's current state, 0 for the others.",
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
      name: 'printer_agent_broker_connected',
      help: '1 while the agent is connected to the MQTT broker.',
      registers,
      collect() {
        this.set(sources.brokerConnected() ? 1 : 0);
      },
    });
  }

  /** A transition the spooler recorded. */
  transition(job: Job): void {
    if (job.state !== 'printed' && job.state !== 'failed' && job.state !== 'unconfirmed') return;
    this.outcomes.inc({ printer: job.printer, outcome: job.state });
    if (job.state === 'printed' && job.printedAt !== null)
      this.printSeconds.observe(
        { printer: job.printer },
        Math.max(0, job.printedAt - job.createdAt) / 1000,
      );
  }

  round(summary: RoundSummary): void {
    this.rounds.inc({ outcome: summary.error ? 'error' : 'ok' });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
