/**
 * Issue 40 items 6 and 10 (print-protocol v1.2 §10).
 *
 * Look-alike identifiers: `TX-1`, `TX-1 ` and `TX-1` + U+200B made three orders and three
 * receipts that read the same on paper. An identifier (`paymentTransactionId`, `orderNo`, `jobId`)
 * with white space at an end, or with a control, format or invisible character or white space
 * other than U+0020 inside, is refused with a documented code: by the reference service's create
 * (40003, `paymentTransactionId: rule`), by the agent's inbox (a `rejected` event PARAM_INVALID
 * naming the field, nothing stored) and by catch-up (a record whose orderInnerNo is one: the same).
 * Anything else still compares exactly: case is kept.
 *
 * `appId` holds no `:` (the store id is sha256(appId:storeKey)): refused by the service's config
 * and its create, by `printer-agent config check`, by the agent's config load and by its inbox.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { waitFor } from '../../harness/waiting.js';
import { CatchUpPoller, type RoundSummary } from '../../src/catchup/poller.js';
import { QueryClient } from '../../src/catchup/query-client.js';
import { loadServiceConfig } from '../../src/cli/order-service.js';
import { loadConfig } from '../../src/config/load.js';
import { AgentError } from '../../src/errors.js';
import { JobStore } from '../../src/jobs/store.js';
import { createLogger } from '../../src/logging.js';
import { parseServiceConfig } from '../../src/order-service/index.js';
import {
  buildEnvelope,
  formatTimestamp,
  generateKeyPair,
  type JobEvent,
  parseKey,
  topics,
} from '../../src/protocol/index.js';
import {
  APP_ID as CATCH_UP_APP_ID,
  STORE_KEY as CATCH_UP_STORE_KEY,
  CATCH_UP_TIMING,
  storeKey as catchUpStoreKey,
  servicePublicKey,
  startService,
} from '../catchup/harness.js';
import { VirtualClock } from '../catchup/virtual-clock.js';
import { fileConfig, workspace } from '../config/fixtures.js';
import { runCliInProcess } from '../helpers/cli.js';
import { inboxRig } from '../helpers/inbox-rig.js';
import { baseOrder, makeService, post, signed } from '../order-service/harness.js';

/**
 * What §10 refuses, each made of a 4-character identifier (`TX-1`): they all read as it on paper.
 * `rule` is the end of the refusal's message.
 */
const LOOK_ALIKES: ReadonlyArray<[label: string, make: (id: string) => string, rule: RegExp]> = [
  ['a trailing space', (id) => `${id} `, /^must not start or end with white space$/],
  ['a leading space', (id) => ` ${id}`, /^must not start or end with white space$/],
  ['a zero width space', (id) => `${id}\u200b`, /\(U\+200B at character 5\)$/],
  ['a no-break space', (id) => `${id}\u00a0`, /\(U\+00A0 at character 5\)$/],
  ['a tab inside', (id) => `${id.slice(0, 2)}\t${id.slice(2)}`, /\(U\+0009 at character 3\)$/],
  ['a byte order mark', (id) => `\ufeff${id}`, /\(U\+FEFF at character 1\)$/],
  ['a line separator', (id) => `${id}\u2028`, /\(U\+2028 at character 5\)$/],
  ['a Hangul filler', (id) => `${id}\u3164`, /\(U\+3164 at character 5\)$/],
];
const RULE = 'must not contain control, format or invisible characters, nor white space other';

// ---------------------------------------------------------------------------------------------
// The reference order service

