/**
 * Issue 43 item 5: `doctor` on the package's template says the config is still the template,
 * names the fields to fill and contacts nothing (every socket this process opens is watched); it
 * never counts a missing file as read by the service user; and the fixes it prints for a secret
 * file, pasted as they are, give a config `config check` accepts for the service's account.
 */
import assert from 'node:assert/strict';
import { execSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isExampleHost, TEMPLATE_SAMPLES, templateCheck } from '../../src/cli/shipped-template.js';
import { getAt, validateConfig } from '../../src/config/load.js';
import { generateKeyPair } from '../../src/protocol/signing.js';
import { ROOT, runCliInProcess } from '../helpers/cli.js';

const TEMPLATE = join(ROOT, 'config', 'config.example.json');
const asRoot = process.getuid?.() === 0;
/** A system account every Debian has, standing in for printer-agent (as service-access.test.ts). */
const NOBODY = { PRINTER_AGENT_SERVICE_USER: 'nobody' };

type Json = Record<string, unknown>;
const readTemplate = () => JSON.parse(readFileSync(TEMPLATE, 'utf8')) as Json;
const fieldPath = (field: string) => field.replace(/\[(\d+)\]/g, '.$1').split('.');

/**
 * Every socket connect of this process while `work` runs: doctor runs in it, and the broker
 * probe, the catch-up probe, the local API and the TCP printers all connect through
 * net.Socket (https and mqtts included: a TLS socket is one).
 */
