/**
 * Run-time control of an emulator (issue 4, items 3 and 5): faults, link and print behaviours,
 * status and tickets. One `EmulatorControl` serves both the HTTP interface (control-server.ts) and
 * the line protocol for people typing on stdin, so the two cannot drift apart.
 *
 * Requests are validated whole before anything changes: a request with one bad field changes
 * nothing, and the error names the field (`on: must be true or false`).
 */
import type { Readable, Writable } from 'node:stream';
import type { Ticket } from '../core/paper.js';
import { type TicketJson, ticketSummary, ticketToJson } from '../core/render.js';
import { isOffline, type PrinterState } from '../core/status.js';
import {
  FAULT_FIELDS,
  FAULTS,
  type FaultName,
  type VirtualPrinter,
} from '../core/virtual-printer.js';
import type { LinkSlot } from '../link/link.js';
import type { PrintSpeedLimiter } from '../link/print-speed.js';

export interface EmulatorParts {
  printer: VirtualPrinter;
  slot: LinkSlot;
  printSpeed: PrintSpeedLimiter;
  /** What the agent connects to (`tcp://...`, `serial:...`), shown in the status. */
  address?: string;
}

export interface EmulatorStatus {
  online: boolean;
  /** Faults and behaviours switched on, by their FAULTS names. */
  faults: FaultName[];
  state: PrinterState;
  busy: boolean;
  /** Bytes in the printer's receive buffer. */
  bufferedBytes: number;
  /** Tickets ended by a cut. */
  tickets: number;
  link: {
    address: string | null;
    connected: boolean;
    /** Bytes read from the host that the slow link has not delivered yet. */
    queuedBytes: number;
    slowLinkBps: number | null;
    slowPrintMmPerSec: number | null;
  };
}

export interface TicketListItem {
  /** 1-based, as in the summary and the output file names. */
  number: number;
  summary: string;
  cut: boolean;
  byteStart: number;
  byteEnd: number | null;
}

export type ControlResult<T> =
  | { ok: true; value: T }
  | { ok: false; status: number; error: string };

export interface LinkChange {
  slowLinkBps?: number | null;
  slowPrintMmPerSec?: number | null;
  disconnect?: boolean;
}

const FAULT_LIST = FAULTS.join(', ');
const LINK_FIELDS = ['slowLinkBps', 'slowPrintMmPerSec', 'disconnect'] as const;

function fail<T>(error: string, status = 400): ControlResult<T> {
  return { ok: false, status, error };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A speed field: a finite number >= 0 (0 = no limit) or null (no limit). */
function speedField(
  body: Record<string, unknown>,
  name: string,
  unit: string,
): { ok: true; value: number | null | undefined } | { ok: false; error: string } {
  if (!(name in body)) return { ok: true, value: undefined };
  const v = body[name];
  if (v === null) return { ok: true, value: null };
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
    return {
      ok: false,
      error: `${name}: must be a number of ${unit} (> 0), or 0 or null for no limit`,
    };
  }
  return { ok: true, value: v === 0 ? null : v };
}

export function isFaultName(value: unknown): value is FaultName {
  return typeof value === 'string' && (FAULTS as readonly string[]).includes(value);
}

export class EmulatorControl {
  constructor(readonly parts: EmulatorParts) {}

  get printer(): VirtualPrinter {
    return this.parts.printer;
  }

  status(): EmulatorStatus {
    const { printer, slot, printSpeed } = this.parts;
    const state = printer.state;
    return {
      online: !isOffline(state),
      faults: FAULTS.filter((name) => state[FAULT_FIELDS[name]]),
      state,
      busy: printer.busy,
      bufferedBytes: printer.bufferedBytes,
      tickets: printer.paper.tickets.length,
      link: {
        address: this.parts.address ?? null,
        connected: slot.connected,
        queuedBytes: slot.link?.queuedBytes ?? 0,
        slowLinkBps: slot.slowLinkBps,
        slowPrintMmPerSec: printSpeed.mmPerSec,
      },
    };
  }

