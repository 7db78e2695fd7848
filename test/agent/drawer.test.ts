/**
 * Issue 41 item 4 against a real agent (child process, its config through the real schema),
 * Mosquitto and the emulator: a store with `drawer: { openOn: ["offline"], pin: 5 }` opens the
 * drawer for a cash order and not for a card order; `printer-agent drawer open` pulses it through
 * the local API, which refuses a request without the credential (nothing reaches the printer);
 * and the drawer's sensor (kick-out pin 3) shows in `status`, in the published status and on the
 * status page (chromium) once the emulator's `drawer-pin-high` flag is set.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { freePort, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import type { PaperEvent } from '../../src/emulator/index.js';
import { faultSuite, type Json, nowCreateTime } from '../faults/harness.js';
import { chromiumSkip, launchChromium } from '../helpers/browser.js';
import { runCliInProcess } from '../helpers/cli.js';

type DrawerEvent = Extract<PaperEvent, { type: 'drawer' }>;

async function post(
  port: number,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: Json }> {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Json }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the cash drawer with a running agent (issue 41)', {
  skip: skipWithoutMosquitto(),
}, () => {
  const env = faultSuite();

  it('cash order kicks on pin 5, card does not; `drawer open` kicks with the credential only; pin 3 in the status', async () => {
    const port = await freePort();
    const s = await env.stores.create({
      name: 'drawer',
      broker: env.broker,
      configure: (c) => {
        c.console = { port };
        c.drawer = { openOn: ['offline'], pin: 5 };
      },
    });
    await s.startOnline();
    const pulses = () =>
      s.emulator
        .tickets()
        .flatMap((t) => t.events)
        .filter((e): e is DrawerEvent => e.type === 'drawer');

    // Cash (paymentWay 2) then card (paymentWay 1): one pulse, on the configured pin.
    await s.publish(1);
    const at = nowCreateTime();
    await s.publish(2, {
      paymentWay: 1,
      paymentChannel: 'CHANNEL_B_URL',
      transactionCreateTime: at,
      transactionReturnTime: at,
    });
    await s.waitForState(1, 'printed');
    await s.waitForState(2, 'printed');
    assert.deepEqual(
      pulses().map((e) => [e.pin, e.onMs, e.offMs]),
      [[5, 100, 500]],
      'the cash receipt opened the drawer once, pin 5, the default pulse',
    );

    // Without the credential: refused, and nothing reaches the printer.
    const local = { host: `127.0.0.1:${port}`, 'content-type': 'application/json' };
    for (const headers of [local, { ...local, authorization: 'Bearer guess' }]) {
      const refused = await post(port, '/api/drawer/open', headers, '{}');
      assert.equal(refused.status, 401, JSON.stringify(refused.body));
      assert.equal((refused.body.error as Json).code, 'UNAUTHORIZED');
    }
    // The command, run by a user who cannot read the agent's local token (another state dir):
    // refused too, saying why.
    const stranger = JSON.parse(readFileSync(s.configPath, 'utf8')) as Json;
    stranger.stateDir = mkdtempSync(join(tmpdir(), 'pa-drawer-stranger-'));
    const strangerConfig = join(stranger.stateDir as string, 'config.json');
    writeFileSync(strangerConfig, JSON.stringify(stranger), { mode: 0o600 });
    const denied = await runCliInProcess(['drawer', 'open', '--config', strangerConfig]);
    rmSync(stranger.stateDir as string, { recursive: true, force: true });
    assert.equal(denied.status, 1);
    assert.match(denied.stderr, /a valid token is required.*local token.*HTTP 401 UNAUTHORIZED/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(pulses().length, 1, 'no pulse without the credential');

    // The manager's command on the Pi (the local token of the agent's state dir).
    const opened = await runCliInProcess(['drawer', 'open', '--config', s.configPath]);
    assert.equal(opened.status, 0, opened.stderr);
    assert.equal(opened.stdout, 'drawer opened on printer receipt (pin 5)\n');
    await waitFor('the second pulse', () => pulses().length === 2);
    const manual = pulses()[1]!;
    assert.deepEqual([manual.pin, manual.realtime], [5, false], 'ESC p on pin 5, between jobs');
    await waitFor('logged', () => s.output.includes('cash drawer opened locally'));
    // A role nobody serves is named.
    const kitchen = await runCliInProcess([
      'drawer',
      'open',
      '--printer',
      'kitchen',
      '--config',
      s.configPath,
    ]);
    assert.equal(kitchen.status, 1);
    assert.match(kitchen.stderr, /no configured printer serves role kitchen/);

    // The drawer's sensor, pin 3: low, then high once the emulator reads it so.
    const statusJson = async () => {
      const r = await runCliInProcess(['status', '--config', s.configPath, '--json']);
      // 3: a printer that cannot print (below: paper out).
      assert.ok(r.status === 0 || r.status === 3, r.stderr);
      return (JSON.parse(r.stdout) as { printers: Json[] }).printers[0]!;
    };
    assert.equal((await statusJson()).drawerPinHigh, false);
    s.emulator.setFault('drawer-pin-high', true);
    await waitFor(
      'pin 3 high in the status',
      async () => (await statusJson()).drawerPinHigh === true,
    );
    const human = await runCliInProcess(['status', '--config', s.configPath]);
    assert.match(human.stdout, /^printer receipt: ready .*, drawer pin 3 high$/m);
    // The published status (print-protocol §7) follows the drawer without waiting for its timer.
    await waitFor('pin 3 high in the published status', () => {
      const printers = s.lastStatus()?.printers as Json[] | undefined;
      return printers?.[0]?.drawerPinHigh === true;
    });

    // A printer that cannot print would keep the pulse in its buffer: refused, exit 3, no pulse.
    s.emulator.setFault('paper-out', true);
    await waitFor('paper out seen', async () => (await statusJson()).state === 'paper-out');
    const notReady = await runCliInProcess(['drawer', 'open', '--config', s.configPath]);
    assert.equal(notReady.status, 3, notReady.stderr);
    assert.match(notReady.stderr, /^PRINTER_NOT_READY: printer receipt: paper-out/m);
    assert.equal(pulses().length, 2);
  });

  it('the status page shows pin 3, low then high', { skip: chromiumSkip }, async () => {
    const port = await freePort();
    const s = await env.stores.create({
      name: 'drawer-page',
      broker: env.broker,
      configure: (c) => {
        c.console = { port };
      },
    });
    await s.startOnline();
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${port}/`);
      const drawer = page.locator('.printer[data-printer="receipt"] .drawer');
      await drawer.filter({ hasText: /^drawer pin 3 low$/ }).waitFor({ timeout: 15_000 });
      s.emulator.setFault('drawer-pin-high', true);
      await drawer.filter({ hasText: /^drawer pin 3 high$/ }).waitFor({ timeout: 15_000 });
    } finally {
      await browser.close();
    }
  });
});
