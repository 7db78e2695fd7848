/**
 * A printer on a transport: knows its state, prints a job and knows whether it came out.
 *
 * Printing a job (issue 5, reliability guarantee 4):
 * 1. ask the real-time status first (`DLE EOT`): a printer out of paper or with its cover open
 *    would only buffer the bytes, so the job is not sent and a retryable PRINTER_NOT_READY says
 *    why (silence means "unknown" and does not stop a job: cheap printers never answer);
 * 2. send the bytes in chunks, each waiting for the link to take it (back-pressure);
 * 3. ask for confirmation in order with the data: `GS ( H` fn48 (process id, answered once what
 *    came before it has printed) where the profile supports it, else `GS r 1`;
 * 4. `printed` when the reply comes, `unconfirmed` when it does not. Nothing is ever re-sent here:
 *    whether to print again is the job store's decision, with a marking.
 *
 * Every operation on the link goes through one queue, so a status poll never interleaves with a
 * job's bytes.
 */
import { randomInt } from 'node:crypto';
import { AgentError } from '../errors.js';
import { askIdentity, emptyAnswers, linkFailure, type PrinterAnswers } from './identify.js';
import {
  DLE_EOT,
  decodeStatus,
  isStatusByte,
  type PrinterCondition,
  type StatusBytes,
} from './status.js';
import type { Transport } from './transport.js';

export type ConfirmMode = 'process-id' | 'status' | 'none';

export interface PrinterOptions {
  /** `realtimeStatus` false: the model never answers `DLE EOT`; do not wait for it. */
  realtimeStatus: boolean;
  confirm: ConfirmMode;
  /** How long one status reply may take. */
  statusTimeoutMs?: number;
  /** Bytes per write; each chunk waits for the link before the next. */
  chunkSize?: number;
  /** Time allowed per chunk to be taken by the link (serial at 9600 baud needs ~1.1 s per KB). */
  chunkTimeoutMs?: number;
  /** How long to wait for the confirmation after the last byte (printing takes time). */
  confirmTimeoutMs?: number;
}

/**
 * `unconfirmed` says why: the printer stayed `silent` (mute models, or the reply was lost) or the
 * `link-dropped` before any reply, in which case the printer may have received only part of the
 * job (a socket hands bytes to the kernel long before they reach the printer). The job store's
 * policy decides what each means for a reprint.
 */
export type PrintOutcome =
  | { outcome: 'printed'; confirmedBy: 'process-id' | 'status' }
  | {
      outcome: 'unconfirmed';
      cause: 'silent' | 'link-dropped' | 'no-confirmation';
      reason: string;
    };

/** `GS ( H` fn48: pL=6 pH=0 m=48 fn=48 then four id bytes (Epson: 0x30-0x39 each). */
function processIdRequest(id: Uint8Array): Uint8Array {
  return Uint8Array.of(0x1d, 0x28, 0x48, 0x06, 0x00, 0x30, 0x30, ...id);
}

/** `GS r 1`: paper sensor status, transmitted after the data before it was processed. */
const GS_R_1 = Uint8Array.of(0x1d, 0x72, 0x01);

/** `ESC p m t1 t2`: drawer kick-out pulse on pin 2 (m=0) or pin 5 (m=1), times in 2 ms units. */
export function drawerPulse(pin: 2 | 5, onMs = 100, offMs = 500): Uint8Array {
  const t = (ms: number) => Math.max(1, Math.min(255, Math.round(ms / 2)));
  return Uint8Array.of(0x1b, 0x70, pin === 2 ? 0 : 1, t(onMs), t(offMs));
}

/**
 * The answers `GS r 1` can give (Epson, "GS r" n=1): bits 0-1 roll paper near end, bits 2-3 roll
 * paper end, each pair both set or both clear; so only 00, 03, 0C and 0F. Any other byte is noise
 * (a drawer answer, an automatic status block, line noise), never a confirmation. A stray 00 from
 * elsewhere is indistinguishable from the answer: that risk remains (docs/decisions.md).
 */
export const GS_R_1_ANSWERS: readonly number[] = [0x00, 0x03, 0x0c, 0x0f];

export function isGsR1Reply(b: number): boolean {
  return GS_R_1_ANSWERS.includes(b);
}

export class Printer {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly statusTimeoutMs: number;
  private readonly chunkSize: number;
  private readonly chunkTimeoutMs: number;
  private readonly confirmTimeoutMs: number;
  /** When the `GS r 1` of an unconfirmed job was sent, while its answer may still come. */
  private owedSince: number | null = null;

