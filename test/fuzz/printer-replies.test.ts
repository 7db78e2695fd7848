/**
 * Fuzzing what printers send back, and what the emulator makes of what it is sent (issue 9).
 *
 * - `decodeStatus` (DLE EOT 1-4 replies): any combination of reply bytes, or none, gives a state
 *   the rest of the agent understands, consistent with the bits that decide it.
 * - The Printer's reply parsing (status queries, `GS ( H` process id and `GS r 1` confirmations)
 *   over a scripted link: arbitrary stray and late bytes around the reply, in arbitrary chunks.
 *   The outcome must not depend on how the bytes were chunked, and a reply with another process
 *   id never confirms a job.
 * - The emulator's decoder and virtual printer: arbitrary byte streams in arbitrary chunkings
 *   never throw, never hit the decoder's internal-error net, and give the same paper and the
 *   same replies as the stream decoded in one piece.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { FAULTS, VirtualPrinter } from '../../src/emulator/index.js';
import { type ConfirmMode, Printer, type PrintOutcome } from '../../src/printer/printer.js';
import { blocksPrinting, decodeStatus, type StatusBytes } from '../../src/printer/status.js';
import type { Transport } from '../../src/printer/transport.js';
import { PRINTER_STATES } from '../../src/protocol/index.js';
import { decode, snapshot } from '../emulator/bytes.js';
import { cuts, FUZZ_TIMEOUT_MS, fuzzOptions, splitAt, targetRuns } from './arbitraries.js';

// ---------------------------------------------------------------------------------------------
// decodeStatus

/** escpos-notes "Status": a DLE EOT reply has bits 1 and 4 set, bits 0 and 7 clear. */
const statusShaped = (b: number) => (b & 0x12) === 0x12 && (b & 0x81) === 0;
const bit = (b: number | undefined, n: number) => b !== undefined && (b & (1 << n)) !== 0;

const replyByte = fc.option(
  fc.oneof(fc.integer({ min: 0, max: 255 }).filter(statusShaped), fc.integer({ min: 0, max: 255 })),
  { nil: undefined },
);

/** This target's FUZZ_RUNS (10,000 in `npm test`) over its properties (decision 259). */
const RUNS = targetRuns({
  decodeStatus: 15,
  status: 15,
  processId: 20,
  gsR1: 15,
  decoder: 20,
  virtualPrinter: 15,
});

