/**
 * `printer-agent printers identify URL` end to end (issue 41 item 2): the CLI in this process,
 * the emulator playing each shipped profile on TCP (and on a socat pty), and the bad inputs: a
 * device answering garbage, a port that never answers, an unreachable address. Each bad case
 * ends within its `--timeout` budget, says why in a line, and exits 5 when nothing was learnt.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { skipWithoutSocat } from '../../harness/waiting.js';
import { emulatorOptionsForProfile } from '../../src/cli/emulator-profile.js';
import type { Identification } from '../../src/cli/identify-printer.js';
import { listenTcp, openSerialEndpoint, VirtualPrinter } from '../../src/emulator/index.js';
import { loadProfiles } from '../../src/receipt/profile.js';
import { runCliInProcess } from '../helpers/cli.js';
import { startOddDevice } from '../helpers/odd-devices.js';

const playing = (id: string) =>
  new VirtualPrinter(emulatorOptionsForProfile(loadProfiles().get(id)!));

async function cli(args: string[]) {
  const started = performance.now();
  const result = await runCliInProcess(args);
  return { ...result, ms: performance.now() - started };
}

describe('printers identify against the emulator', () => {
  for (const profile of [...loadProfiles().values()].filter((p) => p.identity !== undefined)) {
    it(`the emulator playing ${profile.id} is identified as ${profile.id}, certain`, async () => {
      const endpoint = await listenTcp(playing(profile.id), { port: 0 });
      try {
        const r = await cli(['printers', 'identify', endpoint.address, '--timeout', '300']);
        assert.equal(r.status, 0, r.stderr);
        const [first, second] = r.stdout.split('\n');
        assert.equal(
          first,
          `${endpoint.address}: ${profile.identity!.manufacturer} ${profile.identity!.model} (firmware ${profile.identity!.firmware}, serial EMU0000001, model ID 0x20, type ID 0x02), ready`,
        );
        assert.match(second!, new RegExp(`^profile ${profile.id} \\(certain\\): `));
        assert.match(
          r.stdout,
          /^ {2}80 mm, \d+ columns, code page cp858 \(ESC t 19\), partial cut, drawer$/m,
        );
      } finally {
        await endpoint.close();
      }
    });
  }

  it('--json gives the answers and the proposal for scripts', async () => {
    const endpoint = await listenTcp(playing('epson-tm-t88vi'), { port: 0 });
    try {
      const r = await cli(['printers', 'identify', endpoint.address, '--json']);
      assert.equal(r.status, 0, r.stderr);
      const result = JSON.parse(r.stdout) as Identification;
      assert.equal(result.url, endpoint.address);
      assert.equal(result.learnt, true);
      assert.equal(result.answers.model, 'TM-T88VI');
      assert.equal(result.answers.status?.state, 'ready');
      assert.equal(result.proposal.profile, 'epson-tm-t88vi');
      assert.equal(result.proposal.confidence, 'certain');
      assert.equal(result.profile?.columns, 42);
    } finally {
      await endpoint.close();
    }
  });

  it('a nameless 58 mm clone: unknown without --width (exit 0: it answered), possible with it', async () => {
    const endpoint = await listenTcp(playing('pos-5890-gb18030'), { port: 0 });
    try {
      const plain = await cli(['printers', 'identify', endpoint.address, '--timeout', '200']);
      assert.equal(plain.status, 0, plain.stderr);
      assert.match(plain.stdout, /: names no model \(model ID 0x20, type ID 0x01\), ready$/m);
      assert.match(plain.stdout, /^profile generic-80mm \(unknown\): .*generic-80mm as a start/m);
      assert.match(plain.stdout, /note: the printer reports no autocutter/);
      const hinted = await cli([
        'printers',
        'identify',
        endpoint.address,
        '--timeout',
        '200',
        '--width',
        '58',
      ]);
      assert.equal(hinted.status, 0, hinted.stderr);
      assert.match(hinted.stdout, /^profile pos-5890-gb18030 \(possible\): /m);
    } finally {
      await endpoint.close();
    }
  });

  it('over a socat pty (serial:): the emulator playing epson-tm-t20iii', {
    skip: skipWithoutSocat(),
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pa-identify-cli-'));
    const endpoint = await openSerialEndpoint(playing('epson-tm-t20iii'), { dir });
    try {
      const r = await cli(['printers', 'identify', endpoint.address, '--timeout', '500']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^profile epson-tm-t20iii \(certain\): /m);
    } finally {
      await endpoint.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('printers identify with bad input', () => {
  it('a device answering garbage: the garbage named in a line, exit 5, within the budget', async () => {
    const device = await startOddDevice('garbage');
    try {
      const r = await cli(['printers', 'identify', device.url, '--timeout', '200']);
      assert.equal(r.status, 5, r.stdout + r.stderr);
      assert.match(
        r.stdout,
        /^ {2}garbage: GS I 1: answered 8 bytes that are no reply \(ff fe fd fc 93 80 a5 c3\)$/m,
      );
      assert.match(r.stdout, /^profile generic-80mm \(unknown\): /m);
      assert.match(r.stdout, /nothing could be learnt from this printer/);
      assert.ok(r.ms < 3 * 200 + 2000, `${Math.round(r.ms)} ms`);
    } finally {
      await device.close();
    }
  });

  it('garbage to GS I only: the status is learnt (exit 0), the garbage still named', async () => {
    const device = await startOddDevice('garbage-to-gs-i');
    try {
      const r = await cli(['printers', 'identify', device.url, '--timeout', '200', '--json']);
      assert.equal(r.status, 0, r.stderr);
      const result = JSON.parse(r.stdout) as Identification;
      assert.equal(result.answers.status?.state, 'ready');
      assert.equal(result.proposal.confidence, 'unknown');
      assert.match(result.answers.garbage.join('\n'), /GS I 1: answered/);
    } finally {
      await device.close();
    }
  });

  it('a port that accepts and never answers: two waits of --timeout, a clear line, exit 5', async () => {
    const device = await startOddDevice('silent');
    try {
      const r = await cli(['printers', 'identify', device.url, '--timeout', '300']);
      assert.equal(r.status, 5, r.stdout + r.stderr);
      assert.match(r.stdout, /: names no model, status unknown$/m);
      assert.match(r.stdout, /^ {2}silent to DLE EOT and GS I: nothing more was asked$/m);
      assert.match(r.stdout, /note: the printer did not answer DLE EOT/);
      assert.ok(r.ms >= 2 * 300 - 50 && r.ms < 2 * 300 + 2000, `${Math.round(r.ms)} ms`);
    } finally {
      await device.close();
    }
  });

  it('an unreachable printer: unreachable, exit 5; a bad URL exit 1; a bad --width exit 2', async () => {
    const gone = await cli(['printers', 'identify', 'tcp://127.0.0.1:1']);
    assert.equal(gone.status, 5);
    assert.match(gone.stdout, /^tcp:\/\/127\.0\.0\.1:1: unreachable$/m);
    assert.match(gone.stdout, /PRINTER_UNREACHABLE: /);
    assert.doesNotMatch(gone.stdout, /did not answer DLE EOT/, 'it could not be asked');
    const bad = await cli(['printers', 'identify', 'lpt:1']);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /^PRINTER_URL_INVALID: /);
    const width = await cli(['printers', 'identify', 'tcp://127.0.0.1:1', '--width', '76']);
    assert.equal(width.status, 2);
    assert.match(width.stderr, /must be 58 or 80/);
  });
});
