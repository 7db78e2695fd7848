/**
 * Is the system clock known to be synchronized? The anti-replay age of print instructions
 * (print-protocol v1.1 §4, "freshness") is applied only when it is: a Raspberry Pi has no battery
 * clock and boots with a stale time until NTP syncs, and a wrong clock must never cost a receipt.
 *
 * How it is read on Linux, in order (config `freshness.clock: detect`):
 * 1. `/run/systemd/timesync/synchronized` exists: synchronized. systemd-timesyncd (the default on
 *    Raspberry Pi OS and Debian) creates it at its first successful sync and removes it at boot.
 * 2. `timedatectl show -p NTPSynchronized --value` answers `yes`: synchronized; `no`: not. timedated
 *    reads the kernel's own sync state (adjtimex: the STA_UNSYNC flag), which chrony and ntpd keep
 *    too, so this covers them. Bounded by a short timeout.
 * 3. Anything else (no systemd, no D-Bus, a timeout, another answer): unknown, which counts as not
 *    synchronized: the rule is skipped and job events say so.
 * `freshness.clock: synchronized` trusts the clock without asking (a board with a real-time clock);
 * `unsynchronized` never applies the rule.
 *
 * Reading spawns a process, so it never happens on the inbox's ack path: `current()` returns the
 * cached reading at once and, when it is older than `maxAgeMs`, starts a refresh in the
 * background for the next caller. The agent awaits one `refresh()` at start.
 */

import { execFile } from 'node:child_process';
import { access } from 'node:fs/promises';
import { errorMessage } from '../errors.js';

export const CLOCK_MODES = ['detect', 'synchronized', 'unsynchronized'] as const;
export type ClockMode = (typeof CLOCK_MODES)[number];

export const TIMESYNCD_FLAG_FILE = '/run/systemd/timesync/synchronized';
export const TIMEDATECTL_COMMAND: readonly [string, ...string[]] = [
  'timedatectl',
  'show',
  '-p',
  'NTPSynchronized',
  '--value',
];

export interface ClockReading {
  /** The age rule may be applied. */
  synchronized: boolean;
  /** Where the answer came from. */
  source: 'config' | 'systemd-timesyncd' | 'timedatectl' | 'none';
  /** One sentence for logs and the CLOCK_UNSYNCHRONIZED warning; never a secret. */
  detail: string;
  /** When it was read (ms since the epoch). */
  at: number;
}

export interface ClockSyncOptions {
  mode?: ClockMode;
  /** The systemd-timesyncd flag file; tests point it elsewhere. */
  flagFile?: string;
  /** The command asked next (stdout `yes`/`no`); null: do not ask. */
  command?: readonly [string, ...string[]] | null;
  /** Bound on the command; default 2 s. */
  timeoutMs?: number;
  /** A reading older than this is refreshed in the background; default 60 s. */
  maxAgeMs?: number;
  now?: () => number;
}

/** The part of ClockSync the inbox reads. */
export interface ClockSource {
  current(): ClockReading;
}

export class ClockSync implements ClockSource {
  private readonly mode: ClockMode;
  private readonly flagFile: string;
  private readonly command: readonly [string, ...string[]] | null;
  private readonly timeoutMs: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;
  private reading: ClockReading;
  private running: Promise<ClockReading> | null = null;

  constructor(options: ClockSyncOptions = {}) {
    this.mode = options.mode ?? 'detect';
    this.flagFile = options.flagFile ?? TIMESYNCD_FLAG_FILE;
    this.command = options.command === undefined ? TIMEDATECTL_COMMAND : options.command;
    this.timeoutMs = options.timeoutMs ?? 2000;
    this.maxAgeMs = options.maxAgeMs ?? 60_000;
    this.now = options.now ?? Date.now;
    this.reading =
      this.mode === 'detect'
        ? {
            synchronized: false,
            source: 'none',
            detail: 'the system clock has not been checked yet',
            at: Number.NEGATIVE_INFINITY,
          }
        : fixed(this.mode, this.now());
  }

  /** The cached reading, at once; a stale one is refreshed in the background. */
  current(): ClockReading {
    if (this.mode === 'detect' && this.now() - this.reading.at > this.maxAgeMs) {
      void this.refresh();
    }
    return this.reading;
  }

  /** Reads the system now (one read at a time); never rejects. */
  refresh(): Promise<ClockReading> {
    if (this.mode !== 'detect') return Promise.resolve(this.reading);
    this.running ??= this.detect()
      .catch(
        (error: unknown): ClockReading => ({
          synchronized: false,
          source: 'none',
          detail: `the clock's synchronization could not be read (${errorMessage(error)})`,
          at: this.now(),
        }),
      )
      .then((reading) => {
        this.reading = reading;
        this.running = null;
        return reading;
      });
    return this.running;
  }

  private async detect(): Promise<ClockReading> {
    const at = this.now();
    if (await exists(this.flagFile)) {
      return {
        synchronized: true,
        source: 'systemd-timesyncd',
        detail: `system clock synchronized (${this.flagFile} exists)`,
        at,
      };
    }
    if (this.command !== null) {
      const answer = await run(this.command, this.timeoutMs);
      const name = this.command.join(' ');
      if (answer === 'yes')
        return {
          synchronized: true,
          source: 'timedatectl',
          detail: `system clock synchronized (${name}: yes)`,
          at,
        };
      if (answer === 'no')
        return {
          synchronized: false,
          source: 'timedatectl',
          detail: `the system clock is not synchronized (${name}: no)`,
          at,
        };
    }
    return {
      synchronized: false,
      source: 'none',
      detail: `the system clock is not known to be synchronized (no ${this.flagFile}${this.command ? `, no answer from ${this.command[0]}` : ''})`,
      at,
    };
  }
}

function fixed(mode: 'synchronized' | 'unsynchronized', at: number): ClockReading {
  return mode === 'synchronized'
    ? {
        synchronized: true,
        source: 'config',
        detail: 'system clock trusted (freshness.clock: synchronized)',
        at,
      }
    : {
        synchronized: false,
        source: 'config',
        detail: 'the age check is off (freshness.clock: unsynchronized)',
        at,
      };
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** The command's trimmed stdout, or null (missing, failed, timed out). */
function run(command: readonly [string, ...string[]], timeoutMs: number): Promise<string | null> {
  const [file, ...args] = command;
  return new Promise((resolve) => {
    try {
      execFile(
        file,
        args,
        { timeout: timeoutMs, encoding: 'utf8', maxBuffer: 4096, windowsHide: true },
        (error, stdout) => resolve(error ? null : stdout.trim()),
      );
    } catch {
      resolve(null);
    }
  });
}
