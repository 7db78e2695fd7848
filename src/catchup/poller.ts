/**
 * The catch-up poller (print-protocol §8, reliability guarantee 7): pulls the store's orders
 * through the query API when MQTT may have missed some, and hands them to the job store, which
 * dedupes them with MQTT deliveries by orderNo.
 *
 * When a round runs:
 * - at start when the job store has no cursor yet (first start);
 * - when the broker connection comes up without our session (`sessionPresent` false): whatever
 *   the broker had queued for us is gone;
 * - every `intervalMs` after the previous round, as the safety net for everything else;
 * - a request during a round runs one more round after it (the running one may have read its
 *   pages before the loss happened).
 *
 * What a round does:
 * 1. With a cursor (the last order number seen): incremental query after it, every page, the
 *    cursor moving with each stored order in the same transaction. Then the trailing window:
 *    a time-range query over the last `windowMs`, every page, for orders the service lists late
 *    (order-api §8: up to 5 minutes); it never moves the cursor.
 * 2. Without a cursor (first start), or when the service does not know the cursor (40006 from the
 *    reference service): a time-range query over the last `maxAgeMs`, every page, which also sets
 *    the cursor. Older orders would all be stale anyway.
 * Queries are spaced at least `minIntervalMs` apart, pages and rounds included, measured from the
 * end of one answer to the start of the next request. Orders are taken in the order the service
 * lists them (createTime ascending), so the queue prints oldest first. An order older than
 * `maxAgeMs` (createTime against now, both in the service's time zone) is stored `failed` with
 * STALE_ORDER and reported, not printed. A round's error is logged; the next round tries again.
 *
 * What a round trusts (print-protocol v1.1 §8): only pages the client authenticated (a verified
 * response signature, or verified https with signatures off). The client refuses anything else
 * whole, so an unauthenticated answer stores nothing and moves no cursor; the page's
 * `authenticated` mark is checked again here so that no other `QueryApi` can slip records in. A
 * record for another restaurant or branch (when `restaurantNo` / `branchIdentifier` are known) is
 * reported `rejected` (IDENTITY_MISMATCH), never printed, and does not move the cursor: its
 * orderInnerNo is a position in someone else's list, and "after it" could skip orders of ours.
 * With the lab switch (http to a non-loopback host) every round starts with a warning. With
 * version 1 signatures allowed (v1.2 §10: the body alone, not bound to the request) every round
 * ends with one, saying how many of its answers were version 1.
 */
import { EventEmitter } from 'node:events';
import { AgentError, errorMessage, isAgentError } from '../errors.js';
import type { ClockSource } from '../host/clock-sync.js';
import {
  DEFAULT_ROUTING,
  namedRoute,
  type RoutableOrder,
  type RoutingRule,
  routableInstruction,
  routableRecord,
  routeOrder,
} from '../jobs/routing.js';
import type { JobStore } from '../jobs/store.js';
import { belowTimeFloor } from '../jobs/time-floor.js';
import type { Logger } from '../logging.js';
import { ANTI_REPLAY_DEFAULT_DAYS } from '../protocol/limits.js';
import type { OrderRecord } from '../protocol/order-record.js';
import { DEFAULT_PRINTER_ROLE, storedInstructionSchema } from '../protocol/print-protocol.js';
import { formatTimestamp, formatWallClock, wallClockMs } from '../protocol/time.js';
import { type Clock, systemClock } from './clock.js';
import {
  type PageEntry,
  type QueryApi,
  type QueryPage,
  type QueryRequest,
  START_ORDER_UNKNOWN_CODE,
} from './query-client.js';

export { START_ORDER_UNKNOWN_CODE };
/**
 * Time ranges end this far after "now": an agent clock a little behind the service's must not
 * hide the newest orders. Harmless: the service has no orders from the future.
 */
export const CLOCK_SKEW_ALLOWANCE_MS = 5 * 60_000;
/** Meta key of the time of the last answer, so the spacing holds across restarts too. */
const LAST_QUERY_KEY = 'catch-up.lastQueryAt';
/** Malformed records reported once per process each, not once per round. */
const REPORTED_LIMIT = 1000;

export type CatchUpStore = Pick<
  JobStore,
  | 'getCatchUpCursor'
  | 'setCatchUpCursor'
  | 'clearCatchUpCursor'
  | 'enqueueOrder'
  | 'getReceipt'
  | 'timeFloor'
  | 'recordEvent'
  | 'getMeta'
  | 'setMeta'
