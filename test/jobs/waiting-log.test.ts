/**
 * Issue 42 item 9: a job waiting out a printer fault is logged at warning once when it starts
 * waiting or its reason changes, then reminded at most every 10 minutes, not once per retry (one
 * 2.5-minute paper-out used to leave 13 warnings). The spooler retries against the emulator over
 * TCP with a real store, as fast as a tiny backoff allows; the spooler and the log share a
 * clock the test moves forward to reach the reminder, so no test waits 10 minutes.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { waitFor } from '../../harness/waiting.js';
import type { Job } from '../../src/jobs/job.js';
import { TransitionLog, WAITING_REMINDER_MS } from '../../src/jobs/outcome-log.js';
import { Spooler } from '../../src/jobs/spooler.js';
import { createLogger } from '../../src/logging.js';
import { emulatedPrinter, instruction, OPTIONS, openStore, PROFILE } from './fixtures.js';

const cleanup: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const fn of cleanup.reverse()) await fn();
});

type Line = Record<string, unknown> & { msg: string; level: number };

describe('waiting lines of one outage', () => {
  it('one line per reason, a reminder after 10 minutes of the clock, none per retry', async () => {
    const store = openStore('waiting-log', { memory: true });
    cleanup.push(() => store.close());
    const rig = await emulatedPrinter();
    cleanup.push(() => rig.close());
    // The spooler's clock: the machine's (retries come due as time passes), plus whatever the
    // test adds to jump ahead.
    let ahead = 0;
    const now = () => Date.now() + ahead;
    const lines: Line[] = [];
    const log = createLogger({
      level: 'info',
      format: 'json',
      destination: new Writable({
        write(chunk: Buffer | string, _encoding, done) {
          for (const l of String(chunk).split('\n').filter(Boolean))
            lines.push(JSON.parse(l) as Line);
          done();
        },
      }),
    });
    const spooler = new Spooler({
      store,
      printers: [{ id: 'receipt', printer: rig.printer, profile: PROFILE }],
      receiptOptions: OPTIONS,
      // Retries a few milliseconds apart: dozens of them while the test runs.
      backoff: { initialMs: 1, maxMs: 4 },
      pollIntervalMs: 20,
      lateAfterMs: null,
      now,
    });
    cleanup.push(() => spooler.stop());
    const transitions = new TransitionLog(log, { now });
    const waits: Job[] = [];
    spooler.on('transition', (job) => {
      transitions.record(job);
      if (job.state === 'waiting') waits.push(job);
    });
    const warnings = (msg: string) => lines.filter((l) => l.level === 40 && l.msg === msg);

    rig.emulator.setFault('paper-out', true);
    store.enqueueInstruction(instruction(1));
    spooler.start();
    await waitFor('10 retries out of paper', () => waits.length >= 10);
    assert.ok(waits.every((j) => j.lastError?.code === 'PAPER_OUT'));
    const first = warnings('waiting for the printer');
    assert.equal(first.length, 1, `one waiting line for ${waits.length} retries`);
    assert.equal(first[0]!.code, 'PAPER_OUT');

    // Ten minutes on the spooler's clock: the next retry reminds, once.
    ahead += WAITING_REMINDER_MS;
    let seen = waits.length;
    await waitFor('retries after 10 minutes', () => waits.length >= seen + 5);
    const reminders = warnings('still waiting for the printer');
    assert.equal(reminders.length, 1);
    assert.equal(reminders[0]!.waitingMin, 10);
    assert.equal(reminders[0]!.code, 'PAPER_OUT');

    // Five minutes more: less than the reminder interval since the last line, so nothing.
    ahead += WAITING_REMINDER_MS / 2;
    seen = waits.length;
    await waitFor('retries 5 minutes later', () => waits.length >= seen + 5);
    assert.equal(warnings('still waiting for the printer').length, 1);
    assert.equal(warnings('waiting for the printer').length, 1);

    // Another reason is news: paper loaded, cover left open.
    rig.emulator.setFault('cover-open', true);
    rig.emulator.setFault('paper-out', false);
    await waitFor('the waiting line for the open cover', () =>
      warnings('waiting for the printer').some((l) => l.code === 'COVER_OPEN'),
    );
    seen = waits.length;
    await waitFor('retries with the cover open', () => waits.length >= seen + 5);
    assert.deepEqual(
      warnings('waiting for the printer').map((l) => l.code),
      ['PAPER_OUT', 'COVER_OPEN'],
    );

    rig.emulator.setFault('cover-open', false);
    await waitFor('printed', () => store.getByJobId('P-00001')?.state === 'printed');
    await waitFor('the printed line', () => lines.some((l) => l.msg === 'printed'));
    const warned = lines.filter((l) => l.level >= 40).map((l) => l.msg);
    assert.deepEqual(warned, [
      'waiting for the printer',
      'still waiting for the printer',
      'waiting for the printer',
    ]);
  });
});
