/**
 * Issue 43 item 5: while the agent runs it holds its printers, and doctor asking one itself read
 * `unknown`. Now doctor asks the running agent (its local API, as `printer-agent status` does) and
 * reports each printer as the agent sees it, without opening a connection of its own to the
 * printer (counted at a proxy in front of the emulator); with the agent stopped it asks the
 * printer directly again. A stand-in server answers for another store, refuses, or is not an
 * agent at all: the cases a real agent does not easily play.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, utimesSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { agentLine, askRunningAgent } from '../../src/cli/doctor-printers.js';
import { faultSuite } from '../faults/harness.js';
import { runCliInProcess } from '../helpers/cli.js';

describe('doctor with the agent running (child process)', { skip: skipWithoutMosquitto() }, () => {
  const env = faultSuite();

  it("reports the running agent's view of its printer and leaves the printer alone; asks the printer once the agent stopped", async () => {
    const port = await freePort();
    const s = await env.stores.create({
      name: 'doctor-agent',
      broker: env.broker,
      printerProxy: true,
      configure: (c) => {
        c.console = { port };
      },
    });
    // The service is the account running the tests: the files are its, as in doctor.test.ts.
    const doctor = () =>
      runCliInProcess(['doctor', '--config', s.configPath], {
        env: { ...process.env, PRINTER_AGENT_SERVICE_USER: userInfo().username },
      });
    const proxy = s.printerProxy!;
    const printerUrl = `tcp://${proxy.address}`;
    await s.startOnline();
    await waitFor('printer ready', () => s.printerState() === 'ready', 15_000);

    const before = proxy.connections;
    const running = await doctor();
    assert.match(
      running.stdout,
      new RegExp(
        `^ok {3}agent: running at http://127\\.0\\.0\\.1:${port}, version .*, up since `,
        'm',
      ),
    );
    assert.match(
      running.stdout,
      new RegExp(`^ok {3}printer receipt: ${printerUrl}: ready, as the running agent sees it`, 'm'),
    );
    assert.equal(proxy.connections, before, 'doctor opened no connection to the printer');

    // A fault the agent sees is doctor's FAIL, with the fix, still without asking the printer.
    s.emulator.setFault('paper-out', true);
    try {
      await waitFor('the agent sees paper-out', () => s.printerState() === 'paper-out', 15_000);
      const out = await doctor();
      assert.equal(out.status, 1);
      assert.match(
        out.stdout,
        new RegExp(
          `^FAIL printer receipt: ${printerUrl}: paper-out .*as the running agent sees it`,
          'm',
        ),
      );
      assert.match(out.stdout, /^ {5}fix: load a paper roll/m);
      assert.equal(proxy.connections, before, 'doctor opened no connection to the printer');
    } finally {
      s.emulator.setFault('paper-out', false);
    }

    // The config edited while the agent runs: doctor says it runs the settings from before. The
    // new time is set, not left to the kernel's clock, so it differs on any date (issue 37).
    const { mtime } = statSync(s.configPath);
    utimesSync(s.configPath, mtime, new Date(mtime.getTime() + 60_000));
    const edited = await doctor();
    assert.match(
      edited.stdout,
      /^warn agent: running at .*config\.json changed since it started .*: it runs the settings from before\n {5}fix: sudo systemctl restart printer-agent$/m,
    );

    // No agent: nobody holds the printer, and doctor asks it itself.
    await s.stopAgent('SIGTERM');
    const stopped = await doctor();
    assert.doesNotMatch(stopped.stdout, /^\S+ +agent:/m);
    assert.match(stopped.stdout, new RegExp(`^ok {3}printer receipt: ${printerUrl}: ready$`, 'm'));
    assert.ok(proxy.connections > before, 'doctor asked the printer itself');
  });
});

describe("doctor's view of what answers on the local API port (a stand-in server)", () => {
  let server: Server;
  let port: number;
  let stateDir: string;
  /** What the stand-in answers to GET /api/status. */
  let answer: { status: number; body: unknown } = { status: 200, body: {} };
  before(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'pa-doctor-api-'));
    server = createServer((_, res) => {
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(stateDir, { recursive: true, force: true });
  });
  const endpoint = () => ({
    console: { enabled: true, host: '127.0.0.1', port, certFile: undefined, token: undefined },
    stateDir,
  });
  const status = (storeId: string, startedAt: string) => ({
    storeId,
    agent: { version: '9.9.9', startedAt },
    printers: [{ id: 'receipt', state: 'ready', paper: 'ok' }],
  });

  it("another store's agent is not this config's: its printers are asked directly, and doctor says why", async () => {
    answer = { status: 200, body: status('other-store', '2026-01-01T00:00:00.000Z') };
    const view = await askRunningAgent(endpoint(), 'this-store');
    assert.deepEqual(view, {
      kind: 'other',
      url: `http://127.0.0.1:${port}`,
      storeId: 'other-store',
    });
    const [line] = agentLine(view, '/etc/printer-agent/config.json');
    assert.equal(line?.status, 'warn');
    assert.match(line!.detail, /answers for store other-store, not this config's/);
  });

  it('a refusal: the agent holds the printers but shows nothing; a config changed since its start: restart', async () => {
    answer = { status: 401, body: { error: { code: 'UNAUTHORIZED', message: 'token required' } } };
    const refused = await askRunningAgent(endpoint(), 'this-store');
    assert.equal(refused.kind, 'refused');
    const [line] = agentLine(refused, '/etc/printer-agent/config.json');
    assert.match(
      line!.detail,
      /refused its status to doctor \(this user cannot read the agent's local token/,
    );
    assert.match(line!.fix!, /sudo printer-agent doctor/);

    // The file's time against the one the agent read it at: equal or not, whatever either clock
    // says of the start (the agent started "later" by its clock than the file's new time).
    const read = '2026-01-01T00:00:00.000Z';
    answer = {
      status: 200,
      body: { ...status('this-store', '2026-03-01T00:00:00.000Z'), config: { modifiedAt: read } },
    };
    const running = await askRunningAgent(endpoint(), 'this-store');
    assert.equal(running.kind, 'running');
    const [later] = agentLine(running, '/c.json', new Date('2026-01-02T00:00:00.000Z'));
    assert.equal(later?.status, 'warn');
    assert.match(
      later!.detail,
      /\/c\.json changed since it started \(modified 2026-01-02T00:00:00\.000Z, it read the file of 2026-01-01T00:00:00\.000Z\)/,
    );
    assert.equal(later!.fix, 'sudo systemctl restart printer-agent');
    const [same] = agentLine(running, '/c.json', new Date(read));
    assert.equal(same?.status, 'ok');
    // An agent that does not say when it read the file (before 0.2.0) is not judged.
    answer = { status: 200, body: status('this-store', '2026-01-01T00:00:00.000Z') };
    const older = await askRunningAgent(endpoint(), 'this-store');
    const [unjudged] = agentLine(older, '/c.json', new Date('2026-06-01T00:00:00.000Z'));
    assert.equal(unjudged?.status, 'ok');
  });

  it('not an agent (another program, or nothing): absent, so the printers are asked directly', async () => {
    answer = { status: 200, body: { hello: 'world' } };
    assert.deepEqual(await askRunningAgent(endpoint(), undefined), { kind: 'absent' });
    const closed = { ...endpoint(), console: { ...endpoint().console, port: 1 } };
    assert.deepEqual(await askRunningAgent(closed, undefined), { kind: 'absent' });
  });
});