>;

export interface PollerOptions {
  intervalMs: number;
  /** At least 10 s (order-api §8), between any two queries. */
  minIntervalMs: number;
  /** At most 100 (order-api §8). */
  pageSize: number;
  maxAgeMs: number;
  windowMs: number;
  /** IANA zone of the service's createTime; default the host's zone. */
  timeZone?: string;
  /** A printer role every catch-up order goes to, instead of the routing rules (tests). */
  printer?: string;
  /** The store's routing rules (issue 18); default: the payment receipt on the receipt role. */
  routing?: readonly RoutingRule[];
  /** This store's restaurantNo and branchIdentifier at the service: other records are refused. */
  restaurantNo?: string;
  branchIdentifier?: string;
  clock?: Clock;
  /**
   * Whether the system clock can be trusted (src/host/clock-sync.ts). While it cannot, the stale
   * rule is skipped and the record's `queued` event says so (CLOCK_UNSYNCHRONIZED): judging
   * createTime by a wrong clock would store paid orders `failed` (print-protocol v1.1 §4: the
   * agent's own clock never drops a receipt). Absent: trusted (unit tests on a virtual clock).
   */
  clockSync?: ClockSource;
  /**
   * The anti-replay age (freshness.maxAgeDays): while the clock cannot be trusted, a record older
   * than the newest authenticated createTime by more than this is refused (v1.2 §10 time floor,
   * src/jobs/time-floor.ts). Default 7 days.
   */
  antiReplayAgeMs?: number;
}

export type RoundReason = 'first-start' | 'session-lost' | 'schedule' | 'requested';

export interface RoundSummary {
  reason: RoundReason;
  /** How the round read: incremental after the cursor (plus the window), or by time range. */
  mode: 'after-order' | 'time-range' | null;
  queries: number;
  orders: number;
  queued: number;
  duplicates: number;
  stale: number;
  rejected: number;
  cursor: string | null;
  error: AgentError | null;
}

interface PollerEvents {
  round: [summary: RoundSummary];
}

class Stopped extends Error {}

export class CatchUpPoller extends EventEmitter<PollerEvents> {
  private readonly clock: Clock;
  private readonly stopper = new AbortController();
  private wake: AbortController | null = null;
  private pending: RoundReason | null = null;
  private inRound = false;
  private lastQueryAt: number | null = null;
  private loop: Promise<void> | null = null;
  private readonly reported = new Set<string>();
  /** Answers of the running round signed version 1 (v1.2 §10). */
  private v1Answers = 0;

  constructor(
    private readonly client: QueryApi,
    private readonly store: CatchUpStore,
    private readonly options: PollerOptions,
    private readonly log: Logger,
  ) {
    super();
    this.clock = options.clock ?? systemClock;
  }

  /** Starts the loop; the first round runs at once when there is no cursor yet. */
  start(): void {
    if (this.loop) return;
    // Said at start as well as every round: the first round may be an interval away.
    const warning = this.client.transportWarning;
    if (warning) this.log.warn({ at: 'start' }, warning);
    try {
      if (this.store.getCatchUpCursor() === null) this.pending = 'first-start';
      // A restart (systemd restarts after 2 s) must not query sooner than the spacing allows.
      const last = Number(this.store.getMeta(LAST_QUERY_KEY));
      if (Number.isFinite(last) && last > 0) this.lastQueryAt = last;
    } catch (error) {
      // An unreadable store now is a failed round later, with the same message: run one.
      this.log.warn({ err: errorMessage(error) }, 'cannot read the catch-up cursor');
      this.pending = 'first-start';
    }
    this.loop = this.run().catch((error: unknown) => {
      // round() catches everything it does; this is a bug, not an outage. Logged, not thrown:
      // catch-up is the safety net and must never take the daemon down.
      this.log.error({ err: errorMessage(error) }, 'catch-up stopped');
    });
  }

  /** The broker did not resume our session: what it held for us is lost. */
  sessionLost(): void {
    this.request('session-lost');
  }

  /** Runs a round as soon as the query spacing allows (after the running one, if any). */
  request(reason: RoundReason = 'requested'): void {
    if (this.stopper.signal.aborted) return;
    this.pending ??= reason;
    this.wake?.abort();
  }

  /** Stops between two steps: an answer in flight is abandoned, nothing half-written. */
  async stop(): Promise<void> {
    this.stopper.abort();
    this.wake?.abort();
    await this.loop;
  }

