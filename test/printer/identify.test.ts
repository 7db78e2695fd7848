/**
 * The printer side of identification (issue 41 item 2): `Printer.identify` asks `DLE EOT` and
 * `GS I` and reports what came back, against the emulator playing a profile (TCP and a socat
 * pty), a nameless clone, an offline printer, and peers that answer garbage or nothing. Each bad
 * case must stay within its documented number of waits.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { skipWithoutSocat } from '../../harness/waiting.js';
import { emulatorOptionsForProfile } from '../../src/cli/emulator-profile.js';
import { listenTcp, openSerialEndpoint, VirtualPrinter } from '../../src/emulator/index.js';
import { learntAnything, parseInfoBlock } from '../../src/printer/identify.js';
import { openPrinter } from '../../src/printer/open-printer.js';
import { getProfile } from '../../src/receipt/profile.js';
import { startOddDevice } from '../helpers/odd-devices.js';

const T = 200;

async function identify(url: string, timeoutMs = T) {
  const printer = openPrinter(url, { realtimeStatus: true, confirm: 'none' });
  const started = performance.now();
  try {
    const answers = await printer.identify(timeoutMs);
    return { answers, ms: performance.now() - started };
  } finally {
    await printer.close();
  }
}

const playing = (id: string) => new VirtualPrinter(emulatorOptionsForProfile(getProfile(id)));

describe('parseInfoBlock', () => {
  it('reads 5F text 00, tolerates a stray byte before it, waits for the NUL', () => {
    const block = [0x5f, ...Buffer.from('TM-T88VI'), 0x00];
    assert.deepEqual(parseInfoBlock(block), { kind: 'text', text: 'TM-T88VI' });
    assert.deepEqual(parseInfoBlock([0x12, ...block]), { kind: 'text', text: 'TM-T88VI' });
    assert.deepEqual(parseInfoBlock(block.slice(0, 4)), { kind: 'incomplete' });
  });

  it('calls a control byte in the text, a text without end or bytes without header garbage', () => {
    assert.equal(parseInfoBlock([0x5f, 0x41, 0x07, 0x42, 0x00]).kind, 'garbage');
    assert.equal(parseInfoBlock([0x5f, ...Array(100).fill(0x41)]).kind, 'garbage');
    assert.equal(parseInfoBlock(Array(100).fill(0xff)).kind, 'garbage');
  });
});

describe('Printer.identify against the emulator', () => {
  it('TCP: a printer playing epson-tm-t88vi reports its maker, model, firmware and status', async () => {
    const endpoint = await listenTcp(playing('epson-tm-t88vi'), { port: 0 });
    try {
      const { answers } = await identify(endpoint.address);
      assert.equal(answers.reachable, true);
      assert.equal(answers.manufacturer, 'EPSON');
      assert.equal(answers.model, 'TM-T88VI');
      assert.equal(answers.firmware, '30.02 ESC/POS');
      assert.equal(answers.serial, 'EMU0000001');
      assert.equal(answers.status?.state, 'ready');
      assert.equal(answers.autocutter, true);
      assert.equal(answers.twoByteCharacters, false);
      assert.deepEqual(answers.garbage, []);
      assert.deepEqual(answers.problems, []);
    } finally {
      await endpoint.close();
    }
  });

  it('serial over a socat pty: a printer playing epson-tm-t20iii', {
    skip: skipWithoutSocat(),
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pa-identify-'));
    const endpoint = await openSerialEndpoint(playing('epson-tm-t20iii'), { dir });
    try {
      const { answers } = await identify(endpoint.address, 500);
      assert.equal(answers.manufacturer, 'EPSON');
      assert.equal(answers.model, 'TM-T20III');
      assert.equal(answers.status?.state, 'ready');
    } finally {
      await endpoint.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a nameless clone (generic profile) answers the ID bytes only; its silence costs one wait', async () => {
    const endpoint = await listenTcp(playing('pos-5890-gb18030'), { port: 0 });
    try {
      const { answers, ms } = await identify(endpoint.address, 400);
      assert.equal(answers.manufacturer, null);
      assert.equal(answers.model, null);
      assert.equal(answers.autocutter, false, 'no cutter on this clone');
      assert.equal(answers.twoByteCharacters, true, 'a GB18030 font');
      assert.equal(learntAnything(answers), true);
      assert.match(
        answers.problems.join('\n'),
        /no reply to GS I 66 \(manufacturer\) within 400 ms/,
      );
      assert.ok(ms < 1200, `${Math.round(ms)} ms: one wait for the information group, not four`);
    } finally {
      await endpoint.close();
    }
  });

  it('an offline printer (cover open) is not asked GS I: it would answer only once online', async () => {
    const emulator = playing('epson-tm-t88vi');
    emulator.setFault('cover-open', true);
    const endpoint = await listenTcp(emulator, { port: 0 });
    try {
      const { answers } = await identify(endpoint.address);
      assert.equal(answers.status?.state, 'cover-open');
      assert.equal(answers.model, null);
      assert.match(
        answers.problems.join('\n'),
        /cover-open: it answers GS I only once it is online/,
      );
    } finally {
      await endpoint.close();
    }
  });
});

describe('Printer.identify against devices that are no good printer', () => {
  it('a port that accepts and never answers: two waits, then it stops asking', async () => {
    const device = await startOddDevice('silent');
    try {
      const { answers, ms } = await identify(device.url);
      assert.equal(answers.reachable, true);
      assert.equal(learntAnything(answers), false);
      assert.match(
        answers.problems.join('\n'),
        /silent to DLE EOT and GS I: nothing more was asked/,
      );
      assert.ok(ms < 2 * T + 1500, `${Math.round(ms)} ms`);
      // DLE EOT 1 and GS I 1 only.
      assert.deepEqual(device.received, [0x10, 0x04, 0x01, 0x1d, 0x49, 0x01]);
    } finally {
      await device.close();
    }
  });

  it('a device answering garbage to everything: named garbage, never read as a name; bounded', async () => {
    const device = await startOddDevice('garbage');
    try {
      const { answers, ms } = await identify(device.url);
      assert.equal(learntAnything(answers), false);
      assert.equal(answers.model, null);
      assert.match(
        answers.garbage.join('\n'),
        /DLE EOT 1: answered 8 bytes that are no reply \(ff fe fd fc 93 80 a5 c3\)/,
      );
      assert.match(answers.garbage.join('\n'), /GS I 1: answered/);
      assert.match(answers.garbage.join('\n'), /GS I 66: answered/);
      assert.ok(ms < 3 * T + 1500, `${Math.round(ms)} ms`);
      // DLE EOT 1, GS I 1, GS I 66: each group stops at its first garbage.
      assert.deepEqual(device.received, [0x10, 0x04, 0x01, 0x1d, 0x49, 0x01, 0x1d, 0x49, 0x42]);
    } finally {
      await device.close();
    }
  });

  it('a device with a good status and garbage to GS I: the status is kept, the names are not', async () => {
    const device = await startOddDevice('garbage-to-gs-i');
    try {
      const { answers, ms } = await identify(device.url);
      assert.equal(answers.status?.state, 'ready');
      assert.equal(answers.modelId, null);
      assert.equal(answers.manufacturer, null);
      assert.match(answers.garbage.join('\n'), /GS I 1: answered 8 bytes that are no reply/);
      assert.ok(ms < 3 * T + 1500, `${Math.round(ms)} ms`);
    } finally {
      await device.close();
    }
  });

  it('an unreachable printer is reachable: false with the reason, not a throw', async () => {
    const { answers } = await identify('tcp://127.0.0.1:1');
    assert.equal(answers.reachable, false);
    assert.match(answers.problems.join('\n'), /^PRINTER_UNREACHABLE: /);
  });
});
