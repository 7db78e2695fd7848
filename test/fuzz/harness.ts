/**
 * The signed side of the fuzz tests: the service's RSA key pair and a stranger's, made once per
 * file (~0.2 s each; signing takes ~2 ms, so a small pool of params is signed once and the cases
 * mutate around it), the store's identity, and an MQTT inbox on a real job store in a temp dir.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClockSync } from '../../src/host/clock-sync.js';
import { JobStore } from '../../src/jobs/store.js';
import { createLogger } from '../../src/logging.js';
import { Inbox } from '../../src/mqtt/inbox.js';
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  generateKeyPair,
  type JobEvent,
  jobEventSchema,
  parseKey,
  type RsaKey,
  type SignatureScheme,
  signParam,
  topics,
} from '../../src/protocol/index.js';
import { acknowledged } from '../jobs/fixtures.js';

export const APP_ID = 'fuzz-app';
/** The store key: a secret that no message, event or log line may contain. */
export const STORE_KEY = 'sk-FUZZ-3b9e71c04d5a8f26';
export const STORE_ID = 'fuzzstore0000001';
export const TOPICS = topics('printer-agent/v1', STORE_ID);

export interface Keys {
  privateKey: RsaKey;
  publicKey: RsaKey;
  /** Another pair: signatures that verify, but not under the configured key. */
  otherPrivateKey: RsaKey;
}

export function makeKeys(): Keys {
  const pair = generateKeyPair();
  const other = generateKeyPair();
  return {
    privateKey: parseKey(pair.privatePem, 'private'),
    publicKey: parseKey(pair.publicPem, 'public'),
    otherPrivateKey: parseKey(other.privatePem, 'private'),
  };
}

export interface Envelope {
  appId: string;
  storeKey: string;
  param: string;
  sign: string;
}

export function envelope(
  param: string,
  key: RsaKey,
  scheme: SignatureScheme = 'RSA-SHA256',
): Envelope {
  return { appId: APP_ID, storeKey: STORE_KEY, param, sign: signParam(param, key, scheme) };
}

/** Opening as the inbox does (print-protocol v1.1 §4: the param must name this store). */
export const OPEN_OPTIONS = {
  scheme: 'RSA-SHA256' as const,
  identity: { appId: APP_ID, storeKey: STORE_KEY },
  storeId: STORE_ID,
  maxBytes: DEFAULT_MAX_MESSAGE_BYTES,
};

/** A folder for the job database: tmpfs when there is one (fsync is free there), else tmpdir. */
function stateDir(): string {
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  const dir = mkdtempSync(join(base, 'pa-fuzz-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface InboxHarness {
  inbox: Inbox;
  store: JobStore;
  statusRequests: number;
  faults: unknown[];
  /** Log lines that contained the store key (the logger is given no secrets to scrub). */
  leakedLogLines: string[];
  /** The job events written since the last call, validated against print-protocol §6. */
  takeEvents(): JobEvent[];
  close(): void;
}

export function openInbox(keys: Keys): InboxHarness {
  const store = JobStore.open({ stateDir: stateDir(), create: true });
  const harness: InboxHarness = {
    store,
    statusRequests: 0,
    faults: [],
    leakedLogLines: [],
    inbox: undefined as unknown as Inbox,
    takeEvents() {
      const entries = store.drainOutbox(1000);
      acknowledged(store, entries);
      return entries.map((e) => {
        assert.equal(e.kind, 'job');
        const parsed = jobEventSchema.safeParse(e.payload);
        assert.ok(parsed.success, `not a job event: ${JSON.stringify(e.payload)}`);
        return parsed.data;
      });
    },
    close: () => store.close(),
  };
  harness.inbox = new Inbox(
    store,
    {
      appId: APP_ID,
      storeKey: STORE_KEY,
      storeId: STORE_ID,
      // Fuzzed createTimes span centuries: the age rule is off here (every stored instruction is
      // `queued` with CLOCK_UNSYNCHRONIZED); test/security/replay.test.ts covers the rule.
      clock: new ClockSync({ mode: 'unsynchronized' }),
      serviceKey: keys.publicKey,
      scheme: 'RSA-SHA256',
      maxBytes: DEFAULT_MAX_MESSAGE_BYTES,
      topics: TOPICS,
    },
    {
      statusRequested: () => {
        harness.statusRequests++;
      },
      storeFault: (error) => {
        if (error !== null) harness.faults.push(error);
      },
    },
    createLogger({
      level: 'trace',
      destination: {
        write: (line: string) => {
          if (line.includes(STORE_KEY)) harness.leakedLogLines.push(line);
        },
      },
    }),
  );
  return harness;
}
