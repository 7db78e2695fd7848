/**
 * The inbox: every message on `/print` and `/command` is opened (size, signature over the raw
 * param, identity, `storeId` in the signed param, schema: print-protocol §3, v1.1 §4), stored, and
 * only then acknowledged. Nothing prints here: the spooler prints from the store.
 *
 * Freshness (print-protocol v1.1 §4): while the system clock is known to be synchronized, an
 * instruction whose createTime (service time) is older than the anti-replay age is stored `failed`
 * (STALE_ORDER), reported and not printed; a younger late one prints, marked LATE by the spooler's
 * own rule (stored long before printing, decision 55: createTime's zone is only configured, and a
 * zone or clock error of an hour must not mark every receipt LATE). While the clock is not known to be
 * synchronized the age is not checked and the `queued` event says so (CLOCK_UNSYNCHRONIZED): a
 * wrong clock never drops a receipt. The clock's state is a cached reading: no process is spawned
 * on the ack path. A duplicate is a duplicate before any of this.
 *
 * - Stored or found duplicate: ack (a duplicate is answered with a `duplicate` job event).
 * - Rejected (forged, tampered, wrong store, oversize, malformed): recorded as a `rejected` job
 *   event and acked, so a poison message cannot loop (guarantee 8). Never printed.
 * - The store cannot take it (disk full, database error): not acked, and the agent reports the
 *   fault; the broker keeps the message (guarantee 11).
 *
 * Once a message's outcome is committed, the inbox announces refusals and duplicates (`rejected`,
 * `duplicate`): the metrics count them (issue 42 item 7).
 */

import { EventEmitter } from 'node:events';
import { AgentError } from '../errors.js';
import type { ClockReading, ClockSource } from '../host/clock-sync.js';
import { faultPoint } from '../jobs/fault-points.js';
import type { JobReason } from '../jobs/job.js';
import {
  DEFAULT_ROUTING,
  namedRoute,
  type Route,
  type RoutingRule,
  routableInstruction,
  routedJobId,
  routeOrder,
} from '../jobs/routing.js';
import type { InsertResult, JobStore } from '../jobs/store.js';
import { belowTimeFloor } from '../jobs/time-floor.js';
import type { Logger } from '../logging.js';
import { type Opened, openEnvelope } from '../protocol/envelope.js';
import { ANTI_REPLAY_DEFAULT_DAYS, mqttMaxPacketBytes } from '../protocol/limits.js';
import {
  type Command,
  commandSchema,
  type InboundInstruction,
  inboundInstructionSchema,
  type NewJobEvent,
} from '../protocol/print-protocol.js';
import type { RsaKey, SignatureScheme } from '../protocol/signing.js';
import { formatTimestamp, wallClockMs } from '../protocol/time.js';
import { type Disposition, RECEIVE_MAXIMUM } from './connection.js';

export const DEFAULT_FRESHNESS_MAX_AGE_MS = ANTI_REPLAY_DEFAULT_DAYS * 24 * 60 * 60_000;

export interface InboxOptions {
  appId: string;
  storeKey: string;
  /** This store's id (print-protocol §1): instructions and commands must name it (v1.1 §4). */
  storeId: string;
  serviceKey: RsaKey;
  scheme: SignatureScheme;
  maxBytes: number;
  topics: { print: string; command: string };
  /** The anti-replay age (v1.1 §4); default 7 days. */
  maxAgeMs?: number;
  /** IANA zone createTime is written in (the service's); default the host's. */
  timeZone?: string;
  /** Whether the system clock can be trusted now; default: never (the rule is skipped). */
  clock?: ClockSource;
  now?: () => number;
  /** The store's routing rules (issue 18); default: the payment receipt on the receipt role. */
  routing?: readonly RoutingRule[];
}

const UNKNOWN_CLOCK: ClockSource = {
  current: () => ({
    synchronized: false,
    source: 'none',
    detail: 'no clock source configured',
    at: 0,
  }),
};

/** What freshness decided for an instruction: how to store it. */
interface Freshness {
  failed?: JobReason;
  warnings?: JobReason[];
}

export interface InboxHooks {
  /** A `status` command: publish a fresh status now. */
  statusRequested(): void;
  /** The store failed (disk full...): the status should say so until a write succeeds again. */
  storeFault(error: AgentError | null): void;
}

