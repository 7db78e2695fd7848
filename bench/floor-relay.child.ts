/**
 * The floor of this design (bench/floor.ts) as its own process, as the agent runs: for the
 * CPU-per-job figure of bench/footprint.bench.ts and the latency of bench/e2e.bench.ts (in the
 * bench's own process, next to the emulators, its printer round trips would need no other
 * process to wake up, which the agent's do). Subscribes to a topic; per message, the job
 * committed before the PUBACK, then, one job at a time, committed as printing, the printer's
 * status queried, the pre-rendered bytes sent, the print confirmed and committed as printed.
 * argv: BROKER_URL TOPIC PRINTER_PORT RECEIPTS_JSON STATE_DIR READY_TOPIC; publishes to
 * READY_TOPIC once subscribed.
 */
import { readFileSync } from 'node:fs';
import mqtt from 'mqtt';
import { FloorPrinter, FloorStore, floorHandler } from './floor.js';

const [url, topic, port, receiptsFile, dir, readyTopic] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const receipts = JSON.parse(readFileSync(receiptsFile, 'utf8')) as Record<string, string>;
const bytes = new Map(
  Object.entries(receipts).map(([id, b64]) => [id, Buffer.from(b64, 'base64')]),
);
const store = new FloorStore(dir);
const printer = await FloorPrinter.open(Number(port));
const client = await mqtt.connectAsync(url, {
  protocolVersion: 5,
  clientId: 'bench-floor-child',
  clean: true,
});
client.handleMessage = floorHandler(store, printer, bytes);
await client.subscribeAsync(topic, { qos: 1 });
await client.publishAsync(readyTopic, '1');
process.on('SIGTERM', () => {
  printer.close();
  store.close();
  process.exit(0);
});
