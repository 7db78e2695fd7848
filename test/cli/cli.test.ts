import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { before, describe, it } from 'node:test';
import { bundle } from '../../packaging/bundle.js';
import type { CliContext } from '../../src/cli/io.js';
import { buildProgram } from '../../src/cli/program.js';
import { ROOT, runCli, runCliInProcess } from '../helpers/cli.js';

const STORE_KEY = 'sk-cli-test-secret-5d1f';
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

// Through the real entry (src/cli.ts in a child process): the spawn smoke tests. The rest of the
// CLI tests run the same program in-process (test/helpers/cli.ts).
describe('printer-agent --help and --version', () => {
  it('lists the commands that exist', () => {
    const r = runCli(['--help'], { source: true });
    assert.equal(r.status, 0);
    for (const command of ['keys', 'sign', 'verify'])
      assert.match(r.stdout, new RegExp(`^\\s+${command}\\b`, 'm'));
  });

  it('prints the package version', () => {
    const r = runCli(['--version'], { source: true });
    assert.equal(r.status, 0);
    assert.equal(r.stdout.trim(), pkg.version);
  });

  it('exits 2 on an unknown command or a missing option', async () => {
    const unknown = runCli(['frobnicate'], { source: true });
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /unknown command 'frobnicate'/);
    const missing = await runCliInProcess(['keys', 'generate']);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /--out/);
  });
});

// The build in dist/ (`npm run build`), made once for these tests.
describe('printer-agent compiled', () => {
  // Files an earlier build wrote and this one does not (a chunk whose hash has changed, an entry
  // point since dropped): the build empties dist/ first, so none is shipped or loaded by mistake.
  const stale = [join(ROOT, 'dist', 'chunks', 'chunk-STALE000.js'), join(ROOT, 'dist', 'gone.js')];
  before(async () => {
    for (const file of stale) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, '// written by an earlier build\n');
    }
    await bundle();
  });

  it('leaves no file of an earlier build in dist/', () => {
    for (const file of stale) assert.equal(existsSync(file), false, `${file} survived the build`);
    assert.ok(existsSync(join(ROOT, 'dist', 'cli.js')));
  });

  it('works compiled from dist/ (npm run build)', async () => {
    const help = runCli(['--help'], { compiled: true });
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^\s+sign\b/m);
    const version = runCli(['--version'], { compiled: true });
    assert.equal(version.stdout.trim(), pkg.version);
    // The bundle loads the SQLite driver from node_modules (a native module stays outside it):
    // the message is the store's own, not "cannot be loaded".
    const jobs = runCli(['jobs', 'list', '--state-dir', join(tmpdir(), 'pa-no-such-state')], {
      compiled: true,
    });
    assert.equal(jobs.status, 1);
    assert.match(jobs.stderr, /^STORE_FAILED: no job database at /);
    // CJK text for a printer with a CJK font: GB18030 comes from iconv-lite, which the bundle
    // leaves out and requires on the first CJK character. Same bytes as the sources give (run
    // in this process: a tsx child would cost 2 s of CPU to say the same).
    const cjk = [
      'render',
      join(ROOT, 'test', 'fixtures', 'orders', 'table-cjk.json'),
      '--profile',
      'pos-5890-gb18030',
      '--format',
      'hex',
    ];
    const compiled = runCli(cjk, { compiled: true });
    assert.equal(compiled.status, 0, compiled.stderr);
    assert.match(compiled.stdout, / 1c 26 /, 'FS & (CJK mode on) in the bytes');
    assert.equal(compiled.stdout, (await runCliInProcess(cjk)).stdout);
    // The bundle keeps only zod's English locale (decision 210): a malformed order is refused
    // with the same words as from the sources, each field and its rule named.
    const bad = join(mkdtempSync(join(tmpdir(), 'pa-cli-bundle-')), 'order.json');
    writeFileSync(
      bad,
      JSON.stringify({
        jobId: 'J',
        orderNo: 'O',
        createTime: '2026-11-25 12:00:00',
        order: { productInfo: [{ productName: 'x', price: '12', quantity: 1.5 }], orderType: 7 },
      }),
    );
    const refusal = ['render', bad, '--profile', 'generic-80mm', '--format', 'hex'];
    const compiledRefusal = runCli(refusal, { compiled: true });
    assert.equal(compiledRefusal.status, 1);
    assert.match(compiledRefusal.stderr, /productInfo\[0\]\.price: must be a number/);
    assert.equal(compiledRefusal.stderr, (await runCliInProcess(refusal)).stderr);
  });
});

