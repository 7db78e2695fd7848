/**
 * Status responder: the exact reply bytes for each fault state, against the values in
 * escpos-notes.md ("Status"), and the fixed bits every reply must keep.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  asbStatus,
  DEFAULT_IDENTITY,
  drawerStatus,
  isOffline,
  isRealtimeStatusByte,
  NORMAL_STATE,
  type PrinterState,
  paperSensorStatus,
  printerIdReply,
  processIdReply,
  realtimeStatus,
  respondToQuery,
  respondToRealtime,
} from '../../src/emulator/index.js';

const state = (faults: Partial<PrinterState> = {}): PrinterState => ({
  ...NORMAL_STATE,
  ...faults,
});
const eot = (s: PrinterState) => ([1, 2, 3, 4] as const).map((n) => realtimeStatus(s, n));

describe('DLE EOT n replies (notes: typical replies n1/n2/n3/n4)', () => {
  it('normal: 12/12/12/12', () => {
    assert.deepEqual(eot(state()), [0x12, 0x12, 0x12, 0x12]);
  });

  it('paper near end: 12/12/12/1E (still online)', () => {
    assert.deepEqual(eot(state({ paperNearEnd: true })), [0x12, 0x12, 0x12, 0x1e]);
  });

  it('paper out: 1A/32/12/7E', () => {
    assert.deepEqual(eot(state({ paperOut: true })), [0x1a, 0x32, 0x12, 0x7e]);
  });

  it('cover open: 1A/16/12/12', () => {
    assert.deepEqual(eot(state({ coverOpen: true })), [0x1a, 0x16, 0x12, 0x12]);
  });

  it('autocutter error: 1A/52/1A/12', () => {
    assert.deepEqual(eot(state({ autocutterError: true })), [0x1a, 0x52, 0x1a, 0x12]);
  });

  it('drawer pin 3 high answers 16 to n=1, the rest unchanged', () => {
    assert.deepEqual(eot(state({ drawerPinHigh: true })), [0x16, 0x12, 0x12, 0x12]);
  });

  it('forced offline: only the offline bit of n=1', () => {
    assert.deepEqual(eot(state({ offline: true })), [0x1a, 0x12, 0x12, 0x12]);
  });

  it('unrecoverable error: 1A/52/32/12', () => {
    assert.deepEqual(eot(state({ unrecoverableError: true })), [0x1a, 0x52, 0x32, 0x12]);
  });

  it('paper fed by the FEED button: FEED pressed (n1 bit6), fed by button (n2 bit3), offline', () => {
    assert.deepEqual(eot(state({ feedButton: true })), [0x5a, 0x1a, 0x12, 0x12]);
  });

  it('several faults combine their bits', () => {
    // paper out + cover open: n2 = 12 | 04 | 20
    assert.deepEqual(eot(state({ paperOut: true, coverOpen: true })), [0x1a, 0x36, 0x12, 0x7e]);
    // cover open + drawer high + near end
    assert.deepEqual(
      eot(state({ coverOpen: true, drawerPinHigh: true, paperNearEnd: true })),
      [0x1e, 0x16, 0x12, 0x1e],
    );
    // autocutter error + paper out
    assert.deepEqual(
      eot(state({ autocutterError: true, paperOut: true })),
      [0x1a, 0x72, 0x1a, 0x7e],
    );
  });

  it('every reply in every combination of faults has (b & 0x93) == 0x12', () => {
    const anyState = fc.record({
      paperNearEnd: fc.boolean(),
      paperOut: fc.boolean(),
      coverOpen: fc.boolean(),
      offline: fc.boolean(),
      autocutterError: fc.boolean(),
      unrecoverableError: fc.boolean(),
      drawerPinHigh: fc.boolean(),
      feedButton: fc.boolean(),
      mute: fc.constant(false),
    });
    fc.assert(
      fc.property(anyState, (s) => {
        for (const b of eot(s)) assert.ok(isRealtimeStatusByte(b), `0x${b.toString(16)}`);
        const asb = asbStatus(s);
        assert.equal(asb[0]! & 0x93, 0x10, 'ASB first byte 0xx1xx00');
        for (const b of asb.subarray(1)) assert.equal(b & 0x90, 0, 'ASB bytes 2-4 0xx0xxxx');
        assert.equal(paperSensorStatus(s) & 0x90, 0, 'GS r 0xx0xxxx');
      }),
      { numRuns: 300 },
    );
  });

  it('isRealtimeStatusByte rejects bytes without the fixed bits', () => {
    assert.equal(isRealtimeStatusByte(0x12), true);
    assert.equal(isRealtimeStatusByte(0x16), true);
    assert.equal(isRealtimeStatusByte(0x00), false);
    assert.equal(isRealtimeStatusByte(0x37), false);
    assert.equal(isRealtimeStatusByte(0x92), false);
  });

  it('offline causes: paper out, cover open, errors, FEED, forced; not near end, not drawer', () => {
    assert.equal(isOffline(state({ paperNearEnd: true, drawerPinHigh: true })), false);
    for (const f of [
      'paperOut',
      'coverOpen',
      'autocutterError',
      'unrecoverableError',
      'feedButton',
      'offline',
    ]) {
      assert.equal(isOffline(state({ [f]: true })), true, f);
    }
  });
});

describe('GS r and ESC u / ESC v replies', () => {
  it('GS r 1: 00 normal, 03 near end, 0F paper out (end sensor and near-end sensor)', () => {
    assert.equal(paperSensorStatus(state()), 0x00);
    assert.equal(paperSensorStatus(state({ paperNearEnd: true })), 0x03);
    assert.equal(paperSensorStatus(state({ paperOut: true })), 0x0f);
  });

  it('GS r 2: drawer pin 3 in bit 0', () => {
    assert.equal(drawerStatus(state()), 0x00);
    assert.equal(drawerStatus(state({ drawerPinHigh: true })), 0x01);
  });
});

describe('automatic status back (GS a)', () => {
  it('4 bytes: printer, error, paper sensor, reserved', () => {
    assert.deepEqual([...asbStatus(state())], [0x10, 0x00, 0x00, 0x00]);
    assert.deepEqual([...asbStatus(state({ coverOpen: true }))], [0x38, 0x00, 0x00, 0x00]);
    assert.deepEqual([...asbStatus(state({ paperOut: true }))], [0x18, 0x00, 0x0f, 0x00]);
    assert.deepEqual([...asbStatus(state({ autocutterError: true }))], [0x18, 0x08, 0x00, 0x00]);
    assert.deepEqual([...asbStatus(state({ drawerPinHigh: true }))], [0x14, 0x00, 0x00, 0x00]);
    assert.deepEqual([...asbStatus(state({ paperNearEnd: true }))], [0x10, 0x00, 0x03, 0x00]);
  });
});

describe('GS ( H and GS I replies', () => {
  it('GS ( H fn 48 answers 37 22 d1 d2 d3 d4 00', () => {
    assert.deepEqual(
      [...processIdReply(Uint8Array.of(0x31, 0x32, 0x33, 0x34))],
      [0x37, 0x22, 0x31, 0x32, 0x33, 0x34, 0x00],
    );
  });

  it('GS I 1/2/3 (and 49/50/51) answer one id byte of the form 0xx0xxxx', () => {
    const id = DEFAULT_IDENTITY;
    assert.deepEqual([...printerIdReply(id, 1)!], [id.modelId]);
    assert.deepEqual([...printerIdReply(id, 2)!], [id.typeId]);
    assert.deepEqual([...printerIdReply(id, 51)!], [id.versionId]);
    for (const n of [1, 2, 3, 49, 50, 51]) assert.equal(printerIdReply(id, n)![0]! & 0x90, 0);
  });

  it('GS I 65-69 answer 5F text 00; the texts are configurable', () => {
    assert.deepEqual(
      [...printerIdReply(DEFAULT_IDENTITY, 66)!],
      [0x5f, ...Buffer.from('EPSON'), 0x00],
    );
    const custom = { ...DEFAULT_IDENTITY, model: 'XP-80C', firmware: 'V2.1' };
    assert.deepEqual([...printerIdReply(custom, 67)!], [0x5f, ...Buffer.from('XP-80C'), 0x00]);
    assert.deepEqual([...printerIdReply(custom, 65)!], [0x5f, ...Buffer.from('V2.1'), 0x00]);
    assert.equal(printerIdReply(custom, 99), undefined);
  });
});

describe('mute printers answer nothing', () => {
  it('no reply to real-time or in-order queries', () => {
    const muted = state({ mute: true });
    assert.equal(respondToRealtime({ kind: 'status', n: 1 }, muted), undefined);
    assert.equal(
      respondToQuery({ kind: 'paper-sensor', command: 'GS r 1' }, muted, DEFAULT_IDENTITY),
      undefined,
    );
    assert.equal(respondToQuery({ kind: 'printer-id', n: 66 }, muted, DEFAULT_IDENTITY), undefined);
    assert.equal(
      respondToQuery(
        { kind: 'process-id', id: Uint8Array.of(1, 2, 3, 4) },
        muted,
        DEFAULT_IDENTITY,
      ),
      undefined,
    );
  });

  it('the same questions are answered when not muted', () => {
    assert.deepEqual([...respondToRealtime({ kind: 'status', n: 1 }, state())!], [0x12]);
    assert.deepEqual(
      [...respondToRealtime({ kind: 'clear-buffers' }, state())!],
      [0x37, 0x25, 0x00],
    );
    assert.equal(respondToRealtime({ kind: 'recover', n: 1 }, state()), undefined);
    assert.deepEqual(
      [...respondToQuery({ kind: 'drawer', command: 'GS r 2' }, state(), DEFAULT_IDENTITY)!],
      [0],
    );
  });
});
