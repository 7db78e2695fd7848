/**
 * Issue 15, the lock-out trap: run as root, `config check`, `config set` and `doctor` must judge
 * the files by what the service's account can read, not by root's access, and give the commands
 * that fix what they find. The account rules are checked on real files with accounts built around
 * each file's real owner; the commands run as root against a real system account (`nobody`), and
 * a process running as that account proves that the fixes they print work.
 */
import assert from 'node:assert/strict';
import { execSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import {
  findServiceAccount,
  readProblem,
  type ServiceAccount,
} from '../../src/host/service-account.js';
import { runCliInProcess } from '../helpers/cli.js';
import { type Workspace, workspace } from './fixtures.js';

let ws: Workspace;
beforeEach(() => {
  ws = workspace();
});
afterEach(() => ws.cleanup());

/** An account that is not the file's owner; in the file's group or not. */
function accountFor(path: string, inGroup: boolean): ServiceAccount {
  const { uid, gid } = statSync(path);
  return {
    name: 'svc',
    uid: uid + 1000,
    gid: inGroup ? gid : gid + 1000,
    groupName: 'svc',
    groups: new Set([inGroup ? gid : gid + 1000]),
  };
}

describe('the service account (host/service-account.ts)', () => {
  it('is read from passwd and group files: primary group, memberships and the unit groups', () => {
    ws.file(
      'passwd',
      'root:x:0:0::/root:/bin/sh\nprinter-agent:x:998:997::/nonexistent:/usr/sbin/nologin\n',
    );
    ws.file(
      'group',
      'root:x:0:\nprinter-agent:x:997:\nlp:x:7:\ndialout:x:20:\nvideo:x:44:printer-agent,pi\naudio:x:29:pi\n',
    );
    const files = { passwd: join(ws.dir, 'passwd'), group: join(ws.dir, 'group') };
    const account = findServiceAccount({}, files);
    assert.ok(account);
    assert.equal(account.name, 'printer-agent');
    assert.equal(account.uid, 998);
    assert.equal(account.groupName, 'printer-agent');
    assert.deepEqual(
      [...account.groups].sort((a, b) => a - b),
      [7, 20, 44, 997],
    );
    assert.equal(findServiceAccount({ PRINTER_AGENT_SERVICE_USER: 'pi' }, files), null);
    assert.equal(findServiceAccount({}, { ...files, passwd: join(ws.dir, 'absent') }), null);
  });

  it('reads with the owner, the group or the others bits, as the kernel would', () => {
    chmodSync(ws.dir, 0o755);
    const path = ws.file('probe', 'x', 0o640);
    assert.equal(readProblem(accountFor(path, true), path), null, 'group read');
    const other = readProblem(accountFor(path, false), path);
    assert.ok(other);
    assert.equal(other.path, path);
    assert.match(other.detail, /svc cannot read .*probe \(mode 0640/);
    assert.equal(other.fix, `sudo chown root:svc ${path} && sudo chmod 0640 ${path}`);
    const secret = readProblem(accountFor(path, false), path, { secret: true });
    assert.equal(secret?.fix, `sudo chown svc:svc ${path} && sudo chmod 0600 ${path}`);
    chmodSync(path, 0o604);
    assert.equal(readProblem(accountFor(path, false), path), null, 'others read');
    assert.ok(
      readProblem(accountFor(path, true), path),
      'group bits apply to a member, not others',
    );
  });

  it('needs search permission on every directory above the file', () => {
    chmodSync(ws.dir, 0o755);
    const dir = join(ws.dir, 'keys');
    mkdirSync(dir, { mode: 0o750 });
    const path = join(dir, 'k');
    writeFileSync(path, 'x', { mode: 0o644 });
    assert.equal(readProblem(accountFor(path, true), path), null);
    chmodSync(dir, 0o700);
    const blocked = readProblem(accountFor(path, true), path);
    assert.equal(blocked?.path, dir);
    assert.match(blocked.detail, /svc cannot enter .*keys \(mode 0700.*so it cannot read .*\/k$/);
    assert.equal(blocked.fix, `sudo chmod g+x ${dir}`);
    chmodSync(dir, 0o750);
    assert.equal(
      readProblem(accountFor(path, true), join(dir, 'absent')),
      null,
      'a missing file is for the checks that read it to report',
    );
  });
});

const asRoot = process.getuid?.() === 0;
const nobody = { PRINTER_AGENT_SERVICE_USER: 'nobody' };

/** Runs each `sudo ...` command of a fix, as root already. */
function applyFix(fix: string): void {
  execSync(fix.replaceAll('sudo ', ''), { stdio: 'pipe' });
}

/** Whether a process running as `nobody` reads the file (the kernel's answer, not ours). */
function nobodyReads(path: string): boolean {
  const { uid, gid } = { uid: 65534, gid: 65534 };
  const r = spawnSync(
    process.execPath,
    ['-e', `require('fs').readFileSync(${JSON.stringify(path)})`],
    {
      uid,
      gid,
      stdio: 'pipe',
    },
  );
  // A Node this account cannot execute would read as "cannot read the file": say so instead.
  if (r.error || /EACCES.*node|permission denied.*node/i.test(String(r.stderr)))
    throw new Error(`nobody cannot run ${process.execPath}: ${r.error?.message ?? r.stderr}`);
  return r.status === 0;
}

describe('run as root, the commands ask as the service account', {
  skip: asRoot
    ? false
    : 'needs root (CI runs as root): the commands check as another account only then',
}, () => {
  it('config check names every file nobody can read, and the fixes it prints make them readable', async () => {
    const bad = await runCliInProcess(['config', 'check', '--config', ws.configPath], {
      env: nobody,
    });
    assert.equal(bad.status, 1, bad.stderr);
    assert.equal(nobodyReads(ws.configPath), false);
    // The workspace folder is 0700 root: every file is behind it, so that is what is named.
    const lines = bad.stderr.trim().split('\n');
    assert.match(lines.at(-1)!, /^CONFIG_INVALID: .*config\.json: \d+ problems?$/);
    for (const field of [
      'config file',
      'storeKeyFile',
      'mqtt.passwordFile',
      'keys.storePrivateKeyFile',
    ])
      assert.ok(
        lines.some((l) => l.startsWith(`${field}: nobody cannot enter ${ws.dir}`)),
        `${field} in:\n${bad.stderr}`,
      );
    applyFix(/fix: (.*)$/.exec(lines[0]!)![1]!);

    // Past the folder, each file's own mode: secrets go to the account alone, the rest to its group.
    const next = await runCliInProcess(['config', 'check', '--config', ws.configPath], {
      env: nobody,
    });
    assert.equal(next.status, 1);
    const fixes = next.stderr
      .split('\n')
      .map((l) => /fix: (.*)$/.exec(l)?.[1])
      .filter((f): f is string => f !== undefined);
    assert.ok(
      fixes.some((f) => f.includes(`chown nobody:nogroup ${join(ws.dir, 'store-key')}`)),
      next.stderr,
    );
    assert.ok(
      fixes.some((f) => f.includes(`chown root:nogroup ${ws.configPath}`)),
      next.stderr,
    );
    for (const fix of fixes) applyFix(fix);

    const ok = await runCliInProcess(['config', 'check', '--config', ws.configPath], {
      env: nobody,
    });
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /^config OK: /);
    for (const name of ['config.json', 'store-key', 'mqtt-password', 'store-private.pem'])
      assert.ok(nobodyReads(join(ws.dir, name)), `${name} readable by nobody`);
    assert.equal(statSync(join(ws.dir, 'store-key')).mode & 0o777, 0o600);
    assert.equal(statSync(join(ws.dir, 'store-key')).uid, 65534);
  });

  it('config set refuses a setting that names a file the account cannot read, and writes nothing', async () => {
    chmodSync(ws.dir, 0o755);
    for (const name of ['config.json', 'service-public.pem'])
      applyFix(`chown root:nogroup ${join(ws.dir, name)} && chmod 0640 ${join(ws.dir, name)}`);
    ws.file('other-key.pem', '-----BEGIN PRIVATE KEY-----\nx\n', 0o600);
    const before = readFileSync(ws.configPath, 'utf8');
    const r = await runCliInProcess(
      ['config', 'set', 'keys.storePrivateKeyFile', 'other-key.pem', '--config', ws.configPath],
      { env: nobody },
    );
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /^keys\.storePrivateKeyFile: nobody cannot read .*other-key\.pem .*fix: sudo chown nobody:nogroup .*other-key\.pem && sudo chmod 0600 /m,
    );
    assert.equal(readFileSync(ws.configPath, 'utf8'), before);

    // A setting that names no file is written, and the file stays the service's to read.
    const set = await runCliInProcess(
      ['config', 'set', 'logLevel', 'debug', '--config', ws.configPath],
      {
        env: nobody,
      },
    );
    assert.equal(set.status, 0, set.stderr);
    assert.ok(nobodyReads(ws.configPath));
    assert.equal(statSync(ws.configPath).gid, 65534);
  });

  it('doctor fails the files the account cannot read, with the fix, and warns when there is no account', async () => {
    const r = await runCliInProcess(['doctor', '--config', ws.configPath, '--json'], {
      env: nobody,
    });
    const lines = (
      JSON.parse(r.stdout) as {
        checks: { status: string; name: string; detail: string; fix?: string }[];
      }
    ).checks;
    const service = lines.filter((l) => l.name === 'service user');
    assert.ok(service.length >= 4, r.stdout);
    assert.ok(service.every((l) => l.status === 'FAIL' && l.fix?.includes(`chmod g+x ${ws.dir}`)));
    assert.equal(r.status, 1);

    const none = await runCliInProcess(['doctor', '--config', ws.configPath, '--json'], {
      env: { PRINTER_AGENT_SERVICE_USER: 'no-such-account-x' },
    });
    const warned = (
      JSON.parse(none.stdout) as { checks: { status: string; name: string; detail: string }[] }
    ).checks.find((l) => l.name === 'service user');
    assert.equal(warned?.status, 'warn');
    assert.match(warned.detail, /no account no-such-account-x here/);
  });
});
