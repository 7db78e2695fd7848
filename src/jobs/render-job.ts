/**
 * From a stored job to the bytes the printer gets: the payload is validated again (the database
 * is outside the process: a hand edit, an older agent's row), the receipt is rendered with the
 * job's markings, and the copies are joined into one print so that one confirmation covers them
 * all (print-protocol §4 `copies`).
 *
 * The cash drawer (issue 41 item 4): a payment receipt of a payment kind the store named
 * (`drawer.openOn`, e.g. offline: cash) starts with the kick-out pulse (`ESC p`, the store's pin,
 * the profile's pulse), once whatever its copies. It is part of the job's bytes, their first, so it
 * goes out exactly when the receipt does and never on its own: an attempt that sent nothing
 * (printer not ready, unreachable) is retried unmarked and kicks then; an attempt that sent
 * anything sent the pulse, and every later copy of it is marked POSSIBLE DUPLICATE (a failure
 * midway, a dropped link, `jobs retry` of an unconfirmed job, a crash while printing), which
 * never kicks. Nor does a reprint, a kitchen ticket, a receipt on another role, or a test page.
 */
import { AgentError } from '../errors.js';
import { drawerPulse } from '../printer/printer.js';
import { PAYMENT_WAY_OFFLINE, PAYMENT_WAY_ONLINE } from '../protocol/codes.js';
import { storedOrderRecordSchema } from '../protocol/order-record.js';
import { DEFAULT_PRINTER_ROLE, storedInstructionSchema } from '../protocol/print-protocol.js';
import { formatTimestamp, wallClockMs } from '../protocol/time.js';
import { describeIssues, parseWith } from '../protocol/validation.js';
import type { ReceiptMarkings } from '../receipt/model.js';
import type { ReceiptOptions } from '../receipt/options.js';
import type { PrinterProfile } from '../receipt/profile.js';
import { type ReceiptSource, renderReceiptInTurns } from '../receipt/render.js';
import type { Job, JobReason } from './job.js';
import type { PaymentKind } from './routing.js';

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
  /** Whether the bytes start with the cash drawer's kick-out pulse. */
  drawer: boolean;
}

/** The cash drawer on the receipt printer's kick-out connector (config `drawer`). */
export interface DrawerSettings {
  /** Payment receipts of these kinds open the drawer; empty: never (the default). */
  openOn: readonly PaymentKind[];
  /** `ESC p` pin: 2 (m = 0) or 5 (m = 1), whichever the drawer's cable uses. */
  pin: 2 | 5;
}

/** The pulse of `settings.pin` with the profile's timing (`drawerPulse`, default 100/500 ms). */
export function drawerKick(settings: Pick<DrawerSettings, 'pin'>, profile: PrinterProfile) {
  const pulse = profile.drawerPulse ?? { onMs: 100, offMs: 500 };
  return drawerPulse(settings.pin, pulse.onMs, pulse.offMs);
}

/**
 * How the order was paid: an instruction's `paymentWay` (1 online, 2 offline); an order record's
 * `payProductType` (0 offline, as the receipt prints it; any other online); null when unknown.
 */
export function paymentKind(source: ReceiptSource): PaymentKind | null {
  if (source.kind === 'instruction') {
    const way = Number(source.instruction.order.paymentWay);
    return way === PAYMENT_WAY_OFFLINE ? 'offline' : way === PAYMENT_WAY_ONLINE ? 'online' : null;
  }
  const type = source.record.payProductType;
  return type == null ? null : type === 0 ? 'offline' : 'online';
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
  /**
   * The agent's clock and the service's zone (default the host's): a receipt whose order was
   * placed more than 12 hours ago prints LATE with its date and age (print-protocol v1.2 §10).
   */
  now?: number;
  timeZone?: string;
  renderTestPage?: TestPageRenderer;
  /** The cash drawer; absent or null: never opened by a job. */
  drawer?: DrawerSettings | null;
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
    const parsed = parseWith(storedInstructionSchema, job.payload);
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
    const parsed = parseWith(storedOrderRecordSchema, job.payload);
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

/** An order placed longer ago than this prints LATE with its date and age (v1.2 §10). */
export const LATE_ORDER_AFTER_MS = 12 * 3_600_000;

/**
 * Whether an order placed at `createTime` (service wall-clock time) is late at `now` by its own
 * time, and how to say so; null when it is not, or the time cannot be read. Whatever the clock's
 * sync state: a wrong clock then shows on paper, which is what a store should see.
 */
export function orderLateness(
  createTime: string,
  now: number,
  timeZone?: string,
): { placed: string; ago: string } | null {
  const created = wallClockMs(createTime);
  const current = wallClockMs(formatTimestamp(new Date(now), timeZone));
  if (created === null || current === null) return null;
  const age = current - created;
  if (age <= LATE_ORDER_AFTER_MS) return null;
  const days = Math.floor(age / 86_400_000);
  const hours = Math.floor(age / 3_600_000);
  const ago = days >= 1 ? `${days} day${days === 1 ? '' : 's'} ago` : `${hours} hours ago`;
  return { placed: createTime.slice(0, 16), ago };
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
    return { ...page, notices: noticesOf(page), markings, copies: 1, drawer: false };
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
    const createTime =
      source.kind === 'instruction' ? source.instruction.createTime : source.record.createTime;
    const lateOrder =
      context.now === undefined ? null : orderLateness(createTime, context.now, context.timeZone);
    if (lateOrder) {
      markings.late = true;
      markings.lateOrder = lateOrder;
    }
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
  // The markings of this copy decide: a job that may have printed before never kicks again.
  const drawer = context.drawer ?? null;
  const paid = paymentKind(source);
  const kick =
    drawer !== null &&
    paid !== null &&
    drawer.openOn.includes(paid) &&
    job.kind === 'receipt' &&
    paper.layout === 'receipt' &&
    job.printer === DEFAULT_PRINTER_ROLE &&
    markings.possibleDuplicate !== true &&
    context.profile.drawer;
  const bytes = repeat(rendered.bytes, copies);
  return {
    bytes: kick ? concat(drawerKick(drawer, context.profile), bytes) : bytes,
    text: rendered.text,
    warnings: rendered.warnings,
    notices: noticesOf(rendered),
    markings,
    copies,
    drawer: kick,
  };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
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
