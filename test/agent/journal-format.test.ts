/**
 * Issue 17 item 3, the pieces: the journal line format (priority from the level, one line per
 * event whatever the message holds, fields a person can read), the JOURNAL_STREAM check against a
 * real file descriptor, secrets scrubbed in journal lines too, and the level of each job outcome.
 */
import assert from 'node:assert/strict';
import { closeSync, fstatSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import type { Job } from '../../src/jobs/job.js';
import { logTransition } from '../../src/jobs/outcome-log.js';
import {
  createLogger,
  isJournalStream,
  journalLine,
  resolveLogFormat,
  syslogPriority,
} from '../../src/logging.js';

function capture(options: { format: 'json' | 'journal'; secrets?: string[] }) {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const log = createLogger({ level: 'debug', destination, ...options });
  return { log, lines };
}

describe('journal lines', () => {
  it('syslog priorities: fatal 2, error 3, warn 4, info 6, debug and trace 7', () => {
    assert.deepEqual([60, 50, 40, 30, 20, 10].map(syslogPriority), [2, 3, 4, 6, 7, 7]);
  });

  it('a pino line becomes <priority>room: message key=value, without time and service', () => {
    const line = journalLine(
      `${JSON.stringify({
        level: 40,
        time: '2026-11-26T10:00:00.000Z',
        service: 'printer-agent',
        room: 'printer',
        printer: 'receipt',
        state: 'paper-out',
        causes: ['paper out'],
        msg: 'printer state',
      })}\n`,
    );
    assert.equal(
      line,
      '<4>printer: printer state printer=receipt state=paper-out causes=["paper out"]\n',
    );
  });

  it('values with spaces, quotes or = are quoted; errors show their code and message', () => {
    const line = journalLine(
      JSON.stringify({
        level: 50,
        msg: 'failed',
        reason: 'no status reply within 3000 ms',
        empty: '',
        eq: 'a=b',
        err: { type: 'AgentError', message: 'disk I/O error', code: 'STORE_FAILED' },
        n: 3,
        none: null,
      }),
    );
    assert.equal(
      line,
      '<3>failed reason="no status reply within 3000 ms" empty="" eq="a=b" err="STORE_FAILED: disk I/O error" n=3 none=null\n',
    );
  });

  it('a newline in a message or a value never starts a second journal entry', () => {
    const line = journalLine(
      JSON.stringify({ level: 30, room: 'mqtt', msg: 'one\ntwo', note: 'a\nb', bare: 'x\ry' }),
    );
    assert.equal(line.split('\n').length, 2, 'one line and its terminator');
    assert.equal(line, '<6>mqtt: one\\ntwo note="a\\nb" bare="x\\ry"\n');
  });

  it('createLogger in journal format writes only journal lines, secrets scrubbed', () => {
    const { log, lines } = capture({ format: 'journal', secrets: ['K1-secret'] });
    log.child({ room: 'jobs' }).info({ orderNo: 'O-1' }, 'printed');
    log.warn({ storeKey: 'K1-secret' }, 'refused for K1-secret');
    log.error({ err: new Error('boom K1-secret') }, 'failed');
    assert.deepEqual(lines, [
      '<6>jobs: printed orderNo=O-1',
      '<4>refused for *** storeKey=***',
      '<3>failed err="boom ***"',
    ]);
  });

  it('createLogger in json format writes pino JSON', () => {
    const { log, lines } = capture({ format: 'json' });
    log.warn({ a: 1 }, 'x');
    const record = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.equal(record.level, 40);
    assert.equal(record.msg, 'x');
  });
});

describe('JOURNAL_STREAM', () => {
  const dir = mkdtempSync(join(tmpdir(), 'journal-stream-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('matches only the device and inode of the descriptor itself', () => {
    const fd = openSync(join(dir, 'out'), 'w');
    const other = openSync(join(dir, 'other'), 'w');
    try {
      const stat = fstatSync(fd);
      const value = `${stat.dev}:${stat.ino}`;
      assert.equal(isJournalStream({ JOURNAL_STREAM: value }, fd), true);
      assert.equal(isJournalStream({ JOURNAL_STREAM: value }, other), false);
      assert.equal(isJournalStream({ JOURNAL_STREAM: `${stat.dev}:${stat.ino + 1}` }, fd), false);
      for (const bad of ['', 'x', `${stat.dev}`, `${stat.dev}:`, `:${stat.ino}`, `${value} `])
        assert.equal(isJournalStream({ JOURNAL_STREAM: bad }, fd), false, bad);
      assert.equal(isJournalStream({}, fd), false);
    } finally {
      closeSync(fd);
      closeSync(other);
    }
  });

  it('auto is json when stdout is not the journal; json and journal are taken as configured', () => {
    assert.equal(resolveLogFormat('auto', { JOURNAL_STREAM: '1:1' }), 'json');
    assert.equal(resolveLogFormat('journal', {}), 'journal');
    assert.equal(resolveLogFormat('json', {}), 'json');
  });
});

describe('job outcomes in the log', () => {
  const job = (over: Partial<Job>): Job => ({
    id: 1,
    source: 'mqtt',
    kind: 'receipt',
    jobId: 'P-1',
    orderNo: 'O-1',
    commandId: null,
    printer: 'receipt',
    payloadType: 'instruction',
    payload: {},
    payloadProblem: null,
    state: 'printed',
    attempts: 2,
    nextAttemptAt: null,
    lastError: null,
    warnings: [],
    notices: [],
    markings: {},
    layout: 'receipt',
    items: null,
    held: false,
    sourceJob: null,
    createdAt: 1_000,
    queuedAt: 1_000,
    printingAt: 5_000,
    printedAt: 5_420,
    finishedAt: 5_420,
    updatedAt: 5_420,
    ...over,
  });
  const reason = { code: 'RENDER_FAILED', message: 'cannot render' };

  it('printed at info, waiting at warning, unconfirmed and failed at error, printing at debug', () => {
    const { log, lines } = capture({ format: 'journal' });
    logTransition(log, job({ markings: { reprint: { count: 1, originalTime: 'x' } } }));
    logTransition(log, job({ state: 'waiting', lastError: reason, nextAttemptAt: 14_000 }), 9_000);
    logTransition(log, job({ state: 'waiting', lastError: reason, held: true }));
    logTransition(log, job({ state: 'unconfirmed', lastError: reason, printedAt: null }));
    logTransition(log, job({ state: 'failed', lastError: reason, finishedAt: 5_100 }));
    logTransition(log, job({ state: 'printing', kind: 'test', orderNo: null }));
    assert.deepEqual(lines, [
      '<6>printed orderNo=O-1 jobId=P-1 printer=receipt attempt=2 ms=420 marked=["REPRINT"]',
      '<4>waiting for the printer orderNo=O-1 jobId=P-1 printer=receipt attempt=2 code=RENDER_FAILED reason="cannot render" retryInSec=5',
      '<4>held for a person (printer-agent jobs retry) orderNo=O-1 jobId=P-1 printer=receipt attempt=2 code=RENDER_FAILED reason="cannot render" held=true',
      '<3>sent but not confirmed by the printer: check the paper; it is not sent again by itself orderNo=O-1 jobId=P-1 printer=receipt attempt=2 ms=420 code=RENDER_FAILED reason="cannot render"',
      '<3>failed, not printed orderNo=O-1 jobId=P-1 printer=receipt attempt=2 ms=100 code=RENDER_FAILED reason="cannot render"',
      '<7>printing jobId=P-1 printer=receipt attempt=2 kind=test',
    ]);
  });
});
