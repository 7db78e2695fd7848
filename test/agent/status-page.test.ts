/**
 * Issue 17 item 1 in a real browser: Debian's chromium, driven by Playwright, against a real agent
 * (child process), Mosquitto and the emulator. The page shows a paper-out within the status
 * interval and its recovery; a job's preview loads (personal data masked until asked for); a
 * reprint confirmed on the page arrives on the emulator's paper marked REPRINT; a cross-site form
 * post is refused and prints nothing; over HTTPS with a token, the API refuses a request without
 * it and the page asks for it. Screenshots at 390 and 1280 px wide are taken (into
 * $STATUS_PAGE_SCREENSHOTS when set, for the README).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { PNG } from 'pngjs';
import { faultSuite } from '../faults/harness.js';
import { freePort, skipWithoutMosquitto } from '../helpers/mosquitto.js';
import { selfSignedCertificate } from '../helpers/test-ca.js';
import { waitFor } from '../helpers/waiting.js';

const CHROMIUM = '/usr/bin/chromium';
const skip =
  skipWithoutMosquitto() ||
  (existsSync(CHROMIUM) ? false : 'needs chromium (Debian package chromium)');

describe('the status page in chromium (child process)', { skip }, () => {
  const env = faultSuite();
  let browser: Browser;
  const dir = mkdtempSync(join(tmpdir(), 'pa-page-'));
  const shots = process.env.STATUS_PAGE_SCREENSHOTS ?? dir;
  before(async () => {
    // As root (CI), chromium's sandbox cannot start; the page is our own, served from loopback.
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('paper out and back, a preview, a confirmed reprint on paper, a cross-site post refused', async () => {
    const port = await freePort();
    const s = await env.stores.create({
      name: 'page',
      broker: env.broker,
      configure: (c) => {
        c.console = { port };
      },
    });
    await s.startOnline();
    await s.publish(1, {
      orderType: 3,
      deliveryFee: 500,
      packingFee: 200,
      userName: 'Maria Santos',
      userPhone: '09171234567',
      userAddress: '12 Mabini St.',
    });
    await s.waitForState(1, 'printed');

    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${port}/`);
    const state = page.locator('.printer[data-printer="receipt"] .printer-state');
    await state.filter({ hasText: /^ready$/ }).waitFor({ timeout: 15_000 });

    // Paper out: on the page within the status interval (the monitor's 1 s, the page's 2 s).
    s.emulator.setFault('paper-out', true);
    await state.filter({ hasText: /^paper-out$/ }).waitFor({ timeout: 15_000 });
    s.emulator.setFault('paper-out', false);
    await state.filter({ hasText: /^ready$/ }).waitFor({ timeout: 15_000 });

    // The job's preview: drawn from its bytes, 576 dots + margins wide, personal data masked.
    const job = page.locator('details.job').filter({ hasText: s.orderNo(1) });
    await job.locator('summary').click();
    const img = job.locator('img');
    await page.waitForFunction(
      (el) => {
        const image = el as unknown as { complete: boolean; naturalWidth: number } | null;
        return image?.complete === true && image.naturalWidth > 0;
      },
      await img.elementHandle(),
    );
    assert.equal(
      await img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth),
      608,
    );
    const src = (await img.getAttribute('src'))!;
    const masked = await (await page.request.get(`http://127.0.0.1:${port}${src}`)).text();
    assert.ok(!masked.includes('09171234567') && !masked.includes('Maria Santos'), 'masked');
    assert.match(masked, /M\*+/);
    const revealed = await (
      await page.request.get(`http://127.0.0.1:${port}${src}?reveal=1`)
    ).text();
    assert.ok(revealed.includes('09171234567'), 'shown when asked for');

    await page.screenshot({ path: join(shots, 'status-page-390.png'), fullPage: true });

    // A reprint from the page, confirmed in the browser's dialog.
    const questions: string[] = [];
    page.on('dialog', (dialog) => {
      questions.push(dialog.message());
      void dialog.accept();
    });
    await job.getByRole('button', { name: 'Reprint' }).click();
    await waitFor('the reprint on paper', () =>
      (s.printsByOrder().get(s.orderNo(1)) ?? []).some((p) => p.markings.includes('REPRINT')),
    );
    assert.match(questions[0] ?? '', /Reprint order .* marked REPRINT/);

    // Wide screen.
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.screenshot({ path: join(shots, 'status-page-1280.png'), fullPage: true });
    for (const [name, width] of [
      ['status-page-390.png', 390],
      ['status-page-1280.png', 1280],
    ] as const) {
      const png = PNG.sync.read(readFileSync(join(shots, name)));
      assert.equal(png.width, width, name);
    }

    // A page of another site posts a form to the agent: refused, nothing printed.
    const evilPort = await freePort();
    const evil = createHttpServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(
        `<form id="f" method="POST" enctype="text/plain" action="http://127.0.0.1:${port}/api/test-print"><input name='{"role":"receipt","x":"' value='"}'></form><script>document.getElementById("f").submit()</script>`,
      );
    });
    await new Promise<void>((r) => evil.listen(evilPort, '127.0.0.1', r));
    try {
      const attacker = await context.newPage();
      const answer = attacker.waitForResponse((r) => r.url().endsWith('/api/test-print'));
      await attacker.goto(`http://127.0.0.1:${evilPort}/`);
      assert.equal((await answer).status(), 403);
    } finally {
      await new Promise<void>((r) => evil.close(() => r()));
    }
    assert.ok(!s.events.some((e) => e.jobId?.startsWith('local-test:')), 'no test page was queued');
    await context.close();
  });

  it('an unconfirmed job retried from the page prints again marked POSSIBLE DUPLICATE', async () => {
    const port = await freePort();
    const s = await env.stores.create({
      name: 'pageretry',
      broker: env.broker,
      configure: (c) => {
        c.console = { port };
        (c.printers as Array<Record<string, unknown>>)[0]!.confirmTimeoutSec = 2;
      },
    });
    await s.startOnline();
    await waitFor('printer ready', () => s.printerState() === 'ready', 15_000);
    // The printer goes mute once the first ticket is on paper: its confirmation never comes.
    const onTicket = () => {
      s.emulator.off('ticket', onTicket);
      s.emulator.setFault('mute', true);
    };
    s.emulator.on('ticket', onTicket);
    await s.publish(1);
    await s.waitForState(1, 'unconfirmed', 30_000);
    s.emulator.setFault('mute', false);

    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    const questions: string[] = [];
    page.on('dialog', (dialog) => {
      questions.push(dialog.message());
      void dialog.accept();
    });
    await page.goto(`http://127.0.0.1:${port}/`);
    const job = page.locator('details.job').filter({ hasText: s.orderNo(1) });
    await job.filter({ hasText: 'unconfirmed' }).waitFor({ timeout: 15_000 });
    await job.locator('summary').click();
    await job.getByRole('button', { name: 'Retry' }).click();
    await s.waitForState(1, 'printed', 30_000);
    assert.match(questions[0] ?? '', /POSSIBLE DUPLICATE/, 'the person is told before');
    const prints = s.printsByOrder().get(s.orderNo(1)) ?? [];
    assert.equal(prints.length, 2);
    assert.deepEqual(prints[1]!.markings, ['POSSIBLE DUPLICATE']);
    await job.filter({ hasText: 'printed' }).waitFor({ timeout: 15_000 });
    await context.close();
  });

  it('over HTTPS with a token: no token, no answer; the page asks for it once', async () => {
    const { certFile, keyFile } = selfSignedCertificate(dir, 'console');
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'page-token-51c2\n', { mode: 0o600 });
    const port = await freePort();
    const s = await env.stores.create({
      name: 'pagetls',
      broker: env.broker,
      configure: (c) => {
        c.console = { port, certFile, keyFile, tokenFile };
      },
    });
    await s.startOnline();
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    const refused = await page.request.get(`https://127.0.0.1:${port}/api/status`);
    assert.equal(refused.status(), 401);
    await page.goto(`https://127.0.0.1:${port}/`);
    await page.locator('#login').waitFor({ state: 'visible' });
    await page.fill('#token', 'wrong');
    await page.click('#login-form button');
    await page.locator('#login-error').filter({ hasText: 'wrong token' }).waitFor();
    await page.fill('#token', 'page-token-51c2');
    await page.click('#login-form button');
    await page
      .locator('.printer[data-printer="receipt"] .printer-state')
      .filter({ hasText: /^(ready|unknown)$/ })
      .waitFor({ timeout: 15_000 });
    assert.equal(await page.locator('#login').isVisible(), false);
    const html = await page.content();
    assert.ok(!html.includes('page-token-51c2'), 'the token is never in the page');
    await context.close();
  });
});
