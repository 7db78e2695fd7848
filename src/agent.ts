/**
 * The composition root: builds every room from the settings and wires them, in order, with no
 * logic of its own. Start: store, printers (and their monitors), spooler, catch-up, then MQTT (the
 * inbox can only take messages once the store can keep them). Stop, in reverse: stop catch-up and
 * taking messages, let the job in flight finish or park, flush the outbox and publish the offline
 * status, close.
 */

import { CatchUpPoller, type PollerOptions } from './catchup/poller.js';
import { QueryClient, type QueryClientOptions } from './catchup/query-client.js';
import { loadCaFile } from './catchup/transport.js';
import type { AgentMetrics } from './console/metrics.js';
import type { ConsoleSettings, RunningConsole } from './console/server.js';
import { AgentError, errorMessage, isAgentError } from './errors.js';
import { type ClockSource, ClockSync } from './host/clock-sync.js';
import { Health } from './jobs/health.js';
import { TransitionLog } from './jobs/outcome-log.js';
import { type DrawerSettings, drawerKick, renderJob } from './jobs/render-job.js';
import { DEFAULT_RETENTION, Retention } from './jobs/retention.js';
import type { RoutingRule } from './jobs/routing.js';
import { Spooler } from './jobs/spooler.js';
import { JobStore } from './jobs/store.js';
import type { Logger } from './logging.js';
import { MqttConnection, type MqttConnectionOptions } from './mqtt/connection.js';
import { DEFAULT_FRESHNESS_MAX_AGE_MS, Inbox } from './mqtt/inbox.js';
import { Reporter } from './mqtt/reporter.js';
import { PrinterMonitor } from './printer/monitor.js';
import { openPrinter } from './printer/open-printer.js';
import type { ConfirmMode, Printer } from './printer/printer.js';
import { blocksPrinting } from './printer/status.js';
import { mqttMaxPacketBytes } from './protocol/limits.js';
import { lastWill, topics } from './protocol/print-protocol.js';
import { loadKeyFile, type SignatureScheme } from './protocol/signing.js';
import type { LogoSettings, ReceiptLogo, ReceiptOptions } from './receipt/options.js';
import { getProfile } from './receipt/profile.js';
import { fontMissing, LineRasterizer } from './receipt/raster-text.js';
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
  printers: PrinterSettings[];
  receipt: ReceiptOptions;
  /**
   * The store's logo file (config `receipt.logo`), converted once at start for every printer's
   * profile into `receipt.logo`; absent or null: none.
   */
  logo?: LogoSettings | null;
  /**
   * The cash drawer on the receipt printer (issue 41 item 4): which payment receipts open it, and
   * the pin `drawer open` pulses too; absent: never opened by a receipt, pin 2.
   */
  drawer?: DrawerSettings;
  /** Which roles get a ticket for each order (issue 18); default: the receipt role's receipt. */
  routing?: readonly RoutingRule[];
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
  /** The local API and metrics (issue 17); absent or null: off, and its code never loaded. */
  /** The local token is made when the console starts (console/local-token.ts). */
  console?: Omit<ConsoleSettings, 'localToken'> | null;
  /**
   * The config file's modification time when it was read (`LoadedConfig.modifiedAt`), told by
   * `/api/status` so doctor can say the file changed since; absent when not started from a file.
   */
  configModifiedAt?: string;
}

/** One configured printer; its room (`PrinterRoom`) carries it, so nothing matches by index. */
export interface PrinterSettings {
  id: string;
  url: string;
  profile: string;
  roles: string[];
  confirm?: ConfirmMode;
  statusIntervalMs: number;
  /** Wait for a job's confirmation; default 15 s. */
  confirmTimeoutMs?: number;
}

export interface FreshnessSettings {
  /** An instruction whose createTime is older than this is stored failed with STALE_ORDER. */
  maxAgeMs: number;
  /** Whether the system clock can be trusted for the rule (config `freshness.clock`). */
  clock: 'detect' | 'synchronized' | 'unsynchronized';
  /** IANA zone of the service's createTime; default the host's. */
  timeZone?: string;
}

/**
 * Catch-up (print-protocol §8): the poller's own options and the query client's, as those rooms
 * declare them, plus the two files the agent reads for them (no copy of either shape).
 */