async function connectsDuring<T>(
  work: () => Promise<T>,
): Promise<{ result: T; targets: string[] }> {
  const targets: string[] = [];
  const original = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    const [first, second] = args;
    targets.push(
      typeof first === 'object' && first !== null
        ? `${(first as { host?: string; path?: string }).host ?? (first as { path?: string }).path}:${(first as { port?: number }).port ?? ''}`
        : `${String(second ?? 'localhost')}:${String(first)}`,
    );
    return (original as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof original;
  try {
    return { result: await work(), targets };
  } finally {
    net.Socket.prototype.connect = original;
  }
}

describe('the shipped template, recognised (src/cli/shipped-template.ts)', () => {
  it("holds each sample value doctor names, so the list cannot drift from the template's file", () => {
    const template = readTemplate();
    for (const { field, value } of TEMPLATE_SAMPLES)
      assert.equal(getAt(template, fieldPath(field)), value, `${field} in ${TEMPLATE}`);
  });

  it('is the template by its broker; every placeholder and sample is named', () => {
    const { config } = validateConfig(readTemplate(), { file: TEMPLATE, env: {} });
    const check = templateCheck(config);
    assert.equal(check.isTemplate, true);
    assert.deepEqual(
      check.placeholders.map((p) => p.field).sort(),
      ['mqtt.url', 'catchUp.baseUrl', ...TEMPLATE_SAMPLES.map((s) => s.field)].sort(),
    );
    assert.match(
      check.placeholders.find((p) => p.field === 'mqtt.url')!.why,
      /broker\.example\.com/,
    );
  });

  it("a store's config with the template's plausible values is not the template", () => {
    const raw = readTemplate();
    (raw.mqtt as Json).url = 'mqtts://mqtt.chain.ph:8883';
    (raw.catchUp as Json).baseUrl = 'https://orders.chain.ph';
    const { config } = validateConfig(raw, { file: TEMPLATE, env: {} });
    // appId A1 and a printer at 192.168.1.50 may well be a real store's: not placeholders alone.
    assert.deepEqual(templateCheck(config), { isTemplate: false, placeholders: [] });
    // A host reserved for documentation still is, wherever it is left.
    (raw.catchUp as Json).baseUrl = 'https://orders.example.com';
    const partly = templateCheck(validateConfig(raw, { file: TEMPLATE, env: {} }).config);
    assert.equal(partly.isTemplate, false);
    assert.deepEqual(
      partly.placeholders.map((p) => p.field),
      ['catchUp.baseUrl'],
    );
  });

  it('documentation hosts: RFC 2606 names only', () => {
    for (const host of [
      'example.com',
      'broker.example.com',
      'EXAMPLE.NET',
      'a.example.org',
      'x.example',
      'y.invalid',
    ])
      assert.equal(isExampleHost(host), true, host);
    for (const host of [
      'example.com.ph',
      'myexample.com',
      '192.168.1.50',
      'localhost',
      'broker.test',
    ])
      assert.equal(isExampleHost(host), false, host);
  });
});

describe('printer-agent doctor on the template', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'pa-doctor-template-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** The template as the package installs it, with `change` applied. */
  function templateConfig(name: string, change: (c: Json) => void = () => {}): string {
    const raw = readTemplate();
    change(raw);
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(raw, null, 2), { mode: 0o640 });
    return path;
  }

  it('untouched: one FAIL line naming it the template, its fields and how to fill them; nothing contacted', async () => {
    const path = join(dir, 'config.json');
    copyFileSync(TEMPLATE, path);
    const { result: run, targets } = await connectsDuring(() =>
      runCliInProcess(['doctor', '--config', path], { env: { ...process.env, ...NOBODY } }),
    );
    assert.equal(run.status, 1, run.stdout + run.stderr);
    const lines = run.stdout.split('\n');
    assert.match(
      lines[0]!,
      new RegExp(`^FAIL config: ${path} is still the package's template: fill in `),
    );
    for (const field of ['mqtt.url', 'catchUp.baseUrl', 'appId', 'printers[1].url'])
      assert.ok(lines[0]!.includes(`${field} (`), `${field} in: ${lines[0]}`);
    assert.match(
      lines[0]!,
      /the files it names are not there yet: storeKeyFile, mqtt\.passwordFile/,
    );
    assert.match(
      lines[1]!,
      // sudo: root runs the tests in CI; another user owns this temp file and needs none.
      /^ {5}fix: (sudo )?printer-agent setup --config .* or field by field: (sudo )?printer-agent config set --config .* mqtt\.url mqtts:\/\/BROKER:8883/,
    );
    // Placeholder hosts and the example printer are not asked; nor is anything else.
    assert.deepEqual(targets, []);
    assert.doesNotMatch(run.stdout, /^\S+ +(broker|catch-up|agent|printer \w+):/m);
    assert.doesNotMatch(
      run.stdout,
      /example\.com.*(ENOTFOUND|EAI_AGAIN)|192\.168\.1\.50:9100: disconnected/,
    );
    // The service user never "can read" files that are not there (asked as nobody, as root).
    assert.doesNotMatch(run.stdout, /can read the config and the \d+ files/);
    if (asRoot)
      assert.match(
        run.stdout,
        /^FAIL service user: nobody cannot read 5 of the 5 files the config names: not there \(storeKeyFile \/etc\/printer-agent\/store-key, /m,
      );
  });

  it('the same config with a real broker is not the template: then it is contacted (the watch works)', async () => {
    const path = templateConfig('broker-set.json', (c) => {
      (c.mqtt as Json).url = 'mqtt://127.0.0.1:1';
      (c.mqtt as Json).tls = undefined;
      (c.catchUp as Json).baseUrl = 'https://orders.example.com'; // still the placeholder
      (c.printers as Json[])[1]!.url = 'tcp://kitchen.example.com:9100';
      c.console = { enabled: false };
    });
    const { result: run, targets } = await connectsDuring(() =>
      runCliInProcess(['doctor', '--config', path]),
    );
    assert.equal(run.status, 1);
    assert.match(run.stdout, /^ok {3}config: /m);
    // The broker's password file is missing: doctor says so rather than connecting without it.
    assert.match(run.stdout, /^FAIL broker: mqtt:\/\/127\.0\.0\.1:1 .*not checked/m);
    // What is left of the template is named and not contacted.
    assert.match(
      run.stdout,
      /^FAIL catch-up: catchUp\.baseUrl: https:\/\/orders\.example\.com: orders\.example\.com, a placeholder: not contacted$/m,
    );
    assert.match(
      run.stdout,
      /^ {5}fix: .*config set --config .* catchUp\.baseUrl https:\/\/ORDER-SERVICE/m,
    );
    assert.match(
      run.stdout,
      /^FAIL printer kitchen: tcp:\/\/kitchen\.example\.com:9100: kitchen\.example\.com, a placeholder: not contacted$/m,
    );
    assert.ok(!targets.some((t) => t.includes('example')), targets.join(', '));
    // The receipt printer (a device file) was asked: the template check lets real values through.
    assert.match(run.stdout, /^FAIL printer receipt: file:\/dev\/usb\/lp0: /m);
  });

  it('a real broker URL is probed: the socket watch sees what doctor contacts', async () => {
    const path = templateConfig('probed.json', (c) => {
      (c.mqtt as Json).url = 'mqtt://127.0.0.1:1';
      (c.mqtt as Json).passwordFile = undefined;
      (c.mqtt as Json).tls = undefined;
      (c.catchUp as Json).enabled = false;
      c.printers = [{ id: 'receipt', url: 'tcp://127.0.0.1:1', profile: 'generic-80mm' }];
      c.console = { enabled: false };
    });
    const { result: run, targets } = await connectsDuring(() =>
      runCliInProcess(['doctor', '--config', path]),
    );
    assert.match(run.stdout, /^FAIL broker: mqtt:\/\/127\.0\.0\.1:1 /m);
    assert.ok(targets.includes('127.0.0.1:1'), targets.join(', '));
  });
});

