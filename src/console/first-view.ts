/**
 * The status page's first view, drawn by the server (issue 42 item 4): what the page shows before
 * its script has asked anything, and all it shows without JavaScript. It draws the same object
 * `/api/status` answers (console/server.ts), so it masks exactly what the JSON masks (job
 * summaries carry no customer data, and no secret is in the status), with the same markup the
 * script then takes over. Every value is escaped: printer ids, order numbers and reasons come
 * from the config and from the order service.
 */
import type { jobSummary } from '../jobs/job.js';
import type { PrinterState } from '../protocol/print-protocol.js';
import { formatTimestamp } from '../protocol/time.js';
import type { Attention, AttentionInput } from './attention.js';

type Reason = { code: string; message: string };

/** What `/api/status` answers: the agent's status, the broker, the job counts, the last jobs. */
export interface PageStatus extends AttentionInput {
  storeId?: string;
  agent?: { version: string; startedAt: string };
  /** The config file's modification time when the agent read it (doctor compares it). */
  config?: { modifiedAt: string };
  broker: { connected: boolean };
  printers: Array<{
    id: string;
    roles?: string[];
    state: PrinterState;
    paper: string;
    drawerPinHigh?: boolean | null;
    queue: { pending: number; oldestPendingSec: number };
    checkedAt?: string | null;
    lastPrintedAt: string | null;
  }>;
  fault?: Reason;
  warnings?: Reason[];
  jobs: Record<string, number>;
  recent: Array<ReturnType<typeof jobSummary>>;
  attention: Attention[];
}

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** `yyyy-MM-dd HH:mm:ss` in the store's zone (undefined: the host's), as the script draws it. */
export function when(iso: string | null | undefined, timeZone: string | undefined): string {
  return iso ? formatTimestamp(new Date(iso), timeZone) : 'never';
}

/** The pill classes the script uses too (page.ts `STATE_CLASS`, `jobClass`). */
export function printerClass(state: string): string {
  return state === 'ready' ? 'ok' : state === 'paper-near-end' ? 'warn' : 'bad';
}
export function jobClass(state: string): string {
  return state === 'printed'
    ? 'ok'
    : state === 'failed' || state === 'unconfirmed'
      ? 'bad'
      : 'warn';
}

/** The roles a test page can be printed for: each printer's roles (its id when it has none). */
export function testRoles(status: Pick<PageStatus, 'printers'>): string[] {
  return [...new Set(status.printers.flatMap((p) => (p.roles?.length ? p.roles : [p.id])))];
}

export interface FirstView {
  agent: string;
  broker: { text: string; className: string };
  attention: string;
  printers: string;
  roles: string;
  queue: string;
  jobs: string;
  fault: string | null;
  warnings: string | null;
}

export function agentLine(status: PageStatus, timeZone: string | undefined): string {
  return `store ${status.storeId ?? '?'} · version ${status.agent?.version ?? '?'} · up since ${when(status.agent?.startedAt, timeZone)}`;
}

export function printerLine(p: PageStatus['printers'][number], timeZone: string | undefined) {
  return `paper ${p.paper} · ${p.queue.pending} pending · checked ${when(p.checkedAt, timeZone)} · last printed ${when(p.lastPrintedAt, timeZone)}`;
}

export function firstView(status: PageStatus, timeZone: string | undefined): FirstView {
  const e = escapeHtml;
  const printers = status.printers
    .map(
      (p) =>
        `<div class="printer" data-printer="${e(p.id)}"><strong>${e(p.id)}</strong>` +
        `<span class="state printer-state ${printerClass(p.state)}">${e(p.state)}</span>` +
        `<span class="muted">${e(printerLine(p, timeZone))}</span></div>`,
    )
    .join('');
  const jobs = status.recent
    .map((j) => {
      const name = (j.kind === 'receipt' ? '' : `${j.kind} `) + (j.orderNo ?? j.jobId);
      const meta =
        `${j.printer} · ${when(j.createdAt, timeZone)}` +
        (j.markings.length ? ` · ${j.markings.join(', ')}` : '');
      const reason = j.reason
        ? `<span class="reason">${e(`${j.reason.code}: ${j.reason.message}`)}</span>`
        : '';
      return (
        `<details class="job" data-job="${j.id}"><summary>` +
        `<span class="state ${jobClass(j.state)}">${e(j.state)}</span>` +
        `<span class="name">${e(name)}</span><span class="muted">${e(meta)}</span>${reason}` +
        '</summary></details>'
      );
    })
    .join('');
  const counts = Object.entries(status.jobs)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k}`);
  return {
    agent: e(agentLine(status, timeZone)),
    broker: status.broker.connected
      ? { text: 'broker connected', className: 'ok' }
      : { text: 'broker NOT connected', className: 'bad' },
    attention: status.attention.map((a) => `<li>${e(a.message)}</li>`).join(''),
    printers,
    roles: testRoles(status)
      .map((r) => `<option value="${e(r)}"${r === 'receipt' ? ' selected' : ''}>${e(r)}</option>`)
      .join(''),
    queue: e(counts.length ? counts.join(' · ') : 'no jobs'),
    jobs,
    fault: status.fault ? e(`${status.fault.code}: ${status.fault.message}`) : null,
    warnings: status.warnings?.length
      ? e(status.warnings.map((w) => `${w.code}: ${w.message}`).join('\n'))
      : null,
  };
}
