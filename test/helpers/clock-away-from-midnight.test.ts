// The clock the catch-up MITM tests give their order service: the day in its order numbers must
// not change during the test, and its orders must stay younger than the agent's catch-up age.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { holdBeforeMidnight } from '../../harness/instructions.js';

const MIN = 60_000;
const at = (h: number, m: number, s = 0) => new Date(2026, 11, 31, h, m, s);

describe('holdBeforeMidnight', () => {
  it('is 0 away from midnight, whatever the hour', () => {
    for (const hour of [0, 6, 12, 22, 23]) {
      assert.equal(holdBeforeMidnight(at(hour, 0), 20 * MIN), 0, `${hour}:00`);
    }
    assert.equal(holdBeforeMidnight(at(23, 40), 20 * MIN), 0, '23:40, the margin exactly');
  });

  it('within the margin, sets the clock back to the margin before midnight, no further', () => {
    assert.equal(holdBeforeMidnight(at(23, 50), 20 * MIN), 10 * MIN);
    assert.equal(holdBeforeMidnight(at(23, 59, 59), 20 * MIN), 20 * MIN - 1000);
    // Never more than the margin: an order behind the agent's clock by more than
    // catchUp.maxAgeMinutes (60) would be stale.
    for (let m = 0; m < 60; m++) {
      const hold = holdBeforeMidnight(at(23, m), 20 * MIN);
      assert.ok(hold >= 0 && hold < 20 * MIN, `23:${m}: ${hold}`);
      const reads = new Date(at(23, m).getTime() - hold);
      assert.equal(reads.getDate(), 31, `23:${m} reads the same day`);
      assert.ok(
        reads.getHours() * 60 + reads.getMinutes() <= 23 * 60 + 40,
        `23:${m} reads ${reads}`,
      );
    }
  });
});
