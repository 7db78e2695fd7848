/**
 * `printer-agent config migrate`, and the config commands meeting a file of another version
 * (issue 43 item 7), in this process. Each test starts from a released file
 * (test/fixtures/config/v1-template.json, the 0.1.0 template) copied into a workspace. `run` on
 * an older file is in test/cli/run-migration.test.ts (a daemon needs a process of its own).
 */
import assert from 'node:assert/strict';
import { chownSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { type CliResult, ROOT, runCliInProcess } from '../helpers/cli.js';
import { fileConfig, findLeaks, type Workspace, workspace } from './fixtures.js';

const TEMPLATE_V1 = readFileSync(join(ROOT, 'test', 'fixtures', 'config', 'v1-template.json'));
const asRoot = process.getuid?.() === 0;

const captured: string[] = [];
let ws: Workspace;

beforeEach(() => {
  ws = workspace();
});
afterEach(() => ws.cleanup());
after(() => assert.deepEqual(findLeaks(captured), [], 'a secret leaked into CLI output'));

async function cli(args: string[]): Promise<CliResult> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('PRINTER_AGENT_')),
  );
  const result = await runCliInProcess(args, { env: clean, cwd: ws.dir });
  captured.push(result.stdout, result.stderr);
  return result;
}

/** The file's bytes, mode, owner and inode: to prove a command left it alone. */
function snapshot(path: string) {
  const st = statSync(path);
  return {
    bytes: readFileSync(path).toString('base64'),
    mode: st.mode & 0o777,
    owner: `${st.uid}:${st.gid}`,
    ino: st.ino,
  };
}

/** The 0.1.0 template, as the package installed it: 0640, root:printer-agent (here 4321:8765). */
function installTemplate(): string {
  const path = ws.writeConfig(TEMPLATE_V1.toString('utf8'), 0o640);
  if (asRoot) chownSync(path, 4321, 8765);
  return path;
}

const backups = () => readdirSync(ws.dir).filter((name) => name.includes('.bak'));
const json = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;