export interface InboxEvents {
  /**
   * A message that will never print, committed: rejected (forged, wrong store, too large,
   * malformed) or an instruction stored failed as a replay (STALE_ORDER). One per message.
   */
  rejected: [reason: JobReason];
  /** An instruction (per role) or command already stored, answered `duplicate`, committed. */
  duplicate: [];
}

export class Inbox extends EventEmitter<InboxEvents> {
  private readonly clock: ClockSource;
  private readonly now: () => number;
  /** Whether the last instruction met a synchronized clock (logged when it changes). */
  private lastSynchronized: boolean | null = null;
  /** Messages of this turn, stored together by `flush`. */
  private readonly pending: Array<{
    topic: string;
    payload: Buffer;
    resolve: (disposition: Disposition) => void;
    reject: (error: unknown) => void;
  }> = [];
  /** During a flush: what runs once its commit is done. */
  private after: Array<() => void> | null = null;

  constructor(
    private readonly store: JobStore,
    private readonly options: InboxOptions,
    private readonly hooks: InboxHooks,
    private readonly log: Logger,
  ) {
    super();
    this.clock = options.clock ?? UNKNOWN_CLOCK;
    this.now = options.now ?? Date.now;
  }

  private event(partial: Partial<NewJobEvent> & Pick<NewJobEvent, 'state'>): NewJobEvent {
    return {
      jobId: null,
      orderNo: null,
      printer: null,
      attempt: 0,
      at: new Date().toISOString(),
      reason: null,
      ...partial,
    };
  }

