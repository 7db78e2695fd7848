/** The control logic shared by HTTP and stdin: the line protocol people type, and status. */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { waitFor } from '../../harness/waiting.js';
import {
  attachLineProtocol,
  EmulatorControl,
  HELP,
  LinkSlot,
  PrintSpeedLimiter,
  startControlServer,
  VirtualPrinter,
} from '../../src/emulator/index.js';
import { isLoopbackAuthority, isLoopbackHost } from '../../src/host/loopback.js';
import { bytes } from './bytes.js';

function emulator() {
  const printer = new VirtualPrinter();
  const slot = new LinkSlot(printer);
  const printSpeed = new PrintSpeedLimiter(printer);
  return new EmulatorControl({ printer, slot, printSpeed, address: 'tcp://127.0.0.1:9100' });
}

describe('line protocol', () => {
  it('switches faults, speeds and answers status and help', () => {
    const control = emulator();
    assert.equal(control.command('help'), HELP);
    assert.match(control.command('status'), /^online, faults: none, buffered 0 B, 0 tickets/);
    assert.match(control.command('fault paper-out on'), /^offline, faults: paper-out,/);
    assert.equal(control.printer.state.paperOut, true);
    assert.match(control.command('  fault   paper-out   off  '), /^online, faults: none/);
    assert.match(control.command('slow-link 960'), /slow link 960 B\/s, slow print off\n$/);
    assert.match(control.command('slow-print 60'), /slow print 60 mm\/s\n$/);
    assert.match(control.command('slow-link off'), /slow link off/);
    assert.equal(control.command('disconnect'), 'no link to disconnect\n');
    assert.equal(control.command('tickets'), 'no tickets\n');
    assert.equal(control.command(''), '');
  });

  it('explains mistakes', () => {
    const control = emulator();
    assert.match(
      control.command('fault paper-gone on'),
      /^error: fault: unknown fault "paper-gone"; one of /,
    );
    assert.match(control.command('fault paper-out maybe'), /^error: fault: say on or off/);
    assert.match(
      control.command('slow-link fast'),
      /^error: slow-link: give a number of bytes per second or off/,
    );
    assert.match(control.command('reboot'), /^error: unknown command "reboot"; type help/);
    assert.deepEqual(control.status().faults, []);
  });

  it('reads lines from a stream and answers on another', async () => {
    const control = emulator();
    const input = new PassThrough();
    const output = new PassThrough();
    let text = '';
    output.on('data', (d: Buffer) => {
      text += d.toString();
    });
    const stop = attachLineProtocol(control, input, output);
    input.write('fault cover-');
    input.write('open on\r\nstatus\n');
    await waitFor('two answers', () => text.split('\n').length > 2);
    assert.match(text, /^offline, faults: cover-open,.*\noffline, faults: cover-open,/);
    stop();
    input.write('fault cover-open off\n');
    await new Promise((r) => setImmediate(r));
    assert.equal(control.printer.state.coverOpen, true, 'no longer listening');
  });

  it('status counts tickets and buffered bytes', () => {
    const control = emulator();
    control.printer.setFault('offline', true);
    control.printer.write(bytes('one\n', 0x1d, 0x56, 0x00));
    let s = control.status();
    assert.equal(s.online, false);
    assert.equal(s.bufferedBytes, 7, 'one LF + GS V 0');
    assert.equal(s.tickets, 0);
    control.printer.setFault('offline', false);
    s = control.status();
    assert.equal(s.tickets, 1);
    assert.match(control.command('tickets'), /^ticket 1: 1 lines, 0 codes, 0 images, full cut/);
  });
});

describe('control server', () => {
  it('listens on loopback only', async () => {
    assert.equal(isLoopbackHost('127.0.0.1'), true);
    assert.equal(isLoopbackHost('::1'), true);
    assert.equal(isLoopbackHost('localhost'), true);
    assert.equal(isLoopbackHost('0.0.0.0'), false);
    assert.equal(isLoopbackHost('192.168.1.5'), false);
    await assert.rejects(startControlServer(emulator(), { host: '0.0.0.0', port: 0 }), /loopback/);
  });

  it('answers only to a loopback Host with its own port (no DNS name can rebind)', () => {
    for (const ok of [
      '127.0.0.1:9101',
      'localhost:9101',
      'LOCALHOST:9101',
      '[::1]:9101',
      '127.0.0.2:9101',
    ])
      assert.equal(isLoopbackAuthority(ok, 9101), true, ok);
    for (const bad of [
      'evil.example:9101',
      'localhost.:9101',
      'a.localhost:9101',
      '127.0.0.1',
      '127.0.0.1:9100',
      '127.0.0.1:9101:1',
      '[::2]:9101',
      '0.0.0.0:9101',
      '192.168.1.5:9101',
      '',
    ])
      assert.equal(isLoopbackAuthority(bad, 9101), false, bad);
    assert.equal(isLoopbackAuthority('127.0.0.1', 80), true, 'a browser omits port 80');
  });
});
