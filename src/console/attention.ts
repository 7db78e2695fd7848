/**
 * What needs a person now (issue 42 item 2), in words a store's staff can act on: "Load paper in
 * the kitchen printer; 3 tickets wait, the oldest 4 min". Worked out here, once, from the status
 * the page reads, so the server-drawn first view and the page's script show the same sentences
 * (the script only draws the list). Pure: no I/O, no clock but the status's own `at`.
 */
import type { JobState, PrinterState } from '../protocol/print-protocol.js';

export interface Attention {
  /** What the banner is about: a code of the error catalogue (errors.ts), as job reasons use. */
  code: string;
  /** The printer the person goes to (a printer's id, or a job's role); null: not one printer's. */
  printer: string | null;
  /** What to do, then what waits for it. */
  message: string;
}

/** The parts of the page's status this reads (console/server.ts builds it). */
export interface AttentionInput {
  broker?: { connected: boolean };
  printers: ReadonlyArray<{
    id: string;
    state: PrinterState;
    queue: { pending: number; oldestPendingSec: number };
  }>;
  unrouted?: ReadonlyArray<{ role: string; pending: number; oldestPendingSec: number }>;
}

/** A job the printer took but never confirmed: on paper or not, only a person can tell. */
export interface UnconfirmedJob {
  jobId: string;
  orderNo: string | null;
  kind: string;
  printer: string;
  state: JobState;
  finishedAt: string | null;
}

/**
 * How long an unconfirmed job asks for a person: an order's customer has been served or has gone
 * by then, and a banner nobody can clear would teach people to ignore it. The job stays listed
 * under the last jobs, with its Retry.
 */
export const UNCONFIRMED_ATTENTION_MS = 60 * 60_000;

/** The printer states that stop printing (printer/status.ts `blocksPrinting`) and what to do. */
const WHAT_TO_DO: Partial<Record<PrinterState, [code: string, (printer: string) => string]>> = {
  'paper-out': ['PAPER_OUT', (p) => `Load paper in the ${p} printer`],
  'cover-open': ['COVER_OPEN', (p) => `Close the cover of the ${p} printer`],
  offline: [
    'PRINTER_OFFLINE',
    (p) => `The ${p} printer is offline: check its paper, its cover and its error light`,
  ],
  error: [
    'PRINTER_OFFLINE',
    (p) => `The ${p} printer reports an error: clear a paper jam, then switch it off and on`,
  ],
  disconnected: [
    'PRINTER_DISCONNECTED',
    (p) => `The ${p} printer does not answer: check that it is on and its cable`,
  ],
};

/** `45 s`, `4 min`, `2 h 5 min`: how long the oldest ticket has waited. */
export function age(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const rest = minutes % 60;
  return `${Math.floor(minutes / 60)} h${rest ? ` ${rest} min` : ''}`;
}

function waiting(queue: { pending: number; oldestPendingSec: number }): string {
  if (queue.pending === 0) return 'no ticket waits';
  if (queue.pending === 1) return `1 ticket waits, ${age(queue.oldestPendingSec)}`;
  return `${queue.pending} tickets wait, the oldest ${age(queue.oldestPendingSec)}`;
}

/**
 * The banners, most urgent first: printers that cannot print, jobs no printer serves, the broker,
 * then unconfirmed jobs of the last hour (`now`: the status's time).
 */
export function attentionOf(
  status: AttentionInput,
  unconfirmed: readonly UnconfirmedJob[],
  now: number,
): Attention[] {
  const out: Attention[] = [];
  for (const p of status.printers) {
    const todo = WHAT_TO_DO[p.state];
    if (todo)
      out.push({ code: todo[0], printer: p.id, message: `${todo[1](p.id)}; ${waiting(p.queue)}` });
  }
  for (const u of status.unrouted ?? [])
    out.push({
      code: 'NO_PRINTER_FOR_ROLE',
      printer: null,
      message: `No printer serves ${u.role}: add it to a printer's roles in the agent's config; ${waiting(u)}`,
    });
  if (status.broker && !status.broker.connected)
    out.push({
      code: 'BROKER_UNAVAILABLE',
      printer: null,
      message:
        "New orders cannot arrive: the agent has no connection to the order service's broker; check the store's internet connection",
    });
  const recent = unconfirmed.filter(
    (j) =>
      j.state === 'unconfirmed' &&
      j.finishedAt !== null &&
      now - Date.parse(j.finishedAt) < UNCONFIRMED_ATTENTION_MS,
  );
  const byPrinter = new Map<string, UnconfirmedJob[]>();
  for (const j of recent) byPrinter.set(j.printer, [...(byPrinter.get(j.printer) ?? []), j]);
  for (const [printer, jobs] of byPrinter) {
    const [first] = jobs;
    const what =
      jobs.length === 1 && first
        ? `${first.kind === 'receipt' && first.orderNo ? `order ${first.orderNo}` : `job ${first.jobId}`} came out`
        : `${jobs.length} tickets came out`;
    out.push({
      code: 'UNCONFIRMED',
      printer,
      message: `Check whether ${what} of the ${printer} printer: it never confirmed printing. If not, press Retry below (it prints marked POSSIBLE DUPLICATE)`,
    });
  }
  return out;
}