describe('config migrate', () => {
  it('rewrites a version 1 file at version 2 and keeps the original beside it, owner and mode too', async () => {
    const path = installTemplate();
    const before = snapshot(path);
    const r = await cli(['config', 'migrate', '--config', path]);
    assert.equal(r.status, 0, r.stderr);
    const backup = `${path}.v1.bak`;
    assert.equal(
      r.stdout,
      `${path}: migrated from config version 1 to 2; the original is kept as ${backup}\n` +
        '  1 -> 2: records the version; no setting changes\n',
    );
    assert.equal(r.stderr, '');
    // The original, byte for byte, with the file's owner and mode.
    const kept = snapshot(backup);
    assert.equal(kept.bytes, before.bytes);
    assert.deepEqual([kept.mode, kept.owner], [before.mode, before.owner]);
    // The file: replaced (a new inode: written beside and renamed), same owner and mode.
    const now = snapshot(path);
    assert.notEqual(now.ino, before.ino);
    assert.deepEqual([now.mode, now.owner], [0o640, before.owner]);
    const written = json(path);
    assert.deepEqual(Object.keys(written).slice(0, 3), ['$schema', 'version', 'appId']);
    const { version, ...rest } = written;
    assert.equal(version, 2);
    assert.deepEqual(rest, JSON.parse(TEMPLATE_V1.toString('utf8')));
  });

  it('says a current file is current, exit 0, and writes nothing', async () => {
    const before = snapshot(ws.configPath);
    const r = await cli(['config', 'migrate', '--config', ws.configPath]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${ws.configPath}: config version 2, current; nothing to do\n`);
    assert.deepEqual(snapshot(ws.configPath), before);
    assert.deepEqual(backups(), []);
  });

  it('run twice: the second run finds it current and makes no second backup', async () => {
    const path = installTemplate();
    assert.equal((await cli(['config', 'migrate', '--config', path])).status, 0);
    const again = await cli(['config', 'migrate', '--config', path]);
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stdout, /config version 2, current; nothing to do/);
    assert.deepEqual(backups(), ['config.json.v1.bak']);
  });

  it('--dry-run validates and says what it would do, writing nothing', async () => {
    const path = installTemplate();
    const before = snapshot(path);
    const r = await cli(['config', 'migrate', '--dry-run', '--config', path]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(
        `^${path}: would migrate from config version 1 to 2 \\(nothing written\\); the original would be kept as ${path}\\.v1\\.bak\\n`,
      ),
    );
    assert.deepEqual(snapshot(path), before);
    assert.deepEqual(backups(), []);
  });

  it('never overwrites an earlier backup: an identical one is reused, another gets the next name', async () => {
    const path = installTemplate();
    // A backup left by an earlier attempt cut between its two writes: the same bytes.
    writeFileSync(`${path}.v1.bak`, TEMPLATE_V1, { mode: 0o640 });
    const reuse = await cli(['config', 'migrate', '--config', path]);
    assert.equal(reuse.status, 0, reuse.stderr);
    assert.match(reuse.stdout, new RegExp(`kept as ${path}\\.v1\\.bak\\n`));
    assert.deepEqual(backups(), ['config.json.v1.bak']);

    // Another version 1 file migrated later (the store went back to 0.1.0 in between): the first
    // original stays, the second goes to the next free name.
    const other = TEMPLATE_V1.toString('utf8').replace('"logLevel": "info"', '"logLevel": "warn"');
    ws.writeConfig(other, 0o640);
    const r = await cli(['config', 'migrate', '--config', path]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`kept as ${path}\\.v1\\.bak\\.1\\n`));
    assert.equal(readFileSync(`${path}.v1.bak`, 'utf8'), TEMPLATE_V1.toString('utf8'));
    assert.equal(readFileSync(`${path}.v1.bak.1`, 'utf8'), other);
    assert.equal(json(path).logLevel, 'warn');
  });

  it('refuses to write a migrated file that does not validate, and says why', async () => {
    // Valid for 0.1.0, refused today: an appId with ':' (print-protocol v1.2 §10). The way out is
    // `config set appId ...`, which migrates and fixes it in one write (next test).
    const raw = JSON.parse(TEMPLATE_V1.toString('utf8')) as Record<string, unknown>;
    raw.appId = 'POS:1';
    const path = ws.writeConfig(raw, 0o640);
    const before = snapshot(path);
    const r = await cli(['config', 'migrate', '--config', path]);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^appId: must not contain ':'/m);
    assert.match(r.stderr, new RegExp(`^CONFIG_INVALID: ${path}: 1 problem$`, 'm'));
    assert.deepEqual(snapshot(path), before);
    assert.deepEqual(backups(), []);
  });
});

describe('config set and unset on an older file', () => {
  it('set migrates the file with the change, keeping the original', async () => {
    const raw = JSON.parse(TEMPLATE_V1.toString('utf8')) as Record<string, unknown>;
    raw.appId = 'POS:1';
    const path = ws.writeConfig(raw, 0o640);
    const original = readFileSync(path, 'utf8');
    const r = await cli(['config', 'set', 'appId', 'POS-1', '--config', path]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(
      r.stdout,
      `${path}: migrated from config version 1 to 2; the original is kept as ${path}.v1.bak\n` +
        `${path}: appId updated\n`,
    );
    assert.equal(readFileSync(`${path}.v1.bak`, 'utf8'), original);
    const written = json(path);
    assert.equal(written.version, 2);
    assert.equal(written.appId, 'POS-1');
  });

  it('unset of a setting the file has migrates it too; one it lacks changes nothing', async () => {
    const path = installTemplate();
    const before = snapshot(path);
    const absent = await cli(['config', 'unset', 'drawer', '--config', path]);
    assert.equal(absent.status, 0, absent.stderr);
    assert.equal(absent.stdout, `${path}: drawer is not set; nothing changed\n`);
    assert.deepEqual(snapshot(path), before, 'nothing to change: not even migrated');

    const r = await cli(['config', 'unset', 'retention', '--config', path]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /migrated from config version 1 to 2; .*\n.*: retention removed\n$/);
    const written = json(path);
    assert.equal(written.version, 2);
    assert.equal(written.retention, undefined);
    assert.equal(snapshot(`${path}.v1.bak`).bytes, before.bytes);
  });

  it('the version is not for set or unset: only a migration changes it', async () => {
    const before = snapshot(ws.configPath);
    for (const args of [
      ['set', 'version', '3'],
      ['set', 'version', '1'],
      ['unset', 'version'],
    ]) {
      const r = await cli(['config', ...args, '--config', ws.configPath]);
      assert.equal(r.status, 1, args.join(' '));
      assert.match(r.stderr, /^INPUT_INVALID: key "version": is written by the agent/);
    }
    assert.deepEqual(snapshot(ws.configPath), before);
  });
});

describe('reading an older file without writing it', () => {
  it('config check and show read it migrated, warn how to rewrite it, and leave it alone', async () => {
    const raw = fileConfig();
    delete raw.version; // as 0.1.0 wrote it
    const path = ws.writeConfig(raw);
    const before = snapshot(path);
    const warning = `warning: ${path} is config version 1, read as version 2; printer-agent config migrate --config ${path} rewrites it\n`;
    const check = await cli(['config', 'check', '--config', path]);
    assert.equal(check.status, 0, check.stderr);
    assert.equal(check.stdout, `config OK: ${path}\n`);
    assert.equal(check.stderr, warning);
    const show = await cli(['config', 'show', '--config', path]);
    assert.equal(show.status, 0, show.stderr);
    assert.equal(show.stderr, warning);
    assert.equal((JSON.parse(show.stdout) as { appId: string }).appId, 'A1');
    assert.deepEqual(snapshot(path), before);
    assert.deepEqual(backups(), []);
  });
});

describe('a config of a newer agent', () => {
  it('is refused by every command with CONFIG_TOO_NEW and exit 78, the file untouched', async () => {
    const path = ws.writeConfig({ ...fileConfig(), version: 3 });
    const before = snapshot(path);
    const message = `CONFIG_TOO_NEW: ${path}: config version 3 is newer than this agent's 2: upgrade printer-agent, or go back to the version 2 file a migration kept beside it (config.json.v2.bak)\n`;
    for (const args of [
      ['config', 'check'],
      ['config', 'show'],
      ['config', 'set', 'logLevel', 'debug'],
      ['config', 'unset', 'logLevel'],
      ['config', 'migrate'],
      ['config', 'migrate', '--dry-run'],
      ['run'],
    ]) {
      const r = await cli([...args, '--config', path]);
      assert.equal(r.status, 78, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr, message, args.join(' '));
      assert.equal(r.stdout, '', args.join(' '));
    }
    assert.deepEqual(snapshot(path), before);
    assert.deepEqual(backups(), []);
  });
});
