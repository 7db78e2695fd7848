/**
 * The reporter: job events and status leave through the durable outbox (guarantee 6). It drains
 * the outbox to `/job` (QoS 1) in order and removes a row only after its PUBACK, publishes the
 * retained `/status` on every change, on every (re)connect and every `statusIntervalMs`, and
 * publishes the offline status on a graceful stop (the retained last will covers a crash).
 *
 * Nothing here rejects (reliability guarantee 11): its calls are fired and forgotten from timers
 * and events, so a failure (the broker gone, the store unreadable while the status is built) is
 * logged and tried again later, never an unhandled rejection that would end the daemon.
 */
import { type AgentError, errorMessage, isAgentError } from '../errors.js';
import { faultPoint } from '../jobs/fault-points.js';
import type { JobStore } from '../jobs/store.js';
import type { Logger } from '../logging.js';
import { type AgentStatus, lastWill } from '../protocol/print-protocol.js';
import type { MqttConnection } from './connection.js';

export interface ReporterOptions {
  topics: { job: string; status: string };
  storeId: string;
  statusIntervalMs: number;
  /** Builds the current status (printers, queues, fault) when it is published. */
  status(): AgentStatus;
  /** The outbox could not be read or written (`error`), or can again (null). */
  storeFault?(error: AgentError | null): void;
}

/** While the store refuses the outbox, the drain is tried again this often (no event wakes it). */
const STORE_RETRY_MS = 5000;
/** Entries read from the outbox at a time. */
const OUTBOX_BATCH = 50;
/** Published entries no commit removed are deleted after this long (store/outbox.ts). */
const SWEEP_MS = 1000;

export class Reporter {
  private draining = false;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private lastStatus = '';
  private storeFailing = false;
  private retryTimer: NodeJS.Timeout | null = null;
  /** After stop(), only offline() speaks: a status built while the agent shuts down would race
   * the offline status and the disconnect ("client disconnecting" in the journal at every stop). */
  private stopped = false;
  private wake: NodeJS.Immediate | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;
  private statusOut: () => void = () => {};
  /** Resolves once a status has been published (the broker took the first `online`). */
  readonly firstStatus = new Promise<void>((resolve) => {
    this.statusOut = resolve;
  });
  /**
   * Woken by the store's commits, the drain runs after the code that committed has gone on (the
   * spooler sends its bytes first: publishing is off the print's path, issue 16), and once for
   * every commit of that turn.
   */
  private readonly onOutbox = () => {
    this.wake ??= setImmediate(() => {
      this.wake = null;
      void this.drain();
    });
  };

