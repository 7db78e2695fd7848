/**
 * Debian's chromium for the page's browser tests, driven by Playwright.
 *
 * The browser stands for a person's phone or laptop, whose clock is not the Pi's: it runs on the
 * machine's real clock even when CI's date guard (issue 37) runs the suite under libfaketime.
 * Under libfaketime chromium also runs about 15 times slower (it reads the clock constantly),
 * which would turn the page tests into tests of the machine's speed.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** The reason to skip a browser test on a machine without chromium, or false. */
export const chromiumSkip: string | false = existsSync(CHROMIUM)
  ? false
  : 'needs chromium (Debian package chromium)';

/** The environment of this process without libfaketime's variables. */
function realClockEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || name === 'LD_PRELOAD' || name.startsWith('FAKETIME')) continue;
    env[name] = value;
  }
  return env;
}

export function launchChromium(): Promise<Browser> {
  // As root (CI), chromium's sandbox cannot start; the pages are our own, served from loopback.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], env: realClockEnv() });
}