  /** `{"fault": "paper-out", "on": true}` */
  setFault(body: unknown): ControlResult<EmulatorStatus> {
    if (!isRecord(body))
      return fail('body: must be a JSON object like {"fault":"paper-out","on":true}');
    for (const key of Object.keys(body)) {
      if (key !== 'fault' && key !== 'on')
        return fail(`${key}: unknown field; expected fault and on`);
    }
    if (!('fault' in body)) return fail(`fault: required, one of ${FAULT_LIST}`);
    if (!isFaultName(body.fault)) {
      return fail(`fault: unknown fault ${JSON.stringify(body.fault)}; one of ${FAULT_LIST}`);
    }
    if (typeof body.on !== 'boolean') return fail('on: must be true or false');
    this.parts.printer.setFault(body.fault, body.on);
    return { ok: true, value: this.status() };
  }

  /** `{"slowLinkBps": 960}`, `{"slowPrintMmPerSec": 60}`, `{"disconnect": true}`, or several. */
  changeLink(body: unknown): ControlResult<{ disconnected: boolean; status: EmulatorStatus }> {
    if (!isRecord(body)) return fail('body: must be a JSON object like {"slowLinkBps":960}');
    const keys = Object.keys(body);
    for (const key of keys) {
      if (!(LINK_FIELDS as readonly string[]).includes(key)) {
        return fail(`${key}: unknown field; expected ${LINK_FIELDS.join(', ')}`);
      }
    }
    if (keys.length === 0) return fail(`body: give at least one of ${LINK_FIELDS.join(', ')}`);
    const bps = speedField(body, 'slowLinkBps', 'bytes per second');
    if (!bps.ok) return fail(bps.error);
    const mm = speedField(body, 'slowPrintMmPerSec', 'mm per second');
    if (!mm.ok) return fail(mm.error);
    if ('disconnect' in body && typeof body.disconnect !== 'boolean') {
      return fail('disconnect: must be true or false');
    }
    const disconnected = this.apply({
      ...(bps.value !== undefined ? { slowLinkBps: bps.value } : {}),
      ...(mm.value !== undefined ? { slowPrintMmPerSec: mm.value } : {}),
      disconnect: body.disconnect === true,
    });
    return { ok: true, value: { disconnected, status: this.status() } };
  }

  /** Applies a validated change; returns whether a link was dropped. */
  apply(change: LinkChange): boolean {
    if (change.slowLinkBps !== undefined) this.parts.slot.setSlowLink(change.slowLinkBps);
    if (change.slowPrintMmPerSec !== undefined) {
      this.parts.printSpeed.setSpeed(change.slowPrintMmPerSec);
    }
    return change.disconnect ? this.parts.slot.disconnect() : false;
  }

  tickets(): TicketListItem[] {
    return this.parts.printer.tickets().map((t: Ticket) => ({
      number: t.index + 1,
      summary: ticketSummary(t),
      cut: t.cut,
      byteStart: t.byteStart,
      byteEnd: t.byteEnd,
    }));
  }

  /** Ticket `number` (1-based) as JSON, the open one included. */
  ticket(number: number): ControlResult<TicketJson> {
    const all = this.parts.printer.tickets();
    const ticket = all.find((t) => t.index + 1 === number);
    if (!ticket) return fail(`ticket ${number}: no such ticket (${all.length} on paper)`, 404);
    return { ok: true, value: ticketToJson(ticket) };
  }