  constructor(
    readonly transport: Transport,
    private readonly options: PrinterOptions,
  ) {
    this.statusTimeoutMs = options.statusTimeoutMs ?? 1000;
    this.chunkSize = options.chunkSize ?? 1024;
    this.chunkTimeoutMs = options.chunkTimeoutMs ?? 5000;
    this.confirmTimeoutMs = options.confirmTimeoutMs ?? 15_000;
  }

  /** Runs `task` alone on the link: no other status poll or job interleaves with it. */
  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async ensureOpen(): Promise<void> {
    if (!this.transport.isOpen) {
      await this.transport.open();
      // A new link carries no answer to a request sent on the old one.
      this.owedSince = null;
    }
  }

  /**
   * `GS r 1` answers carry no id: a late answer to an unconfirmed job would pass for the next
   * job's confirmation and report it printed before it reached the paper. So the next job is
   * sent only once the owed answer came, or when it is so late (twice the confirmation wait after
   * its request) that it is taken as lost. Process-id confirmation needs none of this.
   */
  private async settleOwedReply(): Promise<void> {
    if (this.owedSince === null) return;
    const deadline = this.owedSince + 2 * this.confirmTimeoutMs;
    this.owedSince = null;
    while (performance.now() < deadline) {
      const bytes = await this.transport.read(deadline - performance.now());
      if (bytes.length === 0) return;
      if ([...bytes].some(isGsR1Reply)) return;
    }
  }

