/**
 * The MQTT inbox on a real job store, without a broker: what the inbox tests (test/agent/,
 * test/security/) drive with signed bytes. Its log lines are kept; `events()` takes the job events
 * the inbox put in the outbox, as acknowledged.
 */
import { ClockSync } from '../../src/host/clock-sync.js';
import { JobStore } from '../../src/jobs/store.js';
import { createLogger } from '../../src/logging.js';
import { Inbox, type InboxOptions } from '../../src/mqtt/inbox.js';
import { type JobEvent, jobEventSchema, parseKey, topics } from '../../src/protocol/index.js';
import { acknowledged, openStore } from '../jobs/fixtures.js';

export interface InboxIdentity {
  appId: string;
  storeKey: string;
  storeId: string;
  /** The service's public key, PEM. */
  servicePublicPem: string;
}

export interface InboxRig {
  inbox: Inbox;
  store: JobStore;
  log: string[];
  events(): JobEvent[];
}

/** The inbox of `identity` (clock synchronized unless `options` say otherwise). */
export function inboxRig(
  identity: InboxIdentity,
  options: Partial<InboxOptions> = {},
  stateDir?: string,
): InboxRig {
  const store = stateDir ? JobStore.open({ stateDir }) : openStore(`inbox-${identity.storeId}`);
  const log: string[] = [];
  const inbox = new Inbox(
    store,
    {
      appId: identity.appId,
      storeKey: identity.storeKey,
      storeId: identity.storeId,
      serviceKey: parseKey(identity.servicePublicPem, 'public'),
      scheme: 'RSA-SHA256',
      maxBytes: 64 * 1024,
      topics: topics('printer-agent/v1', identity.storeId),
      clock: new ClockSync({ mode: 'synchronized' }),
      ...options,
    },
    { statusRequested: () => {}, storeFault: () => {} },
    createLogger({ level: 'debug', destination: { write: (line: string) => void log.push(line) } }),
  );
  return {
    inbox,
    store,
    log,
    events: () => {
      const entries = store.drainOutbox(1000);
      acknowledged(store, entries);
      return entries.map((e) => jobEventSchema.parse(e.payload));
    },
  };
}