export type CatchUpSettings = Pick<
  PollerOptions,
  | 'intervalMs'
  | 'minIntervalMs'
  | 'pageSize'
  | 'maxAgeMs'
  | 'windowMs'
  | 'timeZone'
  | 'clock'
  | 'restaurantNo'
  | 'branchIdentifier'
> &
  Pick<
    QueryClientOptions,
    'baseUrl' | 'timeoutMs' | 'responseSignature' | 'allowInsecureHttp' | 'allowV1Signatures'
  > & {
    /** The store's private key (PEM): signs the queries. */
    storePrivateKeyFile: string;
    /** PEM CA file that verifies the service's certificate (https); default the system CAs. */
    caFile?: string;
  };

/** A printer with its settings and the monitor that polls it. */
interface PrinterRoom {
  settings: PrinterSettings;
  printer: Printer;
  monitor: PrinterMonitor;
}

/** The MQTT room: the connection, the inbox behind it and the reporter in front of it. */
interface MqttRoom {
  connection: MqttConnection;
  inbox: Inbox;
  reporter: Reporter;
}

export class Agent {
  private constructor(
    private readonly log: Logger,
    readonly store: JobStore,
    private readonly printers: PrinterRoom[],
    private readonly spooler: Spooler,
    private readonly mqtt: MqttRoom,
    private readonly retention: Retention,
    /** The catch-up poller, when catch-up is on. */
    readonly catchUp: CatchUpPoller | null,
    /** The status message and the faults it shows (print-protocol §7). */
    readonly health: Health,
    private readonly localApi: RunningConsole | null,
  ) {}

  /**
   * Builds the rooms in dependency order (store, printers, spooler and health, clock, catch-up,
   * MQTT), then starts them in the same order: the broker connection last, once every room
   * behind the inbox can take what it delivers.
   */
  static async start(given: AgentSettings, log: Logger): Promise<Agent> {
    // Every line names its room (issue 42 item 10): the agent's own lines are the `agent` room's.
    const alog = log.child({ room: 'agent' });
    const freshness = given.freshness ?? {
      maxAgeMs: DEFAULT_FRESHNESS_MAX_AGE_MS,
      clock: 'detect',
    };
    // Asked first, awaited before the broker connects: its child process (timedatectl, where
    // timesyncd's flag file is absent) runs while the rooms below are built (issue 45).
    const clockRead = readClock(freshness.clock, alog);
    const logo = await storeLogo(given, log);
    const rasterizer = lineRasterizer(given, log);
    const settings: AgentSettings = {
      ...given,
      receipt: { ...given.receipt, logo: logo.images, rasterizer },
    };
    const store = JobStore.open({ stateDir: settings.stateDir, create: true });
    const jlog = log.child({ room: 'jobs' });
    jlog.info({ path: store.path }, 'job store open');
    const printers = openPrinters(settings, log);
    const spooler = buildSpooler(settings, store, printers);
    // One waiting line per outage, not one per retry (issue 42 item 9).
    const transitions = new TransitionLog(jlog);
    spooler.on('transition', (job) => transitions.record(job));
    const health = new Health(
      {
        store,
        printers: printers.map((room) => ({
          id: room.settings.id,
          roles: room.settings.roles,
          condition: () => room.monitor.condition,
        })),
        storeId: settings.storeId,
        version: VERSION,
        startedAt: new Date().toISOString(),
        warnings: logo.warning ? [logo.warning] : [],
      },
      log.child({ room: 'jobs' }),
    );
    health.watch(spooler);
    // A character none of the raster fonts has prints as `?` (each job's warning names it); the
    // journal and the status say it once, naming the packages (issue 42 item 13).
    rasterizer?.once('missing', (ch) => {
      const reason = fontMissing(ch);
      log.child({ room: 'receipt' }).warn({ code: reason.code }, reason.message);
      health.addWarning(reason);
    });
    const clock = await clockRead;
    const catchUp = settings.catchUp
      ? catchUpPoller(
          settings,
          settings.catchUp,
          store,
          { clock, antiReplayAgeMs: freshness.maxAgeMs },
          log.child({ room: 'catchup' }),
        )
      : null;
    const mqtt = mqttRoom(settings, { store, health, clock, freshness, catchUp }, log);
    const retention = new Retention(
      store,
      { ...DEFAULT_RETENTION, keepDays: settings.retentionDays },
      (error) =>
        log.child({ room: 'jobs' }).warn({ err: errorMessage(error) }, 'retention run failed'),
    );

    // Metrics listen before any room starts: no transition, round or connect goes uncounted.
    const metrics = settings.console?.metrics
      ? await agentMetrics(settings, { store, printers, spooler, mqtt, catchUp, clock })
      : null;
    for (const p of printers) {
      p.monitor.on('change', () => mqtt.reporter.publishStatusSoon());
      p.monitor.start();
    }
    const recovered = spooler.start();
    if (recovered.length > 0)
      jlog.warn({ jobs: recovered.map((j) => j.jobId) }, 'jobs interrupted by a crash re-queued');
    mqtt.reporter.start();
    retention.start();
    catchUp?.start();
    mqtt.connection.connect();
    // The local API is for people: when it cannot listen (the port taken), printing goes on.
    // Opened once the broker has had the online status (or said no, or after a second): loading
    // its modules takes the one thread for ~80 ms, which the first receipt does not wait for
    // (issue 45). Agent.start still resolves with it listening.
    if (settings.console) await firstAnswer(mqtt, CONSOLE_AFTER_MS);
    const localApi = settings.console
      ? await openConsole(
          settings,
          settings.console,
          { store, printers, health, mqtt, metrics },
          log,
        ).catch((error: unknown) => {
          log.error(
            { room: 'console', err: errorMessage(error) },
            'local API not available (printer-agent status and the status page will not answer)',
          );
          return null;
        })
      : null;
    alog.info(
      {
        storeId: settings.storeId,
        version: VERSION,
        printers: settings.printers.map((p) => p.id),
        catchUp: catchUp !== null,
      },
      'agent started',
    );
    return new Agent(alog, store, printers, spooler, mqtt, retention, catchUp, health, localApi);
  }

