/**
 * The composition root: builds every room from the settings and wires them, in order, with no
 * logic of its own. Start: store, printers (and their monitors), spooler, catch-up, then MQTT (the
 * inbox can only take messages once the store can keep them). Stop, in reverse: stop catch-up and
 * taking messages, let the job in flight finish or park, flush the outbox and publish the offline
 * status, close.
 */

import type { Clock } from './catchup/clock.js';
import { CatchUpPoller } from './catchup/poller.js';
import { QueryClient } from './catchup/query-client.js';
import { loadCaFile } from './catchup/transport.js';
import { ClockSync } from './clock-sync.js';
import { type AgentError, isAgentError } from './errors.js';
import { DEFAULT_RETENTION, Retention } from './jobs/retention.js';
import { Spooler } from './jobs/spooler.js';
import { JobStore, type PrinterQueueStats } from './jobs/store.js';
import type { Logger } from './logging.js';
import { MqttConnection, type MqttConnectionOptions } from './mqtt/connection.js';
import { Inbox } from './mqtt/inbox.js';
import { Reporter } from './mqtt/reporter.js';
import { PrinterMonitor } from './printer/monitor.js';
import { openPrinter } from './printer/open-printer.js';
import type { ConfirmMode, Printer } from './printer/printer.js';
import { mqttMaxPacketBytes } from './protocol/limits.js';
import { type AgentStatus, type PrinterStatus, topics } from './protocol/print-protocol.js';
import { loadKeyFile, type SignatureScheme } from './protocol/signing.js';
import type { ReceiptOptions } from './receipt/options.js';
import { getProfile } from './receipt/profile.js';
import { renderTestPage } from './receipt/render.js';
import { VERSION } from './version.js';

/** What the agent needs, resolved from the configuration file and the environment. */
export interface AgentSettings {
  appId: string;
  storeKey: string;
  storeId: string;
  /** The broker connection, plus the topic prefix and the message size limit. */
  mqtt: Omit<MqttConnectionOptions, 'subscriptions' | 'will'> & {
    prefix: string;
    maxMessageBytes: number;
  };
  keys: { servicePublicKeyFile: string; scheme: SignatureScheme };
  /** Each printer serves the roles jobs name in their `printer` field (default: its id). */
  printers: Array<{
    id: string;
    url: string;
    profile: string;
    roles: string[];
    confirm?: ConfirmMode;
    statusIntervalMs: number;
    /** Wait for a job's confirmation; default 15 s. */
    confirmTimeoutMs?: number;
  }>;
  receipt: ReceiptOptions;
  lateAfterMinutes: number | null;
  interruptedPolicy: 'reprint-marked' | 'hold';
  stateDir: string;
  statusIntervalMs: number;
  /** Days finished jobs stay in the store (retention runs hourly, in small batches). */
  retentionDays: number;
  /** Catch-up through the order query API (print-protocol §8); absent or null: off. */
  catchUp?: CatchUpSettings | null;
  /** The anti-replay age of MQTT instructions (print-protocol v1.1 §4); default 7 days, detect. */
  freshness?: FreshnessSettings;
}

export interface FreshnessSettings {
  /** An instruction whose createTime is older than this is stored failed with STALE_ORDER. */
  maxAgeMs: number;
  /** Whether the system clock can be trusted for the rule (config `freshness.clock`). */
  clock: 'detect' | 'synchronized' | 'unsynchronized';
  /** IANA zone of the service's createTime; default the host's. */
  timeZone?: string;
}

export interface CatchUpSettings {
  /** Queries go to `{baseUrl}/open-api/order/list`. */
  baseUrl: string;
  /** The store's private key (PEM): signs the queries. */
  storePrivateKeyFile: string;
  intervalMs: number;
  minIntervalMs: number;
  pageSize: number;
  maxAgeMs: number;
  windowMs: number;
  /** IANA zone of the service's createTime; default the host's. */
  timeZone?: string;
  /** Bound on one query; default 30 s. */
  timeoutMs?: number;
  /** Tests run the query spacing on a virtual clock. */
  clock?: Clock;
  /** PEM CA file that verifies the service's certificate (https); default the system CAs. */
  caFile?: string;
  /** print-protocol §8: answers must carry a valid X-Signature (default), or `off` (https only). */
  responseSignature?: 'required' | 'off';
  /** Lab switch: http:// to a host other than loopback; warned about at every round. */
  allowInsecureHttp?: boolean;
  /** This store's restaurant and branch at the service: records for others are refused. */
  restaurantNo?: string;
  branchIdentifier?: string;
}