  /** One line of the stdin protocol in, the text to print out (ends with a newline). */
  command(line: string): string {
    const words = line
      .trim()
      .split(/\s+/)
      .filter((w) => w !== '');
    const [verb, ...args] = words;
    switch (verb) {
      case undefined:
        return '';
      case 'help':
      case '?':
        return HELP;
      case 'status':
        return `${describeStatus(this.status())}\n`;
      case 'fault': {
        const [name, onOff] = args;
        if (!isFaultName(name)) {
          return `error: fault: unknown fault ${JSON.stringify(name ?? '')}; one of ${FAULT_LIST}\n`;
        }
        if (onOff !== 'on' && onOff !== 'off')
          return 'error: fault: say on or off, e.g. fault paper-out on\n';
        this.parts.printer.setFault(name, onOff === 'on');
        return `${describeStatus(this.status())}\n`;
      }
      case 'disconnect':
        return this.apply({ disconnect: true }) ? 'disconnected\n' : 'no link to disconnect\n';
      case 'slow-link':
      case 'slow-print': {
        const value = parseSpeed(args[0]);
        if (value === undefined) {
          const unit = verb === 'slow-link' ? 'bytes per second' : 'mm per second';
          return `error: ${verb}: give a number of ${unit} or off, e.g. ${verb} ${verb === 'slow-link' ? 960 : 60}\n`;
        }
        this.apply(verb === 'slow-link' ? { slowLinkBps: value } : { slowPrintMmPerSec: value });
        return `${describeStatus(this.status())}\n`;
      }
      case 'tickets': {
        const list = this.tickets();
        if (list.length === 0) return 'no tickets\n';
        return list.map((t) => `${t.summary}${t.cut ? '' : ' (open)'}\n`).join('');
      }
      default:
        return `error: unknown command ${JSON.stringify(verb)}; type help\n`;
    }
  }
}

function parseSpeed(word: string | undefined): number | null | undefined {
  if (word === 'off' || word === '0') return null;
  if (word === undefined || !/^\d+(\.\d+)?$/.test(word)) return undefined;
  const n = Number(word);
  return n > 0 ? n : null;
}

export const HELP = `commands:
  status                      printer state, faults, buffer, tickets, link
  fault NAME on|off           switch a fault; NAME is one of:
                              ${FAULT_LIST}
  disconnect                  drop the current link (the printer keeps its buffer)
  slow-link BPS|off           cap the link at BPS bytes per second each way (960 = 9600 baud)
  slow-print MM|off           print at MM mm of paper per second
  tickets                     one line per ticket
  help                        this text
`;

/** `online, faults: none, buffered 0 B, 2 tickets, link tcp://127.0.0.1:9100 (connected), ...` */
export function describeStatus(s: EmulatorStatus): string {
  const speed = (v: number | null, unit: string) => (v === null ? 'off' : `${v} ${unit}`);
  return [
    s.online ? 'online' : 'offline',
    `faults: ${s.faults.length ? s.faults.join(' ') : 'none'}`,
    `buffered ${s.bufferedBytes} B${s.busy ? ' (busy)' : ''}`,
    `${s.tickets} ticket${s.tickets === 1 ? '' : 's'}`,
    `link ${s.link.address ?? '-'} (${s.link.connected ? 'connected' : 'no host'})`,
    `slow link ${speed(s.link.slowLinkBps, 'B/s')}`,
    `slow print ${speed(s.link.slowPrintMmPerSec, 'mm/s')}`,
  ].join(', ');
}

/**
 * Reads commands line by line from `input` and answers on `output`. Returns a function that stops
 * listening (it does not close either stream). The end of `input` just stops the protocol.
 */
export function attachLineProtocol(
  control: EmulatorControl,
  input: Readable,
  output: Writable,
): () => void {
  let pending = '';
  const onData = (chunk: Buffer | string) => {
    pending += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    let nl = pending.indexOf('\n');
    while (nl >= 0) {
      const line = pending.slice(0, nl).replace(/\r$/, '');
      pending = pending.slice(nl + 1);
      const reply = control.command(line);
      if (reply) output.write(reply);
      nl = pending.indexOf('\n');
    }
  };
  input.on('data', onData);
  return () => {
    input.off('data', onData);
  };
}