  /** Where the status page and the local API answer; null when off or not listening. */
  get consoleUrl(): string | null {
    return this.localApi?.url ?? null;
  }

  async stop(): Promise<void> {
    this.log.info('stopping');
    await this.localApi?.close();
    await this.catchUp?.stop();
    this.mqtt.reporter.stop();
    await this.retention.stop();
    await this.spooler.stop();
    await this.mqtt.reporter.offline();
    await this.mqtt.connection.end();
    for (const p of this.printers) {
      p.monitor.stop();
      await p.printer.close();
    }
    this.store.close();
    this.log.info('stopped');
  }
}

/**
 * Raster lines (issue 18): drawn with the system's fonts when there are any; without them such
 * characters print as `?`, which the journal says once at start, naming the packages.
 */
function lineRasterizer(settings: AgentSettings, log: Logger): LineRasterizer | null {
  if (settings.receipt.rasterLines === false) return null;
  // One given in the settings (tests: a font set without CJK), else the system's fonts.
  const rasterizer =
    settings.receipt.rasterizer !== undefined
      ? settings.receipt.rasterizer
      : LineRasterizer.fromSystem();
  const rlog = log.child({ room: 'receipt' });
  if (rasterizer) rlog.info({ fonts: rasterizer.fonts }, 'raster lines drawn with system fonts');
  else
    rlog.warn(
      'no fonts for raster lines (install fonts-dejavu-core and fonts-unifont): characters the printers cannot print come out as ?',
    );
  return rasterizer;
}

/**
 * The store's logo, read and converted once for every configured printer's profile (its code is
 * loaded only when a logo is configured). A logo that cannot be used never stops the agent:
 * receipts print without it, the status carries the problem as a warning (LOGO_UNREADABLE), and
 * the journal has it once, naming the file.
 */
async function storeLogo(
  settings: AgentSettings,
  log: Logger,
): Promise<{ images: ReceiptLogo | null; warning: { code: string; message: string } | null }> {
  if (!settings.logo) return { images: null, warning: null };
  const rlog = log.child({ room: 'receipt' });
  const { loadLogo, logoBytes } = await import('./receipt/logo.js');
  const profiles = settings.printers.map((p) => getProfile(p.profile));
  try {
    const images = await loadLogo(settings.logo, profiles);
    for (const profile of new Set(profiles)) {
      const image = images.images.get(profile.id)!;
      rlog.info(
        {
          file: settings.logo.file,
          profile: profile.id,
          dots: `${image.width}x${image.height}`,
          bytesPerReceipt: logoBytes(image, images.align),
        },
        'logo ready',
      );
    }
    return { images, warning: null };
  } catch (error) {
    const reason = isAgentError(error)
      ? error.toReason()
      : { code: 'LOGO_UNREADABLE', message: errorMessage(error) };
    rlog.warn(
      { code: reason.code, file: settings.logo.file },
      `${reason.message}; receipts print without the logo`,
    );
    return { images: null, warning: reason };
  }
}