describe('keys, sign and verify', () => {
  let dir: string;
  const order = {
    productInfo: [{ productName: 'Chicken adobo', price: 15000, quantity: 2 }],
    orderType: 1,
    paymentWay: '2',
    paymentTransactionId: 'M-1',
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pa-cli-'));
    const r = await runCliInProcess([
      'keys',
      'generate',
      '--out',
      join(dir, 'keys'),
      '--name',
      'service',
    ]);
    assert.equal(r.status, 0, r.stderr);
    writeFileSync(join(dir, 'order.json'), JSON.stringify(order, null, 2));
    writeFileSync(join(dir, 'store-key.txt'), `${STORE_KEY}\n`);
  });

  it('keys generate writes a private key readable by its owner only and a public key', () => {
    const priv = join(dir, 'keys', 'service-private.pem');
    assert.equal(statSync(priv).mode & 0o777, 0o600);
    assert.match(
      readFileSync(join(dir, 'keys', 'service-public.pem'), 'utf8'),
      /^-----BEGIN PUBLIC KEY-----/,
    );
    assert.match(readFileSync(priv, 'utf8'), /^-----BEGIN PRIVATE KEY-----/);
  });

  it('takes relative paths from the directory it runs in', async () => {
    const r = await runCliInProcess(['keys', 'generate', '--out', 'relative', '--name', 'r'], {
      cwd: dir,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.split('\n')[1], `public key:  ${join(dir, 'relative', 'r-public.pem')}`);
    assert.equal(statSync(join(dir, 'relative', 'r-private.pem')).mode & 0o777, 0o600);
  });

  it('keys generate refuses to overwrite without --force and replaces with it', async () => {
    const again = await runCliInProcess([
      'keys',
      'generate',
      '--out',
      join(dir, 'keys'),
      '--name',
      'service',
    ]);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /^INPUT_INVALID: .*already exists; use --force/);
    const tooShort = await runCliInProcess([
      'keys',
      'generate',
      '--out',
      join(dir, 'keys'),
      '--name',
      'other',
      '--bits',
      '1024',
    ]);
    assert.equal(tooShort.status, 1);
    assert.match(tooShort.stderr, /^INPUT_INVALID: bits: must be an integer between 2048/);
    const previous = readFileSync(join(dir, 'keys', 'service-public.pem'), 'utf8');
    const forced = await runCliInProcess([
      'keys',
      'generate',
      '--out',
      join(dir, 'keys'),
      '--name',
      'service',
      '--force',
    ]);
    assert.equal(forced.status, 0, forced.stderr);
    assert.notEqual(
      readFileSync(join(dir, 'keys', 'service-public.pem'), 'utf8'),
      previous,
      '--force writes a new pair',
    );
    assert.equal(statSync(join(dir, 'keys', 'service-private.pem')).mode & 0o777, 0o600);
  });

  it('sign prints an envelope whose param is the compact JSON and which verify accepts', async () => {
    const signed = await runCliInProcess([
      'sign',
      '--key',
      join(dir, 'keys', 'service-private.pem'),
      '--app-id',
      'A1',
      '--store-key-file',
      join(dir, 'store-key.txt'),
      '--validate',
      'create',
      join(dir, 'order.json'),
    ]);
    assert.equal(signed.status, 0, signed.stderr);
    const envelope = JSON.parse(signed.stdout) as {
      appId: string;
      storeKey: string;
      param: string;
      sign: string;
    };
    assert.equal(envelope.appId, 'A1');
    assert.equal(envelope.storeKey, STORE_KEY);
    assert.equal(envelope.param, JSON.stringify(order));
    writeFileSync(join(dir, 'envelope.json'), signed.stdout);

    const verified = await runCliInProcess(
      [
        'verify',
        '--pub',
        join(dir, 'keys', 'service-public.pem'),
        '--app-id',
        'A1',
        '--validate',
        'create',
        '-',
      ],
      { input: signed.stdout },
    );
    assert.equal(verified.status, 0, verified.stderr);
    const report = JSON.parse(verified.stdout) as { valid: boolean; param: { paymentWay: number } };
    assert.equal(report.valid, true);
    assert.equal(report.param.paymentWay, 2, 'the quirk "2" is normalized to the number');
    assert.ok(!verified.stdout.includes(STORE_KEY), 'verify must not print the storeKey');
  });

  it('verify rejects a tampered param, a wrong store key and an invalid param with typed codes', async () => {
    const envelope = JSON.parse(readFileSync(join(dir, 'envelope.json'), 'utf8')) as {
      param: string;
    };
    const pub = join(dir, 'keys', 'service-public.pem');
    const tampered = JSON.stringify({
      ...envelope,
      param: envelope.param.replace('15000', '15001'),
    });
    // A typed failure through the real entry, the envelope on a piped stdin (spawn smoke test).
    const r1 = runCli(['verify', '--pub', pub, '-'], { input: tampered });
    assert.equal(r1.status, 1);
    assert.match(r1.stderr, /^SIGNATURE_INVALID: /);
    const r1InProcess = await runCliInProcess(['verify', '--pub', pub, '-'], { input: tampered });
    assert.deepEqual(r1InProcess, { ...r1, stdoutBytes: Buffer.alloc(0) }, 'the same answer');

    const r2 = await runCliInProcess([
      'verify',
      '--pub',
      pub,
      '--store-key',
      'another-key',
      join(dir, 'envelope.json'),
    ]);
    assert.equal(r2.status, 1);
    assert.match(r2.stderr, /^IDENTITY_MISMATCH: storeKey/);
    assert.ok(!r2.stderr.includes(STORE_KEY) && !r2.stderr.includes('another-key'));

    writeFileSync(
      join(dir, 'bad-order.json'),
      JSON.stringify({ ...order, productInfo: [{ productName: 'X', price: 1, quantity: 1001 }] }),
    );
    const r3 = await runCliInProcess([
      'sign',
      '--key',
      join(dir, 'keys', 'service-private.pem'),
      '--app-id',
      'A1',
      '--store-key',
      STORE_KEY,
      '--validate',
      'create',
      join(dir, 'bad-order.json'),
    ]);
    assert.equal(r3.status, 1);
    assert.equal(
      r3.stderr.trim(),
      'PARAM_INVALID: productInfo[0].quantity: must be between 1 and 1000',
    );
  });

  it('sign and verify report unreadable inputs and bad options clearly', async () => {
    const noKey = await runCliInProcess([
      'sign',
      '--key',
      join(dir, 'missing.pem'),
      '--app-id',
      'A',
      '--store-key',
      'K',
      join(dir, 'order.json'),
    ]);
    assert.equal(noKey.status, 1);
    assert.match(
      noKey.stderr,
      /^KEY_FILE_MISSING: .*missing\.pem: cannot read private key file \(ENOENT\)/,
    );
    const badScheme = await runCliInProcess(['verify', '--pub', 'x', '--scheme', 'MD5', 'y']);
    assert.equal(badScheme.status, 2);
    assert.match(badScheme.stderr, /must be one of RSA-SHA256, RSA-PSS-SHA256/);
    writeFileSync(join(dir, 'not-json.json'), '{oops');
    const notJson = await runCliInProcess([
      'sign',
      '--key',
      join(dir, 'keys', 'service-private.pem'),
      '--app-id',
      'A',
      '--store-key',
      'K',
      join(dir, 'not-json.json'),
    ]);
    assert.equal(notJson.status, 1);
    assert.match(notJson.stderr, /^INPUT_INVALID: .*not-json\.json: is not valid JSON/);
  });
});