  /** One `DLE EOT n` round trip: the first status-shaped byte, or undefined on silence. */
  private async queryOne(n: 1 | 2 | 3 | 4): Promise<number | undefined> {
    this.transport.discardInput();
    await this.transport.write(DLE_EOT(n), this.statusTimeoutMs);
    const deadline = performance.now() + this.statusTimeoutMs;
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0) return undefined;
      const bytes = await this.transport.read(left);
      // Stray bytes (late replies, automatic status blocks) are skipped, not misread.
      const reply = [...bytes].find(isStatusByte);
      if (reply !== undefined) return reply;
      if (bytes.length === 0) return undefined;
    }
  }

  private async readStatus(): Promise<PrinterCondition> {
    const condition = await this.readStatusOnce();
    // The four replies are four round trips: a fault that changes between them (the cover closed
    // after n=1 said offline, before n=2 gave the cause; paper loaded with the cover opened
    // between n=2 and n=4) reads as offline with no cause. Such a read is taken once more; a
    // printer offline with no cause twice is offline (the forced-offline case), and a printer that
    // cannot print anyway is all that pays the second read.
    if (condition.state !== 'offline' || condition.causes.join() !== 'offline') return condition;
    return this.readStatusOnce();
  }

  private async readStatusOnce(): Promise<PrinterCondition> {
    if (!this.options.realtimeStatus) return decodeStatus({});
    const bytes: StatusBytes = {};
    bytes.printer = await this.queryOne(1);
    // A printer that does not answer n=1 will not answer the others either.
    if (bytes.printer === undefined) return decodeStatus({});
    bytes.offline = await this.queryOne(2);
    bytes.error = await this.queryOne(3);
    bytes.paper = await this.queryOne(4);
    return decodeStatus(bytes);
  }

  /** The printer's condition now; `disconnected` when the link cannot be opened. */
  status(): Promise<PrinterCondition> {
    return this.exclusive(async () => {
      try {
        await this.ensureOpen();
        return await this.readStatus();
      } catch (error) {
        if (
          error instanceof AgentError &&
          (error.code === 'PRINTER_UNREACHABLE' || error.code === 'PRINTER_DISCONNECTED')
        ) {
          return {
            state: 'disconnected',
            paper: 'unknown',
            coverOpen: null,
            drawerPinHigh: null,
            causes: [error.message],
          };
        }
        throw error;
      }
    });
  }

  /**
   * Prints one job's bytes (already rendered, ending with the cut) and asks for confirmation.
   * Throws a retryable AgentError when nothing was sent (not ready, unreachable); throws
   * TRANSPORT_TIMEOUT / PRINTER_DISCONNECTED with `details.sentBytes` when the link failed midway.
   */
  print(job: Uint8Array): Promise<PrintOutcome> {
    return this.exclusive(async () => {
      await this.ensureOpen();
      await this.settleOwedReply();
      const condition = await this.readStatus();
      if (
        condition.state !== 'ready' &&
        condition.state !== 'paper-near-end' &&
        condition.state !== 'unknown'
      ) {
        throw new AgentError(
          'PRINTER_NOT_READY',
          `${this.transport.description}: ${condition.state} (${condition.causes.join(', ') || 'no detail'})`,
          {
            details: { state: condition.state, sentBytes: 0 },
          },
        );
      }
      let sent = 0;
      try {
        for (let offset = 0; offset < job.length; offset += this.chunkSize) {
          const chunk = job.subarray(offset, offset + this.chunkSize);
          await this.transport.write(chunk, this.chunkTimeoutMs);
          sent += chunk.length;
        }
      } catch (error) {
        if (error instanceof AgentError) {
          const inChunk = typeof error.details.sentBytes === 'number' ? error.details.sentBytes : 0;
          throw new AgentError(error.code, error.message, {
            cause: error,
            details: { ...error.details, sentBytes: sent + inChunk, totalBytes: job.length },
          });
        }
        throw error;
      }
      try {
        // A printer that answers no status (mute) will not answer late either: nothing is owed.
        return await this.confirm(condition.state !== 'unknown');
      } catch (error) {
        // Every byte of the job went out; only asking for the confirmation failed.
        if (error instanceof AgentError) {
          throw new AgentError(error.code, error.message, {
            cause: error,
            details: { ...error.details, sentBytes: job.length, totalBytes: job.length },
          });
        }
        throw error;
      }
    });
  }

  private async confirm(answersStatus: boolean): Promise<PrintOutcome> {
    const mode = this.options.confirm;
    if (mode === 'none') {
      return {
        outcome: 'unconfirmed',
        cause: 'no-confirmation',
        reason: 'the printer profile has no confirmation',
      };
    }
    this.transport.discardInput();
    const deadline = performance.now() + this.confirmTimeoutMs;
    if (mode === 'process-id') {
      const id = Uint8Array.from({ length: 4 }, () => 0x30 + randomInt(10));
      await this.transport.write(processIdRequest(id), this.chunkTimeoutMs);
      const expected = [0x37, 0x22, ...id, 0x00];
      let seen: number[] = [];
      while (performance.now() < deadline) {
        const bytes = await this.transport.read(deadline - performance.now());
        if (bytes.length === 0) break;
        // Search the new bytes with the tail kept from before (a reply split across reads), then
        // keep only a tail too short to hold a whole reply: trimming before the search lost a
        // reply followed by more than 57 other bytes in the same read (found by fuzzing).
        seen = [...seen, ...bytes];
        for (let i = 0; i + expected.length <= seen.length; i++) {
          if (expected.every((b, j) => seen[i + j] === b))
            return { outcome: 'printed', confirmedBy: 'process-id' };
        }
        seen = seen.slice(-(expected.length - 1));
      }
      return this.unanswered('process id');
    }
    const requestedAt = performance.now();
    await this.transport.write(GS_R_1, this.chunkTimeoutMs);
    while (performance.now() < deadline) {
      const bytes = await this.transport.read(deadline - performance.now());
      if (bytes.length === 0) break;
      if ([...bytes].some(isGsR1Reply)) return { outcome: 'printed', confirmedBy: 'status' };
    }
    if (answersStatus && this.transport.isOpen) this.owedSince = requestedAt;
    return this.unanswered('status');
  }

  private unanswered(what: string): PrintOutcome {
    if (!this.transport.isOpen) {
      return {
        outcome: 'unconfirmed',
        cause: 'link-dropped',
        reason: `the link dropped before the ${what} reply`,
      };
    }
    return {
      outcome: 'unconfirmed',
      cause: 'silent',
      reason: `no ${what} reply within ${this.confirmTimeoutMs} ms`,
    };
  }

  /**
   * Asks the printer who it is (`DLE EOT`, then `GS I`: src/printer/identify.ts), whatever the
   * profile says about status: identification is for a printer whose profile is not known yet.
   * Never throws for the device: an unreachable printer or a link that drops comes back as
   * `reachable: false` or a problem line, with whatever was learnt before.
   */
  identify(timeoutMs = this.statusTimeoutMs): Promise<PrinterAnswers> {
    return this.exclusive(async () => {
      const answers = emptyAnswers(this.transport.description, true);
      try {
        await this.ensureOpen();
      } catch (error) {
        answers.reachable = false;
        return linkFailure(answers, error);
      }
      try {
        return await askIdentity(this.transport, timeoutMs, answers);
      } catch (error) {
        return linkFailure(answers, error);
      } finally {
        this.transport.discardInput();
      }
    });
  }

  /** Sends a small command (drawer pulse, buzzer) outside any job; never triggered by data. */
  send(command: Uint8Array): Promise<void> {
    return this.exclusive(async () => {
      await this.ensureOpen();
      await this.transport.write(command, this.chunkTimeoutMs);
    });
  }

  openDrawer(pin: 2 | 5 = 2): Promise<void> {
    return this.send(drawerPulse(pin));
  }

  close(): Promise<void> {
    return this.exclusive(() => this.transport.close());
  }
}