/**
 * The Prometheus metrics (console/metrics.ts, imported only when `console.metrics`), listening to
 * the rooms' events from before they start.
 */
async function agentMetrics(
  settings: AgentSettings,
  rooms: {
    store: JobStore;
    printers: PrinterRoom[];
    spooler: Spooler;
    mqtt: MqttRoom;
    catchUp: CatchUpPoller | null;
    clock: ClockSource;
  },
): Promise<AgentMetrics> {
  const { store, printers, spooler, mqtt, catchUp, clock } = rooms;
  const roles = [...new Set(settings.printers.flatMap((p) => p.roles))];
  const { AgentMetrics } = await import('./console/metrics.js');
  const m = new AgentMetrics({
    storeId: settings.storeId,
    version: VERSION,
    roles,
    catchUp: catchUp !== null,
    jobsByState: () => store.countByState(),
    queues: () => store.queueStats(roles),
    // Labelled by role, as jobs and queues are: a printer serving two roles is under both.
    printerStates: () =>
      printers.flatMap((room) =>
        room.settings.roles.map((role) => ({
          printer: role,
          state: room.monitor.condition?.state ?? 'unknown',
        })),
      ),
    canPrint: (state) => !blocksPrinting(state),
    brokerConnected: () => mqtt.connection.connected,
    clockSynchronized: () => clock.current().synchronized,
  });
  spooler.on('transition', (job) => m.transition(job));
  catchUp?.on('round', (summary) => m.round(summary));
  mqtt.inbox.on('rejected', (reason) => m.rejection(reason));
  mqtt.inbox.on('duplicate', () => m.duplicate());
  mqtt.connection.on('connect', () => m.connected());
  return m;
}

/**
 * The local API (and metrics), imported only when configured: an agent without them loads none of
 * their code (issue 17: no memory when off). Listening before the broker connects, so
 * `printer-agent status` answers while the agent waits for the broker.
 */
async function openConsole(
  settings: AgentSettings,
  consoleSettings: Omit<ConsoleSettings, 'localToken'>,
  rooms: {
    store: JobStore;
    printers: PrinterRoom[];
    health: Health;
    mqtt: MqttRoom;
    metrics: AgentMetrics | null;
  },
  log: Logger,
): Promise<RunningConsole> {
  const { store, printers, health, mqtt, metrics } = rooms;
  const roles = [...new Set(settings.printers.flatMap((p) => p.roles))];
  const { startConsole } = await import('./console/server.js');
  const { issueLocalToken } = await import('./console/local-token.js');
  return startConsole(
    {
      ...consoleSettings,
      localToken: issueLocalToken(settings.stateDir),
      // The page shows times in the store's zone: the one the order service's times are in.
      ...(settings.freshness?.timeZone !== undefined
        ? { timeZone: settings.freshness.timeZone }
        : {}),
    },
    {
      status: () => {
        const status = health.status();
        return {
          ...status,
          broker: { connected: mqtt.connection.connected },
          ...(settings.configModifiedAt !== undefined
            ? { config: { modifiedAt: settings.configModifiedAt } }
            : {}),
          // When each printer was last checked (the page shows it beside the state).
          printers: status.online
            ? status.printers.map((p) => ({
                ...p,
                checkedAt: isoOrNull(
                  printers.find((room) => room.settings.id === p.id)?.monitor.checkedAt ?? null,
                ),
              }))
            : [],
        };
      },
      renderJob: async (job, view) => {
        const printer = roomFor(printers, job.printer) ?? printers[0]!;
        const profile = getProfile(printer.settings.profile);
        const rendered = await renderJob(view(job), {
          profile,
          options: settings.receipt,
          late: job.markings.late === true,
          original: (j) => {
            const original = j.sourceJob === null ? null : store.get(j.sourceJob);
            return original ? view(original) : null;
          },
          renderTestPage: (p) => renderTestPage(p, settings.receipt, VERSION),
        });
        return { bytes: rendered.bytes, columns: profile.fonts.A.columns };
      },
      openDrawer: async (role) => {
        const room = roomFor(printers, role);
        if (!room)
          throw new AgentError(
            'INPUT_INVALID',
            `printer: no configured printer serves role ${role}`,
          );
        const config = room.settings;
        const profile = getProfile(config.profile);
        if (!profile.drawer)
          throw new AgentError(
            'INPUT_INVALID',
            `printer ${config.id}: its profile ${profile.id} has no drawer kick-out connector`,
          );
        // A printer that cannot print would keep the pulse in its buffer and open the drawer
        // whenever it comes back: refused now instead, saying why.
        const state = room.monitor.condition?.state ?? 'unknown';
        if (blocksPrinting(state))
          throw new AgentError(
            'PRINTER_NOT_READY',
            `printer ${config.id}: ${state}; the drawer was not opened`,
          );
        const pin = settings.drawer?.pin ?? 2;
        await room.printer.send(drawerKick({ pin }, profile));
        return { printer: config.id, pin };
      },
      store,
      roles,
      metrics,
    },
    log.child({ room: 'console' }),
  );
}

