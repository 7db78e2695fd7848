/**
 * One worker of the fleet simulation (bench/fleet.ts): real agents in this process, each with its
 * own job database, broker session and virtual printer (the emulator on a loopback TCP port of
 * this process, as a store's network printer). Started with an IPC channel; the orchestrator
 * sends `{ type: 'start', ... }` and `{ type: 'stop' }`, this process answers `ready`, one
 * `print` per order found on a cut ticket (with its markings), and `stopped`.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { printsOnTicket } from '../harness/ticket-prints.js';
import { Agent, type AgentSettings } from '../src/agent.js';
import { listenTcp, renderText, type TcpEndpoint, VirtualPrinter } from '../src/emulator/index.js';
import { createLogger } from '../src/logging.js';
import { DEFAULT_TOPIC_PREFIX } from '../src/protocol/print-protocol.js';
import { deriveStoreId } from '../src/protocol/store-id.js';
import { receiptOptions } from '../src/receipt/options.js';

export interface FleetWorkerStart {
  type: 'start';
  dir: string;
  appId: string;
  storeKeys: string[];
  brokerUrl: string;
  servicePublicKeyFile: string;
  storePrivateKeyFile: string;
  catchUpUrl: string;
}

export type FleetWorkerMessage =
  | { type: 'ready'; agents: number; startMs: number }
  | {
      type: 'print';
      storeKey: string;
      orderNo: string;
      markings: string[];
      at: number;
    }
  | { type: 'stopped' };

const send = (m: FleetWorkerMessage) => process.send?.(m);
const MINUTE = 60_000;

const agents: Agent[] = [];
const endpoints: TcpEndpoint[] = [];

async function startOne(start: FleetWorkerStart, storeKey: string, index: number): Promise<void> {
  const printer = new VirtualPrinter({ columns: 48 });
  printer.on('ticket', (ticket) => {
    if (!ticket.cut) return;
    for (const p of printsOnTicket(renderText(ticket)))
      send({ type: 'print', storeKey, orderNo: p.orderNo, markings: p.markings, at: Date.now() });
  });
  const endpoint = await listenTcp(printer, { port: 0 });
  endpoints.push(endpoint);
  const storeId = deriveStoreId(start.appId, storeKey);
  const stateDir = join(start.dir, `store-${index}`);
  mkdirSync(stateDir, { recursive: true });
  const settings: AgentSettings = {
    appId: start.appId,
    storeKey,
    storeId,
    mqtt: {
      url: start.brokerUrl,
      protocolVersion: 5,
      prefix: DEFAULT_TOPIC_PREFIX,
      clientId: `printer-agent-${storeId}`,
      keepaliveSec: 30,
      sessionExpirySec: 3600,
      reconnectMinMs: 500,
      reconnectMaxMs: 10_000,
      maxMessageBytes: 64 * 1024,
    },
    keys: { servicePublicKeyFile: start.servicePublicKeyFile, scheme: 'RSA-SHA256' },
    printers: [
      {
        id: 'receipt',
        url: endpoint.address,
        profile: 'generic-80mm',
        roles: ['receipt'],
        statusIntervalMs: 10_000,
      },
    ],
    receipt: receiptOptions({ header: [`Store ${index}`] }),
    lateAfterMinutes: null,
    interruptedPolicy: 'reprint-marked',
    stateDir,
    statusIntervalMs: 60_000,
    retentionDays: 1,
    freshness: { maxAgeMs: 7 * 24 * 60 * MINUTE, clock: 'synchronized' },
    catchUp: {
      baseUrl: start.catchUpUrl,
      storePrivateKeyFile: start.storePrivateKeyFile,
      intervalMs: 5 * MINUTE,
      minIntervalMs: 30_000,
      pageSize: 100,
      maxAgeMs: 60 * MINUTE,
      windowMs: 5 * MINUTE,
      timeZone: 'UTC',
    },
  };
  // Warnings and errors only, to stderr (the orchestrator keeps the last lines): a thousand
  // agents logging every job would cost more than they do.
  const log = createLogger({ level: 'warn', secrets: [storeKey], destination: process.stderr });
  agents.push(await Agent.start(settings, log.child({ store: index })));
}

process.on('message', async (message: FleetWorkerStart | { type: 'stop' }) => {
  if (message.type === 'start') {
    const began = performance.now();
    const keys = message.storeKeys;
    // In groups: a thousand agents connecting at once is a broker's reconnect storm, not a start.
    for (let i = 0; i < keys.length; i += 25) {
      await Promise.all(keys.slice(i, i + 25).map((key, j) => startOne(message, key, i + j)));
    }
    send({ type: 'ready', agents: agents.length, startMs: Math.round(performance.now() - began) });
  } else if (message.type === 'stop') {
    await Promise.all(agents.map((a) => a.stop()));
    await Promise.all(endpoints.map((e) => e.close()));
    send({ type: 'stopped' });
    process.disconnect();
  }
});
