/**
 * The virtual printer: replies in order, real-time answers while offline, buffering and printing
 * after a fault clears, mute, busy, recovery, automatic status back. No timers: everything is
 * synchronous.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderText, type Ticket, VirtualPrinter } from '../../src/emulator/index.js';
import { bytes } from './bytes.js';

const LF = 0x0a;
const DLE_EOT = (n: number) => [0x10, 0x04, n];
const GS_R_1 = [0x1d, 0x72, 0x01];
const GS_H_48 = [0x1d, 0x28, 0x48, 0x06, 0x00, 0x30, 0x30, 0x41, 0x42, 0x43, 0x44]; // id "ABCD"
const PROCESS_ID_REPLY = [0x37, 0x22, 0x41, 0x42, 0x43, 0x44, 0x00];

function printerWithLog(options: ConstructorParameters<typeof VirtualPrinter>[0] = {}) {
  const printer = new VirtualPrinter(options);
  const replies: number[][] = [];
  printer.on('reply', (b) => replies.push([...b]));
  return { printer, replies };
}

describe('virtual printer: real-time status', () => {
  it('answers DLE EOT 1-4 per fault state, as in the notes', () => {
    const { printer, replies } = printerWithLog();
    const ask = () => {
      replies.length = 0;
      printer.write(bytes(DLE_EOT(1), DLE_EOT(2), DLE_EOT(3), DLE_EOT(4)));
      return replies.map((r) => r[0]);
    };
    assert.deepEqual(ask(), [0x12, 0x12, 0x12, 0x12]);
    printer.setFault('paper-near-end', true);
    assert.deepEqual(ask(), [0x12, 0x12, 0x12, 0x1e]);
    printer.setFault('paper-near-end', false);
    printer.setFault('paper-out', true);
    assert.deepEqual(ask(), [0x1a, 0x32, 0x12, 0x7e]);
    printer.setFault('paper-out', false);
    printer.setFault('cover-open', true);
    assert.deepEqual(ask(), [0x1a, 0x16, 0x12, 0x12]);
    printer.setFault('cover-open', false);
    printer.setFault('autocutter-error', true);
    assert.deepEqual(ask(), [0x1a, 0x52, 0x1a, 0x12]);
    printer.setFault('autocutter-error', false);
    printer.setFault('drawer-pin-high', true);
    assert.deepEqual(ask(), [0x16, 0x12, 0x12, 0x12]);
    printer.setFault('drawer-pin-high', false);
    printer.setFault('offline', true);
    assert.deepEqual(ask(), [0x1a, 0x12, 0x12, 0x12]);
  });

  it('initial faults can be given at construction', () => {
    const { printer, replies } = printerWithLog({ state: { paperOut: true } });
    printer.write(bytes(DLE_EOT(4)));
    assert.deepEqual(replies, [[0x7e]]);
  });
});

describe('virtual printer: in-order replies', () => {
  it('GS r 1 is answered only after the data before it was processed', () => {
    const printer = new VirtualPrinter();
    const seen: Array<[number, string]> = [];
    printer.on('reply', (b) =>
      seen.push([b[0]!, printer.paper.current.lines.map((l) => l.text).join('|')]),
    );
    printer.write(bytes('first', LF, 'second', LF, GS_R_1));
    assert.deepEqual(seen, [[0x00, 'first|second']]);
  });

  it('replies come in stream order, real-time ones when they arrive', () => {
    const { printer, replies } = printerWithLog();
    printer.write(bytes(GS_R_1, DLE_EOT(1), GS_H_48, DLE_EOT(4)));
    assert.deepEqual(replies, [[0x00], [0x12], PROCESS_ID_REPLY, [0x12]]);
  });

  it('while offline: DLE EOT answered at once; GS r 1 and GS ( H wait with the data', () => {
    const { printer, replies } = printerWithLog();
    printer.setFault('cover-open', true);
    printer.write(bytes('held', LF, GS_R_1, GS_H_48, DLE_EOT(2)));
    assert.deepEqual(replies, [[0x16]], 'only the real-time reply');
    assert.equal(printer.paper.current.lines.length, 0, 'nothing printed while offline');
    assert.ok(printer.bufferedBytes > 0);

    printer.setFault('cover-open', false);
    assert.deepEqual(replies, [[0x16], [0x00], PROCESS_ID_REPLY]);
    assert.equal(renderText(printer.paper.current), 'held\n');
    assert.equal(printer.bufferedBytes, 0);
  });

  it('data received while paper is out prints when paper is back, once', () => {
    const { printer } = printerWithLog();
    printer.setFault('paper-out', true);
    printer.write(bytes('order 42', LF, 0x1d, 0x56, 0x42, 0x00));
    assert.equal(printer.paper.tickets.length, 0);
    printer.setFault('paper-out', false);
    assert.equal(printer.paper.tickets.length, 1);
    assert.equal(renderText(printer.paper.tickets[0]!), 'order 42\n');
    printer.setFault('paper-out', true);
    printer.setFault('paper-out', false);
    assert.equal(printer.paper.tickets.length, 1, 'not printed twice');
  });

  it('GS ( H is answered only after the preceding data printed (slow-print hook)', () => {
    const { printer, replies } = printerWithLog();
    printer.pausePrinting(true);
    printer.write(bytes('x', LF, GS_H_48));
    assert.deepEqual(replies, []);
    assert.deepEqual(printer.state.offline, false, 'paused printing is not offline');
    printer.write(bytes(DLE_EOT(1)));
    assert.deepEqual(replies, [[0x12]], 'DLE EOT 1 says online while printing is paused');
    printer.pausePrinting(false);
    assert.deepEqual(replies, [[0x12], PROCESS_ID_REPLY]);
  });

  it('GS I answers the configured identity', () => {
    const { printer, replies } = printerWithLog({ identity: { maker: 'ACME', model: 'R-80' } });
    printer.write(bytes(0x1d, 0x49, 0x42, 0x1d, 0x49, 0x43, 0x1d, 0x49, 0x01)); // GS I 66, 67, 1
    assert.deepEqual(replies, [
      [0x5f, ...Buffer.from('ACME'), 0x00],
      [0x5f, ...Buffer.from('R-80'), 0x00],
      [0x20],
    ]);
  });
});

describe('virtual printer: mute', () => {
  it('answers nothing but still prints', () => {
    const { printer, replies } = printerWithLog();
    printer.setFault('mute', true);
    printer.write(
      bytes('quiet', LF, DLE_EOT(1), GS_R_1, GS_H_48, 0x1d, 0x49, 0x42, 0x1d, 0x61, 0x0f),
    );
    assert.deepEqual(replies, []);
    assert.equal(printer.paper.current.lines[0]!.text, 'quiet');
    printer.setFault('mute', false);
    printer.write(bytes(DLE_EOT(1)));
    assert.deepEqual(replies, [[0x12]]);
  });
});

describe('virtual printer: receive buffer and busy', () => {
  it('write() returns false and busy fires when held data fills the buffer', () => {
    const printer = new VirtualPrinter({ bufferSize: 16 });
    const busy: boolean[] = [];
    printer.on('busy', (b) => busy.push(b));
    printer.setFault('offline', true);
    assert.equal(printer.write(bytes('0123456789')), true);
    assert.equal(printer.write(bytes('abcdef', LF)), false);
    assert.equal(printer.busy, true);
    assert.deepEqual(busy, [true]);
    printer.setFault('offline', false);
    assert.deepEqual(busy, [true, false]);
    assert.equal(printer.busy, false);
    assert.equal(printer.paper.current.lines[0]!.text, '0123456789abcdef', 'nothing was dropped');
  });

  it('an incomplete command counts while held', () => {
    const printer = new VirtualPrinter({ bufferSize: 8 });
    printer.setFault('cover-open', true);
    // GS v 0, 4 x 4 raster: header and 12 of 16 data bytes
    assert.equal(
      printer.write(bytes(0x1d, 0x76, 0x30, 0x00, 0x04, 0x00, 0x04, 0x00, new Uint8Array(12))),
      false,
    );
    assert.equal(printer.bufferedBytes, 20);
  });

  it('while online a raster larger than the buffer streams through without busy', () => {
    const printer = new VirtualPrinter({ bufferSize: 64 });
    const data = new Uint8Array(72 * 10);
    assert.equal(printer.write(bytes(0x1d, 0x76, 0x30, 0x00, 72, 0x00, 10, 0x00)), true);
    assert.equal(printer.write(data.subarray(0, 500)), true);
    assert.equal(printer.write(data.subarray(500)), true);
    assert.equal(printer.paper.current.images.length, 1);
  });
});

describe('virtual printer: recovery and buffer clear', () => {
  it('DLE ENQ 1 recovers from an autocutter error and prints the held data', () => {
    const { printer, replies } = printerWithLog();
    printer.setFault('autocutter-error', true);
    printer.write(bytes('kept', LF));
    printer.write(bytes(0x10, 0x05, 0x01)); // DLE ENQ 1
    assert.equal(printer.state.autocutterError, false);
    assert.equal(printer.paper.current.lines[0]!.text, 'kept');
    assert.deepEqual(replies, []);
  });

  it('DLE ENQ 2 clears the buffers before recovering', () => {
    const { printer } = printerWithLog();
    printer.setFault('autocutter-error', true);
    printer.write(bytes('dropped', LF));
    printer.write(bytes(0x10, 0x05, 0x02, 'after', LF)); // DLE ENQ 2
    assert.equal(printer.state.autocutterError, false);
    assert.deepEqual(
      printer.paper.current.lines.map((l) => l.text),
      ['after'],
    );
  });

  it('DLE ENQ without a recoverable error is ignored', () => {
    const { printer } = printerWithLog();
    printer.setFault('cover-open', true);
    printer.write(bytes('wait', LF, 0x10, 0x05, 0x02));
    assert.equal(printer.state.coverOpen, true);
    printer.setFault('cover-open', false);
    assert.equal(printer.paper.current.lines[0]!.text, 'wait');
  });

  it('DLE DC4 8 clears the held data and answers 37 25 00', () => {
    const { printer, replies } = printerWithLog();
    printer.setFault('offline', true);
    printer.write(bytes('gone', LF, 0x10, 0x14, 0x08, 0x01, 0x03, 0x14, 0x01, 0x06, 0x02, 0x08));
    assert.deepEqual(replies, [[0x37, 0x25, 0x00]]);
    printer.setFault('offline', false);
    assert.equal(printer.paper.current.lines.length, 0);
  });

  it('a DLE DC4 pulse is ignored during an error, executed otherwise', () => {
    const { printer } = printerWithLog();
    printer.setFault('autocutter-error', true);
    printer.write(bytes(0x10, 0x14, 0x01, 0x00, 0x01));
    assert.equal(printer.paper.current.events.length, 0);
    printer.setFault('autocutter-error', false);
    printer.setFault('cover-open', true); // offline but no error: the pulse still runs
    printer.write(bytes(0x10, 0x14, 0x01, 0x00, 0x01));
    assert.equal(printer.paper.current.events.length, 1);
  });
});

describe('virtual printer: automatic status back and events', () => {
  it('GS a n sends the status at once and on every enabled change', () => {
    const { printer, replies } = printerWithLog();
    printer.write(bytes(0x1d, 0x61, 0x0f)); // GS a 0F: everything
    assert.deepEqual(replies, [[0x10, 0x00, 0x00, 0x00]]);
    printer.setFault('cover-open', true);
    printer.setFault('cover-open', false);
    printer.setFault('paper-near-end', true);
    assert.deepEqual(replies.slice(1), [
      [0x38, 0x00, 0x00, 0x00],
      [0x10, 0x00, 0x00, 0x00],
      [0x10, 0x00, 0x03, 0x00],
    ]);
    for (const r of replies) assert.equal(r[0]! & 0x93, 0x10);
  });

  it('only the enabled kinds of change are pushed; GS a 0 stops it', () => {
    const { printer, replies } = printerWithLog();
    printer.write(bytes(0x1d, 0x61, 0x01)); // GS a 1: drawer only
    replies.length = 0;
    printer.setFault('paper-near-end', true);
    assert.deepEqual(replies, []);
    printer.setFault('drawer-pin-high', true);
    assert.deepEqual(replies, [[0x14, 0x00, 0x03, 0x00]]);
    printer.write(bytes(0x1d, 0x61, 0x00)); // GS a 0
    printer.setFault('drawer-pin-high', false);
    assert.equal(replies.length, 1);
  });

  it('emits ticket on a cut and status on a fault change', () => {
    const printer = new VirtualPrinter();
    const tickets: Ticket[] = [];
    const states: boolean[] = [];
    printer.on('ticket', (t) => tickets.push(t));
    printer.on('status', (s, prev) => states.push(s.paperOut, prev.paperOut));
    printer.write(bytes('one', LF, 0x1d, 0x56, 0x00, 'two', LF, 0x1d, 0x56, 0x01));
    assert.deepEqual(
      tickets.map((t) => renderText(t)),
      ['one\n', 'two\n'],
    );
    printer.setFault('paper-out', true);
    printer.setFault('paper-out', true); // no change, no event
    assert.deepEqual(states, [true, false]);
    assert.equal(printer.tickets().length, 2, 'the empty open ticket is not listed');
    printer.write(bytes('3'));
    printer.setFault('paper-out', false);
    assert.equal(printer.tickets().length, 2, 'a pending line alone is not on paper yet');
    printer.write(bytes(LF));
    assert.equal(printer.tickets().length, 3);
  });

  it('off() removes a listener', () => {
    const printer = new VirtualPrinter();
    const got: number[] = [];
    const listener = (b: Uint8Array) => got.push(b[0]!);
    printer.on('reply', listener);
    printer.write(bytes(DLE_EOT(1)));
    printer.off('reply', listener);
    printer.write(bytes(DLE_EOT(1)));
    assert.deepEqual(got, [0x12]);
  });
});
