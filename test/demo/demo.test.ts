/**
 * `printer-agent demo` (`npm start`) as a person runs it: a child process, its stdout read as it
 * comes. The sample receipts must come out of the emulator with the right content, the printed
 * `curl` command must create and print one more order (and, run again, the same order: it is
 * idempotent), the printed new-order script a new order at each run, the status page must
 * listen on a free port when 8631 is taken, and Ctrl-C (SIGINT) must stop everything with exit 0
 * and remove the temp dir. Every wait is on the child's output or its exit.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliEntry, SOURCE_CLI } from '../../harness/child-entry.js';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { chromiumSkip, launchChromium } from '../helpers/browser.js';
import { ROOT } from '../helpers/cli.js';

/** A deadline so that a broken demo fails the test instead of hanging it; never a measurement. */
const DEADLINE_MS = 60_000;

const CURL_SKIP = 'needs curl (Debian package curl)';
const curlSkip = spawnSync('curl', ['--version'], { stdio: 'ignore' }).error ? CURL_SKIP : false;

class Demo {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  private readonly waiters = new Set<() => void>();
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  /** `entry`: the argv before `args` (harness/child-entry.ts). */
  constructor(args: string[], entry: readonly string[]) {
    this.child = spawn(process.execPath, [...entry, ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout?.on('data', (d: Buffer) => {
      this.stdout += d;
      for (const wake of [...this.waiters]) wake();
    });
    this.child.stderr?.on('data', (d: Buffer) => (this.stderr += d));
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        for (const wake of [...this.waiters]) wake();
        resolve({ code, signal });
      }),
    );
  }

  /** Resolves with the first match of `pattern` in stdout, as soon as it is there. */
  output(pattern: RegExp, what: string): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(this.stdout);
        if (match) done(() => resolve(match));
        else if (this.child.exitCode !== null || this.child.signalCode !== null)
          done(() => reject(new Error(`demo exited before ${what}\n${this.transcript()}`)));
      };
      const timer = setTimeout(
        () =>
          done(() =>
            reject(new Error(`no ${what} within ${DEADLINE_MS} ms\n${this.transcript()}`)),
          ),
        DEADLINE_MS,
      );
      const done = (finish: () => void) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        finish();
      };
      this.waiters.add(check);
      check();
    });
  }

  /** One receipt's box, from its `receipt N:` heading to the bottom edge of the paper. */
  async receipt(number: number): Promise<{ heading: string; orderNo: string; paper: string }> {
    const m = await this.output(
      new RegExp(
        `^receipt ${number}: order (\\S+?)(?:,[^\\n]*)?\\n((?:  [│┌][^\\n]*\\n)+)  └`,
        'm',
      ),
      `receipt ${number}`,
    );
    return { heading: m[0].split('\n')[0]!, orderNo: m[1]!, paper: m[2]! };
  }

  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGINT');
    return this.exited;
  }

  transcript(): string {
    return `--- stdout\n${this.stdout}\n--- stderr\n${this.stderr}`;
  }
}

