/**
 * `printer-agent demo` (`npm start`): a whole restaurant store on one machine, with nothing
 * installed but Node. In one process: a broker (embedded aedes, or a `mosquitto` child with
 * `--mosquitto`), the loopback printer emulator on TCP, the reference order service and the agent,
 * all configured through their real config files in a temp dir with freshly generated keys. It
 * creates a few sample orders through the real HTTP API, signed like a POS client signs them,
 * waits for each receipt to be cut (emulator ticket events), shows it, then prints a `curl`
 * command with a signed body that creates one more order and keeps printing receipts until
 * Ctrl-C, which stops everything in reverse order and removes the temp dir (unless --keep-dir).
 *
 * Stdout lines scripts can rely on:
 *   temp dir  /tmp/printer-agent-demo-XXXXXX
 *   order O20261125000001 created: <label>, PHP 1,174.80 [, pick-up code A001]
 *   receipt 1: order O20261125000001[, printed 0.21 s after the request]
 *   page      http://127.0.0.1:PORT/  status page: ...
 *   curl -s -w '\n' -X POST 'http://127.0.0.1:PORT/open-api/order/create' ...
 *   sh /tmp/printer-agent-demo-XXXXXX/new-order.sh
 *   stopped
 * Every log line of every room goes to demo.log in the temp dir; errors also show on stderr.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Command } from 'commander';
import { Agent } from '../agent.js';
import { CONFIG_VERSION, type ConfigFileInput, loadConfig } from '../config/index.js';
import { DEFAULT_CONSOLE_PORT } from '../config/schema.js';
import { amountPaid, curlOrder, type SampleOrder, sampleOrders } from '../demo/sample-orders.js';
import { curlCommand, newOrderScript, orderNoOnReceipt, paperBox } from '../demo/terminal.js';
import {
  bitmapRows,
  LinkSlot,
  listenTcp,
  renderText,
  type TcpEndpoint,
  type Ticket,
  TicketWriter,
  VirtualPrinter,
} from '../emulator/index.js';
import { AgentError, errorMessage } from '../errors.js';
import { freeLoopbackPort } from '../host/free-port.js';
import { createLogger, type Logger } from '../logging.js';
import {
  findMosquitto,
  MOSQUITTO_MISSING,
  type RunningBroker,
  startEmbeddedBroker,
  startMosquitto,
} from '../mqtt/broker.js';
import { type TopicWatch, watchTopics } from '../mqtt/watch.js';
import type { ServiceConfigInput } from '../order-service/index.js';
import {
  buildEnvelope,
  createResultSchema,
  DEFAULT_TOPIC_PREFIX,
  deriveStoreId,
  formatMoney,
  generateKeyPair,
  loadKeyFile,
  type MoneyFormat,
  parseResponse,
  topics,
} from '../protocol/index.js';
import { PESO_SIGN } from '../receipt/user-defined.js';
import { settingsFrom } from './agent-settings.js';
import type { CliContext, CliIo, CliOutput } from './io.js';
import { parseIntOption } from './options.js';
import { loadServiceConfig, type RunningService, startOrderService } from './order-service.js';

const APP_ID = 'demo-pos';
const PROFILE = 'generic-80mm';
const COLUMNS = 48;
/**
 * Amounts in the demo's own lines (`order ... created: ..., PHP 1,174.80`), which scripts read:
 * plain ASCII, whatever the receipts print (`₱`, a user-defined character on this profile).
 */
const MONEY: MoneyFormat = { currency: 'PHP', locale: 'en-PH', display: 'code' };
/** Generous: a receipt normally prints well under a second after its order is created. */
const RECEIPT_DEADLINE_MS = 30_000;
const AGENT_ONLINE_DEADLINE_MS = 30_000;
/** A stop signal this soon after the first is a relayed copy of it, not a second Ctrl-C. */
const REPEAT_SIGNAL_MS = 2000;

interface DemoOptions {
  mosquitto?: boolean;
  orders: number;
  keepDir?: boolean;
}

