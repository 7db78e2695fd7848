/**
 * Decoder: chunking must not matter. Every stream below decodes to the same tickets, pending
 * line, queries and real-time commands whether it arrives in one chunk, one byte at a time or
 * split at random points (fast-check), including splits inside length-prefixed data.
 * Also: real-time commands hidden inside raster data.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { bitmapRows, VirtualPrinter } from '../../src/emulator/index.js';
import { byteByByte, bytes, decode, snapshot, splitAt } from './bytes.js';

const LF = 0x0a;

const STREAMS: Record<string, Uint8Array> = {
  'styled receipt with alignment and a cut': bytes(
    [0x1b, 0x40], // ESC @
    [0x1b, 0x61, 0x01], // ESC a 1
    [0x1d, 0x21, 0x11], // GS ! 11
    'SHOP',
    LF,
    [0x1d, 0x21, 0x00, 0x1b, 0x61, 0x00], // GS ! 00, ESC a 0
    [0x1b, 0x45, 0x01], // ESC E 1
    'Item',
    [0x1b, 0x45, 0x00], // ESC E 0
    0x09,
    '2.50',
    LF,
    [0x1b, 0x2d, 0x02, 0x1d, 0x42, 0x01], // ESC - 2, GS B 1
    'x'.repeat(60),
    LF,
    [0x1b, 0x64, 0x02], // ESC d 2
    [0x1d, 0x56, 0x42, 0x00], // GS V B 0
    'next ticket',
  ),
  'code pages and GB18030': bytes(
    [0x1b, 0x74, 0x13, 0xd5, LF], // ESC t 19, D5
    [0x1b, 0x74, 0x10, 0x80, LF], // ESC t 16, 80
    [0x1c, 0x26, 0xc9, 0xd5, 0xbc, 0xa6, 'A', 0x1c, 0x2e, LF], // FS & 烧鸡 A FS .
    [0x1c, 0x28, 0x43, 0x02, 0x00, 0x30, 0x02], // FS ( C fn 48 UTF-8
    Buffer.from('é烧', 'utf8'),
    LF,
  ),
  'QR, barcodes form A and B': bytes(
    [0x1d, 0x28, 0x6b, 0x04, 0x00, 0x31, 0x41, 0x32, 0x00], // QR model 2
    [0x1d, 0x28, 0x6b, 0x03, 0x00, 0x31, 0x43, 0x05], // QR size 5
    [0x1d, 0x28, 0x6b, 0x08, 0x00, 0x31, 0x50, 0x30, 'HELLO'], // QR store
    [0x1d, 0x28, 0x6b, 0x03, 0x00, 0x31, 0x51, 0x30], // QR print
    [0x1d, 0x48, 0x02, 0x1d, 0x68, 0x40], // GS H 2, GS h 64
    [0x1d, 0x6b, 0x04, 'CODE39', 0x00], // GS k 4 form A
    [0x1d, 0x6b, 0x49, 0x06, 0x7b, 0x42, 'A', 0x7b, 0x43, 0x0c], // GS k 73 form B
    'end',
    LF,
  ),
  'raster, bit image bands, graphics': bytes(
    [0x1d, 0x76, 0x30, 0x00, 0x02, 0x00, 0x03, 0x00, 0x10, 0x04, 0x01, 0x0a, 0x1b, 0x40], // GS v 0 2x3
    [0x1b, 0x2a, 0x21, 0x02, 0x00, 0xff, 0x10, 0x04, 0x00, 0x0a, 0x1b, LF], // ESC * 33 + LF
    [0x1b, 0x2a, 0x21, 0x02, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, LF], // ESC * 33 + LF
    [
      0x1d, 0x28, 0x4c, 0x0c, 0x00, 0x30, 0x70, 0x30, 0x01, 0x01, 0x31, 0x08, 0x00, 0x02, 0x00,
      0x1d, 0x56,
    ],
    [0x1d, 0x28, 0x4c, 0x02, 0x00, 0x30, 0x32], // GS ( L print
    [
      0x1d, 0x38, 0x4c, 0x0b, 0x00, 0x00, 0x00, 0x30, 0x70, 0x30, 0x01, 0x01, 0x31, 0x08, 0x00,
      0x01, 0x00, 0x1b,
    ],
    [0x1d, 0x28, 0x4c, 0x02, 0x00, 0x30, 0x32],
  ),
  'unknown and variable-length commands': bytes(
    'A',
    [0x1b, 0x99], // ESC 99 (unknown)
    [0x1d, 0x28, 0x58, 0x04, 0x00, LF, LF, 0x1b, 0x40], // GS ( X (unknown, length-prefixed)
    [0x1b, 0x26, 0x03, 0x41, 0x41, 0x01, 0x0a, 0x0a, 0x0a], // ESC & one character
    [0x1b, 0x44, 0x04, 0x0a, 0x00], // ESC D 4 10 NUL
    'B',
    0x09,
    'C',
    0x07,
    LF,
    [0x1c, 0x26, 0xc9], // FS & and a lead byte cut off by ...
    LF,
  ),
  // Wide right-side spacing (ESC SP 33) makes the text after an ESC * band wrap: the warning
  // that ends the line must name the same character however the text arrived (fuzzing found it
  // named the text frame, which is cut at chunk ends).
  'an ESC * band on a line its text wraps': bytes(
    [0x1b, 0x20, 0x21], // ESC SP 33
    '  ',
    [0x1b, 0x2a, 0x00, 0x00, 0x00], // ESC * 0, no columns
    ' '.repeat(11),
    LF,
  ),
  'feeds, drawer, buzzer, queries and real-time commands': bytes(
    [0x1b, 0x70, 0x00, 0x19, 0xfa], // ESC p 0 25 250
    [0x10, 0x14, 0x01, 0x00, 0x02], // DLE DC4 1 0 2
    [0x1b, 0x28, 0x41, 0x04, 0x00, 0x30, 0x01, 0x02, 0x03], // ESC ( A fn 48
    [0x1b, 0x42, 0x02, 0x01], // ESC B 2 1
    'x',
    [0x1b, 0x4a, 0x3c], // ESC J 60
    [0x1d, 0x72, 0x01], // GS r 1
    [0x10, 0x04, 0x04], // DLE EOT 4
    [0x1d, 0x28, 0x48, 0x06, 0x00, 0x30, 0x30, 0x31, 0x32, 0x33, 0x34], // GS ( H fn 48
    [0x1b, 0x69], // ESC i
  ),
};

describe('decoder: chunk boundaries do not change the result', () => {
  for (const [name, stream] of Object.entries(STREAMS)) {
    it(`${name}: one byte at a time`, () => {
      assert.deepEqual(snapshot(decode(byteByByte(stream))), snapshot(decode(stream)));
    });

    it(`${name}: random split points`, () => {
      const whole = snapshot(decode(stream));
      fc.assert(
        fc.property(
          fc.array(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 12 }),
          (cuts) => {
            assert.deepEqual(snapshot(decode(splitAt(stream, cuts))), whole);
          },
        ),
        { numRuns: 60 },
      );
    });
  }

  it('the streams above decode to something (the comparison is not vacuous)', () => {
    const receipt = decode(STREAMS['styled receipt with alignment and a cut']!);
    assert.equal(receipt.decoder.paper.tickets.length, 1);
    assert.equal(receipt.decoder.paper.tickets[0]!.lines.length, 6);
    const codes = decode(STREAMS['QR, barcodes form A and B']!);
    assert.equal(codes.open.codes.length, 3);
    const images = decode(STREAMS['raster, bit image bands, graphics']!);
    assert.equal(images.open.images.length, 4);
    const wrapped = decode(STREAMS['an ESC * band on a line its text wraps']!);
    assert.deepEqual(
      wrapped.open.warnings.map((w) => [w.offset, w.bytes]),
      [[20, '20']],
      'the wrap is named by the character that did not fit',
    );
  });

  it('a command split inside its length-prefixed data still skips exactly its length', () => {
    // GS ( X 05 00 then "ABCDE" (its data) arriving in three chunks, then "Z" LF
    const chunks = [bytes(0x1d, 0x28), bytes(0x58, 0x05, 0x00, 'AB'), bytes('CDEZ', LF)];
    assert.deepEqual(
      decode(chunks).open.lines.map((l) => l.text),
      ['Z'],
    );
  });

  it('a 14 KB raster fed one byte at a time decodes in linear time', () => {
    const x = 72;
    const y = 200;
    const data = new Uint8Array(x * y).fill(0xaa);
    const stream = bytes(0x1d, 0x76, 0x30, 0x00, x, 0x00, y, 0x00, data, 'after', LF);
    const started = process.hrtime.bigint();
    const d = decode(byteByByte(stream));
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    assert.equal(d.open.images[0]!.height, y);
    assert.equal(d.open.lines[0]!.text, 'after');
    assert.ok(ms < 2000, `took ${ms} ms`);
  });
});

describe('decoder: arbitrary bytes', () => {
  // Bytes biased towards command prefixes and small parameters, so that real commands, truncated
  // commands and nonsense all occur.
  const streamArb = fc
    .array(
      fc.oneof(
        fc.constantFrom(0x1b, 0x1d, 0x1c, 0x10, 0x0a, 0x00, 0x28, 0x6b, 0x76, 0x30, 0x04, 0x14),
        fc.integer({ min: 0, max: 255 }),
      ),
      { maxLength: 160 },
    )
    .map((a) => Uint8Array.from(a));

  it('never throws, and decodes the same whatever the chunking', () => {
    fc.assert(
      fc.property(
        streamArb,
        fc.array(fc.integer({ min: 1, max: 159 }), { maxLength: 10 }),
        (stream, cuts) => {
          const whole = snapshot(decode(stream));
          assert.deepEqual(snapshot(decode(splitAt(stream, cuts))), whole);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('decoder: real-time commands inside other commands’ data', () => {
  // GS v 0 m=0 x=3 bytes y=1: the three data bytes read 10 04 01 (DLE EOT 1)
  const raster = bytes(0x1d, 0x76, 0x30, 0x00, 0x03, 0x00, 0x01, 0x00, 0x10, 0x04, 0x01, 'A', LF);

  it('by default (Epson) they are answered AND stay raster data', () => {
    const d = decode(raster);
    assert.deepEqual(d.realtime, [{ kind: 'status', n: 1 }]);
    const img = d.open.images[0]!;
    assert.deepEqual([...img.data], [0x10, 0x04, 0x01]);
    assert.deepEqual(bitmapRows(img), ['...#.........#.........#']);
    assert.equal(d.open.lines[0]!.text, 'A');
  });

  it('split at every byte, the same', () => {
    assert.deepEqual(snapshot(decode(byteByByte(raster))), snapshot(decode(raster)));
  });

  it('a DLE DC4 pulse hidden in raster data opens the drawer and the raster is intact', () => {
    // GS v 0 x=5 y=1: 10 14 01 00 01 = DLE DC4 1 0 1
    const d = decode(
      bytes(0x1d, 0x76, 0x30, 0x00, 0x05, 0x00, 0x01, 0x00, 0x10, 0x14, 0x01, 0x00, 0x01),
    );
    assert.deepEqual([...d.open.images[0]!.data], [0x10, 0x14, 0x01, 0x00, 0x01]);
    const e = d.open.events[0]!;
    assert.ok(e.type === 'drawer' && e.realtime && e.pin === 2 && e.onMs === 100);
  });

  it('inside a command parameter too (ESC 3 10 then 04 01 reads DLE EOT 1)', () => {
    // ESC 3 10 04 01: the documented pitfall of sending DLE EOT in the middle of ESC 3 n
    const d = decode(bytes(0x1b, 0x33, 0x10, 0x04, 0x01));
    assert.deepEqual(d.realtime, [{ kind: 'status', n: 1 }]);
    assert.equal(d.decoder.paper.lineSpacing, 16);
  });

  it('switched off, only command positions count: raster bytes are just data', () => {
    const d = decode(raster, { realtimeInData: false });
    assert.deepEqual(d.realtime, []);
    assert.deepEqual([...d.open.images[0]!.data], [0x10, 0x04, 0x01]);
  });

  it('the virtual printer answers the hidden DLE EOT 1 with 12, even while offline', () => {
    const printer = new VirtualPrinter();
    const replies: number[] = [];
    printer.on('reply', (b) => replies.push(...b));
    printer.setFault('cover-open', true);
    printer.write(raster);
    assert.deepEqual(replies, [0x1a]); // offline: 12 | 08
    printer.setFault('cover-open', false);
    assert.equal(printer.paper.current.images.length, 1);
    assert.deepEqual([...printer.paper.current.images[0]!.data], [0x10, 0x04, 0x01]);
    assert.equal(printer.paper.current.lines[0]!.text, 'A');
  });

  it('a reply to a real-time command inside a stream comes when its last byte arrives', () => {
    const printer = new VirtualPrinter();
    const log: string[] = [];
    printer.on('reply', (b) => log.push(`reply ${[...b].join(',')}`));
    printer.write(raster.subarray(0, 10)); // up to 10 04
    log.push('chunk');
    printer.write(raster.subarray(10));
    assert.deepEqual(log, ['chunk', 'reply 18']);
  });
});
