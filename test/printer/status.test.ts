/** DLE EOT replies from escpos-notes "Status" (typical replies n1/n2/n3/n4) to printer states. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blocksPrinting, decodeStatus, isStatusByte } from '../../src/printer/status.js';

describe('decodeStatus', () => {
  it('normal 12/12/12/12 is ready, and so is 16 for n=1 (drawer pin high on many Epsons)', () => {
    const normal = decodeStatus({ printer: 0x12, offline: 0x12, error: 0x12, paper: 0x12 });
    assert.equal(normal.state, 'ready');
    assert.equal(normal.paper, 'ok');
    assert.equal(normal.coverOpen, false);
    assert.equal(normal.drawerPinHigh, false);
    const pinHigh = decodeStatus({ printer: 0x16, offline: 0x12, error: 0x12, paper: 0x12 });
    assert.equal(pinHigh.state, 'ready');
    assert.equal(pinHigh.drawerPinHigh, true);
  });

  it('near end 12/12/12/1E still prints', () => {
    const s = decodeStatus({ printer: 0x12, offline: 0x12, error: 0x12, paper: 0x1e });
    assert.equal(s.state, 'paper-near-end');
    assert.equal(s.paper, 'near-end');
    assert.equal(blocksPrinting(s.state), false);
  });

  it('paper out 1A/32/12/7E', () => {
    const s = decodeStatus({ printer: 0x1a, offline: 0x32, error: 0x12, paper: 0x7e });
    assert.equal(s.state, 'paper-out');
    assert.equal(s.paper, 'out');
    assert.ok(s.causes.includes('paper out'));
    assert.equal(blocksPrinting(s.state), true);
  });

  it('cover open 1A/16/12/12', () => {
    const s = decodeStatus({ printer: 0x1a, offline: 0x16, error: 0x12, paper: 0x12 });
    assert.equal(s.state, 'cover-open');
    assert.equal(s.coverOpen, true);
  });

  it('autocutter error 1A/52/1A/12 is an error', () => {
    const s = decodeStatus({ printer: 0x1a, offline: 0x52, error: 0x1a, paper: 0x12 });
    assert.equal(s.state, 'error');
    assert.ok(s.causes.includes('autocutter error'));
  });

  it('offline without a named cause (n=1 bit 3 only)', () => {
    assert.equal(
      decodeStatus({ printer: 0x1a, offline: 0x12, error: 0x12, paper: 0x12 }).state,
      'offline',
    );
  });

  it('an error outranks cover open, which outranks paper out', () => {
    assert.equal(
      decodeStatus({ printer: 0x1a, offline: 0x36, error: 0x1a, paper: 0x7e }).state,
      'error',
    );
    assert.equal(
      decodeStatus({ printer: 0x1a, offline: 0x36, error: 0x12, paper: 0x7e }).state,
      'cover-open',
    );
  });

  it('silence is unknown, not a fault', () => {
    const s = decodeStatus({});
    assert.equal(s.state, 'unknown');
    assert.equal(s.paper, 'unknown');
    assert.equal(s.coverOpen, null);
    assert.equal(blocksPrinting('unknown'), false);
  });
});

describe('isStatusByte', () => {
  it('recognises replies by their fixed bits, (b & 0x93) == 0x12', () => {
    for (const b of [0x12, 0x16, 0x1a, 0x1e, 0x32, 0x36, 0x52, 0x72, 0x7e])
      assert.equal(isStatusByte(b), true, b.toString(16));
    // A GS r reply (bit 4 clear), an ASB first byte (bit 1 clear), text and NUL are not replies.
    for (const b of [0x00, 0x03, 0x0c, 0x10, 0x14, 0x41, 0x80, 0x93])
      assert.equal(isStatusByte(b), false, b.toString(16));
  });
});
