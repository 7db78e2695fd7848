/**
 * Rendering tickets: column-exact plain text, styled text notation, JSON.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  renderJson,
  renderStyledText,
  renderText,
  type TicketJson,
  ticketSummary,
  ticketToJson,
} from '../../src/emulator/index.js';
import { bytes, decode } from './bytes.js';

const LF = 0x0a;
const text = (...parts: Parameters<typeof bytes>) => renderText(decode(bytes(...parts)).open);
const styled = (...parts: Parameters<typeof bytes>) =>
  renderStyledText(decode(bytes(...parts)).open);

describe('plain text', () => {
  it('pads centred lines by floor((C - w) / 2) and right lines by C - w', () => {
    assert.equal(text(0x1b, 0x61, 1, 'ABC', LF), `${' '.repeat(22)}ABC\n`);
    assert.equal(text(0x1b, 0x61, 1, 'ABCD', LF), `${' '.repeat(22)}ABCD\n`);
    assert.equal(text(0x1b, 0x61, 2, 'ABC', LF), `${' '.repeat(45)}ABC\n`);
  });

  it('writes a double-width character once but counts its two columns', () => {
    // ESC a 2, GS ! 10, "TOTAL" LF: w = 10, 38 spaces
    assert.equal(text(0x1b, 0x61, 2, 0x1d, 0x21, 0x10, 'TOTAL', LF), `${' '.repeat(38)}TOTAL\n`);
    // GS ! 10 "AB" GS ! 00 HT "C": AB take columns 0-3, the tab goes to column 8: 4 spaces
    assert.equal(text(0x1d, 0x21, 0x10, 'AB', 0x1d, 0x21, 0x00, 0x09, 'C', LF), 'AB    C\n');
  });

  it('drops trailing spaces, keeps blank lines', () => {
    assert.equal(text('A   ', LF, LF, 'B', LF), 'A\n\nB\n');
  });

  it('places codes and images where they were printed, cuts invisible', () => {
    const ticket = decode(
      bytes(
        'top',
        LF,
        [0x1d, 0x28, 0x6b, 0x05, 0x00, 0x31, 0x50, 0x30, 'QR'], // QR store
        [0x1d, 0x28, 0x6b, 0x03, 0x00, 0x31, 0x51, 0x30], // QR print
        [0x1d, 0x6b, 0x49, 0x04, 0x7b, 0x42, '42'], // GS k 73: CODE128 {B 42
        [0x1d, 0x76, 0x30, 0x01, 0x02, 0x00, 0x03, 0x00, 0, 0, 0, 0, 0, 0], // GS v 0 16x3, 2x wide
        'bottom',
        LF,
        [0x1d, 0x56, 0x00], // GS V 0
      ),
    ).decoder.paper.tickets[0]!;
    assert.equal(
      renderText(ticket),
      'top\n[QR: QR]\n[BARCODE CODE128: 42]\n[IMAGE 32x3]\nbottom\n',
    );
  });

  it('escapes control characters in code content', () => {
    const out = text(
      0x1d,
      0x28,
      0x6b,
      0x06,
      0x00,
      0x31,
      0x50,
      0x30,
      'a',
      LF,
      0x1d,
      0x1d,
      0x28,
      0x6b,
      0x03,
      0x00,
      0x31,
      0x51,
      0x30,
    );
    assert.equal(out, '[QR: a\\n\\x1D]\n');
  });
});

describe('styled text', () => {
  it('marks bold, underline, thick underline, reverse, size, font B', () => {
    assert.equal(styled(0x1b, 0x45, 1, 'Bold', LF), '**Bold**\n');
    assert.equal(styled(0x1b, 0x2d, 1, 'U', LF), '__U__\n');
    assert.equal(styled(0x1b, 0x2d, 2, 'U', LF), '[u2]U[/u2]\n');
    assert.equal(styled(0x1d, 0x42, 1, 'R', LF), '[rev]R[/rev]\n');
    assert.equal(styled(0x1d, 0x21, 0x11, 'Big', LF), '[2x2]Big[/2x2]\n');
    assert.equal(styled(0x1d, 0x21, 0x01, 'Tall', LF), '[1x2]Tall[/1x2]\n');
    assert.equal(styled(0x1b, 0x4d, 1, 'small', LF), '[fontB]small[/fontB]\n');
    assert.equal(styled(0x1b, 0x7b, 1, 'u', LF), '[upside]u[/upside]\n');
    assert.equal(styled(0x1b, 0x56, 1, 'r', LF), '[rot90]r[/rot90]\n');
  });

  it('nests size outermost and bold innermost, keeping the plain-text positions', () => {
    // ESC a 1, GS ! 11, ESC E 1, GS B 1, "TOTAL" LF: w = 10, (48 - 10) / 2 = 19
    assert.equal(
      styled(0x1b, 0x61, 1, 0x1d, 0x21, 0x11, 0x1b, 0x45, 1, 0x1d, 0x42, 1, 'TOTAL', LF),
      `${' '.repeat(19)}[2x2][rev]**TOTAL**[/rev][/2x2]\n`,
    );
  });

  it('marks only the styled part of a line', () => {
    assert.equal(
      styled('Pay ', 0x1b, 0x45, 1, '12.00', 0x1b, 0x45, 0, ' now', LF),
      'Pay **12.00** now\n',
    );
  });

  it('trailing spaces of a bold run stay outside the marks; of a reverse run inside', () => {
    assert.equal(styled(0x1b, 0x45, 1, 'A  ', 0x1b, 0x45, 0, 'B', LF), '**A**  B\n');
    assert.equal(styled(0x1d, 0x42, 1, 'A  ', 0x1d, 0x42, 0, 'B', LF), '[rev]A  [/rev]B\n');
  });

  it('escapes characters that could read as marks', () => {
    assert.equal(styled('*** COPY ***', LF), '\\*\\*\\* COPY \\*\\*\\*\n');
    assert.equal(styled('a_b 2*3 [x] \\', LF), 'a_b 2*3 \\[x] \\\\\n');
    assert.equal(styled(0x1b, 0x45, 1, '5*', LF), '**5\\***\n');
  });

  it('code placeholders are the same as in plain text', () => {
    assert.equal(styled(0x1d, 0x6b, 0x04, 'AB', 0x00), '[BARCODE CODE39: AB]\n');
  });
});

describe('JSON', () => {
  const d = decode(
    bytes(
      [0x1b, 0x61, 1, 0x1b, 0x45, 1],
      'Hi',
      LF,
      [0x1d, 0x76, 0x30, 0x00, 0x01, 0x00, 0x02, 0x00, 0xf0, 0x0f], // GS v 0 8x2
      [0x1d, 0x6b, 0x49, 0x04, 0x7b, 0x42, '42'],
      [0x1b, 0x70, 0x00, 0x19, 0xfa], // ESC p
      [0x1b, 0x99], // unknown
      [0x1d, 0x56, 0x42, 0x00], // cut
    ),
  );
  const ticket = d.decoder.paper.tickets[0]!;

  it('keeps lines with runs, codes, images (base64), events and warnings', () => {
    const json = JSON.parse(renderJson(ticket)) as TicketJson;
    assert.equal(json.cut, true);
    assert.equal(json.lines[0]!.text, 'Hi');
    assert.equal(json.lines[0]!.align, 'center');
    assert.equal(json.lines[0]!.runs[0]!.bold, true);
    assert.equal(json.codes[0]!.content, '42');
    assert.equal(json.codes[0]!.data, '7b423432');
    assert.deepEqual([...Buffer.from(json.images[0]!.data, 'base64')], [0xf0, 0x0f]);
    assert.equal(json.images[0]!.rows, undefined);
    assert.deepEqual(
      json.events.map((e) => e.type),
      ['drawer', 'cut'],
    );
    assert.deepEqual(json.warnings, [
      { offset: 32, bytes: '1B 99', message: 'unknown command ESC 99: skipped' },
    ]);
  });

  it('can add image rows as # and .', () => {
    assert.deepEqual(ticketToJson(ticket, { imageRows: true }).images[0]!.rows, [
      '####....',
      '....####',
    ]);
  });

  it('summarises a ticket in one line', () => {
    assert.equal(
      ticketSummary(ticket),
      'ticket 1: 1 lines, 1 code, 1 image, partial cut, 1 warning',
    );
  });
});
