/**
 * `printer-agent emulator` as a process: ports printed on stdout, a job sent as an agent would,
 * ticket files on disk, a clean stop on SIGTERM, usage errors with exit code 2.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliEntry } from '../../harness/child-entry.js';
import { next, skipWithoutSocat, tcpClient, waitFor } from '../../harness/waiting.js';
import { ROOT, runCliInProcess } from '../helpers/cli.js';
import { bytes } from './bytes.js';

const ESC_AT = [0x1b, 0x40];
const CUT = [0x1d, 0x56, 0x42, 0x00];
const DLE_EOT = (n: number) => [0x10, 0x04, n];

interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Waits for a stdout line matching `re` and returns its match. */
  line(re: RegExp): Promise<RegExpMatchArray>;
  exit: Promise<[number | null, NodeJS.Signals | null]>;
}

function start(args: string[]): Running {
  const child = spawn(process.execPath, [...cliEntry(), ...args], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => {
    out += s;
  });
  child.stderr!.setEncoding('utf8').on('data', (s: string) => {
    err += s;
  });
  const exit = next<[number | null, NodeJS.Signals | null]>(child, 'exit', 20_000);
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exit,
    async line(re: RegExp) {
      await waitFor(
        `stdout ${re} (stdout: ${JSON.stringify(out)}, stderr: ${JSON.stringify(err)})`,
        () => re.test(out),
        15_000,
      );
      return out.match(re)!;
    },
  };
}

describe('printer-agent emulator (TCP)', () => {
  let dir: string;
  let emu: Running;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'emu-cli-'));
    emu = start([
      'emulator',
      '--listen',
      'tcp://127.0.0.1:0',
      '--out',
      join(dir, 'out'),
      '--control',
      '127.0.0.1:0',
      '--width',
      '42',
    ]);
  });

  after(() => {
    if (emu.child.exitCode === null) emu.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints where it listens, writes ticket files, switches faults, stops on SIGTERM', async () => {
    const port = Number((await emu.line(/^listening tcp:\/\/127\.0\.0\.1:(\d+)$/m))[1]);
    const controlUrl = (await emu.line(/^control (http:\/\/127\.0\.0\.1:\d+)$/m))[1]!;

    const client = await tcpClient(port);
    const job = bytes(ESC_AT, 'CLI emulator\n', 0x1b, 0x61, 0x01, 'centred\n', CUT);
    client.socket.write(bytes(job, DLE_EOT(1)));
    assert.deepEqual(await client.bytes(1), [0x12]);

    const base = join(dir, 'out', '0001');
    await waitFor('the ticket files', () => existsSync(`${base}.txt`));
    assert.equal(readFileSync(`${base}.txt`, 'utf8'), `CLI emulator\n${' '.repeat(17)}centred\n`);
    const json = JSON.parse(readFileSync(`${base}.json`, 'utf8'));
    assert.equal(json.lines[1].align, 'center');
    assert.equal(json.lines[1].columns, 42, '--width reached the printer');
    assert.deepEqual([...readFileSync(`${base}.bin`)], [...job], 'raw bytes up to the cut');
    // Tickets hold customer data (issue 40 item 9), under the default umask 022.
    assert.equal(
      (statSync(join(dir, 'out')).mode & 0o777).toString(8),
      '700',
      '--out made private',
    );
    assert.equal((statSync(`${base}.txt`).mode & 0o777).toString(8), '600');
    await emu.line(
      /^ticket 1: 2 lines, 0 codes, 0 images, partial cut, 0 warnings -> .*0001\.txt$/m,
    );

    const res = await fetch(`${controlUrl}/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ fault: 'paper-out', on: true }),
    });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    client.socket.write(bytes(DLE_EOT(4)));
    assert.deepEqual(await client.bytes(2), [0x12, 0x7e]);
    await emu.line(/^fault paper-out on$/m);

    emu.child.stdin!.write('fault paper-out off\n');
    await emu.line(/^online, faults: none/m);

    emu.child.kill('SIGTERM');
    const [code, signal] = await emu.exit;
    assert.equal(signal, null);
    assert.equal(code, 0, emu.stderr());
    assert.match(emu.stdout(), /^stopped$/m);
    assert.equal(client.closed || (await next(client.socket, 'close').then(() => true)), true);
  });
});

describe('printer-agent emulator (serial)', { skip: skipWithoutSocat() }, () => {
  it('prints the host-side path and removes it when stopped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emu-cli-serial-'));
    try {
      const emu = start(['emulator', '--listen', `serial:${dir}`, '--out', join(dir, 'out')]);
      const hostPath = (await emu.line(/^listening serial:(\S+)$/m))[1]!;
      assert.equal(hostPath, join(dir, 'host'));
      assert.ok(existsSync(hostPath));
      emu.child.kill('SIGINT');
      const [code] = await emu.exit;
      assert.equal(code, 0, emu.stderr());
      assert.equal(existsSync(hostPath), false, 'socat killed, link removed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('printer-agent emulator --profile', () => {
  it('answers GS I as the model of the profile: printers identify names that profile, certain', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emu-cli-profile-'));
    const emu = start([
      'emulator',
      '--listen',
      'tcp://127.0.0.1:0',
      '--out',
      join(dir, 'out'),
      '--profile',
      'epson-tm-t88vi',
    ]);
    try {
      const address = (await emu.line(/^listening (tcp:\/\/127\.0\.0\.1:\d+)$/m))[1]!;
      const r = await runCliInProcess(['printers', 'identify', address, '--timeout', '2000']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^tcp:\S+: EPSON TM-T88VI \(firmware 30\.02 ESC\/POS, /m);
      assert.match(r.stdout, /^profile epson-tm-t88vi \(certain\): /m);
      emu.child.kill('SIGTERM');
      const [code] = await emu.exit;
      assert.equal(code, 0, emu.stderr());
    } finally {
      if (emu.child.exitCode === null) emu.child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('printer-agent emulator: usage errors exit 2 and name the option', () => {
  const out = join(tmpdir(), 'emu-cli-unused');
  const cases: Array<[string, string[], RegExp]> = [
    [
      'bad --listen',
      ['--listen', 'udp://127.0.0.1:9100', '--out', out],
      /--listen.*tcp:\/\/HOST:PORT, serial:DIR or device:DIR/,
    ],
    ['missing --out', ['--listen', 'tcp://127.0.0.1:0'], /--out/],
    [
      'bad --width',
      ['--listen', 'tcp://127.0.0.1:0', '--out', out, '--width', 'wide'],
      /--width must be a whole number/,
    ],
    [
      'bad --fault',
      ['--listen', 'tcp://127.0.0.1:0', '--out', out, '--fault', 'on-fire'],
      /--fault must be one of paper-near-end/,
    ],
    [
      'public --control',
      ['--listen', 'tcp://127.0.0.1:0', '--out', out, '--control', '0.0.0.0:9101'],
      /--control.*not a loopback address/,
    ],
    [
      'unknown --profile',
      ['--listen', 'tcp://127.0.0.1:0', '--out', out, '--profile', 'tm-nothing'],
      /--profile.*"tm-nothing": not found; known: epson-tm-t20iii/,
    ],
    [
      'bad --slow-link',
      ['--listen', 'tcp://127.0.0.1:0', '--out', out, '--slow-link', '-1'],
      /--slow-link/,
    ],
  ];
  for (const [name, args, message] of cases) {
    it(name, async () => {
      const r = await runCliInProcess(['emulator', ...args]);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, message);
    });
  }
});
