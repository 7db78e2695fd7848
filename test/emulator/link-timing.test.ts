/**
 * The in-process link and the timing behaviours: back-pressure from a full receive buffer, a slow
 * link, slow printing, switching them at run time, and a disconnect. Everything is observed through
 * events (deliveries, tickets, replies, waits), never through the wall clock.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { next, waitFor } from '../../harness/waiting.js';
import {
  createInProcessLink,
  DOTS_PER_MM,
  LinkSlot,
  PrintSpeedLimiter,
  renderText,
  type Ticket,
  VirtualPrinter,
} from '../../src/emulator/index.js';
import { bytes } from './bytes.js';

const ESC_AT = [0x1b, 0x40];
const CUT = [0x1d, 0x56, 0x42, 0x00];
const DLE_EOT = (n: number) => [0x10, 0x04, n];
const GS_H_48 = [0x1d, 0x28, 0x48, 0x06, 0x00, 0x30, 0x30, 0x41, 0x42, 0x43, 0x44]; // id "ABCD"

/** A text job of about `size` bytes: 47-character lines and a cut. */
function textJob(size: number): { job: Uint8Array; lines: number } {
  const lines: string[] = [];
  for (let i = 0; (lines.length + 1) * 48 + 6 <= size; i++) {
    lines.push(`line ${String(i).padStart(4, '0')} ${'x'.repeat(37)}\n`);
  }
  return { job: bytes(ESC_AT, lines.join(''), CUT), lines: lines.length };
}

function collect(host: NodeJS.ReadableStream): number[] {
  const got: number[] = [];
  host.on('data', (d: Buffer) => got.push(...d));
  return got;
}

describe('in-process link', () => {
  it('is a Duplex: bytes in print, replies come back', async () => {
    const printer = new VirtualPrinter();
    const host = createInProcessLink(printer);
    const replies = collect(host);
    const ticket = next<[Ticket]>(printer, 'ticket');
    host.write(bytes(ESC_AT, 'in process\n', CUT, DLE_EOT(1)));
    assert.equal(renderText((await ticket)[0]), 'in process\n');
    await waitFor('the reply', () => replies.length === 1);
    assert.deepEqual(replies, [0x12]);
    assert.throws(() => createInProcessLink(host.slot), /already has a link/);
    host.end();
    await next(host.slot, 'unlink');
  });

  it('honours back-pressure: stops delivering while the printer is busy, resumes after', async () => {
    const printer = new VirtualPrinter({ bufferSize: 256 });
    printer.setFault('offline', true);
    const host = createInProcessLink(printer);
    const busy: boolean[] = [];
    printer.on('busy', (b) => busy.push(b));
    const { job } = textJob(2048);
    for (let i = 0; i < job.length; i += 64) host.write(job.subarray(i, i + 64));

    await waitFor('busy', () => printer.busy);
    // Let everything already written reach the link: it must stay there, not in the printer.
    await new Promise((r) => setImmediate(r));
    assert.ok(host.link.stream.isPaused(), 'the link paused its stream');
    assert.ok(printer.bufferedBytes < 256 + 64, `buffer ${printer.bufferedBytes} stays near 256`);
    assert.ok(host.link.deliveredBytes < job.length, 'the rest waits on the host side');

    const ticket = next<[Ticket]>(printer, 'ticket');
    printer.setFault('offline', false);
    const [t] = await ticket;
    assert.equal(host.link.deliveredBytes, job.length, 'nothing lost');
    assert.equal(t.lines.length, textJob(2048).lines);
    assert.deepEqual(busy.slice(0, 2), [true, false]);
    host.end();
  });

  it('a disconnect destroys the host side; what reached the printer stays and prints', async () => {
    const printer = new VirtualPrinter();
    printer.setFault('paper-out', true);
    const host = createInProcessLink(printer);
    host.write(bytes('held\n', CUT));
    await waitFor('the held job', () => printer.bufferedBytes > 0);
    const closed = next(host, 'close');
    const reason = next<[unknown, string]>(host.slot, 'unlink');
    assert.equal(host.slot.disconnect(), true);
    await closed;
    assert.equal((await reason)[1], 'disconnected');
    assert.equal(host.destroyed, true);
    const printed = next<[Ticket]>(printer, 'ticket');
    printer.setFault('paper-out', false);
    assert.equal(renderText((await printed)[0]), 'held\n');
    // A new link can be made on the same slot.
    const again = createInProcessLink(host.slot);
    const replies = collect(again);
    again.write(bytes(DLE_EOT(1)));
    await waitFor('the reply on the new link', () => replies.length === 1);
    again.end();
  });
});

