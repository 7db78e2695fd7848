/** The spooler's pure decisions: backoff, what a print failure means, readiness, lateness. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentError } from '../../src/errors.js';
import {
  backoffDelay,
  canPrint,
  classifyPrintFailure,
  failureReason,
  isLate,
  reasonForState,
} from '../../src/jobs/retry-policy.js';

describe('backoffDelay', () => {
  const options = { initialMs: 1000, maxMs: 30_000 };

  it('doubles per consecutive failure up to the cap', () => {
    const top = (n: number) => backoffDelay(n, options, () => 1);
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7, 50, 10_000].map(top),
      [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000, 30_000],
    );
  });

  it('jitters within the upper half of the step', () => {
    assert.equal(
      backoffDelay(3, options, () => 0),
      2000,
    );
    assert.equal(
      backoffDelay(3, options, () => 0.5),
      3000,
    );
    for (let i = 0; i < 200; i++) {
      const d = backoffDelay(4, options);
      assert.ok(d >= 4000 && d <= 8000, String(d));
    }
  });

  it('treats nonsense failure counts as the first failure', () => {
    assert.equal(
      backoffDelay(0, options, () => 1),
      1000,
    );
    assert.equal(
      backoffDelay(-3, options, () => 1),
      1000,
    );
  });
});

describe('classifyPrintFailure', () => {
  it('waits out a printer that is not ready, with the specific reason and no marking', () => {
    const paper = new AgentError('PRINTER_NOT_READY', 'tcp://p: paper-out', {
      details: { state: 'paper-out', sentBytes: 0 },
    });
    assert.deepEqual(classifyPrintFailure(paper), {
      action: 'wait',
      reason: { code: 'PAPER_OUT', message: 'tcp://p: paper-out' },
      possibleDuplicate: false,
    });
    const cover = new AgentError('PRINTER_NOT_READY', 'c', { details: { state: 'cover-open' } });
    assert.equal(
      (classifyPrintFailure(cover) as { reason: { code: string } }).reason.code,
      'COVER_OPEN',
    );
    const offline = new AgentError('PRINTER_NOT_READY', 'o', { details: { state: 'offline' } });
    assert.equal(
      (classifyPrintFailure(offline) as { reason: { code: string } }).reason.code,
      'PRINTER_OFFLINE',
    );
  });

  it('waits out an unreachable printer without a marking: nothing was sent', () => {
    assert.deepEqual(classifyPrintFailure(new AgentError('PRINTER_UNREACHABLE', 'refused')), {
      action: 'wait',
      reason: { code: 'PRINTER_UNREACHABLE', message: 'refused' },
      possibleDuplicate: false,
    });
  });

  it('marks the next copy POSSIBLE DUPLICATE once bytes went out', () => {
    const midway = new AgentError('PRINTER_DISCONNECTED', 'dropped', {
      details: { sentBytes: 512, totalBytes: 1024 },
    });
    assert.deepEqual(classifyPrintFailure(midway), {
      action: 'wait',
      reason: { code: 'PRINTER_DISCONNECTED', message: 'dropped' },
      possibleDuplicate: true,
    });
    const before = new AgentError('TRANSPORT_TIMEOUT', 't', { details: { sentBytes: 0 } });
    assert.equal(
      (classifyPrintFailure(before) as { possibleDuplicate: boolean }).possibleDuplicate,
      false,
    );
  });

  it('assumes the worst when a link error carries no byte count, or the error is unknown', () => {
    // E.g. the link dropped while the confirmation was being asked for: the job was all sent.
    const noCount = new AgentError('PRINTER_DISCONNECTED', 'dropped');
    assert.equal(
      (classifyPrintFailure(noCount) as { possibleDuplicate: boolean }).possibleDuplicate,
      true,
    );
    assert.deepEqual(classifyPrintFailure(new TypeError('boom')), {
      action: 'wait',
      reason: { code: 'PRINT_FAILED', message: 'boom' },
      possibleDuplicate: true,
    });
  });

  it('fails the job on a permanent error', () => {
    assert.deepEqual(classifyPrintFailure(new AgentError('PRINTER_URL_INVALID', 'bad url')), {
      action: 'fail',
      reason: { code: 'PRINTER_URL_INVALID', message: 'bad url' },
    });
  });
});

describe('readiness, reasons and lateness', () => {
  it('prints when ready, near the paper end, or unknown (mute printers print)', () => {
    assert.deepEqual(
      [
        'ready',
        'paper-near-end',
        'unknown',
        'paper-out',
        'cover-open',
        'offline',
        'disconnected',
      ].map(canPrint),
      [true, true, true, false, false, false, false],
    );
    assert.equal(reasonForState('disconnected', 'm').code, 'PRINTER_UNREACHABLE');
    assert.equal(reasonForState('weird', 'm').code, 'PRINTER_NOT_READY');
  });

  it('names the failure of a job that cannot be rendered', () => {
    assert.deepEqual(failureReason(new AgentError('PROFILE_MISSING', 'no profile')), {
      code: 'PROFILE_MISSING',
      message: 'no profile',
    });
    assert.deepEqual(failureReason(new Error('bug')), { code: 'RENDER_FAILED', message: 'bug' });
  });

  it('is late from the configured age on; null never', () => {
    assert.equal(isLate(1000, 1000 + 59_999, 60_000), false);
    assert.equal(isLate(1000, 1000 + 60_000, 60_000), true);
    assert.equal(isLate(0, Number.MAX_SAFE_INTEGER, null), false);
  });
});