  /** A round is running or due to run. */
  get busy(): boolean {
    return this.inRound || this.pending !== null;
  }

  private get stopped(): boolean {
    return this.stopper.signal.aborted;
  }

  private async run(): Promise<void> {
    let nextAt = this.clock.now() + this.options.intervalMs;
    while (!this.stopped) {
      if (this.pending === null && this.clock.now() < nextAt) {
        const wake = new AbortController();
        this.wake = wake;
        await this.clock.sleep(nextAt - this.clock.now(), wake.signal);
        this.wake = null;
        continue;
      }
      const reason = this.pending ?? 'schedule';
      this.pending = null;
      this.inRound = true;
      const summary = await this.round(reason);
      if (this.stopped) break;
      nextAt = this.clock.now() + this.options.intervalMs;
      this.inRound = false;
      try {
        this.emit('round', summary);
      } catch (error) {
        this.log.warn({ err: errorMessage(error) }, 'a round listener failed');
      }
    }
  }

  private async round(reason: RoundReason): Promise<RoundSummary> {
    const summary: RoundSummary = {
      reason,
      mode: null,
      queries: 0,
      orders: 0,
      queued: 0,
      duplicates: 0,
      stale: 0,
      rejected: 0,
      cursor: null,
      error: null,
    };
    // The lab switch is loud on purpose: every round, not once at start.
    const warning = this.client.transportWarning;
    if (warning && !this.stopped) this.log.warn({ reason }, warning);
    this.v1Answers = 0;
    try {
      const cursor = this.store.getCatchUpCursor();
      let incremental = cursor !== null;
      if (cursor !== null) {
        summary.mode = 'after-order';
        try {
          await this.readAll(() => ({ orderInnerNo: cursor }), summary, true);
        } catch (error) {
          if (!isStartUnknown(error)) throw error;
          // The service has no such order (its database was replaced, or we were pointed at
          // another service): a cursor it does not know can never move again.
          this.log.warn(
            { cursor },
            'the order service does not know the catch-up cursor; reading by time range instead',
          );
          this.store.clearCatchUpCursor();
          incremental = false;
        }
      }
      if (incremental) {
        await this.readAll(() => this.range(this.options.windowMs), summary, false);
      } else {
        summary.mode = 'time-range';
        await this.readAll(() => this.range(this.options.maxAgeMs), summary, true);
      }
    } catch (error) {
      if (!(error instanceof Stopped) && !this.stopped) {
        summary.error = isAgentError(error)
          ? error
          : new AgentError('QUERY_FAILED', `catch-up round failed: ${String(error)}`, {
              cause: error,
            });
      }
    }
    try {
      summary.cursor = this.store.getCatchUpCursor();
    } catch {
      // Reported through the round's own error, if the store is down.
    }
    this.report(summary);
    // Accepting version 1 is loud on purpose too: every round, with what it accepted.
    const unbound = this.client.signatureWarning;
    if (unbound && !this.stopped)
      this.log.warn({ reason, v1Answers: this.v1Answers, queries: summary.queries }, unbound);
    return summary;
  }

  private report(s: RoundSummary): void {
    if (this.stopped) return;
    const facts = {
      reason: s.reason,
      mode: s.mode,
      queries: s.queries,
      orders: s.orders,
      queued: s.queued,
      duplicates: s.duplicates,
      stale: s.stale,
      rejected: s.rejected,
      cursor: s.cursor,
    };
    if (s.error) {
      this.log.warn(
        { ...facts, err: s.error.message, code: s.error.code },
        'catch-up round failed; the next round tries again',
      );
    } else if (s.queued + s.stale + s.rejected > 0) {
      this.log.info(facts, 'catch-up round found missed orders');
    } else {
      this.log.debug(facts, 'catch-up round: nothing missed');
    }
  }

