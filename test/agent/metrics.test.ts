/**
 * Issue 42 items 7 and 8: the metrics a chain alerts on, read from a running agent's /metrics.
 * The agent runs in this process with a real Mosquitto, the emulator on TCP (printer `counter`
 * serving the role `receipt`: series are labelled by role) and the reference order service for
 * catch-up; each thing is caused from the outside (an order at the service before the start, signed
 * and forged instructions on the broker, paper out on the emulator, a broker restart) and then read
 * from the exposition, parsed by a Prometheus text parser and linted by `promtool check metrics`.
 * The shipped alert rules and dashboard (docs/monitoring/) may name only metrics this scrape has.
 *
 * Scrapes carry the metrics token; a configured page token is locked out from this address by
 * wrong tries at the end, and the metrics token still scrapes (README: monitoring).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { nowCreateTime, storeInstruction, storeJobId } from '../../harness/instructions.js';
import { Mosquitto, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import type { RoundSummary } from '../../src/catchup/poller.js';
import { VirtualPrinter } from '../../src/emulator/index.js';
import { JobStore } from '../../src/jobs/store.js';
import { buildEnvelope } from '../../src/protocol/envelope.js';
import { printInstructionSchema } from '../../src/protocol/print-protocol.js';
import type { RsaKey } from '../../src/protocol/signing.js';
import { deriveStoreId } from '../../src/protocol/store-id.js';
import {
  APP_ID,
  OTHER_STORE_KEY,
  SERVICE_PUBLIC_KEY_FILE,
  STORE_KEY,
  serviceSigningKey,
  startService,
  strangerKey,
  type TestService,
  testCatchUp,
} from '../catchup/harness.js';
import { VirtualClock } from '../catchup/virtual-clock.js';
import { type AgentRig, startAgentRig } from '../helpers/agent-rig.js';
import { ROOT } from '../helpers/cli.js';

const PROMTOOL_SKIP = 'needs promtool (Debian package prometheus)';
const hasPromtool = !spawnSync('promtool', ['--version'], { stdio: 'ignore' }).error;
const storeId = deriveStoreId(APP_ID, STORE_KEY);
const store = { storeId, name: 'metrics' };
const MONITORING = join(ROOT, 'docs/monitoring');

type Labels = Record<string, string>;

describe('the metrics a chain alerts on, from a running agent', {
  skip: skipWithoutMosquitto(),
}, () => {
  const clock = new VirtualClock();
  const emulator = new VirtualPrinter({ columns: 48 });
  const metricsToken = randomBytes(32).toString('hex');
  const pageToken = 'page-token-of-the-store-manager';
  let broker: Mosquitto;
  let service: TestService;
  let rig: AgentRig;
  let catchUpOrder: string;
  /** The last exposition scraped, for the checks of docs/monitoring. */
  let lastText = '';

  async function scrape(token = metricsToken): Promise<Response> {
    return fetch(`http://127.0.0.1:${rig.settings.console!.port}/metrics`, {
      headers: { authorization: `Bearer ${token}` },
    });
  }

  /** One scrape, parsed; `value(name, labels)` is the sample's value, NaN when absent. */
  async function metrics() {
    const res = await scrape();
    assert.equal(res.status, 200, await res.clone().text());
    const text = await res.text();
    lastText = text;
    const families = parsePrometheusTextFormat(text);
    const value = (name: string, labels: Labels = {}) => {
      const family = families.find((f) => f.name === name);
      const sample = family?.metrics.find((m) =>
        Object.entries(labels).every(([k, v]) => m.labels?.[k] === v),
      );
      return Number(sample?.value ?? Number.NaN);
    };
    const series = (name: string) => families.find((f) => f.name === name)?.metrics ?? [];
    return { text, value, series };
  }

  async function publish(param: Record<string, unknown>, key: RsaKey = serviceSigningKey) {
    const body = JSON.stringify(buildEnvelope({ appId: APP_ID, storeKey: STORE_KEY, key, param }));
    await rig.publish(rig.t.print, body);
  }

  const onlineStatus = () => {
    const status = rig.agent.health.status();
    assert.ok(status.online);
    return status;
  };
  const eventOf = (jobId: string, state: string) =>
    rig.events.some((e) => e.jobId === jobId && e.state === state);
  const rejected = () => rig.events.filter((e) => e.state === 'rejected');

  before(async () => {
    broker = await Mosquitto.start({ persistence: false });
    service = await startService({ clock });
    // Created before the agent starts and never published: only catch-up's first round finds it.
    catchUpOrder = await service.create('Catch-up soup');
    const dir = mkdtempSync(join(tmpdir(), 'pa-metrics-'));
    // A job an earlier version stored under looser rules: its payload no longer validates, so the
    // spooler gives it up (PARAM_INVALID) instead of printing. Valid input never fails on purpose.
    const seed = JobStore.open({ stateDir: join(dir, 'state'), create: true });
    seed.enqueueInstruction(printInstructionSchema.parse(storeInstruction(store, 99)), {
      raw: JSON.stringify({ ...storeInstruction(store, 99), order: { productInfo: [] } }),
    });
    seed.close();
    rig = await startAgentRig({
      appId: APP_ID,
      storeKey: STORE_KEY,
      header: 'Metrics Cafe',
      broker,
      servicePublicKeyFile: SERVICE_PUBLIC_KEY_FILE,
      printers: [{ id: 'counter', emulator, roles: ['receipt'] }],
      settings: () => ({ stateDir: join(dir, 'state'), catchUp: testCatchUp(service.url, clock) }),
      console: { token: pageToken, metricsToken, metrics: true },
      logLevel: 'info',
      secrets: [metricsToken, pageToken],
    });
    await waitFor(
      'the seeded job failed',
      () => rig.agent.store.find(storeJobId('metrics', 99))?.state === 'failed',
    );
    await waitFor('the catch-up order printed', () =>
      rig.agent.store
        .list({ limit: 50 })
        .some((j) => j.orderNo === catchUpOrder && j.state === 'printed'),
    );
  });

  after(async () => {
    await rig?.stop();
    await service?.close();
    await broker?.stop();
  });

  it('counts prints, failures by code, rejections by reason, duplicates and catch-up records', async () => {
    await publish(storeInstruction(store, 1));
    await waitFor('order 1 printed', () => eventOf(storeJobId('metrics', 1), 'printed'));
    // The same instruction again (a redelivery): answered duplicate, not printed again.
    await publish(storeInstruction(store, 1));
    await waitFor('the duplicate', () => eventOf(storeJobId('metrics', 1), 'duplicate'));
    // Signed by someone else's key; for another store; too large; replayed from 8 days ago.
    await publish(storeInstruction(store, 2), strangerKey);
    await publish(
      storeInstruction(store, 3, {}, { storeId: deriveStoreId(APP_ID, OTHER_STORE_KEY) }),
    );
    await publish(storeInstruction(store, 4, { remark: 'x'.repeat(70_000) }));
    await publish(storeInstruction(store, 5, {}, { createTime: nowCreateTime(-8 * 86_400_000) }));
    await waitFor('three rejected', () => rejected().length === 3);
    await waitFor('the stale one failed', () => eventOf(storeJobId('metrics', 5), 'failed'));

    const m = await metrics();
    assert.deepEqual(
      Object.fromEntries(
        ['forged', 'wrong_store', 'too_large', 'stale', 'malformed'].map((reason) => [
          reason,
          m.value('printer_agent_instructions_rejected_total', { reason }),
        ]),
      ),
      { forged: 1, wrong_store: 1, too_large: 1, stale: 1, malformed: 0 },
    );
    assert.deepEqual(
      rejected()
        .map((e) => e.reason?.code)
        .sort(),
      ['IDENTITY_MISMATCH', 'SIGNATURE_INVALID', 'TOO_LARGE'],
    );
    assert.equal(m.value('printer_agent_instructions_duplicate_total'), 1);
    // The catch-up order and order 1 printed; the seeded job failed in the spooler (order 5 was
    // stored failed on arrival: a rejection, not a job the spooler gave up on).
    const finished = (outcome: string) =>
      m.value('printer_agent_jobs_finished_total', { printer: 'receipt', outcome });
    assert.deepEqual([finished('printed'), finished('failed'), finished('unconfirmed')], [2, 1, 0]);
    assert.equal(
      m.value('printer_agent_jobs_failed_total', { printer: 'receipt', code: 'PARAM_INVALID' }),
      1,
    );
    assert.equal(m.series('printer_agent_jobs_failed_total').length, 1);
    // Catch-up's first round found the order made before the start.
    assert.ok(m.value('printer_agent_catchup_rounds_total', { outcome: 'ok' }) >= 1);
    assert.equal(m.value('printer_agent_catchup_rounds_total', { outcome: 'error' }), 0);
    assert.equal(m.value('printer_agent_catchup_records_total', { outcome: 'queued' }), 1);
    // The last print: the store's own time of it, by role (not the printer's id).
    const last = rig.agent.store.find(storeJobId('metrics', 1))!;
    assert.equal(
      m.value('printer_agent_last_print_timestamp_seconds', { printer: 'receipt' }),
      last.printedAt! / 1000,
    );
    assert.equal(m.value('printer_agent_printer_ready', { printer: 'receipt' }), 1);
    assert.equal(m.value('printer_agent_printer_state', { printer: 'receipt', state: 'ready' }), 1);
    assert.equal(
      m.series('printer_agent_printer_state').filter((s) => s.labels?.printer === 'counter').length,
      0,
    );
    assert.equal(m.value('printer_agent_clock_synchronized'), 1);
    assert.equal(m.value('printer_agent_broker_connected'), 1);
    assert.equal(m.value('printer_agent_broker_reconnects_total'), 0);
    assert.equal(Number(m.series('printer_agent_job_print_seconds')[0]?.buckets?.['+Inf']), 2);
    // The process: prom-client's standard metrics.
    assert.ok(m.value('process_start_time_seconds') > 0);
    assert.ok(m.value('process_resident_memory_bytes') > 0);
    assert.ok(m.value('nodejs_eventloop_lag_p99_seconds') >= 0);
    for (const secret of [STORE_KEY, metricsToken, pageToken])
      assert.ok(!m.text.includes(secret), 'no secret in the metrics');
  });

  it('paper out with jobs waiting: the printer not ready, the oldest job aging, unrouted jobs', async () => {
    emulator.setFault('paper-out', true);
    await waitFor(
      'paper out seen by the agent',
      () => onlineStatus().printers[0]?.state === 'paper-out',
    );
    await publish(storeInstruction(store, 7));
    // A role no printer of this store serves.
    await publish(storeInstruction(store, 8, {}, { printer: 'bar' }));
    await waitFor('both queued', () =>
      [7, 8].every((n) => eventOf(storeJobId('metrics', n), 'queued')),
    );
    // Ages are whole seconds: wait (for the figure, not for a time) until the oldest is 1 s old.
    let m = await metrics();
    await waitFor('the oldest pending job 1 s old', async () => {
      m = await metrics();
      return m.value('printer_agent_oldest_pending_job_age_seconds', { printer: 'receipt' }) >= 1;
    });
    assert.equal(m.value('printer_agent_printer_ready', { printer: 'receipt' }), 0);
    assert.equal(
      m.value('printer_agent_printer_state', { printer: 'receipt', state: 'paper-out' }),
      1,
    );
    assert.equal(m.value('printer_agent_queue_depth', { printer: 'receipt' }), 1);
    assert.equal(m.value('printer_agent_unrouted_jobs', { printer: 'bar' }), 1);
    assert.ok(
      !m.series('printer_agent_unrouted_jobs').some((s) => s.labels?.printer === 'receipt'),
    );
    assert.ok(m.value('printer_agent_oldest_pending_job_age_seconds', { printer: 'bar' }) >= 0);
    // What the PrinterNotReady alert reads agrees with the status the page shows.
    const status = onlineStatus().printers[0]!;
    assert.equal(status.queue.pending, 1);

    emulator.setFault('paper-out', false);
    await waitFor('order 7 printed', () => eventOf(storeJobId('metrics', 7), 'printed'));
    // The spooler asks the printer itself before it sends; the monitor's own next round (what
    // the gauge reads) may come after the receipt printed: wait for the figure.
    await waitFor('the agent sees the printer ready', async () => {
      m = await metrics();
      return m.value('printer_agent_printer_ready', { printer: 'receipt' }) === 1;
    });
    assert.equal(m.value('printer_agent_queue_depth', { printer: 'receipt' }), 0);
    assert.equal(
      m.value('printer_agent_oldest_pending_job_age_seconds', { printer: 'receipt' }),
      0,
    );
    assert.equal(
      m.value('printer_agent_last_print_timestamp_seconds', { printer: 'receipt' }),
      rig.agent.store.find(storeJobId('metrics', 7))!.printedAt! / 1000,
    );
  });

  it('a broker restart: one reconnect and a catch-up round for the lost session', async () => {
    await waitFor('no catch-up round under way', () => !rig.agent.catchUp!.busy);
    const before = await metrics();
    const rounds: RoundSummary[] = [];
    rig.agent.catchUp!.on('round', (s) => rounds.push(s));
    await broker.restart();
    await waitFor(
      'a round for the lost session',
      () => rounds.some((r) => r.reason === 'session-lost') && !rig.agent.catchUp!.busy,
    );
    const m = await metrics();
    assert.equal(m.value('printer_agent_broker_reconnects_total'), 1);
    assert.equal(m.value('printer_agent_broker_connected'), 1);
    const delta = (name: string, labels: Labels) =>
      m.value(name, labels) - before.value(name, labels);
    assert.equal(
      delta('printer_agent_catchup_rounds_total', { outcome: 'ok' }),
      rounds.filter((r) => r.error === null).length,
    );
    for (const [outcome, field] of [
      ['queued', 'queued'],
      ['duplicate', 'duplicates'],
      ['stale', 'stale'],
      ['rejected', 'rejected'],
    ] as const)
      assert.equal(
        delta('printer_agent_catchup_records_total', { outcome }),
        rounds.reduce((n, r) => n + r[field], 0),
        outcome,
      );
  });

  it("is valid exposition: promtool lints the agent's own metrics", {
    skip: !hasPromtool && PROMTOOL_SKIP,
  }, async () => {
    const { text } = await metrics();
    // prom-client's Node metrics keep names promtool's lint dislikes (gauges ending in _total);
    // ours must pass.
    const ours = text
      .split('\n')
      .filter((line) => /^(# (HELP|TYPE) )?printer_agent_/.test(line))
      .join('\n');
    const lint = spawnSync('promtool', ['check', 'metrics'], {
      input: `${ours}\n`,
      encoding: 'utf8',
    });
    assert.equal(lint.status, 0, `${lint.stdout}${lint.stderr}`);
  });

  it('the alert rules and the dashboard name only metrics this agent exports', () => {
    assert.ok(lastText !== '');
    const exported = new Set(
      lastText
        .split('\n')
        .filter((line) => line !== '' && !line.startsWith('#'))
        .map((line) => line.split(/[{ ]/, 1)[0]!),
    );
    // `up` is the scrape's own, made by Prometheus.
    exported.add('up');
    const named = (expr: string) =>
      expr.match(/\b(?:printer_agent_[a-z0-9_]+|process_[a-z0-9_]+|nodejs_[a-z0-9_]+|up)\b/g) ?? [];
    const rules = readFileSync(join(MONITORING, 'alerts.yml'), 'utf8');
    const ruleExprs = [...rules.matchAll(/^\s+expr: (.+)$/gm)].map((match) => match[1]!);
    assert.equal(ruleExprs.length, 6);
    const dashboard = JSON.parse(
      readFileSync(join(MONITORING, 'grafana-dashboard.json'), 'utf8'),
    ) as {
      panels: Array<{ type: string; targets?: Array<{ expr: string }> }>;
    };
    const panelExprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((x) => x.expr));
    assert.ok(panelExprs.length >= 20);
    const used = new Set<string>();
    for (const expr of [...ruleExprs, ...panelExprs]) {
      const names = named(expr);
      assert.ok(names.length > 0, `no metric in ${expr}`);
      for (const name of names) {
        used.add(name);
        assert.ok(exported.has(name), `${name} (in ${expr}) is not in the agent's /metrics`);
      }
    }
    // Every metric of issue 42 item 7 is on the dashboard.
    for (const name of [
      'printer_agent_oldest_pending_job_age_seconds',
      'printer_agent_last_print_timestamp_seconds',
      'printer_agent_jobs_failed_total',
      'printer_agent_instructions_rejected_total',
      'printer_agent_instructions_duplicate_total',
      'printer_agent_catchup_rounds_total',
      'printer_agent_catchup_records_total',
      'printer_agent_broker_reconnects_total',
      'printer_agent_clock_synchronized',
      'printer_agent_unrouted_jobs',
      'process_start_time_seconds',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_p99_seconds',
    ])
      assert.ok(used.has(name), `${name} is on no panel`);
  });

  it("wrong tokens from the scraper's address lock the page token out, never the metrics token", async () => {
    const status = (token: string) =>
      fetch(`http://127.0.0.1:${rig.settings.console!.port}/api/status`, {
        headers: { authorization: `Bearer ${token}` },
      });
    assert.equal((await status(pageToken)).status, 200);
    // The metrics token opens /metrics and nothing else: elsewhere it is a wrong token (1 of 5).
    assert.equal((await status(metricsToken)).status, 401);
    for (let i = 0; i < 4; i++) assert.equal((await status(`guess-${i}`)).status, 401);
    assert.equal((await status(pageToken)).status, 429);
    assert.equal((await scrape(pageToken)).status, 429);
    assert.equal((await scrape()).status, 200);
    assert.equal((await scrape()).status, 200);
  });
});