/** The first printer serving `role` (config order: the one the spooler's loop for it uses). */
function roomFor(printers: readonly PrinterRoom[], role: string): PrinterRoom | undefined {
  return printers.find((room) => room.settings.roles.includes(role));
}

function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** Each configured printer with the monitor that polls its status. */
function openPrinters(settings: AgentSettings, log: Logger): PrinterRoom[] {
  return settings.printers.map((p) => {
    const profile = getProfile(p.profile);
    const printer = openPrinter(
      p.url,
      { realtimeStatus: profile.realtimeStatus, confirm: p.confirm ?? profile.confirm },
      p.confirmTimeoutMs ? { confirmTimeoutMs: p.confirmTimeoutMs } : {},
    );
    const monitor = new PrinterMonitor(printer, { intervalMs: p.statusIntervalMs });
    const plog = log.child({ room: 'printer', printer: p.id });
    // A printer that cannot print is a fault for the journal's warning level (issue 17); ready
    // again, only low on paper, or not known yet is news.
    monitor.on('change', (condition) => {
      const facts = { state: condition.state, causes: condition.causes };
      if (['ready', 'paper-near-end', 'unknown'].includes(condition.state))
        plog.info(facts, 'printer state');
      else plog.warn(facts, 'printer state');
    });
    monitor.on('error', (error) => plog.warn({ err: error.message }, 'status poll failed'));
    return { settings: p, printer, monitor };
  });
}

/**
 * One spooler loop per role; a printer serving two roles still takes one job at a time (its link
 * is exclusive). Jobs for a role nobody serves wait, reported (NO_PRINTER_FOR_ROLE).
 */
function buildSpooler(settings: AgentSettings, store: JobStore, printers: PrinterRoom[]): Spooler {
  return new Spooler({
    store,
    printers: printers.flatMap(({ settings: p, printer, monitor }) =>
      p.roles.map((role) => ({ id: role, printer, profile: p.profile, monitor })),
    ),
    receiptOptions: settings.receipt,
    lateAfterMs: settings.lateAfterMinutes === null ? null : settings.lateAfterMinutes * 60_000,
    ...(settings.freshness?.timeZone !== undefined
      ? { timeZone: settings.freshness.timeZone }
      : {}),
    interruptedPolicy: settings.interruptedPolicy,
    renderTestPage: (profile) => renderTestPage(profile, settings.receipt, VERSION),
    drawer: settings.drawer ?? null,
  });
}

/** The longest the local API waits for the broker's first answer before it opens anyway. */
const CONSOLE_AFTER_MS = 1000;

/**
 * Resolves when the online status has reached the broker, the first connection attempt failed,
 * or `ms` passed, whichever comes first.
 */
function firstAnswer(mqtt: MqttRoom, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      mqtt.connection.off('offline', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    mqtt.connection.once('offline', done);
    mqtt.reporter.firstStatus.then(done, done);
  });
}

/**
 * print-protocol v1.1 §4: whether the clock can be trusted for createTime ages (the inbox's
 * freshness rule, catch-up's stale rule), read once now and refreshed in the background after.
 */