  /**
   * Every page of one query, in order; records go to the store as each page arrives. The mode is
   * made when the first page may be asked for (after the spacing), so a time range ends at the
   * real "now", and then stays the same for every page.
   */
  private async readAll(
    makeMode: () => { orderInnerNo: string } | { startTime: string; endTime: string },
    summary: RoundSummary,
    advanceCursor: boolean,
  ): Promise<void> {
    const pageSize = this.options.pageSize;
    let mode: ReturnType<typeof makeMode> | null = null;
    for (let pageNum = 1; ; pageNum++) {
      await this.spacing();
      mode ??= makeMode();
      const page = await this.query({ ...mode, pageNum, pageSize }, summary);
      if (page.authenticated !== 'signature' && page.authenticated !== 'tls')
        throw new AgentError('QUERY_REJECTED', 'catch-up: a page that was not authenticated', {
          details: { refused: 'unauthenticated' },
        });
      if (page.entries.length > pageSize)
        throw new AgentError(
          'QUERY_REJECTED',
          `catch-up: ${page.entries.length} records on a page of ${pageSize}: refused whole`,
          { details: { refused: 'too-many-records' } },
        );
      for (const entry of page.entries) this.take(entry, summary, advanceCursor);
      // The service's own pageSize decides where pages end (it might cap ours).
      const size = page.pageSize > 0 ? page.pageSize : pageSize;
      if (page.entries.length === 0 || page.entries.length < size) return;
      if (pageNum * size >= page.total) return;
    }
  }

  /** Waits until a query may go: `minIntervalMs` after the previous answer. */
  private async spacing(): Promise<void> {
    if (this.lastQueryAt !== null) {
      // Capped: a clock set back must not stall catch-up for the size of the jump.
      const wait = Math.min(
        this.options.minIntervalMs,
        this.lastQueryAt + this.options.minIntervalMs - this.clock.now(),
      );
      if (wait > 0) await this.clock.sleep(wait, this.stopper.signal);
    }
    if (this.stopped) throw new Stopped();
  }

  /** One query, right after `spacing()`. */
  private async query(request: QueryRequest, summary: RoundSummary): Promise<QueryPage> {
    if (this.stopped) throw new Stopped();
    summary.queries++;
    try {
      const page = await this.client.query(request, this.stopper.signal);
      if (page.signedVersion === 1) this.v1Answers++;
      return page;
    } finally {
      this.lastQueryAt = this.clock.now();
      try {
        this.store.setMeta(LAST_QUERY_KEY, String(this.lastQueryAt));
      } catch {
        // Only the spacing across a restart depends on it; the round reports store trouble.
      }
    }
  }

  private take(entry: PageEntry, summary: RoundSummary, advanceCursor: boolean): void {
    if (this.stopped) throw new Stopped();
    summary.orders++;
    if (!entry.ok) {
      this.reject(entry, summary);
      if (advanceCursor && entry.orderNo !== null) this.store.setCatchUpCursor(entry.orderNo);
      return;
    }
    const record = entry.record;
    const foreign = this.foreign(record);
    if (foreign) {
      // Not ours: reported, never stored as a job, and the cursor stays (see the file comment).
      this.reject({ ok: false, orderNo: record.orderInnerNo, problem: foreign }, summary, {
        code: 'IDENTITY_MISMATCH',
        message: `order record: ${foreign}; not printed`,
      });
      return;
    }
    const reading = this.options.clockSync?.current();
    const trusted = reading === undefined || reading.synchronized;
    const stale = trusted
      ? this.staleness(record.createTime)
      : belowTimeFloor(
          record.createTime,
          this.store.timeFloor(),
          this.options.antiReplayAgeMs ?? ANTI_REPLAY_DEFAULT_DAYS * 86_400_000,
          'freshness.maxAgeDays',
        );
    // The same routing as an instruction's (issue 18): one job per role, deduped per order and
    // role, so an order MQTT already brought prints nothing twice.
    const rules = this.options.routing ?? DEFAULT_ROUTING;
    const named = this.options.printer !== undefined;
    const routes = named
      ? [namedRoute(this.options.printer!, rules)]
      : routeOrder(this.routable(record), rules);
    const results = this.store.enqueueOrder({ kind: 'record', record }, routes, {
      named,
      advanceCursor,
      ...(stale ? { failed: stale } : {}),
      ...(trusted
        ? {}
        : {
            warnings: [
              {
                code: 'CLOCK_UNSYNCHRONIZED',
                message: `${reading.detail}: the age of createTime ${record.createTime} was not checked (catchUp.maxAgeMinutes)`,
              },
            ],
          }),
    });
    const stored = results.flatMap(({ result }) => (result.status === 'inserted' ? [result] : []));
    if (stored.length === 0) {
      // Quiet (decision 46): the window overlaps itself every round, and MQTT usually won.
      summary.duplicates++;
      return;
    }
    // `id`: the first job's row (the receipt's, with the default routing); `ids` when several.
    const ids =
      stored.length === 1 ? { id: stored[0]!.job.id } : { ids: stored.map((r) => r.job.id) };
    if (stale) {
      summary.stale++;
      this.log.warn(
        { orderNo: record.orderInnerNo, createTime: record.createTime, ...ids },
        'stale order reported, not printed',
      );
    } else {
      summary.queued++;
      this.log.info(
        {
          orderNo: record.orderInnerNo,
          createTime: record.createTime,
          ...ids,
          printers: stored.map((r) => r.job.printer),
        },
        'missed order queued by catch-up',
      );
    }
  }

