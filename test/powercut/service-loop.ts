/**
 * The power-cut loop for the reference order service (issue 39, item 3): `printer-agent
 * order-service` (the bundle) with its SQLite database on forgetfs, a POS creating orders over
 * HTTP, Mosquitto taking the print instructions it publishes. Cuts, in turn: right after creates
 * were answered, while a create's commit is being synced (forgetfs `arm`), and at a random moment
 * with creates in flight. After each cut the card is remounted and the service restarted; the POS
 * then sends again what got no answer (the same paymentTransactionId, as a POS retrying after a
 * timeout does) and checks that every answered create is still there: the same request again is
 * answered with the same order number.
 *
 * Counted at the end: answered creates, lost ones (must be 0: answered again with another order
 * number), order numbers published for two different instructions (must be 0: a second order
 * under a lost one's number would be taken for a duplicate and never print; the same instruction
 * published again is at-least-once delivery, deduplicated by the agent), answered orders never
 * published (must be 0).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import mqtt from 'mqtt';
import { cliEntry } from '../../harness/child-entry.js';
import type { Mosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { buildEnvelope } from '../../src/protocol/envelope.js';
import { generateKeyPair, parseKey } from '../../src/protocol/signing.js';
import { ROOT } from '../helpers/cli.js';
import { ForgetFs } from './forgetfs.js';
import { syncTree } from './loop.js';

export const SERVICE_PHASES = ['answered', 'commit-fsync', 'random'] as const;

export interface ServiceLoopSummary {
  seed: number;
  cuts: number;
  landed: number;
  answered: number;
  lost: number;
  publishedTwice: number;
  neverPublished: number;
}

const APP_ID = 'A-powercut';
const STORE_KEY = 'sk-powercut-service-5521';

function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function runServicePowerCutLoop(options: {
  cuts: number;
  seed: number;
  broker: Mosquitto;
  log?: (line: string) => void;
}): Promise<ServiceLoopSummary> {
  const next = random(options.seed);
  const log = options.log ?? (() => {});
  const fs = await ForgetFs.mount();
  fs.seed(options.seed);
  const dir = fs.path('svc');
  mkdirSync(dir);
  const client = generateKeyPair();
  const service = generateKeyPair();
  writeFileSync(join(dir, 'client.pub'), client.publicPem);
  writeFileSync(join(dir, 'service.key'), service.privatePem, { mode: 0o600 });
  writeFileSync(
    join(dir, 'service.json'),
    JSON.stringify({
      apps: [
        {
          appId: APP_ID,
          publicKeyFile: 'client.pub',
          stores: [{ storeKey: STORE_KEY, restaurantNo: 'R1', branchIdentifier: 'B1' }],
        },
      ],
      servicePrivateKeyFile: 'service.key',
      timeZone: 'UTC',
      listen: { host: '127.0.0.1', port: 0 },
      database: 'orders.sqlite',
      mqtt: { url: options.broker.url },
    }),
  );
  syncTree(fs.mountpoint);
  const clientKey = parseKey(client.privatePem, 'private');

  // Every instruction the broker got, by order number: what it was (job id and the POS's
  // payment id). Two different orders under one number would print as one: a loss.
  const published = new Map<string, Set<string>>();
  const observer = await mqtt.connectAsync(options.broker.url, {
    protocolVersion: 5,
    clientId: 'powercut-observer',
  });
  observer.on('message', (_topic, payload) => {
    const param = JSON.parse(JSON.parse(payload.toString()).param) as {
      orderNo: string;
      jobId: string;
      order: { paymentTransactionId: string };
    };
    const ids = published.get(param.orderNo) ?? new Set<string>();
    ids.add(`${param.jobId} ${param.order.paymentTransactionId}`);
    published.set(param.orderNo, ids);
  });
  await observer.subscribeAsync('printer-agent/v1/+/print', { qos: 1 });

  /** paymentTransactionId -> the order number its first answer gave. */
  const answered = new Map<string, string>();
  /** Sent and not answered (the service died): the POS sends them again. */
  const unanswered = new Set<string>();
  let n = 0;
  let child: ChildProcess | null = null;
  let url = '';
  const summary: ServiceLoopSummary = {
    seed: options.seed,
    cuts: 0,
    landed: 0,
    answered: 0,
    lost: 0,
    publishedTwice: 0,
    neverPublished: 0,
  };

  const start = async () => {
    const c = spawn(
      process.execPath,
      [...cliEntry(), 'order-service', '--config', join(dir, 'service.json')],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child = c;
    let output = '';
    c.stderr?.on('data', (d: Buffer) => (output += d));
    const lines = createInterface({ input: c.stdout! });
    url = await new Promise<string>((resolve, reject) => {
      c.once('exit', (code) => reject(new Error(`the service exited ${code}: ${output}`)));
      lines.on('line', (line) => {
        output += `${line}\n`;
        try {
          const entry = JSON.parse(line) as { msg?: string; url?: string };
          if (entry.msg === 'order service listening' && entry.url) resolve(entry.url);
        } catch {
          // not a log line
        }
      });
    });
  };
  const stop = async () => {
    const c = child;
    if (!c) return;
    child = null;
    if (c.exitCode === null && c.signalCode === null) {
      const exited = new Promise((resolve) => c.once('exit', resolve));
      c.kill('SIGKILL');
      await exited;
    }
  };
  /** One create; the order number it was answered with, or null when no answer came. */
  const create = async (ptid: string): Promise<string | null> => {
    unanswered.add(ptid);
    try {
      const res = await fetch(`${url}/open-api/order/create`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(
          buildEnvelope({
            appId: APP_ID,
            storeKey: STORE_KEY,
            key: clientKey,
            param: {
              productInfo: [{ productName: `Dish ${ptid}`, price: 10_000, quantity: 1 }],
              orderType: 1,
              paymentWay: 2,
              paymentTransactionId: ptid,
            },
          }),
        ),
        signal: AbortSignal.timeout(20_000),
      });
      const body = (await res.json()) as {
        code: number;
        message: string;
        data?: { orderNo: string };
      };
      if (body.code !== 10000 || !body.data)
        throw new Error(`create ${ptid}: ${body.code} ${body.message}`);
      unanswered.delete(ptid);
      const first = answered.get(ptid);
      if (first !== undefined && first !== body.data.orderNo) {
        summary.lost++;
        throw new Error(
          `create ${ptid} was answered ${first}, and after a cut ${body.data.orderNo}: lost`,
        );
      }
      answered.set(ptid, body.data.orderNo);
      return body.data.orderNo;
    } catch (error) {
      if ((error as Error).message.includes(': lost')) throw error;
      if (child !== null && (error as Error).message.startsWith('create ')) throw error;
      return null; // the service died under it
    }
  };
  const burst = (count: number) =>
    Promise.all(Array.from({ length: count }, () => create(`POS-${++n}`)));

  try {
    await start();
    for (let cut = 0; cut < options.cuts; cut++) {
      const phase = SERVICE_PHASES[cut % SERVICE_PHASES.length]!;
      let landed = true;
      if (phase === 'answered') {
        // Answered, then the power goes: every answer must hold.
        for (let i = 0; i < 3; i++) await create(`POS-${++n}`);
      } else if (phase === 'commit-fsync') {
        fs.arm('fsync', '/svc/orders.sqlite-wal', 1 + Math.floor(next() * 3), { torn: true });
        await burst(4);
        landed = fs.stats().fired === 1;
      } else {
        const inFlight = burst(6);
        await new Promise((resolve) => setTimeout(resolve, Math.floor(next() * 300)));
        await stop();
        await inFlight;
      }
      await stop();
      fs.cut({ torn: next() < 0.5 });
      fs.disarm();
      await fs.remount();
      summary.cuts++;
      if (landed) summary.landed++;
      await start();
      // The POS sends again what it got no answer for, and checks two it had (same answer).
      for (const ptid of [...unanswered]) await create(ptid);
      const answeredIds = [...answered.keys()];
      for (let i = 0; i < 2 && answeredIds.length > 0; i++)
        await create(answeredIds[Math.floor(next() * answeredIds.length)]!);
      log(
        `service cut ${cut + 1}/${options.cuts}: ${phase}${landed ? '' : ' (did not land)'}, ${answered.size} answered`,
      );
    }
    // Every answered create: the same answer once more, and its instruction on the broker.
    for (const ptid of answered.keys()) await create(ptid);
    await waitFor(
      'every answered order published',
      () => [...answered.values()].every((orderNo) => published.has(orderNo)),
      30_000,
    ).catch(() => undefined);
    summary.answered = answered.size;
    summary.neverPublished = [...answered.values()].filter((o) => !published.has(o)).length;
    summary.publishedTwice = [...published.values()].filter((ids) => ids.size > 1).length;
    return summary;
  } catch (error) {
    throw new Error(`${(error as Error).message} (seed ${options.seed})`, { cause: error });
  } finally {
    await stop();
    await observer.endAsync(true);
    await fs.destroy();
  }
}
