/**
 * `printer-agent run` as a child process, the way systemd runs it: a real Mosquitto, the emulator
 * on TCP, a config file with the store key in a file. Persistent session across a stop, the
 * retained last will after SIGKILL, the offline status after SIGTERM.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { cliEntry } from '../../harness/child-entry.js';
import { freePort, Mosquitto, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import {
  listenTcp,
  renderText,
  type TcpEndpoint,
  VirtualPrinter,
} from '../../src/emulator/index.js';
import { buildEnvelope } from '../../src/protocol/envelope.js';
import { type JobEvent, topics } from '../../src/protocol/print-protocol.js';
import { generateKeyPair, parseKey } from '../../src/protocol/signing.js';
import { deriveStoreId } from '../../src/protocol/store-id.js';
import { formatTimestamp } from '../../src/protocol/time.js';
import { ROOT } from '../helpers/cli.js';

const STORE_KEY = 'sk-daemon-secret-5512-never-logged';
const pair = generateKeyPair();
const serviceKey = parseKey(pair.privatePem, 'private');

for (const protocolVersion of [5, 4] as const) {
  const APP_ID = `A-daemon-v${protocolVersion}`;
  const storeId = deriveStoreId(APP_ID, STORE_KEY);
  const t = topics('printer-agent/v1', storeId);

  function instruction(n: number) {
    return buildEnvelope({
      appId: APP_ID,
      storeKey: STORE_KEY,
      key: serviceKey,
      // For this store (v1.1 §4), created now in the host's zone (the agent's: no zone set).
      param: {
        storeId,
        jobId: `P-D-${n}`,
        orderNo: `O-D-${n}`,
        createTime: formatTimestamp(new Date()),
        order: {
          productInfo: [{ productName: `Daemon dish ${n}`, price: 10000, quantity: 1 }],
          orderType: 1,
          paymentWay: 2,
          paymentTransactionId: `M-${n}`,
        },
      },
    });
  }

  describe(`printer-agent run (child process, MQTT ${protocolVersion === 5 ? '5' : '3.1.1'})`, {
    skip: skipWithoutMosquitto(),
  }, () => {
    let broker: Mosquitto;
    let emulator: VirtualPrinter;
    let endpoint: TcpEndpoint;
    let client: MqttClient;
    let configPath: string;
    let agent: ChildProcess | null = null;
    let output = '';
    const events: JobEvent[] = [];
    const statuses: Array<Record<string, unknown>> = [];

    function startAgent(): ChildProcess {
      const child = spawn(process.execPath, [...cliEntry(), 'run', '--config', configPath], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout?.on('data', (d: Buffer) => (output += d));
      child.stderr?.on('data', (d: Buffer) => (output += d));
      agent = child;
      return child;
    }

    const exited = (child: ChildProcess) =>
      new Promise<number | null>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
        else child.once('exit', (code) => resolve(code));
      });

    before(async () => {
      broker = await Mosquitto.start();
      emulator = new VirtualPrinter({ columns: 48 });
      endpoint = await listenTcp(emulator, { port: 0 });
      const dir = mkdtempSync(join(tmpdir(), 'pa-daemon-'));
      writeFileSync(join(dir, 'service-public.pem'), pair.publicPem);
      writeFileSync(join(dir, 'store-key'), `${STORE_KEY}\n`, { mode: 0o600 });
      configPath = join(dir, 'config.json');
      writeFileSync(
        configPath,
        JSON.stringify({
          appId: APP_ID,
          storeKeyFile: join(dir, 'store-key'),
          mqtt: {
            url: broker.url,
            protocolVersion,
            keepaliveSec: 5,
            reconnectMinMs: 200,
            reconnectMaxMs: 1000,
          },
          keys: { servicePublicKeyFile: join(dir, 'service-public.pem') },
          printers: [
            {
              id: 'receipt',
              url: endpoint.address,
              profile: 'generic-80mm',
              statusIntervalMs: 1000,
            },
          ],
          stateDir: join(dir, 'state'),
          catchUp: { enabled: false },
          freshness: { clock: 'synchronized' },
          logLevel: 'debug',
        }),
        { mode: 0o600 },
      );
      client = mqtt.connect(broker.url, {
        protocolVersion: 5,
        clientId: `service-daemon-test-${protocolVersion}`,
      });
      client.on('message', (topic, payload) => {
        // Delivery is at least once: a resent event has the same eventId and counts once.
        if (topic === t.job) {
          const event = JSON.parse(payload.toString()) as JobEvent;
          if (!events.some((e) => e.eventId === event.eventId)) events.push(event);
        }
        if (topic === t.status)
          statuses.push(JSON.parse(payload.toString()) as Record<string, unknown>);
      });
      await new Promise<void>((resolve) => client.once('connect', () => resolve()));
      await client.subscribeAsync([t.job, t.status], { qos: 1 });
    });

    after(async () => {
      if (agent && agent.exitCode === null) {
        agent.kill('SIGKILL');
        await exited(agent);
      }
      await client?.endAsync();
      await endpoint?.close();
      await broker?.stop();
    });

    const printed = (n: number) =>
      events.some((e) => e.jobId === `P-D-${n}` && e.state === 'printed');

    it('prints what it receives and reports online', async () => {
      startAgent();
      await waitFor('online status', () => statuses.some((s) => s.online === true), 20_000);
      await client.publishAsync(t.print, JSON.stringify(instruction(1)), { qos: 1 });
      await waitFor('printed', () => printed(1), 20_000);
      assert.match(renderText(emulator.paper.tickets.at(-1)!), /Daemon dish 1/);
    });

    it('SIGTERM: publishes the offline status and exits 0', async () => {
      const child = agent!;
      const before = statuses.length;
      child.kill('SIGTERM');
      assert.equal(await exited(child), 0, output.slice(-2000));
      await waitFor(
        'offline status',
        () => statuses.slice(before).some((s) => s.online === false),
        10_000,
      );
    });

    it('instructions published while the agent is stopped print after it starts (persistent session)', async () => {
      await client.publishAsync(t.print, JSON.stringify(instruction(2)), { qos: 1 });
      await client.publishAsync(t.print, JSON.stringify(instruction(3)), { qos: 1 });
      startAgent();
      await waitFor('both printed after the restart', () => printed(2) && printed(3), 30_000);
      const texts = emulator.paper.tickets.map((ticket) => renderText(ticket));
      assert.equal(texts.filter((x) => /Daemon dish 2/.test(x)).length, 1);
      assert.equal(texts.filter((x) => /Daemon dish 3/.test(x)).length, 1);
    });

    it('SIGKILL: the broker publishes the retained last will {"online":false}', async () => {
      const child = agent!;
      await waitFor('online again', () => statuses.at(-1)?.online === true, 20_000);
      child.kill('SIGKILL');
      await exited(child);
      await waitFor(
        'the last will',
        () => statuses.at(-1)?.online === false && statuses.at(-1)?.at === null,
        20_000,
      );
      // A new subscriber sees it as the retained status.
      const late = mqtt.connect(broker.url, {
        protocolVersion: 5,
        clientId: `late-dashboard-${protocolVersion}`,
      });
      const retained = await new Promise<Record<string, unknown>>((resolve) => {
        late.on('message', (_topic, payload, packet) => {
          if (packet.retain) resolve(JSON.parse(payload.toString()) as Record<string, unknown>);
        });
        late.subscribe(t.status, { qos: 1 });
      });
      await late.endAsync();
      assert.deepEqual(retained, { online: false, storeId, at: null });
    });

    it('never logs the store key', () => {
      assert.ok(output.length > 0);
      assert.ok(!output.includes(STORE_KEY), 'the store key is not in the logs');
    });
  });
}

describe('printer-agent run: a stop asked while it starts (child process)', () => {
  it('SIGTERM before the start finished: stops once started, with the store closed, exit 0', async (t) => {
    // A broker that takes the connection and never answers: the start waits for its first
    // answer (at most a second) before it opens the local API. The stop is asked in that wait.
    const held: Socket[] = [];
    const silent = createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const printer = await listenTcp(new VirtualPrinter({ columns: 48 }), { port: 0 });
    const dir = mkdtempSync(join(tmpdir(), 'pa-daemon-early-'));
    t.after(async () => {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
      await printer.close();
      rmSync(dir, { recursive: true, force: true });
    });
    writeFileSync(join(dir, 'service-public.pem'), pair.publicPem);
    writeFileSync(join(dir, 'store-key'), `${STORE_KEY}\n`, { mode: 0o600 });
    const configPath = join(dir, 'config.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        appId: 'A-daemon-early',
        storeKeyFile: join(dir, 'store-key'),
        mqtt: { url: `mqtt://127.0.0.1:${(silent.address() as AddressInfo).port}` },
        keys: { servicePublicKeyFile: join(dir, 'service-public.pem') },
        printers: [{ id: 'receipt', url: printer.address, profile: 'generic-80mm' }],
        stateDir: join(dir, 'state'),
        catchUp: { enabled: false },
        freshness: { clock: 'synchronized' },
        console: { port: await freePort() },
      }),
      { mode: 0o600 },
    );
    const child = spawn(process.execPath, [...cliEntry(), 'run', '--config', configPath], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d));
    child.stderr.on('data', (d: Buffer) => (output += d));
    const exit = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    // The broker has the connection: the start is in its wait.
    await waitFor('the agent connecting', () => held.length > 0, 20_000);
    child.kill('SIGTERM');
    assert.deepEqual(await exit, { code: 0, signal: null }, output.slice(-2000));
    assert.match(output, /asked to stop while starting/);
    assert.match(output, /"msg":"stopped"/);
  });
});