interface PrinterRoom {
  id: string;
  /** The roles it serves: its queue in the status is the sum over them. */
  roles: string[];
  printer: Printer;
  monitor: PrinterMonitor;
}

type Reason = { code: string; message: string };

export class Agent {
  /** The inbox could not store a message (disk full...): until a write succeeds again. */
  private storeFault: AgentError | null = null;
  /** The spooler's latest fault, until the store answers it again. */
  private spoolerFault: Reason | null = null;
  /** Reading the queue figures for the status failed: the last good figures are shown. */
  private statusFault: Reason | null = null;
  private lastStats: PrinterQueueStats[] = [];
  private readonly startedAt = new Date().toISOString();

  private constructor(
    private readonly settings: AgentSettings,
    private readonly log: Logger,
    readonly store: JobStore,
    private readonly printers: PrinterRoom[],
    private readonly spooler: Spooler,
    private readonly connection: MqttConnection,
    private readonly reporter: Reporter,
    private readonly retention: Retention,
    /** The catch-up poller, when catch-up is on. */
    readonly catchUp: CatchUpPoller | null,
  ) {}

  static async start(settings: AgentSettings, log: Logger): Promise<Agent> {
    const store = JobStore.open({ stateDir: settings.stateDir, create: true });
    log.child({ room: 'jobs' }).info({ path: store.path }, 'job store open');

    const printers: PrinterRoom[] = settings.printers.map((p) => {
      const profile = getProfile(p.profile);
      const printer = openPrinter(
        p.url,
        { realtimeStatus: profile.realtimeStatus, confirm: p.confirm ?? profile.confirm },
        p.confirmTimeoutMs ? { confirmTimeoutMs: p.confirmTimeoutMs } : {},
      );
      const monitor = new PrinterMonitor(printer, { intervalMs: p.statusIntervalMs });
      const plog = log.child({ room: 'printer', printer: p.id });
      monitor.on('change', (condition) =>
        plog.info({ state: condition.state, causes: condition.causes }, 'printer state'),
      );
      monitor.on('error', (error) => plog.warn({ err: error.message }, 'status poll failed'));
      return { id: p.id, roles: p.roles, printer, monitor };
    });

    const spooler = new Spooler({
      store,
      // One loop per role; a printer serving two roles still takes one job at a time (its link
      // is exclusive). Jobs for a role nobody serves wait, reported (NO_PRINTER_FOR_ROLE).
      printers: settings.printers.flatMap((p, i) =>
        p.roles.map((role) => ({
          id: role,
          printer: printers[i]!.printer,
          profile: p.profile,
          monitor: printers[i]!.monitor,
        })),
      ),
      receiptOptions: settings.receipt,
      lateAfterMs: settings.lateAfterMinutes === null ? null : settings.lateAfterMinutes * 60_000,
      interruptedPolicy: settings.interruptedPolicy,
      renderTestPage: (profile) => renderTestPage(profile, settings.receipt, VERSION),
    });

    const c = settings.catchUp;
    const catchUp = c
      ? new CatchUpPoller(
          new QueryClient({
            baseUrl: c.baseUrl,
            appId: settings.appId,
            storeKey: settings.storeKey,
            key: loadKeyFile(c.storePrivateKeyFile, 'private'),
            scheme: settings.keys.scheme,
            ...(c.timeoutMs !== undefined ? { timeoutMs: c.timeoutMs } : {}),
            // print-protocol §8: answers verified with the service key, the CA pinned if given.
            serviceKey: loadKeyFile(settings.keys.servicePublicKeyFile, 'public'),
            responseSignature: c.responseSignature ?? 'required',
            ...(c.caFile !== undefined ? { ca: loadCaFile(c.caFile).pem } : {}),
            allowInsecureHttp: c.allowInsecureHttp === true,
          }),
          store,
          {
            intervalMs: c.intervalMs,
            minIntervalMs: c.minIntervalMs,
            pageSize: c.pageSize,
            maxAgeMs: c.maxAgeMs,
            windowMs: c.windowMs,
            ...(c.timeZone !== undefined ? { timeZone: c.timeZone } : {}),
            ...(c.clock ? { clock: c.clock } : {}),
            ...(c.restaurantNo !== undefined ? { restaurantNo: c.restaurantNo } : {}),
            ...(c.branchIdentifier !== undefined ? { branchIdentifier: c.branchIdentifier } : {}),
          },
          log.child({ room: 'catchup' }),
        )
      : null;

    // print-protocol v1.1 §4 freshness: whether the clock can be trusted, read once now (never on
    // the inbox's ack path; refreshed in the background afterwards).
    const freshness = settings.freshness ?? { maxAgeMs: 7 * 24 * 60 * 60_000, clock: 'detect' };
    const clock = new ClockSync({ mode: freshness.clock });
    const reading = await clock.refresh();
    log.info(
      { clock: reading.source, synchronized: reading.synchronized },
      `clock: ${reading.detail}`,
    );

    const t = topics(settings.mqtt.prefix, settings.storeId);
    const mlog = log.child({ room: 'mqtt' });
    // Holders so the connection's callbacks can reach rooms created after it.
    const late: { inbox?: Inbox; reporter?: Reporter; agent?: Agent } = {};
    const connection = new MqttConnection(
      {
        ...settings.mqtt,
        // MQTT 5: the broker drops what is larger instead of sending it (print-protocol §9).
        maxPacketBytes: mqttMaxPacketBytes(settings.mqtt.maxMessageBytes),
        subscriptions: [t.print, t.command],
        will: {
          topic: t.status,
          payload: JSON.stringify({ online: false, storeId: settings.storeId, at: null }),
        },
      },
      async (topic, payload) => (late.inbox ? late.inbox.handle(topic, payload) : 'hold'),
      mlog,
      {
        connect: (sessionPresent) => {
          late.reporter
            ?.connected()
            .catch((error: unknown) =>
              mlog.error({ err: (error as Error)?.message ?? String(error) }, 'reporting failed'),
            );
          // The broker kept nothing for us (new or expired session, broker restarted without
          // persistence): what it had queued is lost, the query API fills the gap (guarantee 7).
          if (!sessionPresent) catchUp?.sessionLost();
        },
        offline: () => mlog.warn('broker offline; retrying with backoff'),
      },
    );
    const reporter = new Reporter(
      store,
      connection,
      {
        topics: t,
        storeId: settings.storeId,
        statusIntervalMs: settings.statusIntervalMs,
        status: () => late.agent!.status(),
      },
      mlog,
    );
    const retention = new Retention(
      store,
      { ...DEFAULT_RETENTION, keepDays: settings.retentionDays },
      (error) =>
        log.child({ room: 'jobs' }).warn({ err: (error as Error).message }, 'retention run failed'),
    );
    const agent = new Agent(
      settings,
      log,
      store,
      printers,
      spooler,
      connection,
      reporter,
      retention,
      catchUp,
    );
    late.agent = agent;
    late.reporter = reporter;
    late.inbox = new Inbox(
      store,
      {
        appId: settings.appId,
        storeKey: settings.storeKey,
        storeId: settings.storeId,
        serviceKey: loadKeyFile(settings.keys.servicePublicKeyFile, 'public'),
        scheme: settings.keys.scheme,
        maxBytes: settings.mqtt.maxMessageBytes,
        topics: t,
        maxAgeMs: freshness.maxAgeMs,
        ...(freshness.timeZone !== undefined ? { timeZone: freshness.timeZone } : {}),
        clock,
        lateAfterMs: settings.lateAfterMinutes === null ? null : settings.lateAfterMinutes * 60_000,
      },
      {
        statusRequested: () => reporter.publishStatusSoon(true),
        storeFault: (error) => {
          if ((error?.code ?? null) !== (agent.storeFault?.code ?? null)) {
            agent.storeFault = error;
            reporter.publishStatusSoon();
          }
        },
      },
      mlog,
    );

    agent.watchSpooler(reporter);
    for (const p of printers) p.monitor.start();
    for (const p of printers) p.monitor.on('change', () => reporter.publishStatusSoon());
    const recovered = spooler.start();
    if (recovered.length > 0)
      log.warn({ jobs: recovered.map((j) => j.jobId) }, 'jobs interrupted by a crash re-queued');
    reporter.start();
    retention.start();
    catchUp?.start();
    connection.connect();
    log.info(
      {
        storeId: settings.storeId,
        version: VERSION,
        printers: settings.printers.map((p) => p.id),
        catchUp: catchUp !== null,
      },
      'agent started',
    );
    return agent;
  }

