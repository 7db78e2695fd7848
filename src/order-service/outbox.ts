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

/** Instructions claimed at a time (one transaction holds them while they are published). */
const BATCH = 50;

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

  /** Instructions committed but not yet accepted by the broker (by any instance). */
  size(): Promise<number> {
    return this.store.outboxSize();
  }

  /**
   * Publishes everything pending that no other instance holds; resolves with how many are still
   * pending (held by others included; -1 when the database cannot say). Never rejects.
   */
  drain(): Promise<number> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.run()
      .catch((error: unknown) => {
        this.log?.error({ err: errorMessage(error) }, 'outbox not published: database failure');
        return -1;
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private async run(): Promise<number> {
    let stopped = false;
    do {
      this.again = false;
      while (!stopped) {
        const claimed = await this.store.claimOutbox(BATCH, async (entries) => {
          const results = new Map<number, string | null>();
          for (const entry of entries) {
            try {
              await withTimeout(
                this.publisher.publish(entry.storeId, entry.body),
                this.publishTimeoutMs,
              );
              results.set(entry.id, null);
            } catch (error) {
              const message = errorMessage(error);
              results.set(entry.id, message);
              this.log?.warn(
                { jobId: entry.jobId, err: message },
                'print instruction kept in outbox',
              );
              // Stop at the first failure: the broker is likely down, and order must be kept.
              stopped = true;
              break;
            }
          }
          return results;
        });
        if (claimed === 0) break;
      }
    } while (this.again && !stopped);
    return this.store.outboxSize();
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`publish timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