describe('printer-agent demo (embedded broker)', () => {
  let demo: Demo;
  let tempDir: string;

  before(async () => {
    // `npm start` runs exactly this: the sources through tsx.
    demo = new Demo(['demo'], SOURCE_CLI);
    tempDir = (await demo.output(/^temp dir\s+(\S+)$/m, 'the temp dir line'))[1]!;
  });

  after(async () => {
    await demo.stop();
  });

  it('prints the three sample orders, each receipt with its order number, codes and amounts', async () => {
    await demo.receipt(3);
    const created = [...demo.stdout.matchAll(/^order (\S+) created: (.*)$/gm)].map((m) => ({
      orderNo: m[1]!,
      line: m[2]!,
    }));
    assert.equal(created.length, 3);

    const table = await demo.receipt(1);
    assert.equal(table.orderNo, created[0]!.orderNo);
    assert.match(table.paper, /TABLE ORDER/);
    assert.match(table.paper, new RegExp(`Order no\\.\\s+${table.orderNo} `));
    assert.match(table.paper, /Service fee\s+₱106\.80 /);
    assert.match(table.paper, /TOTAL\s+₱1,174\.80 /);
    assert.match(table.paper, /Payment\s+Offline /);

    const queue = await demo.receipt(2);
    assert.equal(queue.orderNo, created[1]!.orderNo);
    const pickUp = /pick-up code (\S+)$/.exec(created[1]!.line)?.[1];
    assert.ok(pickUp, `no pick-up code in "${created[1]!.line}"`);
    assert.match(queue.paper, /PICK-UP CODE/);
    assert.match(queue.paper, new RegExp(`│ +${pickUp} +│`));
    assert.match(queue.paper, /Promo discount \(whole order\)\s+-₱80\.00 /);
    assert.match(queue.paper, /Channel\s+E-wallet B \(dynamic QR\) /);
    assert.match(queue.paper, /TOTAL\s+₱720\.00 /);

    const takeout = await demo.receipt(3);
    assert.equal(takeout.orderNo, created[2]!.orderNo);
    assert.match(takeout.paper, /TAKEOUT ORDER/);
    assert.match(takeout.paper, /Delivery fee\s+₱49\.00 /);
    assert.match(takeout.paper, /Packing fee\s+₱15\.00 /);
    assert.match(takeout.paper, /SC discount\s+-₱88\.00 /);
    assert.match(takeout.paper, /TOTAL\s+₱867\.90 /);
    assert.match(takeout.paper, /Maria Clara Santos/);

    assert.equal(new Set(created.map((c) => c.orderNo)).size, 3, 'order numbers are distinct');
    // The three receipts, each once: nothing else was printed.
    assert.equal(demo.stdout.match(/^receipt \d+:/gm)?.length, 3);
    assert.ok(existsSync(join(tempDir, 'paper', '0003.txt')), 'tickets are written to paper/');
  });

  it('creates and prints one more order with the printed curl command', {
    skip: curlSkip,
  }, async () => {
    const curl = (await demo.output(/^curl .*$/m, 'the curl command'))[0];
    assert.match(curl, /'Content-Type: application\/json'/);
    const run = spawnSync('sh', ['-c', curl], { encoding: 'utf8', timeout: DEADLINE_MS });
    assert.equal(run.status, 0, run.stderr);
    const reply = JSON.parse(run.stdout) as {
      code: number;
      data: { orderNo: string; pickUpNo: string };
    };
    assert.equal(reply.code, 10000, run.stdout);

    const extra = await demo.receipt(4);
    assert.equal(extra.orderNo, reply.data.orderNo);
    assert.match(extra.paper, /QUEUE ORDER/);
    assert.match(extra.paper, new RegExp(`│ +${reply.data.pickUpNo} +│`));
    assert.match(extra.paper, /Tapsilog/);
    assert.match(extra.paper, /TOTAL\s+₱255\.00 /);
    assert.match(extra.paper, /Created with curl/);

    // Issue 42 item 14: the same command again is the same create (its paymentTransactionId is
    // the idempotency key), as the demo now says; the script it prints makes a new order each run.
    const again = spawnSync('sh', ['-c', curl], { encoding: 'utf8', timeout: DEADLINE_MS });
    assert.equal(again.status, 0, again.stderr);
    assert.equal(
      (JSON.parse(again.stdout) as { data: { orderNo: string } }).data.orderNo,
      reply.data.orderNo,
    );
    assert.match(demo.stdout, /Run again, it answers the same order and prints nothing new/);
    assert.doesNotMatch(demo.stdout, /each run of the command is a new order/);
    const script = (await demo.output(/^sh (\S+\/new-order\.sh)$/m, 'the new-order script'))[1]!;
    const orderNos: string[] = [];
    for (const n of [5, 6]) {
      const run = spawnSync('sh', [script], { encoding: 'utf8', timeout: DEADLINE_MS });
      assert.equal(run.status, 0, run.stderr);
      const created = JSON.parse(run.stdout) as { code: number; data: { orderNo: string } };
      assert.equal(created.code, 10000, run.stdout);
      // Receipts are numbered as the printer cuts them: the repeated curl printed nothing.
      const receipt = await demo.receipt(n);
      assert.equal(receipt.orderNo, created.data.orderNo);
      assert.match(receipt.paper, /Tapsilog/);
      orderNos.push(created.data.orderNo);
    }
    assert.equal(new Set([reply.data.orderNo, ...orderNos]).size, 3, 'three distinct orders');
  });

  it('prints the status page address, and the page shows the demo receipts with previews', {
    skip: chromiumSkip,
  }, async () => {
    const url = (await demo.output(/^page\s+(http:\/\/127\.0\.0\.1:\d+)\/ /m, 'the page line'))[1]!;
    await demo.receipt(3);
    const orderNos = [...demo.stdout.matchAll(/^order (\S+) created: /gm)].map((m) => m[1]!);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
      await page.goto(`${url}/`);
      await page
        .locator('.printer[data-printer="receipt"] .printer-state')
        .filter({ hasText: /^ready$/ })
        .waitFor({ timeout: DEADLINE_MS });
      for (const orderNo of orderNos.slice(0, 3)) {
        const job = page.locator('details.job').filter({ hasText: orderNo });
        await job.waitFor({ timeout: DEADLINE_MS });
        assert.match((await job.locator('summary').textContent()) ?? '', /printed/);
      }
      // The first receipt's preview: an SVG drawn from its bytes, showing its order number.
      const first = page.locator('details.job').filter({ hasText: orderNos[0]! });
      await first.locator('summary').click();
      const src = (await first.locator('img').getAttribute('src'))!;
      const svg = await (await page.request.get(`${url}${src}`)).text();
      assert.match(svg, /^<svg /);
      assert.ok(svg.includes(orderNos[0]!), 'the preview shows the order number');
      assert.match(svg, /TOTAL/);
    } finally {
      await browser.close();
    }
  });

  it('stops on SIGINT with exit code 0 and removes its temp dir', async () => {
    await demo.output(/^Ctrl-C stops everything\.$/m, 'the ready line');
    const { code, signal } = await demo.stop();
    assert.equal(signal, null, demo.transcript());
    assert.equal(code, 0, demo.transcript());
    assert.match(demo.stdout, /\nstopped\n$/);
    assert.equal(existsSync(tempDir), false, `${tempDir} is still there`);
    assert.equal(demo.stderr, '', 'nothing on stderr');
  });
});

