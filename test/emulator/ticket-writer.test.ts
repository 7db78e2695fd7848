/** Ticket files: NNNN.txt / .styled.txt / .json / .bin, raw bytes cut exactly at each ticket. */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  createInProcessLink,
  LinkSlot,
  TicketWriter,
  VirtualPrinter,
  type WrittenTicket,
} from '../../src/emulator/index.js';
import { next } from '../helpers/waiting.js';
import { bytes } from './bytes.js';

const ESC_AT = [0x1b, 0x40];
const BOLD_ON = [0x1b, 0x45, 0x01];
const BOLD_OFF = [0x1b, 0x45, 0x00];
const CUT = [0x1d, 0x56, 0x42, 0x00];
const DLE_EOT_1 = [0x10, 0x04, 0x01];

describe('ticket writer', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'emu-tickets-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('writes each cut ticket as text, styled text, JSON and its raw bytes', async () => {
    const printer = new VirtualPrinter();
    const slot = new LinkSlot(printer, { slowLinkBps: 2000 }); // 40-byte slices: tickets span deliveries
    const writer = new TicketWriter(printer, { dir });
    slot.on('deliver', (b, offset) => writer.capture(offset, b));
    const host = createInProcessLink(slot);

    const first = bytes(ESC_AT, 'Order 42\n', BOLD_ON, 'TOTAL 9.99\n', BOLD_OFF, CUT);
    const second = bytes(DLE_EOT_1, 'second ticket\n', CUT);
    const tail = bytes('not cut yet\n');
    const written: WrittenTicket[] = [];
    writer.on('written', (t) => written.push(t));
    const both = new Promise<void>((resolve) =>
      writer.on('written', () => written.length === 2 && resolve()),
    );
    host.write(bytes(first, second, tail));
    await both;

    assert.deepEqual(
      written.map((t) => t.summary),
      [
        'ticket 1: 2 lines, 0 codes, 0 images, partial cut, 0 warnings',
        'ticket 2: 1 lines, 0 codes, 0 images, partial cut, 0 warnings',
      ],
    );
    const base1 = join(dir, '0001');
    assert.equal(readFileSync(`${base1}.txt`, 'utf8'), 'Order 42\nTOTAL 9.99\n');
    assert.equal(readFileSync(`${base1}.styled.txt`, 'utf8'), 'Order 42\n**TOTAL 9.99**\n');
    const json = JSON.parse(readFileSync(`${base1}.json`, 'utf8'));
    assert.equal(json.index, 0);
    assert.equal(json.lines[1].runs[0].bold, true);
    assert.deepEqual([...readFileSync(`${base1}.bin`)], [...first]);
    assert.deepEqual([...readFileSync(join(dir, '0002.bin'))], [...second]);
    assert.equal(readFileSync(join(dir, '0002.txt'), 'utf8'), 'second ticket\n');
    assert.ok(written.every((t) => t.rawComplete));
    assert.equal(existsSync(join(dir, '0003.txt')), false, 'an uncut ticket is not written');
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.endsWith('.tmp')),
      [],
      'no temporary files left',
    );
    writer.close();
    host.end();
    await next(slot, 'unlink');
  });

  it('marks a ticket whose bytes it did not see', async () => {
    const printer = new VirtualPrinter();
    const writer = new TicketWriter(printer, { dir: join(dir, 'gap'), styled: false });
    printer.write(bytes('bypassing the link\n', CUT));
    const [t] = writer.written;
    assert.equal(t!.rawComplete, false);
    assert.match(t!.summary, /\(raw bytes incomplete\)$/);
    assert.equal(t!.files.styled, undefined);
    assert.equal(existsSync(join(dir, 'gap', '0001.styled.txt')), false);
    writer.close();
  });
});