type Say = (line?: string) => void;

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(2)} s`;
}

/** Raised inside the run when a signal asked us to stop; not an error. */
class Stopped extends Error {}

/**
 * Pino destination: every line to demo.log, synchronously (nothing to flush at exit, and the
 * file is complete when the run fails); errors also as one short line on stderr while running.
 */
function logDestination(fd: number, showErrors: () => boolean, stderr: CliOutput) {
  let open = true;
  return {
    /** Later lines (a timer firing after the stop) are dropped, never written to a reused fd. */
    close() {
      if (open) closeSync(fd);
      open = false;
    },
    write(line: string) {
      if (!open) return;
      writeSync(fd, line);
      if (!showErrors()) return;
      try {
        const entry = JSON.parse(line) as {
          level?: number;
          msg?: string;
          room?: string;
          err?: unknown;
        };
        if ((entry.level ?? 0) >= 50) {
          const err =
            typeof entry.err === 'object' && entry.err !== null
              ? (entry.err as { message?: string }).message
              : entry.err;
          stderr.write(
            `! ${entry.room ? `${entry.room}: ` : ''}${entry.msg ?? ''}${err ? ` (${String(err)})` : ''}\n`,
          );
        }
      } catch {
        // not JSON: it is in the file, that is enough
      }
    },
  };
}

type PrintedTicket = { number: number; text: string; orderNo: string | null };

/**
 * A ticket's text with the agent's `₱` read back. The emulator shows a user-defined character as
 * a private-use stand-in (it cannot know what a glyph means); the demo knows its agent prints
 * `₱` with the glyph of src/receipt/user-defined.ts, so that glyph, dot for dot, is a `₱`.
 */
function paperText(ticket: Ticket): string {
  let text = renderText(ticket);
  for (const udc of ticket.userDefined) {
    if (udc.code === PESO_SIGN.code && bitmapRows(udc).join('\n') === PESO_SIGN.rows.join('\n'))
      text = text.replaceAll(udc.char, PESO_SIGN.char);
  }
  return text;
}

/** The emulator's paper as the demo needs it: each cut ticket's text, and waiting for one. */
class Paper {
  readonly printed: PrintedTicket[] = [];
  private readonly waiters = new Set<() => void>();
  private readonly shown = new Set<number>();
  private live: ((ticket: PrintedTicket) => void) | null = null;

  constructor(printer: VirtualPrinter) {
    printer.on('ticket', (ticket: Ticket) => {
      const text = paperText(ticket);
      const entry = { number: ticket.index + 1, text, orderNo: orderNoOnReceipt(text) };
      this.printed.push(entry);
      for (const wake of [...this.waiters]) wake();
      if (this.live) this.show(entry, this.live);
    });
  }

  /** The receipt of `orderNo` once it is cut; rejects on `stop` or after the deadline. */
  receiptOf(orderNo: string, stop: Promise<never>): Promise<PrintedTicket> {
    let cleanup = () => {};
    const found = new Promise<PrintedTicket>((resolve, reject) => {
      const check = () => {
        const hit = this.printed.find((p) => p.orderNo === orderNo);
        if (hit) resolve(hit);
      };
      const timer = setTimeout(
        () =>
          reject(
            new AgentError(
              'PRINT_FAILED',
              `order ${orderNo} was not printed within ${RECEIPT_DEADLINE_MS / 1000} s`,
            ),
          ),
        RECEIPT_DEADLINE_MS,
      );
      this.waiters.add(check);
      cleanup = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      check();
    });
    return Promise.race([found, stop]).finally(cleanup);
  }

  /** Shows a ticket once, whoever asks first. */
  show(ticket: PrintedTicket, how: (ticket: PrintedTicket) => void): void {
    if (this.shown.has(ticket.number)) return;
    this.shown.add(ticket.number);
    how(ticket);
  }

  /** From now on every ticket is shown as it is cut; the ones not shown yet at once. */
  goLive(how: (ticket: PrintedTicket) => void): void {
    this.live = how;
    for (const ticket of this.printed) this.show(ticket, how);
  }
}

function showReceipt(say: Say, ticket: PrintedTicket, after?: number): void {
  const when = after === undefined ? '' : `, printed ${seconds(after)} after the request`;
  say(
    `receipt ${ticket.number}: ${ticket.orderNo ? `order ${ticket.orderNo}` : 'no order number'}${when}`,
  );
  say(paperBox(ticket.text, COLUMNS));
  say();
}

async function createOrder(
  serviceUrl: string,
  body: string,
): Promise<{ orderNo: string; pickUpNo: string | null; takeoutNo: string | null }> {
  let response: Response;
  try {
    response = await fetch(`${serviceUrl}/open-api/order/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
  } catch (error) {
    throw new AgentError('PRINT_FAILED', `order service: ${errorMessage(error)}`, {
      cause: error,
    });
  }
  const reply = parseResponse(await response.json(), createResultSchema);
  if (!reply.ok || reply.data.kind !== 'object')
    throw new AgentError(
      'PARAM_INVALID',
      `order service refused the order: ${reply.code} ${reply.message}`,
    );
  const { orderNo, pickUpNo, takeoutNo } = reply.data.value;
  return { orderNo, pickUpNo: pickUpNo ?? null, takeoutNo: takeoutNo ?? null };
}