  /**
   * Opens, stores and settles a message. The messages that arrive in one turn of the event loop
   * (a burst: up to the broker's in-flight window) are stored in one commit, each in a savepoint
   * of its own, and each settles after that commit (decision 211): one fsync for the burst
   * instead of one per message. A store that cannot commit settles every message of the turn
   * `hold`; a bug in one message's handling rejects that message alone.
   */
  handle(topic: string, payload: Buffer): Promise<Disposition> {
    return new Promise((resolve, reject) => {
      this.pending.push({ topic, payload, resolve, reject });
      // A broker that ignores the Receive Maximum cannot make a turn's commit (and the memory it
      // holds) larger than that: a full batch is stored at once.
      if (this.pending.length >= RECEIVE_MAXIMUM) this.flush();
      else if (this.pending.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const batch = this.pending.splice(0);
    const outcomes: Array<{ disposition: Disposition } | { error: unknown }> = [];
    const after: Array<() => void> = [];
    try {
      this.store.inOneCommit('storing messages', () => {
        for (const message of batch) {
          // This message's logs: kept only when its savepoint is.
          const mine: Array<() => void> = [];
          this.after = mine;
          try {
            const disposition = this.store.inOneCommit('storing a message', () =>
              this.process(message.topic, message.payload),
            );
            outcomes.push({ disposition });
            after.push(...mine);
          } catch (error) {
            if (isStoreError(error)) throw error;
            outcomes.push({ error });
          }
        }
      });
    } catch (error) {
      this.after = null;
      if (!isStoreError(error)) {
        for (const message of batch) message.reject(error);
        return;
      }
      this.log.error(
        { code: error.code, err: error.message, messages: batch.length },
        'cannot store the message: not acknowledged',
      );
      this.hooks.storeFault(error);
      for (const message of batch) message.resolve('hold');
      return;
    }
    this.after = null;
    this.hooks.storeFault(null);
    // What the messages' handling logs and triggers, once it is committed.
    for (const then of after) then();
    batch.forEach((message, i) => {
      const outcome = outcomes[i]!;
      if ('disposition' in outcome) message.resolve(outcome.disposition);
      else message.reject(outcome.error);
    });
  }

  /** Runs `then` after the commit of the message being stored (logs, a status request). */
  private later(then: () => void): void {
    if (this.after) this.after.push(then);
    else then();
  }

  private process(topic: string, payload: Buffer): Disposition {
    const kind =
      topic === this.options.topics.print
        ? 'print'
        : topic === this.options.topics.command
          ? 'command'
          : null;
    if (kind === null) {
      this.later(() => this.log.warn({ topic }, 'message on an unexpected topic ignored'));
      return 'ack';
    }
    const identity = { appId: this.options.appId, storeKey: this.options.storeKey };
    const common = {
      verifyKey: this.options.serviceKey,
      scheme: this.options.scheme,
      identity,
      storeId: this.options.storeId,
      maxBytes: this.options.maxBytes,
      // An oversized message is still verified (never parsed unsigned) up to the packet bound the
      // agent asks of the broker, so its rejection can name the job when the signature holds.
      verifyOversizeUpTo: mqttMaxPacketBytes(this.options.maxBytes),
    };
    if (kind === 'print') {
      const opened = openEnvelope(payload, { ...common, paramSchema: inboundInstructionSchema });
      if (!opened.ok) return this.reject(kind, opened);
      const instruction = opened.param;
      // Crash test only (fault matrix row 1): dies after receiving, before the commit: no ack.
      faultPoint('inbox-before-commit');
      const fresh = this.freshness(instruction);
      // print-protocol v1.1 §4: a named role prints only there; otherwise the store's routing.
      const rules = this.options.routing ?? DEFAULT_ROUTING;
      const named = instruction.printer !== undefined;
      const routes = named
        ? [namedRoute(instruction.printer!, rules)]
        : routeOrder(routableInstruction(instruction), rules);
      const results = this.store.enqueueOrder(
        { kind: 'instruction', instruction, raw: opened.envelope.param, source: 'mqtt' },
        routes,
        { named, ...fresh },
      );
      for (const { route, result } of results) this.noteStored(instruction, route, result, fresh);
      // A replay is one refused message, whatever number of roles it was stored failed for.
      const failed = fresh.failed;
      if (failed && results.some(({ result }) => result.status !== 'duplicate'))
        this.later(() => this.emit('rejected', failed));
      return 'ack';
    }
    const opened = openEnvelope(payload, { ...common, paramSchema: commandSchema });
    if (!opened.ok) return this.reject(kind, opened);
    return this.command(opened.param, opened.envelope.param);
  }

  /** Logs one route's outcome; a duplicate is answered with its event (print-protocol §4). */
  private noteStored(
    instruction: InboundInstruction,
    route: Route,
    result: InsertResult,
    fresh: Freshness,
  ): void {
    if (result.status === 'duplicate') {
      const jobId = routedJobId(instruction.jobId, route.role, instruction.printer !== undefined);
      this.later(() => {
        this.log.info(
          { jobId, orderNo: instruction.orderNo, printer: route.role, matchedOn: result.matchedOn },
          'duplicate instruction',
        );
        this.emit('duplicate');
      });
      this.store.recordEvent(
        this.event({
          jobId,
          orderNo: instruction.orderNo,
          printer: route.role,
          state: 'duplicate',
          reason: {
            code: 'DUPLICATE',
            message: `already stored (same ${result.matchedOn}), state ${result.existing.state}`,
          },
        }),
      );
    } else if (fresh.failed) {
      const failed = fresh.failed;
      this.later(() =>
        this.log.warn(
          {
            jobId: result.job.jobId,
            orderNo: instruction.orderNo,
            id: result.job.id,
            createTime: instruction.createTime,
            code: failed.code,
          },
          `stale instruction stored failed, not printed: ${failed.message}`,
        ),
      );
    } else {
      this.later(() =>
        this.log.info(
          {
            jobId: result.job.jobId,
            orderNo: instruction.orderNo,
            id: result.job.id,
            printer: route.role,
            ...(route.layout !== 'receipt' ? { layout: route.layout } : {}),
            ...(fresh.warnings ? { warnings: fresh.warnings.map((w) => w.code) } : {}),
            // A catch-up record judged stale by this agent's clock gave the order's row up.
            ...(result.replaced ? { replacedStaleCatchUp: result.replaced.jobId } : {}),
          },
          'instruction queued',
        ),
      );
    }
  }

  /**
   * print-protocol v1.1 §4 freshness. createTime has no zone: it is read in the service's zone, as
   * "now" is, and the two wall-clock values are subtracted (a day-scale limit makes a zone error
   * harmless). A createTime in the future is not stale.
   */
  private freshness(instruction: InboundInstruction): Freshness {
    const reading = this.clock.current();
    this.noteClock(reading);
    const maxAgeMs = this.options.maxAgeMs ?? DEFAULT_FRESHNESS_MAX_AGE_MS;
    if (!reading.synchronized) {
      // The clock cannot judge the age; the newest order already authenticated can (v1.2 §10).
      const floor = belowTimeFloor(
        instruction.createTime,
        this.store.timeFloor(),
        maxAgeMs,
        'freshness.maxAgeDays',
      );
      return {
        ...(floor ? { failed: floor } : {}),
        warnings: [
          {
            code: 'CLOCK_UNSYNCHRONIZED',
            message: `${reading.detail}: the age of createTime ${instruction.createTime} was not checked`,
          },
        ],
      };
    }
    const created = wallClockMs(instruction.createTime);
    const now = wallClockMs(formatTimestamp(new Date(this.now()), this.options.timeZone));
    if (created === null || now === null) return {};
    const ageMs = now - created;
    if (ageMs <= maxAgeMs) return {};
    return {
      failed: {
        code: 'STALE_ORDER',
        message: `createTime ${instruction.createTime} (service time) is ${days(ageMs)} old, older than ${days(maxAgeMs)} (freshness.maxAgeDays): treated as a replay, not printed; \`printer-agent jobs retry\` prints it`,
      },
    };
  }

  /** Logs when the clock's trust changes, not per instruction. */
  private noteClock(reading: ClockReading): void {
    if (reading.synchronized === this.lastSynchronized) return;
    this.lastSynchronized = reading.synchronized;
    if (reading.synchronized)
      this.later(() =>
        this.log.info({ clock: reading.source }, `${reading.detail}: instruction ages are checked`),
      );
    else
      this.later(() =>
        this.log.warn(
          { clock: reading.source },
          `${reading.detail}: instruction ages are not checked (CLOCK_UNSYNCHRONIZED in job events)`,
        ),
      );
  }

  private command(command: Command, raw: string): Disposition {
    if (command.type === 'status') {
      this.later(() => this.hooks.statusRequested());
      this.store.recordEvent(
        this.event({
          jobId: `command:${command.commandId}`,
          commandId: command.commandId,
          state: 'printed',
        }),
      );
      return 'ack';
    }
    try {
      const result = this.store.enqueueCommand(command, { raw });
      if (result.status === 'duplicate') {
        this.later(() => this.emit('duplicate'));
        this.store.recordEvent(
          this.event({
            jobId: `command:${command.commandId}`,
            commandId: command.commandId,
            state: 'duplicate',
            reason: {
              code: 'DUPLICATE',
              message: `command already received (same ${result.matchedOn})`,
            },
          }),
        );
      }
    } catch (error) {
      if (error instanceof AgentError && error.code === 'JOB_NOT_FOUND') {
        this.store.recordEvent(
          this.event({
            jobId: `command:${command.commandId}`,
            commandId: command.commandId,
            orderNo: command.type === 'reprint' ? command.orderNo : null,
            state: 'failed',
            reason: error.toReason(),
          }),
        );
        return 'ack';
      }
      throw error;
    }
    return 'ack';
  }

  /**
   * Records and reports a rejection. The ids are echoed only when the signature held (openEnvelope
   * says so with `signed`), so they are authentic enough to help the service match the rejection
   * to what it sent; an unsigned message names nothing.
   */
  private reject(kind: 'print' | 'command', opened: Extract<Opened<unknown>, { ok: false }>) {
    const { error } = opened;
    const param = opened.signed?.param ?? null;
    const id = (key: string) =>
      param && typeof param[key] === 'string' ? (param[key] as string).slice(0, 64) : null;
    const commandId = kind === 'command' ? id('commandId') : null;
    const jobId = kind === 'print' ? id('jobId') : commandId ? `command:${commandId}` : null;
    const orderNo = id('orderNo');
    const reason = error.toReason();
    this.later(() => {
      this.log.warn(
        { kind, code: error.code, reason: error.message, jobId, orderNo },
        'message rejected',
      );
      this.emit('rejected', reason);
    });
    this.store.recordEvent(
      this.event({
        jobId,
        orderNo,
        ...(commandId ? { commandId } : {}),
        state: 'rejected',
        reason,
      }),
    );
    return 'ack' as const;
  }
}

function isStoreError(error: unknown): error is AgentError {
  return (
    error instanceof AgentError && (error.code === 'STORE_FULL' || error.code === 'STORE_FAILED')
  );
}

/** An age in days for messages: `8.2 days`, or hours under two days. */
function days(ms: number): string {
  const d = ms / 86_400_000;
  if (d < 2) return `${(ms / 3_600_000).toFixed(1)} hours`;
  return `${Number.isInteger(d) ? d : d.toFixed(1)} days`;
}
