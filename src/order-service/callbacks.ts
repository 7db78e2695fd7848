/**
 * Order callbacks (order-api §6): the service pushes each created order to the brand party's
 * callback URL; after 4 failed attempts it gives up, and the brand party is expected to use the
 * query operation. The spec does not show destination, payload, signature or schedule; ours
 * (docs/decisions.md): POST `{appId, param, sign}` with `param` = `{"event":"order.created",
 * "order": <order record 2.5>}` signed with the service private key like a print instruction,
 * any 2xx counts as delivered, retries after `firstRetryMs` doubling each time.
 *
 * Callbacks are rows of the service's database, written in the create's transaction, so a
 * restart neither loses nor repeats a delivered one.
 */
import { errorMessage } from '../errors.js';
import type { Logger } from '../logging.js';
import {
  buildEnvelope,
  DEFAULT_SIGNATURE_SCHEME,
  type RsaKey,
  type SignatureScheme,
} from '../protocol/index.js';
import type { RegisteredStore } from './config.js';
import { toOrderRecord } from './order-record.js';
import type { CallbackEntry, OrderStore, StoredOrder } from './store.js';

export interface CallbackOptions {
  attempts: number;
  firstRetryMs: number;
  timeoutMs: number;
  /** How often due callbacks are looked for; default min(firstRetryMs, 1000). */
  pollMs?: number;
  now?: () => number;
}

/** The signed body of an order's callback. */
export function callbackBody(
  order: StoredOrder,
  store: RegisteredStore,
  serviceKey: RsaKey,
  scheme: SignatureScheme = DEFAULT_SIGNATURE_SCHEME,
): string {
  const param = { event: 'order.created', order: toOrderRecord(order, store) };
  // storeKey is a secret the brand party already has; the record names the store (restaurantNo).
  const {
    appId,
    param: text,
    sign,
  } = buildEnvelope({
    appId: order.appId,
    storeKey: order.storeKey,
    param,
    key: serviceKey,
    scheme,
  });
  return JSON.stringify({ appId, param: text, sign });
}

export class CallbackSender {
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(
    private readonly store: OrderStore,
    private readonly options: CallbackOptions,
    private readonly log?: Logger,
  ) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    const every = this.options.pollMs ?? Math.min(this.options.firstRetryMs, 1000);
    this.timer = setInterval(() => void this.deliverDue(), every);
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** Sends every callback that is due; resolves when this round is over. Never rejects. */
  deliverDue(): Promise<void> {
    this.running ??= this.round().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async round(): Promise<void> {
    try {
      // Claimed (store.ts): another instance never sends the same callback at the same time.
      while (
        (await this.store.claimDueCallbacks(this.now(), 20, async (due) => {
          // In parallel: one slow brand endpoint must not hold back the others' callbacks.
          const outcomes = await Promise.all(due.map((entry) => this.attempt(entry)));
          return new Map(due.map((entry, i) => [entry.id, outcomes[i]!]));
        })) > 0
      );
    } catch (error) {
      this.log?.error({ err: errorMessage(error) }, 'callbacks not sent: database failure');
    }
  }

  private async attempt(
    entry: CallbackEntry,
  ): Promise<{ error: string | null; nextAt: number | null }> {
    let error: string | null = null;
    try {
      const res = await fetch(entry.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: entry.body,
        signal: AbortSignal.timeout(this.options.timeoutMs),
        redirect: 'error',
      });
      await res.body?.cancel();
      if (res.status < 200 || res.status > 299) error = `HTTP ${res.status}`;
    } catch (e) {
      // fetch hides the reason (ECONNREFUSED, bad port...) in `cause`.
      const c = (e as { cause?: { code?: string; message?: string } }).cause;
      const cause = c?.code ?? c?.message;
      error =
        e instanceof Error ? `${e.name}${cause ? ` (${cause})` : ''}: ${e.message}` : 'failed';
    }
    const attempt = entry.attempts + 1;
    const last = attempt >= this.options.attempts;
    const nextAt =
      error === null || last ? null : this.now() + this.options.firstRetryMs * 2 ** (attempt - 1);
    if (error === null) this.log?.info({ orderNo: entry.orderNo, attempt }, 'callback delivered');
    else if (last)
      this.log?.warn({ orderNo: entry.orderNo, attempt, err: error }, 'callback given up');
    else this.log?.info({ orderNo: entry.orderNo, attempt, err: error }, 'callback failed');
    return { error, nextAt };
  }
}
