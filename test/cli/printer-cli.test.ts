import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../../harness/mosquitto.js';
import {
  listenTcp,
  renderText,
  type TcpEndpoint,
  VirtualPrinter,
} from '../../src/emulator/index.js';
import { fileConfig, workspace } from '../config/fixtures.js';
import { runCli, runCliInProcess } from '../helpers/cli.js';
import { ORDERS_DIR } from '../helpers/receipts.js';

/** Runs the CLI in this process, which hosts the emulator the CLI talks to. */
function cli(args: string[]) {
  return runCliInProcess(args);
}

describe('printer-agent status and print against the emulator', () => {
  const emulator = new VirtualPrinter({ columns: 48 });
  let endpoint: TcpEndpoint;
  before(async () => {
    endpoint = await listenTcp(emulator, { port: 0 });
  });
  after(async () => {
    await endpoint.close();
  });

  it('status: exit 0 and the state when ready, exit 3 when out of paper', async () => {
    const ready = await cli(['status', '--printer', endpoint.address]);
    assert.equal(ready.status, 0, ready.stderr);
    assert.equal(ready.stdout.trim(), `${endpoint.address}: ready`);
    emulator.setFault('paper-out', true);
    try {
      const out = await cli(['status', '--printer', endpoint.address, '--json']);
      assert.equal(out.status, 3);
      const report = JSON.parse(out.stdout) as { state: string; paper: string };
      assert.equal(report.state, 'paper-out');
      assert.equal(report.paper, 'out');
    } finally {
      emulator.setFault('paper-out', false);
    }
  });

  it('status: an unreachable printer is disconnected (exit 3), a bad URL a usage error (exit 1)', async () => {
    const gone = await cli(['status', '--printer', 'tcp://127.0.0.1:1']);
    assert.equal(gone.status, 3);
    assert.match(gone.stdout, /disconnected/);
    const bad = await cli(['status', '--printer', 'lpt:1']);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /^PRINTER_URL_INVALID: /);
  });

  it('print: renders, prints and confirms; exit 4 when the printer never confirms', async () => {
    const printed = await cli([
      'print',
      join(ORDERS_DIR, 'table-offline-simple.json'),
      '--printer',
      endpoint.address,
      '--profile',
      'generic-80mm',
    ]);
    assert.equal(printed.status, 0, printed.stderr);
    assert.match(
      printed.stdout,
      /^printed \d+ bytes on tcp:\/\/127\.0\.0\.1:\d+ \(confirmed by status\)$/m,
    );
    const ticket = emulator.paper.tickets.at(-1);
    assert.ok(ticket);
    assert.match(renderText(ticket), /Sinigang na Baboy/);
    emulator.setFault('mute', true);
    try {
      const silent = await cli([
        'print',
        join(ORDERS_DIR, 'table-offline-simple.json'),
        '--printer',
        endpoint.address,
      ]);
      assert.equal(silent.status, 4);
      assert.match(silent.stdout, /not confirmed/);
    } finally {
      emulator.setFault('mute', false);
    }
  });

  it('print: a printer with its cover open gets nothing and the command exits 3', async () => {
    const before = emulator.paper.tickets.length;
    emulator.setFault('cover-open', true);
    try {
      const r = await cli([
        'print',
        join(ORDERS_DIR, 'table-offline-simple.json'),
        '--printer',
        endpoint.address,
      ]);
      assert.equal(r.status, 3);
      assert.match(r.stderr, /^PRINTER_NOT_READY: .*cover-open/m);
    } finally {
      emulator.setFault('cover-open', false);
    }
    assert.equal(emulator.paper.tickets.length, before);
  });
});

describe('printer-agent status --json when the agent does not answer', () => {
  it('prints a JSON error document with a stable code and keeps exit 1 (bundle)', async () => {
    // Issue 42 item 12: a script reading stdout got nothing. The config names a local API port
    // nobody listens on (one the OS just handed out and took back).
    const ws = workspace();
    after(() => ws.cleanup());
    ws.writeConfig({
      ...fileConfig(),
      stateDir: join(ws.dir, 'state'),
      console: { port: await freePort() },
    });
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('PRINTER_AGENT_')),
    );
    const json = runCli(['status', '--config', ws.configPath, '--json'], { env });
    assert.equal(json.status, 1, json.stderr);
    const doc = JSON.parse(json.stdout) as { error: { code: string; message: string } };
    assert.equal(doc.error.code, 'AGENT_UNREACHABLE');
    assert.match(doc.error.message, /does not answer .*is printer-agent running\?/);
    assert.match(json.stderr, /^AGENT_UNREACHABLE: /);
    // Without --json, stdout stays empty as before: the line on stderr says it.
    const human = await runCliInProcess(['status', '--config', ws.configPath], { env });
    assert.equal(human.status, 1);
    assert.equal(human.stdout, '');
    // A failure before asking (no such config) is a document too.
    const missing = await runCliInProcess(
      ['status', '--config', join(ws.dir, 'none.json'), '--json'],
      { env },
    );
    assert.equal(missing.status, 1);
    assert.equal(
      (JSON.parse(missing.stdout) as { error: { code: string } }).error.code,
      'CONFIG_MISSING',
    );
  });
});
