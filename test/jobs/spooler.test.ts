/**
 * The spooler against the emulator over TCP, with real `Printer`s and a real store: order,
 * waiting out faults, isolation between printers, a burst, markings, unconfirmed jobs and
 * permanent failures. Assertions read the emulator's paper and the store; tests wait for
 * conditions with deadlines, never for a fixed time.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { waitFor } from '../../harness/waiting.js';
import { AgentError } from '../../src/errors.js';
import type { Job } from '../../src/jobs/job.js';
import { type JobPrinter, Spooler, type SpoolerOptions } from '../../src/jobs/spooler.js';
import type { JobStore } from '../../src/jobs/store.js';
import { PrinterMonitor } from '../../src/printer/monitor.js';
import { orderRecordSchema } from '../../src/protocol/order-record.js';
import { type JobEvent, jobEventSchema } from '../../src/protocol/print-protocol.js';
import { formatTimestamp } from '../../src/protocol/time.js';
import { ORDERS_DIR } from '../helpers/receipts.js';
import {
  type EmulatedPrinter,
  emulatedPrinter,
  instruction,
  OPTIONS,
  openStore,
  PROFILE,
  pad,
  printedReceipts,
  walCommitCounter,
} from './fixtures.js';

const FAST_BACKOFF = { initialMs: 20, maxMs: 200 };

const cleanup: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const fn of cleanup.reverse()) await fn();
});

async function printerRig(options: Parameters<typeof emulatedPrinter>[0] = {}) {
  const rig = await emulatedPrinter(options);
  cleanup.push(() => rig.close());
  return rig;
}

function spooler(
  store: JobStore,
  printers: SpoolerOptions['printers'],
  options: Partial<SpoolerOptions> = {},
): Spooler {
  const s = new Spooler({
    store,
    printers,
    receiptOptions: OPTIONS,
    backoff: FAST_BACKOFF,
    pollIntervalMs: 50,
    ...options,
  });
  cleanup.push(() => s.stop());
  return s;
}

function jobEvents(store: JobStore): JobEvent[] {
  return store
    .drainOutbox(100_000)
    .filter((e) => e.kind === 'job')
    .map((e) => jobEventSchema.parse(e.payload));
}

function stateOf(store: JobStore, jobId: string): Job['state'] | undefined {
  return store.getByJobId(jobId)?.state;
}

function orders(from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => `O-${pad(from + i)}`);
}

describe('spooler against the emulator', () => {
  it('prints queued jobs in order, each confirmed, with every transition reported', async () => {
    const store = openStore('order');
    cleanup.push(() => store.close());
    const rig = await printerRig();
    for (let i = 1; i <= 5; i++) store.enqueueInstruction(instruction(i));
    const s = spooler(store, [{ id: 'receipt', printer: rig.printer, profile: PROFILE }]);
    s.start();
    await waitFor('5 printed', () => store.countByState().printed === 5);
    const receipts = printedReceipts(rig.emulator);
    assert.deepEqual(
      receipts.map((r) => r.orderNo),
      orders(1, 5),
    );
    assert.ok(receipts.every((r) => !r.possibleDuplicate && !r.late));
    const first = jobEvents(store).filter((e) => e.jobId === 'P-00001');
    assert.deepEqual(
      first.map((e) => [e.state, e.attempt]),
      [
        ['queued', 0],
        ['printing', 1],
        ['printed', 1],
      ],
    );
    // New jobs wake the loop at once, without waiting for the poll.
    store.enqueueInstruction(instruction(6));
    await waitFor('6 printed', () => stateOf(store, 'P-00006') === 'printed');
  });

  it('holds the queue while out of paper and prints everything in order after the refill', async () => {
    const store = openStore('paper');
    cleanup.push(() => store.close());
    const rig = await printerRig();
    const monitor = new PrinterMonitor(rig.printer, { intervalMs: 50 });
    cleanup.push(() => monitor.stop());
    rig.emulator.setFault('paper-out', true);
    for (let i = 1; i <= 4; i++) store.enqueueInstruction(instruction(i));
    // A backoff far longer than the test: only the monitor's "ready" can bring the retry early.
    const s = spooler(store, [{ id: 'receipt', printer: rig.printer, profile: PROFILE, monitor }], {
      backoff: { initialMs: 60_000, maxMs: 60_000 },
    });
    s.start();
    monitor.start();
    await waitFor('the head job waiting for paper', () => {
      const head = store.getByJobId('P-00001');
      return head?.state === 'waiting' && head.lastError?.code === 'PAPER_OUT';
    });
    assert.equal(printedReceipts(rig.emulator).length, 0, 'nothing printed without paper');
    assert.equal(stateOf(store, 'P-00002'), 'queued', 'the rest waits behind the head, in order');
    const waiting = jobEvents(store).find((e) => e.state === 'waiting');
    assert.equal(waiting?.reason?.code, 'PAPER_OUT');
    rig.emulator.setFault('paper-out', false);
    await waitFor('4 printed after the refill', () => store.countByState().printed === 4);
    const receipts = printedReceipts(rig.emulator);
    assert.deepEqual(
      receipts.map((r) => r.orderNo),
      orders(1, 4),
    );
    assert.ok(
      receipts.every((r) => !r.possibleDuplicate),
      'not sent before: no marking',
    );
  });

  it('keeps printing on one printer while another is dead or hangs', async () => {
    const store = openStore('isolation');
    cleanup.push(() => store.close());
    const alive = await printerRig();
    const dead = await printerRig();
    await dead.endpoint.close(); // connection refused from now on
    // Hangs until released, like a printer that takes the bytes and never answers or times out.
    let released = false;
    let release: () => void = () => {};
    const hanging: JobPrinter = {
      print: () =>
        released
          ? Promise.resolve({ outcome: 'printed' })
          : new Promise((resolve) => {
              release = () => {
                released = true;
                resolve({ outcome: 'printed' });
              };
            }),
    };
    for (let i = 1; i <= 30; i++) {
      const printer = ['receipt', 'dead', 'stuck'][i % 3]!;
      store.enqueueInstruction(instruction(i, { printer }));
    }
    const s = spooler(store, [
      { id: 'receipt', printer: alive.printer, profile: PROFILE },
      { id: 'dead', printer: dead.printer, profile: PROFILE },
      { id: 'stuck', printer: hanging, profile: PROFILE },
    ]);
    s.start();
    await waitFor(
      'the live printer done',
      () => store.list({ printer: 'receipt', state: 'printed' }).length === 10,
    );
    assert.deepEqual(
      printedReceipts(alive.emulator).map((r) => r.orderNo),
      [3, 6, 9, 12, 15, 18, 21, 24, 27, 30].map((n) => `O-${pad(n)}`),
    );
    const deadHead = store.getByJobId('P-00001')!;
    assert.equal(deadHead.state, 'waiting');
    assert.equal(deadHead.lastError?.code, 'PRINTER_UNREACHABLE');
    assert.deepEqual(deadHead.markings, {}, 'nothing was sent to the dead printer');
    assert.equal(stateOf(store, 'P-00002'), 'printing', 'the stuck printer holds its first job');
    assert.equal(store.list({ printer: 'stuck', state: 'queued' }).length, 9);
    release();
    await waitFor(
      'the stuck printer moves on',
      () => store.list({ printer: 'stuck', state: 'printed' }).length === 10,
    );
  });

  it('prints a burst of 1,000 jobs, all in order, each once', async () => {
    const store = openStore('burst');
    cleanup.push(() => store.close());
    const rig = await printerRig();
    const s = spooler(store, [{ id: 'receipt', printer: rig.printer, profile: PROFILE }]);
    s.start();
    // Inserted while the spooler runs, as an MQTT burst would arrive.
    for (let i = 1; i <= 1000; i++) {
      store.enqueueInstruction(instruction(i));
      if (i % 100 === 0) await new Promise((r) => setImmediate(r));
    }
    await waitFor('1,000 printed', () => store.countByState().printed === 1000, 50_000);
    const receipts = printedReceipts(rig.emulator);
    assert.deepEqual(
      receipts.map((r) => r.orderNo),
      orders(1, 1000),
    );
    assert.ok(receipts.every((r) => !r.possibleDuplicate && !r.late));
    assert.ok(store.list({ limit: 1000 }).every((j) => j.attempts === 1));
  });

  it('marks a job LATE when it waited longer than the configured age', async () => {
    const store = openStore('late');
    cleanup.push(() => store.close());
    const rig = await printerRig();
    store.enqueueInstruction(instruction(1));
    // The spooler's clock is an hour ahead of the store's: the job is an hour old at its turn.
    const s = spooler(store, [{ id: 'receipt', printer: rig.printer, profile: PROFILE }], {
      lateAfterMs: 30 * 60_000,
      now: () => Date.now() + 60 * 60_000,
    });
    s.start();
    await waitFor('printed', () => stateOf(store, 'P-00001') === 'printed');
    const [receipt] = printedReceipts(rig.emulator);
    assert.equal(receipt!.late, true);
    assert.deepEqual(store.getByJobId('P-00001')!.markings, { late: true });
    const printed = jobEvents(store).find((e) => e.state === 'printed');
    assert.deepEqual(printed?.markings, ['LATE']);
    await s.stop();
    // On time: no marking.
    store.enqueueInstruction(instruction(2));
    const onTime = spooler(store, [{ id: 'receipt', printer: rig.printer, profile: PROFILE }], {
      lateAfterMs: 30 * 60_000,
    });
    onTime.start();
    await waitFor('printed', () => stateOf(store, 'P-00002') === 'printed');
    assert.equal(printedReceipts(rig.emulator)[1]!.late, false);
  });

  it('marks LATE, with the date and age, an order placed days ago by its own time (v1.2 §10)', async () => {
    const store = openStore('late-order');
    cleanup.push(() => store.close());
    const rig = await printerRig();
    const ago = (ms: number) => formatTimestamp(new Date(Date.now() - ms));
    const HOUR = 3_600_000;
    // Stored just now (the store-time rule sees nothing late): only the order's own time tells.
    const threeDays = ago(3 * 24 * HOUR + 5 * 60_000);
    store.enqueueInstruction(instruction(1, { createTime: threeDays }));
    store.enqueueInstruction(instruction(2, { createTime: ago(11 * HOUR) }));
    const record = {
      ...orderRecordSchema.parse(
        JSON.parse(readFileSync(join(ORDERS_DIR, 'record-options-remark.json'), 'utf8')),
      ),
      orderInnerNo: 'O-00003',
      createTime: ago(13 * HOUR + 60_000),
    };
    store.enqueueRecord(record);
    const s = spooler(store, [{ id: 'receipt', printer: rig.printer, profile: PROFILE }], {
      lateAfterMs: 30 * 60_000,
    });
    s.start();
    await waitFor('three printed', () => store.countByState().printed === 3);
    const receipts = printedReceipts(rig.emulator);
    const byOrder = (no: string) => receipts.find((r) => r.text.includes(no))!;
    const old = byOrder('O-00001');
    assert.equal(old.late, true);
    assert.match(old.text, new RegExp(`placed ${threeDays.slice(0, 16)}`));
    assert.match(old.text, /^\s*3 days ago\s*$/m);
    assert.equal(byOrder('O-00002').late, false, 'eleven hours is not late at day scale');
    const caughtUp = byOrder('O-00003');
    assert.equal(caughtUp.late, true, 'a catch-up record is judged by its own time too');
    assert.match(caughtUp.text, /^\s*13 hours ago\s*$/m);
    const printed = jobEvents(store).filter((e) => e.state === 'printed');
    assert.deepEqual(
      printed.map((e) => [e.jobId, e.markings]),
      [
        ['P-00001', ['LATE']],
        ['P-00002', undefined],
        ['catch-up:O-00003', ['LATE']],
      ],
    );
  });

  it('prints a job stored before v1.2 whose ids the look-alike rule now refuses (decision 238)', async () => {
    const store = openStore('stored-look-alike');
    cleanup.push(() => store.close());
    const rig = await printerRig();
    // Acknowledged and stored by an agent before the upgrade: the rule is for what arrives.
    const base = instruction(1);
    store.enqueueInstruction({
      ...base,
      orderNo: 'O-00001 ',
      order: { ...base.order, paymentTransactionId: 'TX-1\u200b' },
    });
    const record = {
      ...orderRecordSchema.parse(
        JSON.parse(readFileSync(join(ORDERS_DIR, 'record-options-remark.json'), 'utf8')),
      ),
      orderInnerNo: 'O-00002\u00a0',
    };
    store.enqueueRecord(record);
    const s = spooler(store, [{ id: 'receipt', printer: rig.printer, profile: PROFILE }]);
    s.start();
    await waitFor('both printed', () => store.countByState().printed === 2);
    const receipts = printedReceipts(rig.emulator);
    assert.equal(receipts.length, 2);
    assert.ok(receipts.some((r) => r.text.includes('O-00001')));
    assert.ok(receipts.some((r) => r.text.includes('O-00002')));
  });

  it('prints the copies of an instruction under one confirmation', async () => {
    const store = openStore('copies');
    cleanup.push(() => store.close());
    const rig = await printerRig();
    store.enqueueInstruction(instruction(1, { copies: 3 }));
    spooler(store, [{ id: 'receipt', printer: rig.printer, profile: PROFILE }]).start();
    await waitFor('printed', () => stateOf(store, 'P-00001') === 'printed');
    assert.deepEqual(
      printedReceipts(rig.emulator).map((r) => r.orderNo),
      ['O-00001', 'O-00001', 'O-00001'],
    );
    assert.equal(store.getByJobId('P-00001')!.attempts, 1);
  });

  it('records a job the printer never confirmed as unconfirmed and does not send it again', async () => {
    const store = openStore('mute');
    cleanup.push(() => store.close());
    const rig = await printerRig({ confirmTimeoutMs: 300 });
    rig.emulator.setFault('mute', true);
    store.enqueueInstruction(instruction(1));
    const s = spooler(store, [{ id: 'receipt', printer: rig.printer, profile: PROFILE }]);
    s.start();
    await waitFor('unconfirmed', () => stateOf(store, 'P-00001') === 'unconfirmed');
    const job = store.getByJobId('P-00001')!;
    assert.equal(job.lastError?.code, 'UNCONFIRMED');
    assert.equal(job.attempts, 1);
    const event = jobEvents(store).find((e) => e.state === 'unconfirmed');
    assert.equal(event?.reason?.code, 'UNCONFIRMED');
    // The queue moves on; once the next job is through, the first was still printed only once.
    rig.emulator.setFault('mute', false);
    store.enqueueInstruction(instruction(2));
    await waitFor('next printed', () => stateOf(store, 'P-00002') === 'printed');
    assert.deepEqual(
      printedReceipts(rig.emulator).map((r) => r.orderNo),
      ['O-00001', 'O-00002'],
    );
    assert.equal(store.getByJobId('P-00001')!.state, 'unconfirmed');
  });

  it("records a confirmed job with the next job's printing, in one commit (decision 206)", async () => {
    const store = openStore('group-commit');
    cleanup.push(() => store.close());
    const jobs = 6;
    for (let i = 1; i <= jobs; i++) store.enqueueInstruction(instruction(i));
    // Every commit from here on stays in the WAL, counted by its commit frames.
    const walCommits = walCommitCounter(store);
    const rig = await printerRig();
    const s = spooler(store, [{ id: 'receipt', printer: rig.printer, profile: PROFILE }]);
    s.start();
    await waitFor(`${jobs} printed`, () => store.countByState().printed === jobs);
    await s.stop();
    const commits = walCommits();
    // The first job's printing alone, each next printing with the previous printed, the last
    // printed alone: jobs + 1 commits, where one commit per transition would be 2 * jobs.
    assert.equal(commits, jobs + 1);
    assert.deepEqual(
      printedReceipts(rig.emulator).map((r) => r.orderNo),
      orders(1, jobs),
    );
    // Each job's events in order, the printed of one before the printing of the next.
    assert.deepEqual(
      jobEvents(store)
        .filter((e) => e.state !== 'queued')
        .map((e) => `${e.jobId} ${e.state}`),
      Array.from({ length: jobs }, (_, i) => [
        `P-${pad(i + 1)} printing`,
        `P-${pad(i + 1)} printed`,
      ]).flat(),
    );
  });

  it('records a confirmed job before the next one fails to render', async () => {
    const store = openStore('group-commit-failed');
    cleanup.push(() => store.close());
    const rig = await printerRig();
    store.enqueueInstruction(instruction(1));
    const bad = instruction(2);
    store.enqueueInstruction(bad, { raw: JSON.stringify({ ...bad, copies: 9 }) });
    const s = spooler(store, [{ id: 'receipt', printer: rig.printer, profile: PROFILE }]);
    s.start();
    await waitFor('1 printed and 2 failed', () => {
      const c = store.countByState();
      return c.printed === 1 && c.failed === 1;
    });
    assert.deepEqual(
      jobEvents(store)
        .filter((e) => e.state === 'printed' || e.state === 'failed')
        .map((e) => `${e.jobId} ${e.state}`),
      ['P-00001 printed', 'P-00002 failed'],
    );
  });

  it('fails jobs that cannot be rendered and moves on to the next', async () => {
    const store = openStore('permanent');
    cleanup.push(() => store.close());
    const rig = await printerRig();
    const bad = instruction(1);
    // Stored by an older agent or edited by hand: no longer a valid instruction.
    store.enqueueInstruction(bad, { raw: JSON.stringify({ ...bad, copies: 9 }) });
    store.enqueueInstruction(instruction(2));
    store.enqueueInstruction(instruction(3, { printer: 'noprofile' }));
    store.enqueueCommand({ commandId: 'C-1', type: 'test-print' });
    store.enqueueInstruction(instruction(4));
    const s = spooler(store, [
      { id: 'receipt', printer: rig.printer, profile: PROFILE },
      { id: 'noprofile', printer: rig.printer, profile: 'no-such-profile' },
    ]);
    s.start();
    await waitFor('all settled', () => {
      const c = store.countByState();
      return c.printed === 2 && c.failed === 3;
    });
    assert.equal(store.getByJobId('P-00001')!.lastError?.code, 'PARAM_INVALID');
    assert.match(store.getByJobId('P-00001')!.lastError!.message, /copies/);
    assert.equal(store.getByJobId('P-00003')!.lastError?.code, 'PROFILE_MISSING');
    assert.equal(store.getByJobId('command:C-1')!.lastError?.code, 'RENDER_FAILED');
    assert.deepEqual(
      printedReceipts(rig.emulator).map((r) => r.orderNo),
      ['O-00002', 'O-00004'],
    );
    const failed = jobEvents(store).filter((e) => e.state === 'failed');
    assert.deepEqual(failed.map((e) => e.reason?.code).sort(), [
      'PARAM_INVALID',
      'PROFILE_MISSING',
      'RENDER_FAILED',
    ]);
  });

  it('prints a reprint from the stored receipt, marked REPRINT with its count', async () => {
    const store = openStore('reprint');
    cleanup.push(() => store.close());
    const rig = await printerRig();
    store.enqueueInstruction(instruction(1, { copies: 2 }));
    const s = spooler(store, [{ id: 'receipt', printer: rig.printer, profile: PROFILE }]);
    s.start();
    await waitFor('original printed', () => stateOf(store, 'P-00001') === 'printed');
    const first = store.enqueueCommand({ commandId: 'C-1', type: 'reprint', orderNo: 'O-00001' });
    const second = store.enqueueReprint('O-00001');
    await waitFor('reprints printed', () =>
      [first, second].every(
        (r) => r.status === 'inserted' && store.get(r.job.id)?.state === 'printed',
      ),
    );
    const receipts = printedReceipts(rig.emulator);
    assert.deepEqual(
      receipts.map((r) => [r.orderNo, r.reprint]),
      [
        ['O-00001', null],
        ['O-00001', null],
        ['O-00001', 1],
        ['O-00001', 2],
      ],
    );
    const events = jobEvents(store).filter((e) => e.commandId === 'C-1');
    assert.deepEqual(
      events.map((e) => [e.state, e.markings]),
      [
        ['queued', ['REPRINT']],
        ['printing', ['REPRINT']],
        ['printed', ['REPRINT']],
      ],
    );
  });

  it('prints a job again marked POSSIBLE DUPLICATE when bytes went out before a failure', async () => {
    const store = openStore('midway');
    cleanup.push(() => store.close());
    const rig = await printerRig();
    let calls = 0;
    // The first attempt sends part of the job for real, then the link "fails" with a byte count.
    const flaky: JobPrinter = {
      async print(bytes) {
        if (++calls > 1) return rig.printer.print(bytes);
        await rig.printer.print(bytes.subarray(0, 300));
        throw new AgentError('PRINTER_DISCONNECTED', 'link dropped', {
          details: { sentBytes: 300, totalBytes: bytes.length },
        });
      },
    };
    store.enqueueInstruction(instruction(1));
    store.enqueueInstruction(instruction(2));
    spooler(store, [{ id: 'receipt', printer: flaky, profile: PROFILE }]).start();
    await waitFor('both printed', () => store.countByState().printed === 2);
    const receipts = printedReceipts(rig.emulator);
    // The cut-short first attempt, unmarked (it was meant to be the only copy), then the marked
    // copy, then the next job.
    assert.equal(receipts.length, 3);
    assert.equal(receipts[0]!.possibleDuplicate, false);
    assert.doesNotMatch(receipts[0]!.text, /TOTAL/, 'the first attempt is cut short');
    assert.deepEqual(
      receipts.slice(1).map((r) => [r.orderNo, r.possibleDuplicate]),
      [
        ['O-00001', true],
        ['O-00002', false],
      ],
    );
    const events = jobEvents(store).filter((e) => e.jobId === 'P-00001');
    assert.deepEqual(
      events.map((e) => [e.state, e.attempt, e.reason?.code ?? null, e.markings ?? []]),
      [
        ['queued', 0, null, []],
        ['printing', 1, null, []],
        ['waiting', 1, 'PRINTER_DISCONNECTED', ['POSSIBLE DUPLICATE']],
        ['printing', 2, null, ['POSSIBLE DUPLICATE']],
        ['printed', 2, null, ['POSSIBLE DUPLICATE']],
      ],
    );
  });

  it('prints a job again, marked, when the printer is unplugged mid-job (fault matrix row 10)', async () => {
    const store = openStore('unplug');
    cleanup.push(() => store.close());
    // A slow link keeps the job on the wire long enough to pull the cable in the middle.
    const rig: EmulatedPrinter = await printerRig({ slowLinkBps: 4000, confirmTimeoutMs: 2000 });
    store.enqueueInstruction(instruction(1));
    const s = spooler(store, [{ id: 'receipt', printer: rig.printer, profile: PROFILE }]);
    s.start();
    await waitFor('printing', () => stateOf(store, 'P-00001') === 'printing');
    const start = rig.emulator.decoder.received;
    await waitFor(
      'part of the job on the printer',
      () => rig.emulator.decoder.received > start + 200,
    );
    rig.endpoint.slot.disconnect();
    await waitFor('printed again', () => stateOf(store, 'P-00001') === 'printed', 15_000);
    const receipts = printedReceipts(rig.emulator);
    const unmarked = receipts.filter((r) => !r.possibleDuplicate);
    const marked = receipts.filter((r) => r.possibleDuplicate);
    assert.equal(marked.length, 1, 'one marked copy');
    assert.equal(marked[0]!.orderNo, 'O-00001');
    assert.ok(unmarked.length <= 1, 'at most the cut-short first attempt unmarked');
    const job = store.getByJobId('P-00001')!;
    assert.equal(job.attempts, 2);
    assert.deepEqual(job.markings, { possibleDuplicate: true });
  });

  it('recovers jobs interrupted by a crash: reprinted marked, or held for a person', async () => {
    const rig = await printerRig();
    for (const policy of ['reprint-marked', 'hold'] as const) {
      const store = openStore(`recover-${policy}`);
      cleanup.push(() => store.close());
      const id = store.enqueueInstruction(instruction(1)).job!.id;
      store.enqueueInstruction(instruction(2));
      store.markPrinting(id, { markings: {}, warnings: [] }); // then "the process died"
      const before = printedReceipts(rig.emulator).length;
      const s = spooler(store, [{ id: 'receipt', printer: rig.printer, profile: PROFILE }], {
        interruptedPolicy: policy,
      });
      const recovered = s.start();
      assert.deepEqual(
        recovered.map((j) => j.id),
        [id],
      );
      await waitFor('the next job printed', () => stateOf(store, 'P-00002') === 'printed');
      await s.stop();
      const printed = printedReceipts(rig.emulator).slice(before);
      if (policy === 'reprint-marked') {
        assert.deepEqual(
          printed.map((r) => [r.orderNo, r.possibleDuplicate]),
          [
            ['O-00001', true],
            ['O-00002', false],
          ],
        );
      } else {
        assert.deepEqual(
          printed.map((r) => [r.orderNo, r.possibleDuplicate]),
          [['O-00002', false]],
        );
        const held = store.get(id)!;
        assert.equal(held.state, 'waiting');
        assert.equal(held.lastError?.code, 'NEEDS_ATTENTION');
      }
    }
  });
});