describe('service: look-alike paymentTransactionIds are refused (v1.2 §10)', () => {
  it('one order for TX-1; each look-alike is 40003 naming the field, stored and published never', async () => {
    const { app, publisher } = makeService();
    try {
      const first = await post(
        app,
        'create',
        signed({ ...baseOrder, paymentTransactionId: 'TX-1' }),
      );
      assert.equal(first.body.code, 10000, first.body.message);
      for (const [label, make, rule] of LOOK_ALIKES) {
        const res = await post(
          app,
          'create',
          signed({ ...baseOrder, paymentTransactionId: make('TX-1') }),
        );
        assert.equal(res.status, 200, label);
        assert.equal(res.body.code, 40003, `${label}: ${res.body.message}`);
        assert.equal(res.body.data, null);
        const [field, message] = res.body.message.split(/: (.*)/s);
        assert.equal(field, 'paymentTransactionId', label);
        assert.match(message ?? '', rule, label);
        if (!rule.source.startsWith('^must not start')) assert.ok(message?.startsWith(RULE));
      }
      assert.equal(publisher.calls.length, 1, 'only TX-1 was published');
      // Everything else still compares exactly: another case is another order, and a space
      // inside is a character like any other.
      for (const other of ['tx-1', 'TX 1']) {
        const res = await post(
          app,
          'create',
          signed({ ...baseOrder, paymentTransactionId: other }),
        );
        assert.equal(res.body.code, 10000, `${other}: ${res.body.message}`);
      }
      const again = await post(
        app,
        'create',
        signed({ ...baseOrder, paymentTransactionId: 'TX-1' }),
      );
      assert.equal(again.body.data.orderNo, first.body.data.orderNo, 'TX-1 again is TX-1');
      assert.equal(publisher.calls.length, 3);
      const listed = await post(
        app,
        'list',
        signed({ startTime: '2000-01-01 00:00:00', endTime: '2000-01-30 00:00:00' }),
      );
      assert.equal(listed.body.code, 10000);
    } finally {
      await app.close();
    }
  });
});

describe('service: orders stored before v1.2 with a look-alike id', () => {
  it('still list as records, and their id stays theirs', async () => {
    const { app, store } = makeService({ now: () => new Date('2026-03-01T12:00:00Z') });
    try {
      // As an older service stored it: the create's param exactly as signed, `TX-1 ` included.
      const rawParam = JSON.stringify({ ...baseOrder, paymentTransactionId: 'TX-1 ' });
      const { order } = await store.createOrder(
        {
          appId: 'A1',
          storeKey: 'K1',
          now: () => '2026-03-01 12:00:00',
          orderType: 1,
          pickUpNum: null,
          paymentTransactionId: 'TX-1 ',
          rawParam,
        },
        (stored) => ({ jobId: `print:${stored.orderNo}`, storeId: 'legacy', body: '{}' }),
      );
      const listed = await post(
        app,
        'list',
        signed({ startTime: '2026-03-01 00:00:00', endTime: '2026-03-02 00:00:00' }),
      );
      assert.equal(listed.body.code, 10000, listed.body.message);
      assert.deepEqual(
        listed.body.data.list.map((r: { orderInnerNo: string }) => r.orderInnerNo),
        [order.orderNo],
      );
      // A new create with it is refused, not answered with that order.
      const again = await post(
        app,
        'create',
        signed({ ...baseOrder, paymentTransactionId: 'TX-1 ' }),
      );
      assert.equal(again.body.code, 40003);
    } finally {
      await app.close();
    }
  });
});

