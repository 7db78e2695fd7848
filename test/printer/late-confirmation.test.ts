/**
 * `GS r 1` confirmations carry no id. When a job's answer comes after the agent stopped waiting
 * (a slow print head, a slow link), that late answer must not be taken as the next job's
 * confirmation: the next job would be reported printed before it reached the paper (found by
 * the fault suite, row 12). Real emulator on TCP with a slow print head.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  listenTcp,
  PrintSpeedLimiter,
  renderText,
  type TcpEndpoint,
  VirtualPrinter,
} from '../../src/emulator/index.js';
import { openPrinter } from '../../src/printer/open-printer.js';
import type { Printer } from '../../src/printer/printer.js';

const ESC_INIT = [0x1b, 0x40];
const CUT = [0x1d, 0x56, 0x42, 0x00];
const job = (name: string, lines: number) =>
  Uint8Array.from([
    ...ESC_INIT,
    ...Buffer.from(Array.from({ length: lines }, (_, i) => `${name} line ${i + 1}\n`).join('')),
    ...CUT,
  ]);

describe('status confirmation with a late answer', () => {
  let emulator: VirtualPrinter;
  let endpoint: TcpEndpoint;
  let speed: PrintSpeedLimiter;
  let printer: Printer;

  before(async () => {
    emulator = new VirtualPrinter({ columns: 48 });
    endpoint = await listenTcp(emulator, { port: 0 });
    // About 3.75 mm a line: 60 lines take about 2.3 s at 100 mm/s, 4 lines about 0.2 s.
    speed = new PrintSpeedLimiter(emulator, 100);
    printer = openPrinter(
      endpoint.address,
      { realtimeStatus: true, confirm: 'status' },
      { confirmTimeoutMs: 1500, statusTimeoutMs: 500 },
    );
  });

  after(async () => {
    await printer?.close();
    speed?.close();
    await endpoint?.close();
  });

  it("does not take the previous job's late answer as the next job's confirmation", async () => {
    const long = await printer.print(job('LONG', 60));
    assert.equal(long.outcome, 'unconfirmed', 'the long job outlasted the confirmation wait');

    let onPaperWhenConfirmed: boolean | null = null;
    const short = await printer.print(job('SHORT', 4)).then((outcome) => {
      onPaperWhenConfirmed = emulator.paper.tickets.some((t) => renderText(t).includes('SHORT'));
      return outcome;
    });
    assert.equal(short.outcome, 'printed');
    assert.equal(onPaperWhenConfirmed, true, 'confirmed only once it was cut');
    assert.equal(emulator.paper.tickets.length, 2);
  });
});