async function runDemo(opts: DemoOptions, io: CliIo): Promise<void> {
  const say: Say = (line = '') => io.stdout.write(`${line}\n`);
  // Before anything is made, so that nothing is left to clean up.
  if (opts.mosquitto && !findMosquitto())
    throw new AgentError('INPUT_INVALID', `--mosquitto: ${MOSQUITTO_MISSING}`);
  const dir = mkdtempSync(join(tmpdir(), 'printer-agent-demo-'));
  let running = true;
  const logFile = logDestination(
    openSync(join(dir, 'demo.log'), 'a', 0o600),
    () => running,
    io.stderr,
  );
  const closers: Array<[string, () => Promise<void> | void]> = [];
  let failed = false;

  // Signal handlers first: a Ctrl-C during start-up must still stop what has started. SIGHUP is
  // the terminal closing: the same clean stop, with nobody left to read stdout.
  let signalled: (signal: string) => void = () => {};
  const stopSignal = new Promise<never>((_, reject) => {
    signalled = (signal) => reject(new Stopped(signal));
  });
  stopSignal.catch(() => {}); // observed by whoever races it; never unhandled
  let stopping = false;
  let firstSignalAt = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (!stopping) {
      stopping = true;
      firstSignalAt = performance.now();
      signalled(signal);
      return;
    }
    // Wrappers relay the terminal's Ctrl-C to us once more (npm forwards it to its child, tsx to
    // its own): a repeat right after the first is the same Ctrl-C. A later one means "out, now".
    if (performance.now() - firstSignalAt < REPEAT_SIGNAL_MS) return;
    io.stderr.write(`${signal} again: exiting without cleaning up ${dir}\n`);
    process.exit(130);
  };
  const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  // A closed terminal or a closed pipe (`npm start | head`) must not crash the clean-up.
  io.stdout.on('error', () => {});
  const interruptible = <T>(step: Promise<T>): Promise<T> => Promise.race([step, stopSignal]);
  const checkpoint = () => {
    if (stopping) throw new Stopped('signal');
  };

  try {
    const storeKey = `demo-store-${randomBytes(8).toString('hex')}`;
    const log: Logger = createLogger({
      level: 'info',
      secrets: [storeKey],
      destination: logFile,
    });
    const storeId = deriveStoreId(APP_ID, storeKey);
    const t = topics(DEFAULT_TOPIC_PREFIX, storeId);
    const now = new Date();
    const runId = `${now.toISOString().slice(2, 10).replace(/-/g, '')}-${randomBytes(2).toString('hex').toUpperCase()}`;

    say('printer-agent demo: a restaurant store on this machine (Ctrl-C stops it)');
    say();
    say(`temp dir  ${dir}`);

    // Keys. One app key pair: the POS signs its create requests with it and the store's agent
    // signs its catch-up queries with it, because the service registers one public key per app.
    const keys = join(dir, 'keys');
    mkdirSync(keys, { mode: 0o700 });
    const app = generateKeyPair();
    const service = generateKeyPair();
    writeFileSync(join(keys, 'app-private.pem'), app.privatePem, { mode: 0o600 });
    writeFileSync(join(keys, 'app-public.pem'), app.publicPem);
    writeFileSync(join(keys, 'service-private.pem'), service.privatePem, { mode: 0o600 });
    writeFileSync(join(keys, 'service-public.pem'), service.publicPem);
    writeFileSync(join(dir, 'store-key'), `${storeKey}\n`, { mode: 0o600 });
    const appKey = loadKeyFile(join(keys, 'app-private.pem'), 'private');
    checkpoint();

    // The printer: the loopback emulator on a TCP port, tickets also written to paper/.
    const printer = new VirtualPrinter({ columns: COLUMNS });
    const slot = new LinkSlot(printer);
    const writer = new TicketWriter(printer, { dir: join(dir, 'paper') });
    slot.on('deliver', (bytes, offset) => writer.capture(offset, bytes));
    const paper = new Paper(printer);
    const endpoint: TcpEndpoint = await listenTcp(slot, { port: 0 });
    closers.push([
      'printer',
      async () => {
        await endpoint.close();
        writer.close();
      },
    ]);
    checkpoint();

    const broker: RunningBroker = opts.mosquitto
      ? await startMosquitto({ dir })
      : await startEmbeddedBroker();
    closers.push(['broker', () => broker.close()]);
    say(`broker    ${broker.url}  ${broker.description}`);
    say(`printer   ${endpoint.address}  loopback emulator, 80 mm paper (${COLUMNS} columns)`);
    checkpoint();

    // The order service, from its config file like `printer-agent order-service --config`.
    const serviceConfig: ServiceConfigInput = {
      apps: [
        {
          appId: APP_ID,
          publicKeyFile: 'keys/app-public.pem',
          stores: [{ storeKey, restaurantNo: 'R-1001', branchIdentifier: 'ermita-01' }],
        },
      ],
      servicePrivateKeyFile: 'keys/service-private.pem',
      database: 'order-service.sqlite',
      listen: { host: '127.0.0.1', port: 0 },
      mqtt: { url: broker.url, protocolVersion: broker.protocolVersion },
    };
    const serviceConfigFile = join(dir, 'order-service.json');
    writeFileSync(serviceConfigFile, `${JSON.stringify(serviceConfig, null, 2)}\n`, {
      mode: 0o600,
    });
    const svc: RunningService = await startOrderService(
      loadServiceConfig(serviceConfigFile),
      dir,
      log.child({ service: 'order-service' }),
    );
    closers.push(['order service', () => svc.close()]);
    say(`service   ${svc.url}  reference order service (order-api 4.1 list, 4.2 create)`);
    checkpoint();

    // Who watches the store's topics: the agent's retained status says when it has subscribed.
    let online: () => void = () => {};
    const agentOnline = new Promise<void>((resolve) => {
      online = resolve;
    });
    const watch: TopicWatch = await watchTopics(
      { url: broker.url, protocolVersion: broker.protocolVersion, topics: [t.status, t.job] },
      (topic, payload) => {
        let message: Record<string, unknown>;
        try {
          message = JSON.parse(payload.toString('utf8')) as Record<string, unknown>;
        } catch {
          return;
        }
        if (topic === t.status && message.online === true) online();
        if (topic === t.job && running) {
          const state = String(message.state);
          if (['waiting', 'failed', 'rejected', 'unconfirmed'].includes(state)) {
            const reason = message.reason as { code?: string; message?: string } | null;
            io.stderr.write(
              `! job ${String(message.jobId ?? message.commandId ?? '?')}: ${state}${reason ? ` (${reason.code}: ${reason.message})` : ''}\n`,
            );
          }
        }
      },
    );
    closers.push(['watch', () => watch.close()]);
    checkpoint();

    // The status page on its usual port when free, else on one that is (issue 42 item 14: another
    // agent or demo on this machine holds 8631): in the config, where `status --config` reads it.
    const pagePort = await freeLoopbackPort(DEFAULT_CONSOLE_PORT);

    // The agent, from its config file like `printer-agent run --config`, the environment left
    // out so that a PRINTER_AGENT_* variable of this shell cannot point it elsewhere.
    const agentConfig: ConfigFileInput = {
      version: CONFIG_VERSION,
      appId: APP_ID,
      storeKeyFile: 'store-key',
      mqtt: { url: broker.url, protocolVersion: broker.protocolVersion },
      keys: {
        servicePublicKeyFile: 'keys/service-public.pem',
        storePrivateKeyFile: 'keys/app-private.pem',
      },
      printers: [{ id: 'receipt', url: endpoint.address, profile: PROFILE }],
      receipt: {
        header: ['Kusina ni Lola', '123 Mabini St., Ermita, Manila', 'VAT REG TIN 123-456-789-000'],
        footer: ['Salamat po!', 'This serves as your official receipt.'],
        qr: true,
      },
      stateDir: 'state',
      catchUp: { enabled: true, baseUrl: svc.url },
      console: { port: pagePort },
      logLevel: 'info',
    };
    const agentConfigFile = join(dir, 'agent.json');
    writeFileSync(agentConfigFile, `${JSON.stringify(agentConfig, null, 2)}\n`, { mode: 0o600 });
    const loaded = loadConfig({ configPath: agentConfigFile, env: {} });
    for (const warning of loaded.warnings) log.warn({ room: 'config' }, warning);
    const agent = await Agent.start(settingsFrom(loaded.config), log);
    closers.push(['agent', () => agent.stop()]);
    await interruptible(
      withDeadline(agentOnline, AGENT_ONLINE_DEADLINE_MS, 'the agent did not come online'),
    );
    say(`agent     store ${storeId}  subscribed to ${t.print}`);
    say(
      agent.consoleUrl
        ? `page      ${agent.consoleUrl}/  status page: printers, queue, receipt previews (printer-agent status asks it too)`
        : `page      not listening: port ${pagePort} was taken as the agent started (see demo.log); run the demo again`,
    );
    if (agent.consoleUrl)
      say(
        `          test print, reprint, retry and personal data ask for the token in ${join(dir, 'state', 'console-local-token')}`,
      );
    say();

    // The sample orders, one at a time: create, wait for the cut, show the paper.
    const orders = sampleOrders(opts.orders, runId, now);
    if (orders.length > 0) {
      say(
        `Creating ${orders.length} sample order${orders.length === 1 ? '' : 's'} through POST ${svc.url}/open-api/order/create, signed like a POS signs them:`,
      );
      say();
    }
    let firstReceiptAt: number | undefined;
    for (const order of orders) {
      const sent = performance.now();
      const created = await interruptible(
        createOrder(svc.url, JSON.stringify(envelopeFor(order, storeKey, appKey))),
      );
      say(describeCreated(created, order));
      const receipt = await paper.receiptOf(created.orderNo, stopSignal);
      firstReceiptAt ??= performance.now();
      const after = performance.now() - sent;
      paper.show(receipt, (r) => showReceipt(say, r, after));
    }
    if (firstReceiptAt !== undefined)
      say(
        `First receipt ${seconds(firstReceiptAt)} after the demo started; tickets are also in ${join(dir, 'paper')}.`,
      );

    // One more order, for the person: a signed body they can send with curl.
    const extra = curlOrder(runId, new Date());
    const body = JSON.stringify(envelopeFor(extra, storeKey, appKey));
    say();
    say(
      `Create another order (${extra.label}, ${formatMoney(amountPaid(extra.param), MONEY)}) from another terminal:`,
    );
    say();
    say(curlCommand(`${svc.url}/open-api/order/create`, body));
    say();
    // The curl repeats one paymentTransactionId, the create's idempotency key: run again, it
    // answers the same order and prints nothing new (issue 42 item 14). The script makes a new one.
    const script = join(dir, 'new-order.sh');
    writeFileSync(
      script,
      newOrderScript({
        entry: io.entry ?? ['printer-agent'],
        cwd: io.cwd,
        param: extra.param,
        appId: APP_ID,
        keyFile: join(keys, 'app-private.pem'),
        storeKeyFile: join(dir, 'store-key'),
        url: `${svc.url}/open-api/order/create`,
      }),
      { mode: 0o700 },
    );
    say('Its receipt shows here. Run again, it answers the same order and prints nothing new: its');
    say('paymentTransactionId is the idempotency key of a create. A new order at each run, signed');
    say('afresh with printer-agent sign:');
    say();
    say(`sh ${script}`);
    say();
    say(
      `In ${dir}${opts.keepDir ? ' (kept at exit)' : ' (removed at exit; --keep-dir keeps it)'}:`,
    );
    say('  agent.json, order-service.json   the configs the agent and the service run with');
    say('  keys/, store-key                 generated RSA keys and the store key');
    say('  state/jobs.db, paper/            the job database; every ticket as .txt, .json, .bin');
    say('  new-order.sh                     one more order at each run (sign, then curl)');
    say('  demo.log                         every log line of every part (JSON)');
    say();
    say('Ctrl-C stops everything.');
    say();

    // Live: every receipt the emulator cuts from now on.
    paper.goLive((ticket) => showReceipt(say, ticket));
    await stopSignal;
  } catch (error) {
    if (!(error instanceof Stopped)) {
      failed = true;
      throw error;
    }
  } finally {
    running = false;
    stopping = true;
    firstSignalAt ||= performance.now();
    say();
    say('stopping: agent, order service, broker, printer');
    for (const [name, close] of closers.reverse()) {
      try {
        await close();
      } catch (error) {
        io.stderr.write(`! stopping the ${name}: ${errorMessage(error)}\n`);
      }
    }
    logFile.close();
    if (failed || opts.keepDir) say(`kept ${dir} (demo.log has every log line)`);
    else rmSync(dir, { recursive: true, force: true });
    say('stopped');
    // The handlers stay: a relayed copy of the Ctrl-C may still be on its way, and without a
    // listener tsx's own handler would turn it into exit 130. Signal handlers keep no process alive.
  }
}

