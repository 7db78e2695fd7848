/**
 * The agent's job path in a child process, for the crash tests: opens the store, optionally
 * stores instructions (printing `ack JOB_ID STATUS` after each insert returns, the moment the
 * inbox would send PUBACK), optionally runs the spooler against a printer URL until the queue is
 * empty, then exits 0. The parent kills it with SIGKILL from outside, or through the fault points
 * (`PRINTER_AGENT_FAULT`, src/jobs/fault-points.ts).
 *
 * Usage: node --import tsx test/jobs/crash-child.ts '{"stateDir": "...", ...}'
 */
import { writeSync } from 'node:fs';
import { Spooler } from '../../src/jobs/spooler.js';
import { type InterruptedPolicy, JobStore } from '../../src/jobs/store.js';
import { openPrinter } from '../../src/printer/open-printer.js';
import { instruction, OPTIONS, PROFILE } from './fixtures.js';

export interface ChildConfig {
  stateDir: string;
  /** Store instructions from..to (inclusive), in order. */
  insert?: { from: number; to: number };
  /** Then print everything pending on this printer URL. */
  spool?: { address: string; policy?: InterruptedPolicy };
}

/** Synchronous: the line is in the pipe before the next statement, even if SIGKILL follows. */
function say(line: string): void {
  writeSync(1, `${line}\n`);
}

const config = JSON.parse(process.argv[2] ?? '{}') as ChildConfig;
const store = JobStore.open({ stateDir: config.stateDir });

if (config.insert) {
  for (let n = config.insert.from; n <= config.insert.to; n++) {
    const i = instruction(n);
    const result = store.enqueueInstruction(i);
    say(`ack ${i.jobId} ${result.status}`);
  }
}

if (config.spool) {
  const printer = openPrinter(
    config.spool.address,
    { confirm: 'process-id', realtimeStatus: true },
    { statusTimeoutMs: 300, confirmTimeoutMs: 5000 },
  );
  const spooler = new Spooler({
    store,
    printers: [{ id: 'receipt', printer, profile: PROFILE }],
    receiptOptions: OPTIONS,
    backoff: { initialMs: 50, maxMs: 500 },
    pollIntervalMs: 50,
    interruptedPolicy: config.spool.policy ?? 'reprint-marked',
  });
  const recovered = spooler.start();
  for (const job of recovered) say(`recovered ${job.jobId} ${job.state}`);
  await new Promise<void>((resolve) => {
    const check = setInterval(() => {
      const c = store.countByState();
      if (c.queued + c.printing === 0 && store.list({ state: 'waiting' }).every((j) => j.held)) {
        clearInterval(check);
        resolve();
      }
    }, 20);
  });
  await spooler.stop();
  await printer.close();
  say('done');
}

store.close();