  constructor(
    private readonly store: JobStore,
    private readonly connection: MqttConnection,
    private readonly options: ReporterOptions,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.stopped = false;
    this.store.off('outbox', this.onOutbox);
    this.store.on('outbox', this.onOutbox);
    this.timer = setInterval(() => this.publishStatusSoon(true), this.options.statusIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    this.store.off('outbox', this.onOutbox);
    if (this.wake) clearImmediate(this.wake);
    this.wake = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.sweepTimer) clearTimeout(this.sweepTimer);
    this.sweepTimer = null;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  /** `connected()` from an event: never rejects. */
  connectedSoon(): void {
    this.connected().catch((error: unknown) =>
      this.log.error({ err: errorMessage(error) }, 'reporting failed'),
    );
  }

  /** On (re)connect: the status first (it is what a dashboard reads), then the backlog. */
  async connected(): Promise<void> {
    await this.publishStatus(true);
    await this.drain();
  }

  /** Fire and forget, from timers and events: never rejects. */
  publishStatusSoon(force = false): void {
    this.publishStatus(force).catch((error: unknown) =>
      this.log.error({ err: errorMessage(error) }, 'status not published'),
    );
  }

  /** Publishes the status if it changed (or always with `force`). Never rejects. */
  async publishStatus(force = false): Promise<void> {
    if (this.stopped || !this.connection.connected) return;
    let status: AgentStatus;
    try {
      status = this.options.status();
    } catch (error) {
      // The agent's status() reports store errors itself; this is the last line of defence.
      this.log.error({ err: errorMessage(error) }, 'status not built');
      return;
    }
    // `at` changes every time; compare the rest.
    const key = JSON.stringify({ ...status, at: null });
    if (!force && key === this.lastStatus) return;
    try {
      await this.connection.publish(this.options.topics.status, JSON.stringify(status), {
        retain: true,
      });
      this.lastStatus = key;
      this.statusOut();
    } catch (error) {
      this.log.warn({ err: errorMessage(error) }, 'status not published');
    }
  }

  /** Sends every queued job event in order; stops at the first failure and resumes later. */
  async drain(): Promise<void> {
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = true;
    try {
      do {
        this.again = false;
        while (this.connection.connected) {
          const batch = this.store.drainOutbox(OUTBOX_BATCH);
          if (batch.length === 0) break;
          // One at a time, each after the previous PUBACK: a broker without TCP_NODELAY
          // (Mosquitto's default) holds back its PUBACKs for pipelined publishes until the
          // delayed ACK, 40 ms per round (measured, issue 16). The stored JSON goes out as it is.
          // What the broker acknowledged is deleted with the next commit or by the sweep
          // (store/outbox.ts); a crash before that only re-sends (at-least-once; the eventId lets
          // a reader dedupe).
          let published = 0;
          try {
            for (const entry of batch) {
              await this.connection.publish(
                entry.kind === 'job' ? this.options.topics.job : this.options.topics.status,
                entry.json,
                { retain: entry.kind === 'status' },
              );
              published = entry.id;
              faultPoint('outbox-after-publish');
            }
          } finally {
            if (published > 0) {
              this.store.acknowledgeOutbox(published);
              this.sweepSoon();
            }
          }
          // A short batch was all there was when it was read; an entry committed since then by
          // this process woke the drain (`again`), so reading once more would find nothing but
          // cost a query per wake (issue 16). Another process's entries (the CLI) wait for the
          // next wake, as they always did between drains.
          if (batch.length < OUTBOX_BATCH) break;
        }
      } while (this.again && this.connection.connected);
      if (this.storeFailing) {
        this.storeFailing = false;
        this.options.storeFault?.(null);
      }
    } catch (error) {
      if (isAgentError(error) && (error.code === 'STORE_FULL' || error.code === 'STORE_FAILED')) {
        // The store, not the broker: shown in the status, and tried again on a timer, since no
        // outbox event or reconnect may come to wake the drain (reliability guarantee 11).
        if (!this.storeFailing)
          this.log.error(
            { code: error.code, err: error.message },
            'cannot use the outbox: job events wait',
          );
        this.storeFailing = true;
        this.options.storeFault?.(error);
        this.retryTimer ??= setTimeout(() => {
          this.retryTimer = null;
          void this.drain();
        }, STORE_RETRY_MS);
        this.retryTimer.unref();
      } else {
        this.log.warn(
          { err: errorMessage(error) },
          'job events not published yet; retrying after reconnect',
        );
      }
    } finally {
      this.draining = false;
    }
  }

  /**
   * Acknowledged entries not deleted by a commit within a second (no job moved) are deleted then,
   * so a restart does not publish them again.
   */
  private sweepSoon(): void {
    if (this.sweepTimer || this.stopped) return;
    this.sweepTimer = setTimeout(() => {
      this.sweepTimer = null;
      this.sweep();
    }, SWEEP_MS);
    this.sweepTimer.unref();
  }

  private sweep(): void {
    try {
      this.store.sweepOutbox();
    } catch (error) {
      // Left for the next commit or sweep; published again after a restart at worst.
      this.log.warn({ err: errorMessage(error) }, 'published job events not removed yet');
    }
  }

  /** Graceful stop: what is left in the outbox stays for next time; the status says offline. */
  async offline(): Promise<void> {
    await this.drain();
    this.sweep();
    if (!this.connection.connected) return;
    const offline = { ...lastWill(this.options.storeId), at: new Date().toISOString() };
    await this.connection
      .publish(this.options.topics.status, JSON.stringify(offline), { retain: true })
      .catch(() => undefined);
  }
}
