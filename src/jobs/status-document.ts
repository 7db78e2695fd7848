/**
 * The status document (print-protocol §7): what the agent publishes retained on its status topic
 * and what the local API's `/api/status` extends. Built from facts only, so it is the same
 * whoever asks: the printers' conditions, the queue figures per role, the fault and warnings that
 * `health.ts` keeps.
 *
 * - Jobs for a role no printer serves (NO_PRINTER_FOR_ROLE) are listed per role in `unrouted`; a
 *   printer's queue is the sum over the roles it serves (its id need not be a role).
 * - Never contains a secret: no store key, no payload.
 */
import type { AgentStatus, PrinterStatus } from '../protocol/print-protocol.js';
import type { PrinterQueueStats } from './store/queries.js';

export type Reason = { code: string; message: string };

/** What the status needs of a printer: its roles and its monitor's latest condition. */
export interface StatusPrinter {
  id: string;
  roles: readonly string[];
  condition(): {
    state: PrinterStatus['state'];
    paper: PrinterStatus['paper'];
    coverOpen: boolean | null;
    /** The drawer's pin 3 (issue 41): shown as the status's `drawerPinHigh`. */
    drawerPinHigh?: boolean | null;
  } | null;
}

export interface StatusFacts {
  storeId: string;
  version: string;
  startedAt: string;
  printers: readonly StatusPrinter[];
  /** Queue figures per role (`JobStore.queueStats`), configured roles and others. */
  stats: readonly PrinterQueueStats[];
  /** Why the agent cannot work normally, if it cannot. */
  fault: Reason | null;
  /** Problems that do not stop printing. */
  warnings: readonly Reason[];
  /** When, in epoch milliseconds. */
  at: number;
}

export function statusDocument(facts: StatusFacts): AgentStatus {
  const roles = new Set(facts.printers.flatMap((p) => p.roles));
  const stats = new Map(facts.stats.map((s) => [s.printer, s]));
  const unrouted = facts.stats
    .filter((s) => !roles.has(s.printer) && s.pending > 0)
    .map((s) => ({ role: s.printer, pending: s.pending, oldestPendingSec: s.oldestPendingSec }));
  const { fault, warnings } = facts;
  return {
    online: true,
    storeId: facts.storeId,
    agent: { version: facts.version, startedAt: facts.startedAt },
    printers: facts.printers.map((p): PrinterStatus => {
      const condition = p.condition();
      const own = p.roles.map((r) => stats.get(r)).filter((q) => q !== undefined);
      const lastPrinted = Math.max(0, ...own.map((q) => q.lastPrintedAt ?? 0));
      return {
        id: p.id,
        roles: [...p.roles],
        state: condition?.state ?? 'unknown',
        paper: condition?.paper ?? 'unknown',
        coverOpen: condition?.coverOpen ?? null,
        drawerPinHigh: condition?.drawerPinHigh ?? null,
        queue: {
          pending: own.reduce((n, q) => n + q.pending, 0),
          oldestPendingSec: Math.max(0, ...own.map((q) => q.oldestPendingSec)),
        },
        lastPrintedAt: lastPrinted > 0 ? new Date(lastPrinted).toISOString() : null,
      };
    }),
    ...(unrouted.length > 0 ? { unrouted } : {}),
    ...(fault ? { fault } : {}),
    ...(warnings.length > 0 ? { warnings: warnings.map((w) => ({ ...w })) } : {}),
    at: new Date(facts.at).toISOString(),
  };
}