describe("service: an appId holds no ':' (v1.2 §10)", () => {
  const app = (appId: string) => ({
    apps: [
      {
        appId,
        publicKeyFile: 'client.pub',
        stores: [{ storeKey: 'K1', restaurantNo: 'R1', branchIdentifier: 'B1' }],
      },
    ],
    servicePrivateKeyFile: 'service.key',
  });

  it('its config refuses one, from the file the service reads, naming the app', () => {
    const dir = mkdtempSync(join(tmpdir(), 'look-alike-service-'));
    const file = join(dir, 'order-service.json');
    // `a:b` + `c` and `a` + `b:c` would derive one store id, and so share one topic.
    writeFileSync(file, JSON.stringify(app('shop:1')));
    assert.throws(
      () => loadServiceConfig(file),
      (error: unknown) => {
        assert.ok(error instanceof AgentError);
        assert.equal(error.code, 'CONFIG_INVALID');
        assert.match(
          error.message,
          /apps\[0\]\.appId: must not contain ':' \(the store id is sha256\(appId:storeKey\)\)/,
        );
        return true;
      },
    );
    assert.doesNotThrow(() => parseServiceConfig(app('shop-1')));
  });

  it('a create or a query with one is 40001 naming appId, before any key is looked up', async () => {
    const { app: service } = makeService();
    try {
      for (const path of ['create', 'list'] as const) {
        const res = await post(service, path, signed(baseOrder, { appId: 'A1:K1' }));
        assert.equal(res.body.code, 40001, res.body.message);
        assert.match(res.body.message, /^appId: must not contain ':'/);
      }
    } finally {
      await service.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// The agent's inbox

const pair = generateKeyPair();
const serviceKey = parseKey(pair.privatePem, 'private');
const APP_ID = 'A-look-alike';
const STORE_KEY = 'sk-look-alike-secret-5821';
const STORE_ID = 'lookalikestore01';
const T = topics('printer-agent/v1', STORE_ID);

const inbox = () =>
  inboxRig({
    appId: APP_ID,
    storeKey: STORE_KEY,
    storeId: STORE_ID,
    servicePublicPem: pair.publicPem,
  });

function instruction(ids: { jobId: string; orderNo: string; paymentTransactionId: string }) {
  return {
    storeId: STORE_ID,
    jobId: ids.jobId,
    orderNo: ids.orderNo,
    createTime: formatTimestamp(new Date()),
    order: {
      productInfo: [{ productName: 'Noodles', price: 1000, quantity: 1 }],
      orderType: 1,
      paymentWay: 2,
      paymentTransactionId: ids.paymentTransactionId,
    },
  };
}

const body = (param: object, appId = APP_ID) =>
  Buffer.from(
    JSON.stringify(buildEnvelope({ appId, storeKey: STORE_KEY, param, key: serviceKey })),
  );

describe('agent inbox: look-alike identifiers are rejected, never stored (v1.2 §10)', () => {
  it('jobId, orderNo or paymentTransactionId: a rejected event PARAM_INVALID naming the field', async () => {
    const r = inbox();
    try {
      const genuine = { jobId: 'JB-1', orderNo: 'OR-1', paymentTransactionId: 'TX-1' };
      await r.inbox.handle(T.print, body(instruction(genuine)));
      const [queued] = r.events();
      assert.equal(queued?.state, 'queued');
      let n = 1;
      for (const field of ['jobId', 'orderNo', 'paymentTransactionId'] as const) {
        for (const [label, make, rule] of LOOK_ALIKES) {
          // Every other id new, so that only the look-alike could make it a duplicate or a job.
          n++;
          const ids = { jobId: `P-${n}`, orderNo: `O-${n}`, paymentTransactionId: `M-${n}` };
          const look = make(genuine[field]);
          await r.inbox.handle(T.print, body(instruction({ ...ids, [field]: look })));
          const events = r.events();
          assert.equal(events.length, 1, `${field} with ${label}`);
          const [event] = events;
          assert.equal(event?.state, 'rejected', `${field} with ${label}`);
          assert.equal(event?.reason?.code, 'PARAM_INVALID');
          const path = field === 'paymentTransactionId' ? 'order.paymentTransactionId' : field;
          const message = event?.reason?.message ?? '';
          assert.ok(message.startsWith(`${path}: must not`), `${field} with ${label}: ${message}`);
          assert.match(message.slice(path.length + 2), rule);
        }
      }
      assert.deepEqual(
        r.store.list().map((j) => j.jobId),
        ['JB-1'],
        'one job: the look-alikes made none',
      );
    } finally {
      r.store.close();
    }
  });

  it("a command's orderNo or commandId the same way; case still tells ids apart", async () => {
    const r = inbox();
    try {
      await r.inbox.handle(
        T.command,
        body({ storeId: STORE_ID, commandId: 'C-1\u200b', type: 'status' }),
      );
      await r.inbox.handle(
        T.command,
        body({ storeId: STORE_ID, commandId: 'C-2', type: 'reprint', orderNo: 'O-1 ' }),
      );
      const [status, reprint] = r.events();
      assert.equal(status?.reason?.code, 'PARAM_INVALID');
      assert.match(status?.reason?.message ?? '', /^commandId: must not contain .*U\+200B/);
      assert.equal(reprint?.reason?.code, 'PARAM_INVALID');
      assert.match(reprint?.reason?.message ?? '', /^orderNo: must not start or end with white/);
      // Exact comparison otherwise: o-1 is not O-1.
      const upper = { jobId: 'P-9', orderNo: 'O-9', paymentTransactionId: 'TX-9' };
      const lower = { jobId: 'p-9', orderNo: 'o-9', paymentTransactionId: 'tx-9' };
      await r.inbox.handle(T.print, body(instruction(upper)));
      await r.inbox.handle(T.print, body(instruction(lower)));
      assert.deepEqual(
        r.events().map((e) => [e.jobId, e.state]),
        [
          ['P-9', 'queued'],
          ['p-9', 'queued'],
        ],
      );
    } finally {
      r.store.close();
    }
  });

  it("an envelope whose appId holds ':' is rejected ENVELOPE_INVALID naming appId", async () => {
    const r = inbox();
    try {
      const genuine = { jobId: 'P-1', orderNo: 'O-1', paymentTransactionId: 'TX-1' };
      await r.inbox.handle(T.print, body(instruction(genuine), `${APP_ID}:x`));
      const [event] = r.events();
      assert.equal(event?.state, 'rejected');
      assert.equal(event?.reason?.code, 'ENVELOPE_INVALID');
      assert.match(event?.reason?.message ?? '', /^appId: must not contain ':'/);
      assert.equal(r.store.list().length, 0);
    } finally {
      r.store.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Catch-up

describe('catch-up: a record whose orderInnerNo is a look-alike is rejected (v1.2 §10)', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it('the genuine order prints once; its look-alike is reported PARAM_INVALID, stored never', async () => {
    const clock = new VirtualClock();
    const service = await startService({ clock });
    const store = JobStore.open({ stateDir: mkdtempSync(join(tmpdir(), 'look-alike-catchup-')) });
    const client = new QueryClient({
      baseUrl: service.url,
      appId: CATCH_UP_APP_ID,
      storeKey: CATCH_UP_STORE_KEY,
      key: catchUpStoreKey,
      serviceKey: servicePublicKey,
    });
    const poller = new CatchUpPoller(
      client,
      store,
      { ...CATCH_UP_TIMING, clock },
      createLogger({ level: 'silent' }),
    );
    cleanups.push(async () => {
      await poller.stop();
      await service.close();
      store.close();
    });
    const rounds: RoundSummary[] = [];
    poller.on('round', (s) => rounds.push(s));
    const orderNo = await service.create('Noodles');
    // The service lists the order twice, the second time with a zero width space after its
    // number (signed by the service key, as the service itself would).
    service.tamper = (text) => {
      const answer = JSON.parse(text) as { data: { list: Array<Record<string, unknown>> } };
      const copy = structuredClone(answer.data.list[0]!);
      copy.orderInnerNo = `${orderNo}\u200b`;
      answer.data.list.push(copy);
      return JSON.stringify(answer);
    };
    poller.start();
    await waitFor('a round', () => rounds.length >= 1, 20_000);
    const round = rounds[0]!;
    assert.equal(round.error, null);
    assert.equal(round.queued, 1);
    assert.equal(round.rejected, 1);
    const jobs = store.list({ limit: 100 }).filter((j) => j.source === 'catch-up');
    assert.deepEqual(
      jobs.map((j) => j.orderNo),
      [orderNo],
    );
    const rejected = store
      .drainOutbox(100)
      .map((e) => e.payload as JobEvent)
      .filter((e) => e.state === 'rejected');
    assert.equal(rejected.length, 1);
    assert.equal(rejected[0]!.reason?.code, 'PARAM_INVALID');
    assert.match(
      rejected[0]!.reason!.message,
      /data\.list\[1\]\.orderInnerNo: must not contain .*\(U\+200B at character 16\)/,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The agent's config

describe("agent config: an appId holds no ':' (v1.2 §10)", () => {
  it('`printer-agent config check` exits 1 naming appId and the rule', async () => {
    const ws = workspace();
    try {
      ws.writeConfig({ ...fileConfig(), appId: 'A1:store' });
      const r = await runCliInProcess(['config', 'check', '--config', ws.configPath]);
      assert.equal(r.status, 1, r.stdout);
      assert.deepEqual(r.stderr.trimEnd().split('\n'), [
        "appId: must not contain ':' (the store id is sha256(appId:storeKey))",
        `CONFIG_INVALID: ${ws.configPath}: 1 problem`,
      ]);
    } finally {
      ws.cleanup();
    }
  });

  it('the agent does not load such a config', () => {
    const ws = workspace();
    try {
      ws.writeConfig({ ...fileConfig(), appId: 'A1:store' });
      assert.throws(
        () => loadConfig({ configPath: ws.configPath, env: {}, cwd: ws.dir }),
        (error: unknown) => {
          assert.ok(error instanceof AgentError);
          assert.equal(error.code, 'CONFIG_INVALID');
          assert.deepEqual(
            error.issues.map((i) => `${i.path}: ${i.message}`),
            ["appId: must not contain ':' (the store id is sha256(appId:storeKey))"],
          );
          return true;
        },
      );
      // The rule is about ':' only: the same file with another appId loads.
      ws.writeConfig({ ...fileConfig(), appId: 'A1-store' });
      assert.equal(
        loadConfig({ configPath: ws.configPath, env: {}, cwd: ws.dir }).config.appId,
        'A1-store',
      );
    } finally {
      ws.cleanup();
    }
  });
});