describe('printer-agent demo with the status page port taken', () => {
  let holder: Server | null = null;
  before(async () => {
    // 8631 held as another agent or demo would hold it (if something else holds it already, the
    // demo faces the same).
    const server = createServer();
    holder = await new Promise<Server | null>((resolve) => {
      server.once('error', () => resolve(null));
      server.listen({ port: 8631, host: '127.0.0.1', exclusive: true }, () => resolve(server));
    });
  });
  after(() => holder?.close());

  it('listens on a free port instead, prints it, and the page answers there (bundle)', async () => {
    const demo = new Demo(['demo', '--orders', '0'], cliEntry());
    try {
      const page = await demo.output(/^page\s+(http:\/\/127\.0\.0\.1:(\d+))\/ /m, 'the page line');
      const port = Number(page[2]);
      assert.notEqual(port, 8631);
      const answer = await fetch(`${page[1]}/api/status`);
      assert.equal(answer.status, 200);
      // The agent's config names that port: `printer-agent status --config` finds the page.
      const tempDir = (await demo.output(/^temp dir\s+(\S+)$/m, 'the temp dir line'))[1]!;
      const config = JSON.parse(readFileSync(join(tempDir, 'agent.json'), 'utf8'));
      assert.equal(config.console.port, port);
      await demo.output(/^Ctrl-C stops everything\.$/m, 'the ready line');
      const { code } = await demo.stop();
      assert.equal(code, 0, demo.transcript());
    } finally {
      await demo.stop();
    }
  });
});

describe('printer-agent demo --mosquitto', { skip: skipWithoutMosquitto() }, () => {
  it('runs on a mosquitto child (MQTT 5), keeps its dir with --keep-dir, and stops mosquitto', async () => {
    const demo = new Demo(['demo', '--mosquitto', '--orders', '1', '--keep-dir'], cliEntry());
    try {
      const tempDir = (await demo.output(/^temp dir\s+(\S+)$/m, 'the temp dir line'))[1]!;
      const broker = await demo.output(
        /^broker\s+(\S+)\s+mosquitto \(pid (\d+)\), MQTT 5$/m,
        'the broker line',
      );
      const receipt = await demo.receipt(1);
      assert.match(receipt.paper, /TABLE ORDER/);
      assert.match(receipt.paper, /TOTAL\s+₱1,174\.80 /);
      await demo.output(/^Ctrl-C stops everything\.$/m, 'the ready line');

      const { code } = await demo.stop();
      assert.equal(code, 0, demo.transcript());
      assert.throws(
        () => process.kill(Number(broker[2]), 0),
        { code: 'ESRCH' },
        'mosquitto is stopped',
      );
      try {
        assert.match(demo.stdout, new RegExp(`^kept ${tempDir}`, 'm'));
        const agentConfig = JSON.parse(readFileSync(join(tempDir, 'agent.json'), 'utf8'));
        assert.equal(agentConfig.mqtt.protocolVersion, 5);
        assert.equal(agentConfig.mqtt.url, broker[1]);
        assert.match(readFileSync(join(tempDir, 'paper', '0001.txt'), 'utf8'), /TABLE ORDER/);
        const log = readFileSync(join(tempDir, 'demo.log'), 'utf8');
        assert.match(log, /"msg":"agent started"/);
        const storeKey = readFileSync(join(tempDir, 'store-key'), 'utf8').trim();
        assert.equal(log.includes(storeKey), false, 'the store key is never logged');
      } finally {
        rmSync(tempDir, { recursive: true, force: true });
      }
    } finally {
      await demo.stop();
    }
  });
});
