/** The console's wrong-token limit, on a clock the test moves (the end-to-end check is in local-api). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FailedSignIns } from '../../src/console/failed-sign-ins.js';

describe('FailedSignIns', () => {
  it('refuses an address after its 5th wrong token until a minute after the first', () => {
    let now = 1_000_000;
    const limit = new FailedSignIns(5, 60_000, 1024, () => now);
    for (let i = 1; i <= 4; i++) {
      assert.equal(limit.failed('10.0.0.9'), false);
      assert.equal(limit.waitMs('10.0.0.9'), 0, `may try again after ${i} wrong`);
      now += 1000;
    }
    assert.equal(limit.failed('10.0.0.9'), true, 'the 5th used up the tries');
    assert.equal(limit.waitMs('10.0.0.9'), 56_000);
    assert.equal(limit.waitMs('10.0.0.10'), 0, 'other addresses are not affected');
    now += 55_999;
    assert.equal(limit.waitMs('10.0.0.9'), 1);
    now += 1;
    assert.equal(limit.waitMs('10.0.0.9'), 0, 'a new minute, new tries');
    assert.equal(limit.failed('10.0.0.9'), false);
  });

  it('forgets an address on a right token', () => {
    const limit = new FailedSignIns(2, 60_000, 1024, () => 0);
    limit.failed('a');
    limit.succeeded('a');
    assert.equal(limit.failed('a'), false, 'counting starts again');
    assert.equal(limit.failed('a'), true);
    assert.ok(limit.waitMs('a') > 0);
  });

  it('keeps at most maxAddresses, dropping the oldest', () => {
    const limit = new FailedSignIns(1, 60_000, 3, () => 0);
    for (const a of ['a', 'b', 'c', 'd']) limit.failed(a);
    assert.equal(limit.waitMs('a'), 0, 'the oldest was dropped');
    for (const a of ['b', 'c', 'd']) assert.equal(limit.waitMs(a), 60_000, a);
  });
});