  /**
   * Reliability guarantee 11: every spooler fault is logged (printer, jobId, code) and shown in the
   * status until the store works again; jobs parked for an unserved role are logged with the role.
   */
  private watchSpooler(reporter: Reporter): void {
    const jlog = this.log.child({ room: 'jobs' });
    // A fault that persists (a dead disk) repeats on every retry: logged the first time, then at
    // most once a minute with the number of repeats in between.
    let last = { key: '', at: 0, repeats: 0 };
    this.spooler.on('fault', (error, context) => {
      const reason: Reason = isAgentError(error)
        ? error.toReason()
        : { code: 'PRINT_FAILED', message: error.message };
      const key = `${context.printer}\n${context.jobId}\n${reason.code}\n${reason.message}`;
      const now = Date.now();
      if (key !== last.key || now - last.at >= 60_000) {
        jlog.error(
          {
            printer: context.printer,
            jobId: context.jobId,
            code: reason.code,
            err: reason.message,
            ...(key === last.key && last.repeats > 0 ? { repeated: last.repeats } : {}),
          },
          'spooler fault',
        );
        last = { key, at: now, repeats: 0 };
      } else {
        last.repeats++;
      }
      if (reason.code !== this.spoolerFault?.code || reason.message !== this.spoolerFault.message) {
        this.spoolerFault = reason;
        reporter.publishStatusSoon();
      }
    });
    this.spooler.on('recovered', () => {
      last = { key: '', at: 0, repeats: 0 };
      if (!this.spoolerFault) return;
      jlog.info({ code: this.spoolerFault.code }, 'job store answering again: fault cleared');
      this.spoolerFault = null;
      reporter.publishStatusSoon();
    });
    this.spooler.on('unrouted', (role, jobs) => {
      jlog.warn(
        { role, jobs: jobs.map((j) => j.jobId), code: 'NO_PRINTER_FOR_ROLE' },
        `no configured printer serves role ${role}: ${jobs.length} job(s) wait until one does`,
      );
      reporter.publishStatusSoon();
    });
    this.spooler.on('notices', (job, notices) => {
      for (const notice of notices)
        jlog.warn(
          { jobId: job.jobId, orderNo: job.orderNo, printer: job.printer, code: notice.code },
          notice.message,
        );
    });
  }

