/**
 * Issue 42 item 8: what docs/monitoring/ ships, checked with Prometheus's own tool (promtool, from
 * Debian's prometheus package): the alert rules load (`check rules`) and fire when, and only when,
 * their unit tests say (`test rules alerts.test.yml`); the example scrape config loads and its
 * relabelling gives each target the `store` label the rules and the dashboard group by (`check
 * service-discovery`); the Grafana dashboard is JSON with a store variable, and every panel's
 * query is PromQL that Prometheus parses. That the queries name only metrics an agent exports is
 * checked against a running agent's scrape (test/agent/metrics.test.ts).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ROOT } from '../helpers/cli.js';

const MONITORING = join(ROOT, 'docs/monitoring');
const PROMTOOL_SKIP = 'needs promtool (Debian package prometheus)';
const hasPromtool = !spawnSync('promtool', ['--version'], { stdio: 'ignore' }).error;

function promtool(args: string[], cwd = MONITORING): string {
  const r = spawnSync('promtool', args, { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, `promtool ${args.join(' ')}:\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

interface Panel {
  type: string;
  title: string;
  targets?: Array<{ expr: string }>;
}

const dashboard = JSON.parse(readFileSync(join(MONITORING, 'grafana-dashboard.json'), 'utf8')) as {
  uid: string;
  panels: Panel[];
  templating: { list: Array<{ name: string; query?: unknown }> };
};

describe('docs/monitoring: alert rules, scrape config and dashboard', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pa-monitoring-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the dashboard: a store variable, and every panel filters by it', () => {
    assert.equal(dashboard.uid, 'printer-agent-fleet');
    const store = dashboard.templating.list.find((v) => v.name === 'store');
    assert.match(JSON.stringify(store?.query), /label_values\(printer_agent_info, store\)/);
    const panels = dashboard.panels.filter((p) => p.type !== 'row');
    assert.ok(panels.length >= 20);
    for (const panel of panels) {
      assert.ok((panel.targets ?? []).length > 0, `${panel.title}: no query`);
      for (const { expr } of panel.targets!)
        assert.match(expr, /store=~"\$store"/, `${panel.title}: not filtered by store`);
    }
  });

  it('the rules load and pass their unit tests', { skip: !hasPromtool && PROMTOOL_SKIP }, () => {
    assert.match(promtool(['check', 'rules', 'alerts.yml']), /SUCCESS: 6 rules found/);
    assert.match(promtool(['test', 'rules', 'alerts.test.yml']), /SUCCESS/);
  });

  it('every dashboard query is PromQL Prometheus parses', {
    skip: !hasPromtool && PROMTOOL_SKIP,
  }, () => {
    // As recording rules, Grafana's variables given values: `check rules` parses each expression.
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
    const rules = exprs.map(
      (expr, i) =>
        `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(
          expr.replaceAll('$store', '.*').replaceAll('$__rate_interval', '5m'),
        )}`,
    );
    writeFileSync(
      join(dir, 'dashboard-queries.yml'),
      `groups:\n  - name: dashboard\n    rules:\n${rules.join('\n')}\n`,
    );
    assert.match(
      promtool(['check', 'rules', 'dashboard-queries.yml'], dir),
      new RegExp(`SUCCESS: ${exprs.length} rules found`),
    );
  });

  it('the scrape config loads and labels each Pi with its store', {
    skip: !hasPromtool && PROMTOOL_SKIP,
  }, () => {
    promtool(['check', 'config', '--syntax-only', 'prometheus.yml']);
    // Discovery needs the files it names: the same config with them in a temp dir.
    writeFileSync(join(dir, 'token'), `${'0'.repeat(64)}\n`, { mode: 0o600 });
    writeFileSync(join(dir, 'certs.pem'), '');
    copyFileSync(join(MONITORING, 'alerts.yml'), join(dir, 'alerts.yml'));
    writeFileSync(
      join(dir, 'prometheus.yml'),
      readFileSync(join(MONITORING, 'prometheus.yml'), 'utf8')
        .replace('/etc/prometheus/printer-agent-metrics-token', join(dir, 'token'))
        .replace('/etc/prometheus/printer-agent-certs.pem', join(dir, 'certs.pem')),
    );
    const found = JSON.parse(
      promtool(
        ['check', 'service-discovery', '--timeout=100ms', 'prometheus.yml', 'printer-agent'],
        dir,
      ),
    ) as Array<{ labels: Record<string, string> }>;
    assert.deepEqual(
      found.map((t) => [t.labels.instance, t.labels.store, t.labels.__scheme__]),
      [
        ['pi-store-12.local:8631', '12', 'https'],
        ['pi-store-13.local:8631', '13', 'https'],
      ],
    );
  });
});
