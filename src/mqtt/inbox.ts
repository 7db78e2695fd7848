/**
 * The inbox: every message on `/print` and `/command` is opened (size, signature over the raw
 * param, identity, schema: print-protocol §3), stored, and only then acknowledged. Nothing prints
 * here: the spooler prints from the store.
 *
 * - Stored or found duplicate: ack (a duplicate is answered with a `duplicate` job event).
 * - Rejected (forged, tampered, wrong store, oversize, malformed): recorded as a `rejected` job
 *   event and acked, so a poison message cannot loop (guarantee 8). Never printed.
 * - The store cannot take it (disk full, database error): not acked, and the agent reports the
 *   fault; the broker keeps the message (guarantee 11).
 */
import { AgentError } from '../errors.js';
import { faultPoint } from '../jobs/fault-points.js';
import type { JobStore } from '../jobs/store.js';
import type { Logger } from '../logging.js';
import { openEnvelope } from '../protocol/envelope.js';
import {
  type Command,
  commandSchema,
  type NewJobEvent,
  printInstructionSchema,
} from '../protocol/print-protocol.js';
import type { RsaKey, SignatureScheme } from '../protocol/signing.js';
import type { Disposition } from './connection.js';

export interface InboxOptions {
  appId: string;
  storeKey: string;
  serviceKey: RsaKey;
  scheme: SignatureScheme;
  maxBytes: number;
  topics: { print: string; command: string };
}

export interface InboxHooks {
  /** A `status` command: publish a fresh status now. */
  statusRequested(): void;
  /** The store failed (disk full...): the status should say so until a write succeeds again. */
  storeFault(error: AgentError | null): void;
}

export class Inbox {
  constructor(
    private readonly store: JobStore,
    private readonly options: InboxOptions,
    private readonly hooks: InboxHooks,
    private readonly log: Logger,
  ) {}

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

  async handle(topic: string, payload: Buffer): Promise<Disposition> {
    try {
      const result = this.process(topic, payload);
      this.hooks.storeFault(null);
      return result;
    } catch (error) {
      if (
        error instanceof AgentError &&
        (error.code === 'STORE_FULL' || error.code === 'STORE_FAILED')
      ) {
        this.log.error(
          { code: error.code, err: error.message },
          'cannot store the message: not acknowledged',
        );
        this.hooks.storeFault(error);
        return 'hold';
      }
      throw error;
    }
  }

  private process(topic: string, payload: Buffer): Disposition {
    const kind =
      topic === this.options.topics.print
        ? 'print'
        : topic === this.options.topics.command
          ? 'command'
          : null;
    if (kind === null) {
      this.log.warn({ topic }, 'message on an unexpected topic ignored');
      return 'ack';
    }
    const identity = { appId: this.options.appId, storeKey: this.options.storeKey };
    const common = {
      verifyKey: this.options.serviceKey,
      scheme: this.options.scheme,
      identity,
      maxBytes: this.options.maxBytes,
    };
    if (kind === 'print') {
      const opened = openEnvelope(payload, { ...common, paramSchema: printInstructionSchema });
      if (!opened.ok) return this.reject(kind, opened.error, payload);
      const instruction = opened.param;
      // Crash test only (fault matrix row 1): dies after receiving, before the commit: no ack.
      faultPoint('inbox-before-commit');
      const result = this.store.enqueueInstruction(instruction, {
        source: 'mqtt',
        raw: opened.envelope.param,
      });
      if (result.status === 'duplicate') {
        this.log.info(
          { jobId: instruction.jobId, orderNo: instruction.orderNo, matchedOn: result.matchedOn },
          'duplicate instruction',
        );
        this.store.recordEvent(
          this.event({
            jobId: instruction.jobId,
            orderNo: instruction.orderNo,
            printer: instruction.printer,
            state: 'duplicate',
            reason: {
              code: 'DUPLICATE',
              message: `already stored (same ${result.matchedOn}), state ${result.existing.state}`,
            },
          }),
        );
      } else {
        this.log.info(
          { jobId: instruction.jobId, orderNo: instruction.orderNo, id: result.job.id },
          'instruction queued',
        );
      }
      return 'ack';
    }
    const opened = openEnvelope(payload, { ...common, paramSchema: commandSchema });
    if (!opened.ok) return this.reject(kind, opened.error, payload);
    return this.command(opened.param, opened.envelope.param);
  }

  private command(command: Command, raw: string): Disposition {
    if (command.type === 'status') {
      this.hooks.statusRequested();
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

  /** Records and reports a rejection; the ids are echoed only when the signature held. */
  private reject(kind: 'print' | 'command', error: AgentError, payload: Buffer): Disposition {
    let jobId: string | null = null;
    let orderNo: string | null = null;
    if (error.code === 'PARAM_INVALID' || error.code === 'IDENTITY_MISMATCH') {
      // The signature verified (it is checked first), so the ids in param are authentic enough
      // to help the service match the rejection to what it sent.
      try {
        const param = JSON.parse(JSON.parse(payload.toString('utf8')).param) as Record<
          string,
          unknown
        >;
        jobId = typeof param.jobId === 'string' ? param.jobId.slice(0, 64) : null;
        orderNo = typeof param.orderNo === 'string' ? param.orderNo.slice(0, 64) : null;
      } catch {
        // not readable: report without ids
      }
    }
    this.log.warn({ kind, code: error.code, reason: error.message, jobId }, 'message rejected');
    this.store.recordEvent(
      this.event({ jobId, orderNo, state: 'rejected', reason: error.toReason() }),
    );
    return 'ack';
  }
}
