/**
 * From a stored job to the bytes the printer gets: the payload is validated again (the database
 * is outside the process: a hand edit, an older agent's row), the receipt is rendered with the
 * job's markings, and the copies are joined into one print so that one confirmation covers them
 * all (print-protocol §4 `copies`).
 */
import { AgentError } from '../errors.js';
import { orderRecordSchema } from '../protocol/order-record.js';
import { printInstructionSchema } from '../protocol/print-protocol.js';
import { describeIssues, parseWith } from '../protocol/validation.js';
import type { ReceiptMarkings } from '../receipt/model.js';
import type { ReceiptOptions } from '../receipt/options.js';
import type { PrinterProfile } from '../receipt/profile.js';
import { type ReceiptSource, renderReceiptInTurns } from '../receipt/render.js';
import type { Job, JobReason } from './job.js';

export interface RenderedJob {
  bytes: Uint8Array;
  /** The text twin of one copy. */
  text: string;
  warnings: string[];
  /**
   * What this attempt's job events must report (CONTENT_CUT: free text cut at the receipt's
   * maximum length), recorded with the attempt.
   */
  notices: JobReason[];
  /** The markings printed on this copy, to record with the attempt. */
  markings: ReceiptMarkings;
  copies: number;
}

/** A test page (print-protocol §5 `test-print`); the receipt room does not have one yet. */
export type TestPageRenderer = (profile: PrinterProfile) => {
  bytes: Uint8Array;
  text: string;
  warnings: string[];
  notices?: JobReason[];
};

export interface RenderJobContext {
  profile: PrinterProfile;
  options: ReceiptOptions;
  /** Add the LATE marking (decided by the spooler when the job's turn comes). */
  late: boolean;
  /**
   * With `late`: whole minutes since the agent stored the job, printed on a kitchen ticket (the
   * agent's own clock on both ends, so no time zone or unsynchronized clock can make it wrong; a
   * lower bound of the time since the order was placed, whose createTime the ticket shows too).
   */
  waitedMinutes?: number | null;
  /** The original receipt job of a reprint. */
  original: (job: Job) => Job | null;
  renderTestPage?: TestPageRenderer;
}

/** The receipt source stored in a receipt job; throws PARAM_INVALID when it no longer validates. */
export function receiptSource(job: Job): { source: ReceiptSource; copies: number } {
  if (job.payloadProblem !== null) {
    throw new AgentError(
      'PARAM_INVALID',
      `stored payload of job ${job.jobId}: ${job.payloadProblem}`,
    );
  }
  if (job.payloadType === 'instruction') {
    const parsed = parseWith(printInstructionSchema, job.payload);
    if (!parsed.ok) {
      throw new AgentError(
        'PARAM_INVALID',
        `stored instruction of job ${job.jobId}: ${describeIssues(parsed.issues)}`,
        { issues: parsed.issues },
      );
    }
    return {
      source: { kind: 'instruction', instruction: parsed.value },
      copies: parsed.value.copies,
    };
  }
  if (job.payloadType === 'record') {
    const parsed = parseWith(orderRecordSchema, job.payload);
    if (!parsed.ok) {
      throw new AgentError(
        'PARAM_INVALID',
        `stored order record of job ${job.jobId}: ${describeIssues(parsed.issues)}`,
        { issues: parsed.issues },
      );
    }
    return { source: { kind: 'record', record: parsed.value }, copies: 1 };
  }
  throw new AgentError('RENDER_FAILED', `job ${job.jobId} holds a command, not a receipt`);
}

/**
 * Async because raster lines (issue 18) are drawn one per turn of the event loop: a long CJK
 * receipt must not hold the broker link or the other printers' loops.
 */
export async function renderJob(job: Job, context: RenderJobContext): Promise<RenderedJob> {
  const markings: ReceiptMarkings = { ...job.markings };
  if (job.kind === 'test') {
    if (!context.renderTestPage) {
      throw new AgentError('RENDER_FAILED', 'this agent has no test page renderer configured');
    }
    const page = context.renderTestPage(context.profile);
    return { ...page, notices: noticesOf(page), markings, copies: 1 };
  }
  let copies = 1;
  let source: ReceiptSource;
  // A reprint prints its original's paper: the receipt, or the kitchen ticket with its items.
  let paper: Pick<Job, 'layout' | 'items'> = job;
  if (job.kind === 'reprint') {
    // A reprint prints the stored receipt of its order once, whatever the original's copies.
    const original = context.original(job);
    if (!original) {
      throw new AgentError(
        'JOB_NOT_FOUND',
        `the receipt of order ${job.orderNo} to reprint is no longer stored`,
      );
    }
    source = receiptSource(original).source;
    paper = original;
  } else {
    const stored = receiptSource(job);
    source = stored.source;
    copies = stored.copies;
    if (context.late) markings.late = true;
  }
  const rendered = await renderReceiptInTurns({
    source,
    profile: context.profile,
    options: context.options,
    markings,
    document:
      paper.layout === 'kitchen'
        ? {
            layout: 'kitchen',
            role: job.printer,
            items: paper.items,
            placedMinutesAgo: markings.late ? (context.waitedMinutes ?? null) : null,
          }
        : { layout: 'receipt' },
  });
  return {
    bytes: repeat(rendered.bytes, copies),
    text: rendered.text,
    warnings: rendered.warnings,
    notices: noticesOf(rendered),
    markings,
    copies,
  };
}

function noticesOf(rendered: { notices?: readonly JobReason[] }): JobReason[] {
  return (rendered.notices ?? []).map((n) => ({ code: n.code, message: n.message }));
}

function repeat(bytes: Uint8Array, times: number): Uint8Array {
  if (times === 1) return bytes;
  const out = new Uint8Array(bytes.length * times);
  for (let i = 0; i < times; i++) out.set(bytes, i * bytes.length);
  return out;
}
