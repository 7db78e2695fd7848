/**
 * A virtual clock for the poller (its `Clock`) and the order service (`now`). Sleeps up to
 * `autoAdvanceMaxMs` (the 10-second query spacing) move time forward by themselves on the next
 * turn of the event loop, so a test never waits for them; longer ones (the round interval) wait
 * for `advance`, so the test decides when a scheduled round runs.
 *
 * It starts at the real now (whole seconds, as `createTime` holds them), never at a fixed date:
 * the agent under test judges an order's age by the real clock (anti-replay age, LATE), so a
 * fixed start turns into "a week old" once the calendar moves on (issue 37).
 */
import type { Clock } from '../../src/catchup/clock.js';

interface Timer {
  at: number;
  fire: () => void;
}

export class VirtualClock implements Clock {
  private t: number;
  private readonly timers = new Set<Timer>();
  private readonly autoAdvanceMaxMs: number;
  /** Every sleep asked for, in ms: what the poller waited. */
  readonly sleeps: number[] = [];

  constructor(options: { autoAdvanceMaxMs?: number } = {}) {
    this.t = Math.floor(Date.now() / 1000) * 1000;
    this.autoAdvanceMaxMs = options.autoAdvanceMaxMs ?? 60_000;
  }

  now(): number {
    return this.t;
  }

  /** As a Date, for the order service's `now` option. */
  date(): Date {
    return new Date(this.t);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    return new Promise<void>((resolve) => {
      if (signal?.aborted) {
        resolve();
        return;
      }
      const timer: Timer = {
        at: this.t + Math.max(0, ms),
        fire: () => {
          this.timers.delete(timer);
          signal?.removeEventListener('abort', timer.fire);
          resolve();
        },
      };
      signal?.addEventListener('abort', timer.fire, { once: true });
      this.timers.add(timer);
      if (ms <= this.autoAdvanceMaxMs) {
        setImmediate(() => {
          if (this.timers.has(timer)) this.advanceTo(timer.at);
        });
      }
    });
  }

  /** Moves time forward and wakes every sleeper that is due. */
  advance(ms: number): void {
    this.advanceTo(this.t + ms);
  }

  private advanceTo(at: number): void {
    if (at > this.t) this.t = at;
    for (const timer of [...this.timers]) if (timer.at <= this.t) timer.fire();
  }
}
