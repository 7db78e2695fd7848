/**
 * Watches a printer's state: polls status while idle (a job in flight holds the link, so a poll
 * simply waits its turn), reports changes, and after the link drops reports `disconnected` at
 * once and keeps trying to reopen with capped exponential backoff and jitter (hotplug: a printer
 * unplugged and plugged back in comes back by itself).
 */
import { EventEmitter } from 'node:events';
import type { Printer } from './printer.js';
import type { PrinterCondition } from './status.js';

export interface MonitorOptions {
  /** Poll interval while the printer is reachable. */
  intervalMs: number;
  /** First retry delay after the link is lost, doubled up to `maxBackoffMs`. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

interface MonitorEvents {
  change: [condition: PrinterCondition, previous: PrinterCondition | null];
  error: [error: Error];
}

export class PrinterMonitor extends EventEmitter<MonitorEvents> {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private failures = 0;
  private current: PrinterCondition | null = null;
  private lastReport: number | null = null;
  private readonly onClose = () => {
    this.report({
      state: 'disconnected',
      paper: 'unknown',
      coverOpen: null,
      drawerPinHigh: null,
      causes: ['link closed'],
    });
    this.schedule(this.backoff());
  };

  constructor(
    private readonly printer: Printer,
    private readonly options: MonitorOptions,
  ) {
    super();
  }

  get condition(): PrinterCondition | null {
    return this.current;
  }

  /** When the condition was last learnt (a status reply, or the link closing); null before. */
  get checkedAt(): number | null {
    return this.lastReport;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.printer.transport.on('close', this.onClose);
    this.schedule(0);
  }

  stop(): void {
    this.running = false;
    this.printer.transport.off('close', this.onClose);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Polls now (e.g. right after a job, or when someone refilled paper and pressed a button). */
  async poll(): Promise<PrinterCondition> {
    const condition = await this.printer.status();
    this.report(condition);
    return condition;
  }

  private backoff(): number {
    const initial = this.options.initialBackoffMs ?? 500;
    const max = this.options.maxBackoffMs ?? 30_000;
    const base = Math.min(max, initial * 2 ** Math.min(this.failures, 16));
    this.failures++;
    // Full jitter in the upper half: several agents do not hammer a shared network printer together.
    return Math.round(base / 2 + Math.random() * (base / 2));
  }

  private schedule(delayMs: number): void {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), delayMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.timer = null;
    try {
      const condition = await this.poll();
      if (condition.state === 'disconnected') this.schedule(this.backoff());
      else {
        this.failures = 0;
        this.schedule(this.options.intervalMs);
      }
    } catch (error) {
      this.emit('error', error as Error);
      this.schedule(this.backoff());
    }
  }

  private report(condition: PrinterCondition): void {
    const previous = this.current;
    this.current = condition;
    this.lastReport = Date.now();
    if (
      !previous ||
      previous.state !== condition.state ||
      previous.paper !== condition.paper ||
      previous.coverOpen !== condition.coverOpen ||
      // The cash drawer opened or closed (issue 41): the published status follows it.
      previous.drawerPinHigh !== condition.drawerPinHigh
    ) {
      this.emit('change', condition, previous);
    }
  }
}