describe('the program in a process it shares', () => {
  it('commands reach the process only through the I/O they are given', () => {
    // What the in-process tests rely on: a command that wrote to process.stdout, read
    // process.env or set process.exitCode would act on the test process instead. Signals and
    // process.exit stay with the long-running commands, which tests run as child processes.
    const dir = join(ROOT, 'src', 'cli');
    const offences: string[] = [];
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.ts') && n !== 'io.ts')) {
      readFileSync(join(dir, name), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          // A library function's default when its caller gives none (runDoctor) is allowed.
          const code = line.replace(/\?\? process\.(env|cwd\(\))/g, '');
          if (/process\.(stdout|stderr|stdin|env|cwd|exitCode|argv)\b/.test(code))
            offences.push(`src/cli/${name}:${i + 1}: ${line.trim()}`);
        });
    }
    assert.deepEqual(offences, []);
  });

  it('leaves the exit code, the directory and the environment of this process alone', async () => {
    const exitCode = process.exitCode;
    const cwd = process.cwd();
    const env = { ...process.env };
    const r = await runCliInProcess(['config', 'check'], {
      env: { PRINTER_AGENT_CONFIG: join(tmpdir(), 'pa-no-such-dir', 'config.json') },
      cwd: tmpdir(),
    });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^CONFIG_MISSING: .*pa-no-such-dir\/config\.json/);
    assert.equal(process.exitCode, exitCode);
    assert.deepEqual({ ...process.env }, env);
    assert.equal(process.cwd(), cwd);
  });
});

