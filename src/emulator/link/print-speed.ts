/**
 * Slow printing: a print head that moves paper at a given number of mm per second (escpos-notes
 * "Speeds": 200-350 mm/s for mainstream 80 mm printers, 60-90 mm/s for cheap 58 mm ones).
 *
 * The printer core executes its receive buffer synchronously and counts the paper it has fed in
 * `paper.printedDots` (8 dots per mm at 203 dpi). The limiter keeps a virtual clock of when the
 * head will be free: every time `printedDots` grows by d dots, the head is busy for
 * d / (8 * mm/s) seconds after it was last free; while that time lies in the future the printer is
 * held with `pausePrinting(true)`, and a timer releases it when the paper has "come out". Held
 * data waits in the receive buffer, fills it and turns the printer busy, and in-order replies
 * (`GS r 1`, `GS ( H`) come only once the paper before them has been printed, as on a real printer.
 *
 * To stop the head between two commands rather than after a whole buffer, the limiter watches
 * `printedDots` as it is written: it replaces the paper's plain `printedDots` field with an
 * accessor on that one instance. The decoder checks its hold flag before each command, so a
 * pause requested while a command feeds paper takes effect before the next command. `close()`
 * puts the plain field back.
 */
import { EventEmitter } from 'node:events';
import type { VirtualPaper } from '../core/paper.js';
import type { VirtualPrinter } from '../core/virtual-printer.js';

/** 203 dpi thermal heads: 8 dots per mm. */
export const DOTS_PER_MM = 8;

export interface PrintSpeedEvents {
  /** The head is behind: printing holds for `ms` milliseconds. */
  wait: [ms: number];
  /** The head caught up: printing goes on. */
  resume: [];
}

export class PrintSpeedLimiter extends EventEmitter<PrintSpeedEvents> {
  private speed: number | null = null;
  private headFreeAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private dots: number;
  private readonly paper: VirtualPaper;
  private closed = false;

  constructor(
    readonly printer: VirtualPrinter,
    mmPerSec: number | null = null,
  ) {
    super();
    this.paper = printer.paper;
    const field = Object.getOwnPropertyDescriptor(this.paper, 'printedDots');
    if (!field || !('value' in field) || typeof field.value !== 'number' || !field.writable) {
      // The core changed shape: fail loudly rather than silently print at full speed.
      throw new Error('print-speed: VirtualPaper.printedDots is no longer a plain number field');
    }
    this.dots = field.value;
    Object.defineProperty(this.paper, 'printedDots', {
      configurable: true,
      enumerable: true,
      get: () => this.dots,
      set: (value: number) => {
        const fed = value - this.dots;
        this.dots = value;
        if (fed > 0) this.fed(fed);
      },
    });
    this.setSpeed(mmPerSec);
  }

  /** Paper speed in mm per second, or null for as fast as the data comes. */
  get mmPerSec(): number | null {
    return this.speed;
  }

  /** True while printing is held for the head to catch up. */
  get waiting(): boolean {
    return this.timer !== undefined;
  }

  /** Changes the speed at run time; null (or 0) removes the limit and releases a held printer. */
  setSpeed(mmPerSec: number | null): void {
    if (mmPerSec !== null && (!Number.isFinite(mmPerSec) || mmPerSec < 0)) {
      throw new RangeError(`slowPrintMmPerSec: must be > 0: ${mmPerSec}`);
    }
    this.speed = mmPerSec === 0 ? null : mmPerSec;
    if (this.speed === null) {
      this.headFreeAt = 0;
      if (this.timer) this.release();
    }
    // A new speed applies to paper fed from now on; a wait already started keeps its end.
  }

  /** Restores the plain field and releases the printer. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.speed = null;
    if (this.timer) this.release();
    Object.defineProperty(this.paper, 'printedDots', {
      configurable: true,
      enumerable: true,
      writable: true,
      value: this.dots,
    });
  }

  private fed(dots: number): void {
    if (this.speed === null) return;
    const now = performance.now();
    const start = Math.max(now, this.headFreeAt);
    this.headFreeAt = start + (dots * 1000) / (this.speed * DOTS_PER_MM);
    const ms = this.headFreeAt - now;
    if (ms < 1) return; // below timer resolution: not worth a stop
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.release(), ms);
    this.printer.pausePrinting(true);
    this.emit('wait', ms);
  }

  private release(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.emit('resume');
    // Runs the held commands now; the first one that feeds paper may hold the printer again.
    this.printer.pausePrinting(false);
  }
}