describe('fuzz: printer replies', { timeout: FUZZ_TIMEOUT_MS }, () => {
  it('decodeStatus: every combination of replies gives a consistent state', {
    timeout: FUZZ_TIMEOUT_MS,
  }, () => {
    fc.assert(
      fc.property(
        fc.record({ printer: replyByte, offline: replyByte, error: replyByte, paper: replyByte }),
        (bytes: StatusBytes) => {
          const s = decodeStatus(bytes);
          assert.ok(PRINTER_STATES.includes(s.state));
          assert.ok(['ok', 'near-end', 'out', 'unknown'].includes(s.paper));
          const none = Object.values(bytes).every((b) => b === undefined);
          assert.equal(s.state === 'unknown', none, 'unknown exactly when nothing answered');
          if (s.state === 'ready') assert.deepEqual(s.causes, []);
          if (s.state !== 'ready' && s.state !== 'unknown')
            assert.ok(s.causes.length > 0, `${s.state} without a cause`);
          // n=3 bits 2, 3, 5: recoverable, autocutter, unrecoverable errors come first.
          if ([2, 3, 5].some((n) => bit(bytes.error, n))) assert.equal(s.state, 'error');
          // n=4 bits 5 and 6: roll paper end; n=2 bit 5: printing stopped for paper end.
          const out =
            bytes.paper !== undefined ? (bytes.paper & 0x60) === 0x60 : bit(bytes.offline, 5);
          assert.equal(s.paper === 'out', out);
          if (out) assert.ok(['error', 'cover-open', 'paper-out'].includes(s.state), s.state);
          if (s.state === 'paper-out') assert.equal(s.paper, 'out');
          if (s.coverOpen) assert.ok(['error', 'cover-open'].includes(s.state), s.state);
          assert.equal(s.coverOpen, bytes.offline === undefined ? null : bit(bytes.offline, 2));
          assert.equal(
            blocksPrinting(s.state),
            ['error', 'cover-open', 'paper-out', 'offline'].includes(s.state),
          );
        },
      ),
      fuzzOptions(RUNS.decodeStatus),
    );
  });

  // -------------------------------------------------------------------------------------------
  // The Printer over a scripted link

  /**
   * The far side of a link that answers each write with chunks chosen by the test. `read`
   * returns the next chunk, or nothing (the read timed out) when none is left.
   */
  class ScriptedTransport extends EventEmitter implements Transport {
    readonly description = 'scripted link';
    isOpen = true;
    readonly written: Uint8Array[] = [];
    private inbox: Uint8Array[] = [];

    constructor(private readonly answer: (written: Uint8Array) => Uint8Array[]) {
      super();
    }
    async open(): Promise<void> {
      this.isOpen = true;
    }
    async write(data: Uint8Array): Promise<void> {
      this.written.push(data);
      this.inbox.push(...this.answer(data));
    }
    async read(): Promise<Uint8Array> {
      return this.inbox.shift() ?? new Uint8Array(0);
    }
    discardInput(): void {
      this.inbox = [];
    }
    async close(): Promise<void> {
      this.isOpen = false;
    }
  }

  const stream = fc.uint8Array({ maxLength: 80, size: 'medium' });
  const chunking = fc.array(fc.integer({ min: 1, max: 200 }), { maxLength: 10 });

  it('status(): the first status-shaped byte of each reply counts, however it is chunked', {
    timeout: FUZZ_TIMEOUT_MS,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(stream, chunking, chunking), { minLength: 4, maxLength: 4 }),
        fc.boolean(),
        async (replies, oneByOne) => {
          const expected: StatusBytes = {};
          const fields = ['printer', 'offline', 'error', 'paper'] as const;
          replies.forEach(([bytes], i) => {
            expected[fields[i]!] = [...bytes].find(statusShaped);
          });
          const model = decodeStatus(
            expected.printer === undefined ? {} : (expected as StatusBytes),
          );
          const outcomes = [];
          for (const which of [1, 2] as const) {
            const link = new ScriptedTransport((w) => {
              if (w[0] !== 0x10 || w[1] !== 0x04) return [];
              const [bytes, a, b] = replies[w[2]! - 1]!;
              return oneByOne && which === 2
                ? Array.from(bytes, (x) => Uint8Array.of(x))
                : splitAt(bytes, which === 1 ? a : b);
            });
            const printer = new Printer(link, { realtimeStatus: true, confirm: 'status' });
            outcomes.push(await printer.status());
          }
          assert.deepEqual(outcomes[0], model);
          assert.deepEqual(outcomes[1], model);
        },
      ),
      fuzzOptions(RUNS.status),
    );
  });

  const READY = Uint8Array.of(0x12);
  const ACK_HEAD = [0x37, 0x22];

  /** Prints a small job and confirms it against `reply(id)`, chunked at `at`. */
  async function printWith(
    mode: ConfirmMode,
    reply: (id: number[]) => Uint8Array,
    at: number[],
  ): Promise<PrintOutcome> {
    const link = new ScriptedTransport((w) => {
      if (w[0] === 0x10 && w[1] === 0x04) return [READY];
      // GS ( H pL=6 pH=0 fn=48 m=48 d1..d4: the process id request.
      if (w[0] === 0x1d && w[1] === 0x28 && w[2] === 0x48)
        return splitAt(reply([...w.subarray(7, 11)]), at);
      // GS r 1: the paper sensor status, sent in order after the job.
      if (w[0] === 0x1d && w[1] === 0x72) return splitAt(reply([]), at);
      return [];
    });
    const printer = new Printer(link, { realtimeStatus: true, confirm: mode, chunkSize: 64 });
    return printer.print(Uint8Array.from({ length: 100 }, (_, i) => 0x41 + (i % 26)));
  }

  it('the process id confirmation: found wherever it sits among stray bytes, in any chunks', {
    timeout: FUZZ_TIMEOUT_MS,
  }, async () => {
    const noise = fc.uint8Array({ maxLength: 120, size: 'max' });
    await fc.assert(
      fc.asyncProperty(
        noise,
        noise,
        fc.constantFrom('ours', 'another id', 'none', 'cut short'),
        chunking,
        async (before, after, kind, at) => {
          let sent: number[] = [];
          let all: number[] = [];
          const outcome = await printWith(
            'process-id',
            (id) => {
              sent = id;
              const other = id.map((d, i) => (i === 0 ? 0x30 + ((d - 0x30 + 1) % 10) : d));
              const ack =
                kind === 'ours'
                  ? [...ACK_HEAD, ...id, 0x00]
                  : kind === 'another id'
                    ? [...ACK_HEAD, ...other, 0x00]
                    : kind === 'cut short'
                      ? [...ACK_HEAD, ...id]
                      : [];
              all = [...before, ...ack, ...after];
              return Uint8Array.from(all);
            },
            at,
          );
          // The model: the 7-byte reply `37 22 d1 d2 d3 d4 00` occurs in the stream.
          const want = [...ACK_HEAD, ...sent, 0x00];
          const present = all.some((_, i) => want.every((b, j) => all[i + j] === b));
          if (kind === 'ours') assert.ok(present);
          assert.equal(
            outcome.outcome === 'printed',
            present,
            `${kind}: ${JSON.stringify(outcome)} for ${all.length} bytes in ${at.length + 1} chunks`,
          );
        },
      ),
      fuzzOptions(RUNS.processId),
    );
  });

  it('found by fuzzing: a process id reply followed by 58 more bytes in the same read confirms', async () => {
    const outcome = await printWith(
      'process-id',
      (id) => Uint8Array.from([...ACK_HEAD, ...id, 0x00, ...new Array(58).fill(0x00)]),
      [],
    );
    assert.deepEqual(outcome, { outcome: 'printed', confirmedBy: 'process-id' });
  });

  it('the GS r 1 confirmation: only an answer GS r 1 can give (00/03/0C/0F) confirms, in any chunks', {
    timeout: FUZZ_TIMEOUT_MS,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 60, size: 'max' }),
        chunking,
        async (bytes, at) => {
          const outcome = await printWith('status', () => bytes, at);
          // GS r 1 answers the paper sensors in pairs: 00, 03, 0C or 0F (issue 13 item 9); any
          // other byte is noise, never a confirmation.
          const present = [...bytes].some((b) => [0x00, 0x03, 0x0c, 0x0f].includes(b));
          assert.equal(outcome.outcome === 'printed', present);
        },
      ),
      fuzzOptions(RUNS.gsR1),
    );
  });

  // -------------------------------------------------------------------------------------------
  // The emulator

  const ESC = 0x1b;
  const GS = 0x1d;
  const FS = 0x1c;
  const DLE = 0x10;
  /** Bytes biased towards command prefixes and small parameters: real, cut and nonsense commands. */
  const escpos = fc
    .array(
      fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: 0, max: 255 }).map((b) => [b]) },
        {
          weight: 3,
          arbitrary: fc
            .tuple(
              fc.constantFrom(ESC, GS, FS),
              fc.integer({ min: 0x20, max: 0x7f }),
              fc.array(fc.oneof(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 255 })), {
                maxLength: 6,
              }),
            )
            .map(([p, c, args]) => [p, c, ...args]),
        },
        {
          weight: 1,
          arbitrary: fc
            .tuple(fc.constantFrom(0x04, 0x05, 0x14), fc.integer({ min: 0, max: 8 }))
            .map(([c, n]) => [DLE, c, n]),
        },
        {
          weight: 2,
          arbitrary: fc.string({ maxLength: 12 }).map((s) => [...Buffer.from(s, 'latin1'), 0x0a]),
        },
      ),
      { maxLength: 40, size: 'max' },
    )
    .map((parts) => Uint8Array.from(parts.flat()));

  const decoderOptions = fc.record({
    realtimeInData: fc.boolean(),
    powerOnMultiByte: fc.boolean(),
    powerOnCodePage: fc.constantFrom(0, 16, 19),
  });

  it('the decoder: never throws, no internal error, chunking changes nothing', {
    timeout: FUZZ_TIMEOUT_MS,
  }, () => {
    fc.assert(
      fc.property(escpos, decoderOptions, cuts(400), (data, options, at) => {
        const whole = snapshot(decode(data, options));
        const text = JSON.stringify(whole);
        assert.ok(!text.includes('internal error'), text);
        assert.deepEqual(snapshot(decode(splitAt(data, at), options)), whole);
      }),
      fuzzOptions(RUNS.decoder),
    );
  });

  it('the virtual printer: the same replies and paper however the bytes are chunked', {
    timeout: FUZZ_TIMEOUT_MS,
  }, () => {
    const run = (chunks: Uint8Array[], faults: string[]) => {
      const printer = new VirtualPrinter();
      for (const f of faults) printer.setFault(f as (typeof FAULTS)[number], true);
      const replies: number[] = [];
      printer.on('reply', (b) => replies.push(...b));
      for (const c of chunks) printer.write(c);
      return {
        replies,
        tickets: printer.paper.tickets.length,
        pending: printer.decoder.bufferedBytes,
      };
    };
    fc.assert(
      fc.property(escpos, fc.subarray([...FAULTS]), cuts(400), (data, faults, at) => {
        assert.deepEqual(run(splitAt(data, at), faults), run([data], faults));
      }),
      fuzzOptions(RUNS.virtualPrinter),
    );
  });
});