  /**
   * print-protocol §7, from the monitors and the store; never contains a secret, never throws: a
   * store that cannot be read shows the last figures read and says so in `fault`.
   */
  status(): AgentStatus {
    const roles = new Set(this.printers.flatMap((p) => p.roles));
    try {
      this.lastStats = this.store.queueStats([...roles]);
      if (this.statusFault) this.log.info('queue figures readable again');
      this.statusFault = null;
    } catch (error) {
      const reason: Reason = isAgentError(error)
        ? error.toReason()
        : { code: 'STORE_FAILED', message: String((error as Error)?.message ?? error) };
      if (this.statusFault?.message !== reason.message)
        this.log.error({ code: reason.code, err: reason.message }, 'cannot read the queue figures');
      this.statusFault = { code: reason.code, message: `status: ${reason.message}` };
    }
    const stats = new Map(this.lastStats.map((s) => [s.printer, s]));
    const unrouted = this.lastStats
      .filter((s) => !roles.has(s.printer) && s.pending > 0)
      .map((s) => ({ role: s.printer, pending: s.pending, oldestPendingSec: s.oldestPendingSec }));
    const fault = this.storeFault?.toReason() ?? this.spoolerFault ?? this.statusFault;
    return {
      online: true,
      storeId: this.settings.storeId,
      agent: { version: VERSION, startedAt: this.startedAt },
      printers: this.printers.map((p): PrinterStatus => {
        const condition = p.monitor.condition;
        // A printer's queue is the sum over the roles it serves (its id need not be a role).
        const own = p.roles.map((r) => stats.get(r)).filter((q) => q !== undefined);
        const lastPrinted = Math.max(0, ...own.map((q) => q.lastPrintedAt ?? 0));
        return {
          id: p.id,
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
      at: new Date().toISOString(),
    };
  }

  async stop(): Promise<void> {
    this.log.info('stopping');
    await this.catchUp?.stop();
    this.reporter.stop();
    await this.retention.stop();
    await this.spooler.stop();
    await this.reporter.offline();
    await this.connection.end();
    for (const p of this.printers) {
      p.monitor.stop();
      await p.printer.close();
    }
    this.store.close();
    this.log.info('stopped');
  }
}
