/**
 * `printer-agent setup` (issue 41 item 3) as shipped: every run is a child process on the bundle
 * of the current sources (harness/child-entry.ts, what `npm run build` ships), against a
 * real Mosquitto and emulators on TCP playing shipped profiles. From flags: the package's template
 * is replaced, the printer without `--profile` is identified, the config passes `config check`,
 * a test page lands on each emulator's paper and doctor's checklist is reported; the store key
 * shows nowhere but its 0600 file; an existing config is refused without --force. Bad flags exit
 * 2 naming the flag and write nothing. On a terminal (a real pty, util-linux `script`), setup asks
 * for what is missing, the store key typed hidden. Run as root (CI, this machine), the service
 * user is `nobody` and the owners are checked; as anyone else, the modes.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliEntry } from '../../harness/child-entry.js';
import { freePort, Mosquitto, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { emulatorOptionsForProfile } from '../../src/cli/emulator-profile.js';
import {
  listenTcp,
  renderText,
  type TcpEndpoint,
  VirtualPrinter,
} from '../../src/emulator/index.js';
import { generateKeyPair } from '../../src/protocol/signing.js';
import { loadProfiles } from '../../src/receipt/profile.js';
import { type CliResult, ROOT, runCli } from '../helpers/cli.js';

const STORE_KEY = 'sk-setup-7f3e-never-shown';
const TYPED_KEY = 'sk-typed-91ad-never-shown';
const asRoot = process.getuid?.() === 0;
/** `nobody`/`nogroup` (Debian): the service account the files go to when root runs setup. */
const NOBODY = { uid: 65534, gid: 65534 };

const playing = (id: string) =>
  new VirtualPrinter(emulatorOptionsForProfile(loadProfiles().get(id)!));

