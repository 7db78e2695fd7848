import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderText, VirtualPrinter } from '../../src/emulator/index.js';

describe('ESC t 1 (Katakana page)', () => {
  it('decodes box drawing, half-width katakana and the yen kanji', () => {
    const printer = new VirtualPrinter({ columns: 32 });
    // ESC @, ESC t 1, 95 95 (──), 96 (│), B1 B2 (ｱｲ), F1 (円), LF, ESC t 0, 9C (£ in PC437), LF
    printer.write(
      Uint8Array.of(
        0x1b,
        0x40,
        0x1b,
        0x74,
        0x01,
        0x95,
        0x95,
        0x96,
        0xb1,
        0xb2,
        0xf1,
        0x0a,
        0x1b,
        0x74,
        0x00,
        0x9c,
        0x0a,
      ),
    );
    const ticket = printer.paper.current;
    assert.deepEqual(ticket.warnings, []);
    assert.equal(renderText(ticket), '──│ｱｲ円\n£\n');
  });
});