  /** Why a record belongs to another restaurant or branch, or null when it is ours (or unknown). */
  private foreign(record: { restaurantNo: string; branchIdentifier: string }): string | null {
    const { restaurantNo, branchIdentifier } = this.options;
    if (restaurantNo !== undefined && record.restaurantNo !== restaurantNo)
      return `restaurantNo ${clip(record.restaurantNo)} is not this store's ${restaurantNo} (catchUp.restaurantNo)`;
    if (branchIdentifier !== undefined && record.branchIdentifier !== branchIdentifier)
      return `branchIdentifier ${clip(record.branchIdentifier)} is not this store's ${branchIdentifier} (catchUp.branchIdentifier)`;
    return null;
  }

  /**
   * What routing reads of a record: when the order already came as an instruction, that
   * instruction (it has the order's type, which a record of another service lacks), so catch-up
   * adds no ticket the instruction's own routing left out (issue 40 item 1); else the record.
   */
  private routable(record: OrderRecord): RoutableOrder {
    const known = this.store.getReceipt(record.orderInnerNo);
    if (known?.payloadType === 'instruction' && known.payload !== null) {
      const instruction = storedInstructionSchema.safeParse(known.payload);
      if (instruction.success) return routableInstruction(instruction.data);
    }
    return routableRecord(record);
  }

  private reject(
    entry: Extract<PageEntry, { ok: false }>,
    summary: RoundSummary,
    reason: { code: 'PARAM_INVALID' | 'IDENTITY_MISMATCH'; message: string } = {
      code: 'PARAM_INVALID',
      message: `order record: ${entry.problem}`,
    },
  ): void {
    const key = `${reason.code}:${entry.orderNo ?? entry.problem}`;
    if (this.reported.has(key)) return;
    if (this.reported.size >= REPORTED_LIMIT) this.reported.clear();
    this.reported.add(key);
    summary.rejected++;
    this.log.warn(
      { orderNo: entry.orderNo, problem: entry.problem, code: reason.code },
      'order record from the query API rejected',
    );
    this.store.recordEvent({
      jobId: entry.orderNo === null ? null : `catch-up:${entry.orderNo}`,
      orderNo: entry.orderNo,
      state: 'rejected',
      printer: this.options.printer ?? DEFAULT_PRINTER_ROLE,
      attempt: 0,
      at: new Date(this.clock.now()).toISOString(),
      reason,
    });
  }

  /** "Now" as a wall-clock value in the service's zone (what createTime is written in). */
  private serviceNow(): number {
    return wallClockMs(formatTimestamp(new Date(this.clock.now()), this.options.timeZone))!;
  }

  /** A time range over the last `spanMs`, ending a little after now (clock skew). */
  private range(spanMs: number): { startTime: string; endTime: string } {
    const now = this.serviceNow();
    return {
      startTime: formatWallClock(now - spanMs),
      endTime: formatWallClock(now + CLOCK_SKEW_ALLOWANCE_MS),
    };
  }

  private staleness(createTime: string): { code: 'STALE_ORDER'; message: string } | null {
    const created = wallClockMs(createTime);
    if (created === null) return null;
    const ageMs = this.serviceNow() - created;
    if (ageMs <= this.options.maxAgeMs) return null;
    const minutes = Math.floor(ageMs / 60_000);
    const limit = Math.round(this.options.maxAgeMs / 60_000);
    return {
      code: 'STALE_ORDER',
      message: `created ${createTime} (service time), ${minutes} min before catch-up found it; older than ${limit} min (catchUp.maxAgeMinutes): not printed, \`printer-agent jobs retry\` prints it`,
    };
  }
}

/** A value from a record, bounded for a message. */
function clip(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}

function isStartUnknown(error: unknown): boolean {
  return (
    isAgentError(error) &&
    error.code === 'QUERY_REJECTED' &&
    error.details.responseCode === START_ORDER_UNKNOWN_CODE
  );
}