describe('slow link', () => {
  it('delivers a 4 KB job in slices over time; the ticket comes after the last byte', async () => {
    const printer = new VirtualPrinter();
    const slot = new LinkSlot(printer, { slowLinkBps: 20_000 }); // 400 bytes per 20 ms slice
    const host = createInProcessLink(slot);
    const { job } = textJob(4096);
    const log: Array<['deliver', number] | ['ticket', number]> = [];
    host.link.on('deliver', (b) => log.push(['deliver', b.length]));
    printer.on('ticket', () => log.push(['ticket', host.link.deliveredBytes]));
    const ticket = next<[Ticket]>(printer, 'ticket');

    host.write(job);
    const [first] = await next<[Uint8Array]>(host.link, 'deliver');
    assert.equal(first.length, 400, 'the first slice: 20 ms of the line');
    assert.equal(host.link.queuedBytes, job.length - 400, 'the rest is still on the line');
    await ticket;

    const deliveries = log.filter((e) => e[0] === 'deliver').map((e) => e[1]);
    assert.ok(deliveries.length >= 8, `${deliveries.length} deliveries`);
    assert.ok(Math.max(...deliveries) <= 400, 'no slice larger than 20 ms of the line');
    assert.equal(
      deliveries.reduce((a, b) => a + b, 0),
      job.length,
    );
    assert.deepEqual(log.at(-1), ['ticket', job.length], 'the ticket came after the last byte');
    host.end();
  });

  it('paces replies too, and can be switched off mid-job', async () => {
    const printer = new VirtualPrinter();
    const slot = new LinkSlot(printer, { slowLinkBps: 960 }); // 9600 baud: 4 KB would take 4 s
    const host = createInProcessLink(slot);
    const replies = collect(host);
    const { job } = textJob(4096);
    host.write(bytes(DLE_EOT(1), job));

    await next(host.link, 'deliver');
    await waitFor('the paced reply', () => replies.length === 1);
    assert.deepEqual(replies, [0x12]);
    assert.ok(host.link.queuedBytes > 3000, 'most of the job still on the line');

    const ticket = next<[Ticket]>(printer, 'ticket');
    slot.setSlowLink(null);
    await ticket;
    assert.equal(host.link.deliveredBytes, job.length + 3);
    host.end();
  });

  it('a graceful end still delivers the bytes on the line', async () => {
    const printer = new VirtualPrinter();
    const host = createInProcessLink(printer, { slowLinkBps: 20_000 });
    const { job } = textJob(1024);
    const ticket = next<[Ticket]>(printer, 'ticket');
    host.end(job);
    const [, reason] = await next<[unknown, string]>(host.slot, 'unlink');
    assert.equal(reason, 'ended');
    await ticket;
    assert.equal(host.link.deliveredBytes, job.length);
  });
});

describe('slow print', () => {
  it('holds printing line by line at the paper speed; GS ( H answers after the last line', async () => {
    const printer = new VirtualPrinter();
    // 10 lines of 30 dots (3.75 mm) at 400 mm/s: about 94 ms of paper.
    const speed = new PrintSpeedLimiter(printer, 400);
    const host = createInProcessLink(printer);
    const replies: Array<{ bytes: number[]; lines: number }> = [];
    host.on('data', (d: Buffer) =>
      replies.push({ bytes: [...d], lines: printer.paper.current.lines.length }),
    );
    const waits: number[] = [];
    speed.on('wait', () => waits.push(printer.paper.current.lines.length));

    const lines = Array.from({ length: 10 }, (_, i) => `slow line ${i}\n`).join('');
    host.write(bytes(ESC_AT, lines, GS_H_48, DLE_EOT(1)));

    await waitFor('the process-id reply', () => replies.some((r) => r.bytes[0] === 0x37));
    assert.equal(replies[0]!.bytes[0], 0x12, 'DLE EOT answered at once, while printing held');
    assert.ok(replies[0]!.lines < 10, 'before the paper was out');
    const processId = replies.find((r) => r.bytes[0] === 0x37)!;
    assert.deepEqual(processId.bytes, [0x37, 0x22, 0x41, 0x42, 0x43, 0x44, 0x00]);
    assert.equal(processId.lines, 10, 'the process id came after every line was printed');
    assert.ok(waits.length >= 9, `the head stopped between lines (${waits.length} waits)`);
    assert.equal(waits[0], 1, 'the first stop came after the first line');
    assert.equal(printer.paper.printedDots >= 10 * 30, true);

    speed.close();
    assert.equal(Object.getOwnPropertyDescriptor(printer.paper, 'printedDots')?.writable, true);
    assert.equal(DOTS_PER_MM, 8);
    host.end();
  });

  it('switching slow print off releases a held printer at once', async () => {
    const printer = new VirtualPrinter();
    const speed = new PrintSpeedLimiter(printer, 1); // 1 mm/s: a line takes almost 4 s
    const host = createInProcessLink(printer);
    const ticket = next<[Ticket]>(printer, 'ticket');
    host.write(bytes('first\n', 'second\n', CUT));
    await next(speed, 'wait');
    assert.equal(printer.paper.current.lines.length, 1);
    speed.setSpeed(null);
    assert.equal(renderText((await ticket)[0]), 'first\nsecond\n');
    speed.close();
    host.end();
  });
});
