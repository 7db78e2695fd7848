/**
 * `printer-agent run` on a config of printer-agent 0.1.0 (no `version`, issue 43 item 7), as a
 * child process running the bundle a store runs: migrated at start with one log line, the file
 * rewritten atomically with its owner and mode and the original kept beside it; and, where the
 * agent may not write the config's folder (the service user under the unit), run migrated from
 * memory with a warning naming the command that makes the file current, instead of failing.
 *
 * No broker and no printer answer: the agent starts all the same (it reconnects in the
 * background), which is all these tests need.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { cliEntry } from '../../harness/child-entry.js';
import { waitFor } from '../../harness/waiting.js';
import { generateKeyPair } from '../../src/protocol/signing.js';
import { JsonLog, type LogRecord } from '../helpers/json-log.js';

const asRoot = process.getuid?.() === 0;
/** Debian's `nobody`: the account the agent runs as when the test runs as root. */
const NOBODY = { uid: 65534, gid: 65534 };
const pair = generateKeyPair();

/** A TCP port nothing listens on (taken, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Store {
  dir: string;
  config: string;
  /** The config's bytes as 0.1.0 would have written them. */
  original: string;
}

const cleanups: Array<() => void> = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** A store folder: the key files, a state dir and a version 1 config naming them relatively. */
async function store(): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'pa-run-migration-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'service-public.pem'), pair.publicPem, { mode: 0o644 });
  writeFileSync(join(dir, 'store-key'), 'sk-run-migration-never-logged\n', { mode: 0o600 });
  mkdirSync(join(dir, 'state'), { mode: 0o700 });
  // As 0.1.0 wrote it: no version.
  const config = {
    appId: 'A-migration',
    storeKeyFile: 'store-key',
    mqtt: {
      url: `mqtt://127.0.0.1:${await closedPort()}`,
      reconnectMinMs: 1000,
      reconnectMaxMs: 5000,
    },
    keys: { servicePublicKeyFile: 'service-public.pem' },
    printers: [
      { id: 'receipt', url: `tcp://127.0.0.1:${await closedPort()}`, profile: 'generic-80mm' },
    ],
    stateDir: 'state',
    catchUp: { enabled: false },
    freshness: { clock: 'synchronized' },
    console: { enabled: false },
    logFormat: 'json',
  };
  const original = `${JSON.stringify(config, null, 2)}\n`;
  const path = join(dir, 'config.json');
  writeFileSync(path, original, { mode: 0o640 });
  chmodSync(path, 0o640);
  return { dir, config: path, original };
}

interface Running {
  child: ChildProcess;
  log: JsonLog;
  output: () => string;
}

function startAgent(s: Store, as?: { uid: number; gid: number }): Running {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('PRINTER_AGENT_')),
  );
  const child = spawn(process.execPath, [...cliEntry(), 'run', '--config', s.config], {
    cwd: s.dir,
    env: clean,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(as ?? {}),
  });
  children.push(child);
  let text = '';
  child.stdout?.on('data', (d: Buffer) => (text += d));
  child.stderr?.on('data', (d: Buffer) => (text += d));
  return { child, log: new JsonLog(() => text), output: () => text };
}

/** Waits for `agent started`; returns every record up to it. */
async function started(r: Running): Promise<readonly LogRecord[]> {
  await waitFor(
    `agent started (output so far: ${r.output().slice(-2000)})`,
    () => {
      if (r.child.exitCode !== null) throw new Error(`the agent exited: ${r.output()}`);
      return r.log.records().some((l) => l.msg === 'agent started');
    },
    60_000,
  );
  return r.log.records();
}

async function stopped(r: Running): Promise<number | null> {
  const exit = new Promise<number | null>((resolve) => r.child.once('exit', resolve));
  r.child.kill('SIGTERM');
  return exit;
}

const configLines = (records: readonly LogRecord[]) =>
  records.filter((l) => l.room === 'config' && l.from !== undefined);

describe('run on a version 1 config', { timeout: 180_000 }, () => {
  it('migrates it, logs it once, rewrites it keeping owner and mode, keeps the original beside it', async () => {
    const s = await store();
    if (asRoot) chownSync(s.config, 4321, 8765);
    const before = statSync(s.config);
    const r = startAgent(s);
    const records = await started(r);
    const backup = `${s.config}.v1.bak`;
    const lines = configLines(records);
    assert.equal(lines.length, 1, JSON.stringify(lines));
    assert.equal(lines[0]!.level, 30, 'info: nothing is left for a person to do');
    assert.equal(
      lines[0]!.msg,
      `config migrated from version 1 to 2; the original is kept as ${backup}`,
    );
    assert.deepEqual(
      [lines[0]!.file, lines[0]!.from, lines[0]!.to, lines[0]!.backup],
      [s.config, 1, 2, backup],
    );
    // Logged before the agent started: the agent runs the migrated file.
    assert.ok(records.indexOf(lines[0]!) < records.findIndex((l) => l.msg === 'agent started'));

    assert.equal(readFileSync(backup, 'utf8'), s.original);
    const rewritten = JSON.parse(readFileSync(s.config, 'utf8')) as Record<string, unknown>;
    const { version, ...rest } = rewritten;
    assert.equal(version, 2);
    assert.deepEqual(rest, JSON.parse(s.original));
    for (const path of [s.config, backup]) {
      const st = statSync(path);
      assert.equal(st.mode & 0o777, 0o640, path);
      assert.deepEqual([st.uid, st.gid], [before.uid, before.gid], path);
    }
    assert.notEqual(statSync(s.config).ino, before.ino, 'replaced atomically (rename)');
    assert.equal(await stopped(r), 0);

    // The next start finds it current: nothing to log, no second backup.
    const again = startAgent(s);
    assert.deepEqual(configLines(await started(again)), []);
    assert.equal(await stopped(again), 0);
    assert.deepEqual(
      readdirSync(s.dir).filter((n) => n.includes('.bak')),
      ['config.json.v1.bak'],
    );
  });

  it('runs it migrated in memory when the folder is not writable, naming the fix', async () => {
    const s = await store();
    let as: { uid: number; gid: number } | undefined;
    if (asRoot) {
      // The unit's case: the service user reads its config and keys, and cannot write /etc.
      for (const name of ['config.json', 'store-key', 'service-public.pem', 'state'])
        chownSync(join(s.dir, name), NOBODY.uid, NOBODY.gid);
      chmodSync(s.dir, 0o755);
      as = NOBODY;
    } else chmodSync(s.dir, 0o555);
    cleanups.push(() => chmodSync(s.dir, 0o755));
    const r = startAgent(s, as);
    const records = await started(r);
    const lines = configLines(records);
    assert.equal(lines.length, 1, JSON.stringify(lines));
    assert.equal(lines[0]!.level, 40, 'a warning: a person has a command to run');
    assert.match(
      String(lines[0]!.msg),
      new RegExp(
        '^config is version 1: running it migrated to version 2 in memory; the file could not ' +
          `be rewritten \\(.*cannot write \\(EACCES\\).*\\): sudo printer-agent config migrate --config ${s.config} makes it current$`,
      ),
    );
    assert.equal(readFileSync(s.config, 'utf8'), s.original, 'the file is as it was');
    assert.deepEqual(
      readdirSync(s.dir).filter((n) => n.includes('.bak') || n.endsWith('.tmp')),
      [],
      'no backup and no temp file left behind',
    );
    assert.equal(await stopped(r), 0, 'the agent ran, and stopped cleanly');
  });
});