describe('run with a config it cannot start on', () => {
  it('exits 78 (EX_CONFIG), naming the problem, so systemd does not restart it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pa-run-config-'));
    const missing = await runCliInProcess(['run', '--config', join(dir, 'absent.json')]);
    assert.equal(missing.status, 78);
    assert.match(missing.stderr, /^CONFIG_MISSING: .*absent\.json: no such file/);
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ appId: 'A1', mqtt: { urll: 'x' } }));
    const invalid = await runCliInProcess(['run', '--config', join(dir, 'bad.json')]);
    assert.equal(invalid.status, 78);
    assert.match(invalid.stderr, /^CONFIG_INVALID: .*bad\.json: .*mqtt: unknown setting "urll"/);
    // The unit holds the other half of the contract.
    const unit = readFileSync(join(ROOT, 'systemd', 'printer-agent.service'), 'utf8');
    assert.match(unit, /^RestartPreventExitStatus=78$/m);
  });
});

describe('command groups load on demand', () => {
  // Building a program registers commands and reads nothing: streams that go nowhere will do.
  const context = (): CliContext => ({
    io: {
      stdout: new PassThrough(),
      stderr: new PassThrough(),
      stdin: new PassThrough(),
      readStdin: () => Buffer.alloc(0),
      env: {},
      cwd: ROOT,
    },
    exitCode: 0,
  });
  const names = (program: { commands: ReadonlyArray<{ name(): string }> }) =>
    program.commands.map((command) => command.name());

  it('each command, named first, gets its own group and only that group', async () => {
    const all = names(await buildProgram(context()));
    assert.ok(all.includes('run') && all.includes('jobs') && all.includes('demo'), all.join(' '));
    for (const name of all) {
      const alone = names(await buildProgram(context(), [name, '--help']));
      assert.ok(alone.includes(name), `${name}: its group did not register it (${alone})`);
      // Loading only what the command needs is the point: `jobs` does not pull the agent in.
      assert.ok(alone.length < all.length, `${name}: every group was loaded`);
    }
  });

  it('help, options first and unknown commands see every command', async () => {
    const all = names(await buildProgram(context()));
    assert.deepEqual(names(await buildProgram(context(), ['--help'])), all);
    assert.deepEqual(names(await buildProgram(context(), ['frobnicate'])), all);
    const unknown = await runCliInProcess(['jbos']);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /Did you mean jobs\?/);
  });
});
