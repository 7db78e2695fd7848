/**
 * Disk full (reliability guarantee 11, fault matrix row 14): with `max_page_count` lowered, an
 * insert fails with STORE_FULL (retryable: the inbox does not ack, the broker keeps the message),
 * nothing half-written remains, and the store works again as soon as space returns.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentError } from '../../src/errors.js';
import { JobStore } from '../../src/jobs/store.js';
import { instruction, tempDir } from './fixtures.js';

function isStoreFull(e: unknown): boolean {
  return e instanceof AgentError && e.code === 'STORE_FULL' && e.retryable;
}

describe('job store when the disk is full', () => {
  it('refuses inserts with a retryable STORE_FULL and recovers when space returns', () => {
    const dir = tempDir('full');
    const store = JobStore.open({ stateDir: dir });
    try {
      const pageSize = store.spaceStats().pageSize;
      store.setSizeLimit((store.spaceStats().pages + 4) * pageSize);
      // A long remark makes each row take real room, so the limit is reached quickly.
      const remark = 'x'.repeat(900);
      let stored = 0;
      let refused: unknown = null;
      for (let n = 1; n <= 500; n++) {
        try {
          const i = instruction(n);
          store.enqueueInstruction(i, { raw: JSON.stringify({ ...i, filler: remark }) });
          stored++;
        } catch (error) {
          refused = error;
          break;
        }
      }
      assert.ok(stored > 0, 'some inserts fit before the limit');
      assert.ok(isStoreFull(refused), `expected STORE_FULL, got ${String(refused)}`);
      const refusedJobId = `P-${String(stored + 1).padStart(5, '0')}`;
      assert.equal(store.getByJobId(refusedJobId), null, 'the refused job is not stored');
      assert.equal(
        store
          .drainOutbox(10_000)
          .filter((e) => (e.payload as { jobId?: string }).jobId === refusedJobId).length,
        0,
        'and no event says it was',
      );
      // Still full: the caller keeps getting the same typed error (and keeps not acking).
      assert.throws(
        () => store.enqueueInstruction(instruction(stored + 1), { raw: 'y'.repeat(5000) }),
        isStoreFull,
      );
      // Reads keep working while full: the status can still report the queue.
      assert.equal(store.list({ limit: 1000 }).length, stored);
      assert.equal(store.queueStats()[0]!.pending, stored);

      store.setSizeLimit(null);
      const again = store.enqueueInstruction(instruction(stored + 1));
      assert.equal(again.status, 'inserted');
      assert.equal(store.list({ limit: 1000 }).length, stored + 1);
      assert.equal(store.integrityCheck(), 'ok');
    } finally {
      store.close();
    }
    const reopened = JobStore.open({ stateDir: dir });
    assert.equal(reopened.integrityCheck(), 'ok');
    reopened.close();
  });

  it('refuses transitions the same way, leaving the job as it was', () => {
    const store = JobStore.open({ stateDir: tempDir('full-transition') });
    try {
      const id = store.enqueueInstruction(instruction(1)).job!.id;
      const pageSize = store.spaceStats().pageSize;
      store.setSizeLimit(store.spaceStats().pages * pageSize);
      // Fill the last free room with outbox rows, big then ever smaller, until nothing fits.
      for (const size of [2000, 500, 100, 10]) {
        for (;;) {
          try {
            store.recordEvent({
              jobId: null,
              orderNo: null,
              state: 'rejected',
              printer: null,
              attempt: 0,
              at: new Date().toISOString(),
              reason: { code: 'PARAM_INVALID', message: 'z'.repeat(size) },
            });
          } catch (error) {
            assert.ok(isStoreFull(error));
            break;
          }
        }
      }
      const before = store.get(id);
      assert.throws(
        () =>
          store.markPrinting(id, {
            markings: {},
            // Larger than a page: it cannot fit in the free room of the job's own page.
            warnings: ['w'.repeat(10_000)],
          }),
        isStoreFull,
      );
      assert.deepEqual(store.get(id), before);
      store.setSizeLimit(null);
      assert.equal(store.markPrinting(id, { markings: {}, warnings: [] }).state, 'printing');
    } finally {
      store.close();
    }
  });
});