async function readClock(mode: FreshnessSettings['clock'], log: Logger): Promise<ClockSync> {
  const clock = new ClockSync({ mode });
  const reading = await clock.refresh();
  log.info(
    { clock: reading.source, synchronized: reading.synchronized },
    `clock: ${reading.detail}`,
  );
  return clock;
}

/**
 * The broker connection with the inbox behind it (open, store, then ack) and the reporter in
 * front (events and status out). Nothing is connected yet: listeners are in place before the
 * first message can come.
 */
function mqttRoom(
  settings: AgentSettings,
  rooms: {
    store: JobStore;
    health: Health;
    clock: ClockSource;
    freshness: FreshnessSettings;
    catchUp: CatchUpPoller | null;
  },
  log: Logger,
): MqttRoom {
  const { store, health, clock, freshness, catchUp } = rooms;
  const t = topics(settings.mqtt.prefix, settings.storeId);
  const mlog = log.child({ room: 'mqtt' });
  const connection = new MqttConnection(
    {
      ...settings.mqtt,
      // Named in the warning about a lost session: whether catch-up will fill the gap.
      catchUp: catchUp !== null,
      // MQTT 5: the broker drops what is larger instead of sending it (print-protocol §9).
      maxPacketBytes: mqttMaxPacketBytes(settings.mqtt.maxMessageBytes),
      subscriptions: [t.print, t.command],
      will: {
        topic: t.status,
        payload: JSON.stringify(lastWill(settings.storeId)),
      },
    },
    mlog,
  );
  const reporter = new Reporter(
    store,
    connection,
    {
      topics: t,
      storeId: settings.storeId,
      statusIntervalMs: settings.statusIntervalMs,
      status: () => health.status(),
      storeFault: (error) => health.storeFault(error),
    },
    mlog,
  );
  health.on('change', () => reporter.publishStatusSoon());
  const inbox = new Inbox(
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
      ...(settings.routing ? { routing: settings.routing } : {}),
    },
    {
      statusRequested: () => reporter.publishStatusSoon(true),
      storeFault: (error) => health.storeFault(error),
    },
    mlog,
  );
  connection.on('message', (topic, payload, settle) => {
    inbox.handle(topic, payload).then(settle, () => settle('hold'));
  });
  connection.on('connect', (sessionPresent) => {
    reporter.connectedSoon();
    // The broker kept nothing for us (new or expired session, broker restarted without
    // persistence): what it had queued is lost, the query API fills the gap (guarantee 7).
    if (!sessionPresent) catchUp?.sessionLost();
  });
  connection.on('offline', () => mlog.warn('broker offline; retrying with backoff'));
  return { connection, inbox, reporter };
}

/** The catch-up poller with its signed query client (print-protocol §8). */
function catchUpPoller(
  settings: AgentSettings,
  c: CatchUpSettings,
  store: JobStore,
  { clock, antiReplayAgeMs }: { clock: ClockSource; antiReplayAgeMs: number },
  log: Logger,
): CatchUpPoller {
  // The client's settings; the rest are the poller's own options.
  const {
    storePrivateKeyFile,
    caFile,
    baseUrl,
    timeoutMs,
    responseSignature,
    allowInsecureHttp,
    allowV1Signatures,
    ...poller
  } = c;
  const client = new QueryClient({
    baseUrl,
    appId: settings.appId,
    storeKey: settings.storeKey,
    key: loadKeyFile(storePrivateKeyFile, 'private'),
    scheme: settings.keys.scheme,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    // print-protocol §8: answers verified with the service key, the CA pinned if given.
    serviceKey: loadKeyFile(settings.keys.servicePublicKeyFile, 'public'),
    responseSignature: responseSignature ?? 'required',
    ...(caFile !== undefined ? { ca: loadCaFile(caFile).pem } : {}),
    allowInsecureHttp: allowInsecureHttp === true,
    // v1.2 §10: answers signed for this request and this store (the inbox's storeId too).
    storeId: settings.storeId,
    allowV1Signatures: allowV1Signatures === true,
  });
  return new CatchUpPoller(
    client,
    store,
    {
      ...poller,
      clockSync: clock,
      antiReplayAgeMs,
      ...(settings.routing ? { routing: settings.routing } : {}),
    },
    log,
  );
}