function withDeadline<T>(step: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new AgentError('BROKER_UNAVAILABLE', `${what} within ${ms / 1000} s`)),
      ms,
    );
  });
  return Promise.race([step, deadline]).finally(() => clearTimeout(timer));
}

function envelopeFor(order: SampleOrder, storeKey: string, key: ReturnType<typeof loadKeyFile>) {
  return buildEnvelope({ appId: APP_ID, storeKey, param: order.param, key });
}

function describeCreated(
  created: { orderNo: string; pickUpNo: string | null; takeoutNo: string | null },
  order: SampleOrder,
): string {
  const codes = [
    created.pickUpNo ? `pick-up code ${created.pickUpNo}` : null,
    created.takeoutNo ? `takeout no. ${created.takeoutNo}` : null,
  ].filter((c) => c !== null);
  return `order ${created.orderNo} created: ${order.label}, ${formatMoney(amountPaid(order.param), MONEY)}${codes.length ? `, ${codes.join(', ')}` : ''}`;
}

export function registerDemo(program: Command, { io }: CliContext): void {
  program
    .command('demo')
    .description(
      'run a whole store on this machine: broker, order service, printer emulator and agent; ' +
        'creates sample orders and shows their receipts (npm start)',
    )
    .option('--mosquitto', 'use a mosquitto child process (MQTT 5) instead of the embedded broker')
    .option(
      '--orders <n>',
      'sample orders to create at start, 0 to 20',
      parseIntOption('--orders', 0, 20),
      3,
    )
    .option('--keep-dir', 'keep the temp dir (keys, configs, job database, paper, log) at exit')
    .action(async (opts: DemoOptions) => {
      await runDemo(opts, io);
    });
}
