/**
 * Publishes the outbox in order. A create is never failed because the broker is down: the
 * instruction was committed with the order, and this drain runs after every create and on a
 * timer until the publisher accepts it. Publishing twice is harmless (QoS 1 is at-least-once
 * anyway; the agent dedupes by jobId and orderNo), losing one is not.
 */
import { errorMessage } from '../errors.js';
import type { Logger } from '../logging.js';
import type { InstructionPublisher } from './publisher.js';
import type { OrderStore } from './store.js';

export class Outbox {
  private running: Promise<number> | null = null;
  private again = false;

  constructor(
    private readonly store: OrderStore,
    private readonly publisher: InstructionPublisher,
    private readonly log?: Logger,
    /** A publish that neither resolves nor rejects in this time counts as failed for now. */
    private readonly publishTimeoutMs = 5000,
  ) {}

  /** Instructions committed but not yet accepted by the broker. */
  size(): number {
    return this.store.outboxSize();
  }

  /** Publishes everything pending; resolves with how many are still pending. Never rejects. */
  drain(): Promise<number> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async run(): Promise<number> {
    do {
      this.again = false;
      for (const entry of this.store.pendingOutbox()) {
        try {
          await withTimeout(
            this.publisher.publish(entry.storeId, entry.body),
            this.publishTimeoutMs,
          );
          this.store.markPublished(entry.id);
        } catch (error) {
          const message = errorMessage(error);
          this.store.markFailed(entry.id, message);
          this.log?.warn({ jobId: entry.jobId, err: message }, 'print instruction kept in outbox');
          // Stop at the first failure: the broker is likely down, and order must be kept.
          return this.store.outboxSize();
        }
      }
    } while (this.again || this.store.pendingOutbox(1).length > 0);
    return 0;
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`publish timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