/** The CLI as a child process without blocking this process: the emulators answer meanwhile. */
function setupRun(args: readonly string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...cliEntry(), 'setup', ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

function modeOf(path: string): string {
  const s = statSync(path);
  return `${(s.mode & 0o777).toString(8)} ${s.uid}:${s.gid}`;
}

function assertNoKey(where: string, text: string): void {
  for (const key of [STORE_KEY, TYPED_KEY])
    assert.ok(!text.includes(key), `the store key in ${where}`);
}

describe('printer-agent setup', { skip: skipWithoutMosquitto() }, () => {
  let broker: Mosquitto;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let stateDir: string;
  let storeKeyFile: string;
  let serviceKey: string;
  /** Plays an Epson TM-T88VI: it names its model, so setup takes the proposal. */
  const epson = playing('epson-tm-t88vi');
  /** A nameless 80 mm clone: identification cannot be sure. */
  const clone = playing('generic-80mm');
  let epsonAt: TcpEndpoint;
  let cloneAt: TcpEndpoint;

  before(async () => {
    broker = await Mosquitto.start();
    epsonAt = await listenTcp(epson, { port: 0 });
    cloneAt = await listenTcp(clone, { port: 0 });
    dir = mkdtempSync(join(tmpdir(), 'pa-setup-'));
    // The service account must be able to walk down to the config (as /etc is).
    chmodSync(dir, 0o755);
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    // The clock check asks timedatectl: a stub, so the machine running the tests does not matter.
    writeFileSync(join(bin, 'timedatectl'), '#!/bin/sh\necho yes\n', { mode: 0o755 });
    stateDir = join(dir, 'state');
    mkdirSync(stateDir);
    const given = join(dir, 'given');
    mkdirSync(given);
    storeKeyFile = join(given, 'store-key.txt');
    writeFileSync(storeKeyFile, `${STORE_KEY}\n`, { mode: 0o600 });
    serviceKey = join(given, 'service.pem');
    writeFileSync(serviceKey, generateKeyPair().publicPem);
    env = {
      ...process.env,
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      PRINTER_AGENT_SERVICE_USER: 'nobody',
    };
    delete env.PRINTER_AGENT_CONFIG;
  });
  after(async () => {
    await Promise.all([broker?.stop(), epsonAt?.close(), cloneAt?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const flags = (config: string, appId = 'A1') => [
    '--config',
    config,
    '--app-id',
    appId,
    '--store-key-file',
    storeKeyFile,
    '--broker',
    broker.url,
    '--service-key',
    serviceKey,
    '--printer',
    `receipt=${epsonAt.address}`,
    '--printer',
    `kitchen=${cloneAt.address}`,
    '--profile',
    'kitchen=generic-80mm',
    '--state-dir',
    stateDir,
    '--timeout',
    '500',
  ];

  it('from flags over the package template: identified, written, checked, test pages printed, doctor OK; then refused without --force and replaced with it', async () => {
    // As the package leaves it: /etc/printer-agent 0750 root:printer-agent with the template.
    const etc = join(dir, 'etc');
    mkdirSync(etc, { mode: 0o750 });
    if (asRoot) chownSync(etc, 0, NOBODY.gid);
    const config = join(etc, 'config.json');
    copyFileSync(join(ROOT, 'config', 'config.example.json'), config);
    const printedBefore = [epson.tickets().length, clone.tickets().length];

    const r = await setupRun(flags(config), env);
    assert.equal(r.status, 0, r.stderr + r.stdout);
    assert.equal(r.stderr, '');
    assertNoKey('stdout', r.stdout);
    const out = r.stdout;
    assert.match(
      out,
      new RegExp(
        `^printer receipt: ${epsonAt.address}: profile epson-tm-t88vi \\(identified, certain\\): the printer reports EPSON TM-T88VI`,
        'm',
      ),
    );
    assert.match(out, /^printer kitchen: .*: profile generic-80mm \(from --profile\)$/m);
    assert.match(out, /^replacing .*config\.json \(the package's template\)$/m);
    assert.match(out, /^config OK: /m);
    assert.match(
      out,
      /^test page on printer receipt \(.*\): printed \(confirmed by process-id\)$/m,
    );
    assert.match(out, /^test page on printer kitchen \(.*\): printed \(confirmed by status\)$/m);
    assert.match(out, /^ok {3}broker: mqtt:\/\/127\.0\.0\.1:\d+ \(MQTT 5\): connected$/m);
    assert.match(out, /^ok {3}printer receipt: .*: ready$/m);
    assert.match(out, /^setup done: .*config\.json; start the agent with it/m);
    if (asRoot) assert.match(out, /^ok {3}service user: nobody can read the config/m);

    // Each printer's own test page, with the profile setup chose for it.
    const epsonPage = renderText(epson.tickets()[printedBefore[0]!]!);
    assert.match(epsonPage, /TEST PAGE/);
    assert.match(epsonPage, /Profile +epson-tm-t88vi/);
    const clonePage = renderText(clone.tickets()[printedBefore[1]!]!);
    assert.match(clonePage, /Profile +generic-80mm/);

    // The config: the secrets by file, beside it, as in the template's layout.
    const text = readFileSync(config, 'utf8');
    assertNoKey('the config', text);
    assert.deepEqual(JSON.parse(text), {
      version: 2, // written by this agent: nothing to migrate at its start
      appId: 'A1',
      storeKeyFile: join(etc, 'store-key'),
      mqtt: { url: broker.url },
      keys: { servicePublicKeyFile: join(etc, 'service-public.pem') },
      printers: [
        { id: 'receipt', url: epsonAt.address, profile: 'epson-tm-t88vi' },
        { id: 'kitchen', url: cloneAt.address, profile: 'generic-80mm' },
      ],
      routing: [{ role: 'receipt' }, { role: 'kitchen' }],
      stateDir,
      catchUp: { enabled: false },
    });
    assert.equal(readFileSync(join(etc, 'store-key'), 'utf8'), `${STORE_KEY}\n`);
    assert.equal(
      readFileSync(join(etc, 'service-public.pem'), 'utf8'),
      readFileSync(serviceKey, 'utf8'),
    );
    // Owners as the package lays them out when root runs it; the modes whoever runs it.
    const me = `${process.getuid?.()}:${process.getgid?.()}`;
    assert.equal(modeOf(config), asRoot ? `640 0:${NOBODY.gid}` : `640 ${me}`);
    assert.equal(
      modeOf(join(etc, 'store-key')),
      asRoot ? `600 ${NOBODY.uid}:${NOBODY.gid}` : `600 ${me}`,
    );
    assert.equal(modeOf(join(etc, 'service-public.pem')), asRoot ? '644 0:0' : `644 ${me}`);

    // What `config check` says of it, as shipped.
    const check = runCli(['config', 'check', '--config', config], { env });
    assert.equal(check.status, 0, check.stderr);
    assert.equal(check.stdout, `config OK: ${config}\n`);

    // Again: refused without --force, naming it; nothing touched, nothing printed.
    const printed = [epson.tickets().length, clone.tickets().length];
    const again = await setupRun(flags(config, 'A2'), env);
    assert.equal(again.status, 1);
    assert.equal(again.stdout, '');
    assert.equal(
      again.stderr,
      `INPUT_INVALID: ${config}: a config is there already; setup --force replaces it (one setting: printer-agent config set)\n`,
    );
    assert.equal(readFileSync(config, 'utf8'), text);
    assert.deepEqual([epson.tickets().length, clone.tickets().length], printed);

    // With --force: replaced, said so.
    const forced = await setupRun([...flags(config, 'A2'), '--force'], env);
    assert.equal(forced.status, 0, forced.stderr + forced.stdout);
    assert.match(forced.stdout, /^replacing .*config\.json \(--force\)$/m);
    assert.equal(JSON.parse(readFileSync(config, 'utf8')).appId, 'A2');
    assert.equal(modeOf(config), asRoot ? `640 0:${NOBODY.gid}` : `640 ${me}`);
  });

  it('bad flags exit 2 naming each flag and its rule (all at once), and write nothing', async () => {
    const config = join(dir, 'never', 'config.json');
    const base = flags(config);
    const change = (args: string[], flag: string, value: string) => {
      const at = args.indexOf(flag);
      return at < 0 ? [...args, flag, value] : args.with(at + 1, value);
    };
    const without = (args: string[], flag: string) =>
      args.filter((_, i) => args[i] !== flag && args[i - 1] !== flag);
    const empty = join(dir, 'empty-key');
    writeFileSync(empty, '\n');
    let many = change(base, '--broker', 'http://broker.local');
    many = change(many, '--printer', 'receipt=tcp://');
    many = change(many, '--profile', 'kitchen=no-such-model');
    many = change(many, '--app-id', 'A:1');
    many = change(many, '--store-key-file', empty);
    many = change(many, '--service-key', storeKeyFile);
    many = [...many, '--profile', 'bar=generic-80mm'];
    const cases: [string[], RegExp[]][] = [
      [
        many,
        [
          /^error: --store-key-file: .*empty-key is empty \(the secret is its first line\)$/m,
          /^error: --service-key: .*store-key\.txt: /m,
          /^error: --profile bar: no --printer serves role bar$/m,
          /^error: --app-id: must not contain ':'/m,
          /^error: --broker: must start with mqtt:\/\/ or mqtts:\/\/$/m,
          /^error: --printer receipt: /m,
          /^error: --profile kitchen: must be a profile in config\/printers\/: epson-tm-t20iii, /m,
        ],
      ],
      [
        change(base, '--printer', 'receipt'),
        [/^error: option '--printer <role=url>' argument 'receipt' is invalid\. must be ROLE=URL/m],
      ],
      // Missing flags are named beside the bad ones; a credential in the URL is never echoed.
      [
        change(without(base, '--store-key-file'), '--broker', 'mqtt://user:pw-3c1@broker.local'),
        [
          /^error: --broker: must not carry credentials: use mqtt\.username/m,
          /^error: missing --store-key-file \(standard input is not a terminal, so setup cannot ask for it\)$/m,
        ],
      ],
      // The clone names nothing: without --profile, setup does not guess.
      [
        without(base, '--profile'),
        [
          /^error: --profile kitchen: tcp:\/\/.*: identified only as generic-80mm \(unknown\): .*; name its profile: --profile kitchen=ID \(/m,
        ],
      ],
    ];
    const printed = [epson.tickets().length, clone.tickets().length];
    const results = await Promise.all(cases.map(([args]) => setupRun(args, env)));
    results.forEach((r, i) => {
      const [args, expected] = cases[i]!;
      assert.equal(r.status, 2, `${args.join(' ')}\n${r.stderr}`);
      assert.equal(r.stdout, '', args.join(' '));
      for (const line of expected) assert.match(r.stderr, line);
      assertNoKey('stderr', r.stderr);
      assert.ok(!r.stderr.includes('pw-3c1'), 'the broker password in stderr');
    });
    assert.equal(results[0]!.stderr.split('\n').filter((l) => l.startsWith('error: ')).length, 7);
    assert.equal(existsSync(join(dir, 'never')), false, 'nothing written');
    assert.deepEqual([epson.tickets().length, clone.tickets().length], printed);
  });

  it('a printer that cannot print: the config stays written, the failures named, exit 1', async () => {
    const config = join(dir, 'partly', 'config.json');
    const closed = await freePort();
    const args = flags(config).with(
      flags(config).indexOf(`kitchen=${cloneAt.address}`),
      `kitchen=tcp://127.0.0.1:${closed}`,
    );
    const r = await setupRun(args, env);
    assert.equal(r.status, 1, r.stderr + r.stdout);
    assert.match(
      r.stdout,
      /^test page on printer receipt \(.*\): printed \(confirmed by process-id\)$/m,
    );
    assert.match(
      r.stdout,
      new RegExp(
        `^test page on printer kitchen \\(tcp://127\\.0\\.0\\.1:${closed}\\): not printed: PRINTER_UNREACHABLE: `,
        'm',
      ),
    );
    assert.match(r.stdout, /^FAIL printer kitchen: .*\n {5}fix: check the printer is on/m);
    assert.equal(
      r.stderr,
      `setup: ${config} is written, but 2 checks failed (test page on printer kitchen, doctor printer kitchen): fix them as shown above, then run printer-agent doctor\n`,
    );
    assert.equal(runCli(['config', 'check', '--config', config], { env }).status, 0);
  });

  it('on a terminal it asks for what is missing, the store key hidden, and the profile it cannot be sure of', {
    skip: spawnSync('script', ['--version']).error
      ? 'needs script (Debian package util-linux)'
      : false,
  }, async () => {
    const etc = join(dir, 'asked');
    const config = join(etc, 'config.json');
    const printedBefore = clone.tickets().length;
    const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
    const command = [
      process.execPath,
      ...cliEntry(),
      'setup',
      '--config',
      config,
      '--state-dir',
      stateDir,
      '--timeout',
      '500',
    ]
      .map(quote)
      .join(' ');
    const child: ChildProcess = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: ROOT,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    let seen = 0;
    const waiters: Array<() => void> = [];
    child.stdout!.on('data', (d: Buffer) => {
      screen += d.toString('utf8');
      for (const w of waiters.splice(0)) w();
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    /** Waits until the screen shows `text` after what was seen last (no fixed waits). */
    const expect = async (text: string) => {
      while (!screen.slice(seen).includes(text)) {
        if (child.exitCode !== null) assert.fail(`setup ended before showing ${text}:\n${screen}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
      seen = screen.indexOf(text, seen) + text.length;
    };
    /** Waits for `prompt`, then types `text` and Enter. */
    const answer = async (prompt: string, text: string) => {
      await expect(prompt);
      child.stdin!.write(`${text}\r`);
    };
    try {
      await answer('application id', 'A7');
      await answer('store key (typed hidden): ', TYPED_KEY);
      await answer('broker URL', 'http://wrong');
      // Asked again, with the rule.
      await expect('must start with mqtt:// or mqtts://');
      await answer('broker URL', broker.url);
      await answer('broker user name', '');
      await answer('public key file (PEM)', serviceKey);
      await answer('receipt printer URL', cloneAt.address);
      await answer('another printer', '');
      await answer('profile for printer receipt', '');
      const status = await exited;
      assert.equal(status, 0, screen);
    } finally {
      child.stdin!.end();
      if (child.exitCode === null) child.kill();
    }
    assertNoKey('the terminal', screen);
    assert.match(screen, /store key \(typed hidden\): \r?\n/);
    assert.match(screen, /printer receipt: .*: profile generic-80mm \(chosen at the prompt\)/);
    assert.match(screen, /setup done: /);
    const written = JSON.parse(readFileSync(config, 'utf8'));
    assert.equal(written.appId, 'A7');
    assert.equal(written.mqtt.url, broker.url);
    assert.deepEqual(written.printers, [
      { id: 'receipt', url: cloneAt.address, profile: 'generic-80mm' },
    ]);
    assert.equal(readFileSync(join(etc, 'store-key'), 'utf8'), `${TYPED_KEY}\n`);
    // The directory setup made, like the package's /etc/printer-agent.
    assert.equal(
      modeOf(etc),
      asRoot ? `750 0:${NOBODY.gid}` : `750 ${process.getuid?.()}:${process.getgid?.()}`,
    );
    assert.match(renderText(clone.tickets()[printedBefore]!), /TEST PAGE/);
  });
});