describe('the fix doctor prints for a secret file, applied: config check passes for the account', {
  skip: asRoot ? false : 'needs root (CI runs as root): chown to the service account',
}, () => {
  const service = generateKeyPair();
  let dir: string;
  let config: string;
  const storeKey = () => join(dir, 'store-key');

  before(() => {
    // As the package lays it out, with nobody as the service account.
    dir = mkdtempSync(join(tmpdir(), 'pa-doctor-fix-'));
    chmodSync(dir, 0o755);
    const file = (name: string, content: string, mode: number, owner?: [number, number]) => {
      const path = join(dir, name);
      writeFileSync(path, content, { mode });
      chmodSync(path, mode);
      if (owner) chownSync(path, ...owner);
      return path;
    };
    file('service-public.pem', service.publicPem, 0o644);
    file('mqtt-password', 'pw-doctor-fix\n', 0o600, [65534, 65534]);
    config = file(
      'config.json',
      JSON.stringify({
        appId: 'A-fix',
        storeKeyFile: storeKey(),
        mqtt: {
          url: 'mqtt://127.0.0.1:1',
          username: 'store-fix',
          passwordFile: join(dir, 'mqtt-password'),
        },
        keys: { servicePublicKeyFile: join(dir, 'service-public.pem') },
        printers: [{ id: 'receipt', url: 'tcp://127.0.0.1:1', profile: 'generic-80mm' }],
        stateDir: join(dir, 'state'),
        catchUp: { enabled: false },
        console: { enabled: false },
      }),
      0o640,
      [0, 65534],
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  async function doctorFix(line: RegExp): Promise<string> {
    const run = await runCliInProcess(['doctor', '--config', config], {
      env: { ...process.env, ...NOBODY },
    });
    const lines = run.stdout.split('\n');
    const at = lines.findIndex((l) => line.test(l));
    assert.ok(at >= 0, `${line} in:\n${run.stdout}`);
    const fix = /^ {5}fix: (.*)$/.exec(lines[at + 1] ?? '')?.[1];
    assert.ok(fix, run.stdout);
    return fix;
  }

  /**
   * Runs a fix as a technician pastes it (root already: `sudo ` dropped). `sudoedit F` is the
   * technician typing the secret: it writes into the existing file, so owner and mode stay.
   */
  function apply(fix: string, secret: string): void {
    for (const command of fix.replace(/ \([^)]*\)$/, '').split(' && ')) {
      const plain = command.replace(/^sudo /, '');
      const edit = /^sudoedit (\S+)/.exec(plain);
      if (edit) writeFileSync(edit[1]!, `${secret}\n`);
      else execSync(plain, { stdio: 'pipe' });
    }
  }

  async function configCheck(): Promise<{ status: number; stderr: string }> {
    return runCliInProcess(['config', 'check', '--config', config], {
      env: { ...process.env, ...NOBODY },
    });
  }

  it('missing: install for the account, then the secret typed in', async () => {
    rmSync(storeKey(), { force: true });
    assert.equal((await configCheck()).status, 1);
    const fix = await doctorFix(/^FAIL secret: storeKeyFile: cannot read .*store-key \(ENOENT\)$/);
    assert.equal(
      fix,
      `sudo install -m 0600 -o nobody -g nogroup /dev/null ${storeKey()} && sudoedit ${storeKey()} (write the secret as its first line)`,
    );
    apply(fix, 'sk-doctor-fix-1');
    const check = await configCheck();
    assert.equal(check.status, 0, check.stderr);
    const stats = statSync(storeKey());
    assert.deepEqual([stats.uid, stats.mode & 0o777], [65534, 0o600]);
  });

  it('written by root and readable by all: chown and chmod together (chmod alone locks the service out)', async () => {
    rmSync(storeKey(), { force: true });
    writeFileSync(storeKey(), 'sk-doctor-fix-2\n', { mode: 0o644 });
    chmodSync(storeKey(), 0o644);
    const fix = await doctorFix(
      /^warn permissions: storeKeyFile: .*store-key can be read by group or others/,
    );
    assert.equal(fix, `sudo chown nobody:nogroup ${storeKey()} && sudo chmod 0600 ${storeKey()}`);
    // What doctor used to print: the file stays root's, and config check refuses it.
    chmodSync(storeKey(), 0o600);
    assert.equal((await configCheck()).status, 1);
    chmodSync(storeKey(), 0o644);
    apply(fix, '');
    const check = await configCheck();
    assert.equal(check.status, 0, check.stderr);
    assert.doesNotMatch(check.stderr, /can be read by group or others/);
  });
});
