/**
 * The catch-up poller against the real reference order service over HTTP and a real job store,
 * with time on a virtual clock (the service's createTime and the poller's spacing both read it).
 * What is asserted is what the service saw (its query log) and what the job store holds.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { waitFor } from '../../harness/waiting.js';
import { CatchUpPoller, type PollerOptions, type RoundSummary } from '../../src/catchup/poller.js';
import { type QueryApi, QueryClient } from '../../src/catchup/query-client.js';
import { ClockSync } from '../../src/host/clock-sync.js';
import type { Job } from '../../src/jobs/job.js';
import { JobStore } from '../../src/jobs/store.js';
import { createLogger } from '../../src/logging.js';
import { type JobEvent, printInstructionSchema } from '../../src/protocol/print-protocol.js';
import { signBytes } from '../../src/protocol/signing.js';
import { formatWallClock } from '../../src/protocol/time.js';
import {
  APP_ID,
  CATCH_UP_TIMING,
  type ObservedQuery,
  STORE_KEY,
  servicePublicKey,
  serviceSigningKey,
  startService,
  storeKey,
  strangerKey,
  type TestService,
} from './harness.js';
import { VirtualClock } from './virtual-clock.js';

const MINUTE = 60_000;
const OPTIONS: Omit<PollerOptions, 'clock'> = CATCH_UP_TIMING;

interface Rig {
  clock: VirtualClock;
  service: TestService;
  store: JobStore;
  poller: CatchUpPoller;
  rounds: RoundSummary[];
  lines: string[];
  /** Creates `n` orders, the clock moving `stepMs` after each; returns their numbers. */
  create(n: number, prefix: string, stepMs?: number): Promise<string[]>;
  /** Catch-up jobs in the order they were stored. */
  jobs(): Job[];
  events(): JobEvent[];
  round(n: number): Promise<RoundSummary>;
}

const rigs: Rig[] = [];

async function rig(options: Partial<PollerOptions> = {}, stateDir?: string): Promise<Rig> {
  const clock = new VirtualClock();
  const service = await startService({ clock });
  const store = JobStore.open({
    stateDir: stateDir ?? mkdtempSync(join(tmpdir(), 'pa-catchup-poller-')),
  });
  const lines: string[] = [];
  const log = createLogger({
    level: 'debug',
    secrets: [STORE_KEY],
    destination: { write: (line: string) => void lines.push(line) },
  });
  const client = new QueryClient({
    baseUrl: service.url,
    appId: APP_ID,
    storeKey: STORE_KEY,
    key: storeKey,
    serviceKey: servicePublicKey,
  });
  const poller = new CatchUpPoller(client, store, { ...OPTIONS, clock, ...options }, log);
  const rounds: RoundSummary[] = [];
  poller.on('round', (s) => rounds.push(s));
  const r: Rig = {
    clock,
    service,
    store,
    poller,
    rounds,
    lines,
    async create(n, prefix, stepMs = 1000) {
      const out: string[] = [];
      for (let i = 1; i <= n; i++) {
        out.push(await service.create(`${prefix} ${i}`));
        clock.advance(stepMs);
      }
      return out;
    },
    jobs: () =>
      store
        .list({ limit: 10_000 })
        .filter((j) => j.source === 'catch-up')
        .reverse(),
    events: () => store.drainOutbox(10_000).map((e) => e.payload as JobEvent),
    async round(n) {
      await waitFor(`round ${n}`, () => rounds.length >= n, 20_000);
      return rounds[n - 1]!;
    },
  };
  rigs.push(r);
  return r;
}

afterEach(async () => {
  for (const r of rigs.splice(0)) {
    await r.poller.stop();
    await r.service.close();
    r.store.close();
  }
});

/** Gaps between consecutive queries as the service saw them, on the virtual clock. */
const gaps = (queries: ObservedQuery[]) => queries.slice(1).map((q, i) => q.at - queries[i]!.at);

describe('catch-up poller', () => {
  it('first start: a time range over maxAge, every page at 100, oldest first, cursor set', async () => {
    const r = await rig();
    const [ancient] = await r.create(1, 'Ancient');
    r.clock.advance(2 * 60 * MINUTE);
    const orders = await r.create(250, 'Dish');

    r.poller.start();
    const round = await r.round(1);
    assert.equal(round.error, null);
    assert.equal(round.reason, 'first-start');
    assert.equal(round.mode, 'time-range');
    assert.equal(round.queued, 250);
    assert.equal(round.cursor, orders.at(-1));

    const q = r.service.queries;
    assert.deepEqual(
      q.map((x) => [x.param.pageNum, x.param.pageSize, x.code]),
      [
        [1, 100, 10000],
        [2, 100, 10000],
        [3, 100, 10000],
      ],
    );
    const now = r.clock.now();
    assert.equal(q[0]!.param.startTime, formatWallClock(q[0]!.at - 60 * MINUTE));
    assert.ok(String(q[0]!.param.endTime) >= formatWallClock(now));
    assert.ok(
      gaps(q).every((g) => g >= 10_000),
      `gaps ${gaps(q)}`,
    );

    const jobs = r.jobs();
    assert.deepEqual(
      jobs.map((j) => j.orderNo),
      orders,
      'stored in creation order: the queue prints oldest first',
    );
    assert.ok(jobs.every((j) => j.state === 'queued' && j.jobId === `catch-up:${j.orderNo}`));
    assert.ok(!jobs.some((j) => j.orderNo === ancient), 'older than maxAge: not even asked for');
    assert.equal(r.store.getCatchUpCursor(), orders.at(-1));
    assert.equal(r.events().filter((e) => e.state === 'queued').length, 250);
  });

  it('with a cursor: incremental after it, every page, then the trailing window', async () => {
    const r = await rig();
    const [first] = await r.create(1, 'First');
    r.store.setCatchUpCursor(first!);
    r.clock.advance(10 * MINUTE);
    const orders = await r.create(120, 'Dish');

    r.poller.start();
    r.poller.sessionLost();
    const round = await r.round(1);
    assert.equal(round.error, null);
    assert.equal(round.reason, 'session-lost');
    assert.equal(round.mode, 'after-order');
    assert.equal(round.queued, 120);
    assert.equal(round.duplicates, 120, 'the window read them again: quiet duplicates');
    assert.equal(round.queries, 4);

    const q = r.service.queries;
    assert.deepEqual(
      q.map((x) => [x.param.orderInnerNo ?? 'window', x.param.pageNum, x.param.pageSize]),
      [
        [first, 1, 100],
        [first, 2, 100],
        ['window', 1, 100],
        ['window', 2, 100],
      ],
    );
    assert.equal(q[2]!.param.startTime, formatWallClock(q[2]!.at - 5 * MINUTE));
    assert.ok(
      gaps(q).every((g) => g >= 10_000),
      `gaps ${gaps(q)}`,
    );
    assert.deepEqual(
      r.jobs().map((j) => j.orderNo),
      orders,
    );
    assert.equal(r.store.getCatchUpCursor(), orders.at(-1));
    assert.equal(r.events().length, 120, 'one queued event each, nothing for the duplicates');
  });

  it('stale orders are stored failed with STALE_ORDER and reported, never queued', async () => {
    const r = await rig();
    const [first] = await r.create(1, 'First');
    r.store.setCatchUpCursor(first!);
    const [stale] = await r.create(1, 'Cold soup');
    r.clock.advance(61 * MINUTE);
    const [fresh] = await r.create(1, 'Hot soup');

    r.poller.start();
    r.poller.request();
    const round = await r.round(1);
    assert.equal(round.error, null);
    assert.equal(round.stale, 1);
    assert.equal(round.queued, 1);

    const staleJob = r.store.getReceipt(stale!)!;
    assert.equal(staleJob.state, 'failed');
    assert.equal(staleJob.lastError?.code, 'STALE_ORDER');
    assert.match(staleJob.lastError!.message, /older than 60 min/);
    assert.equal(r.store.getReceipt(fresh!)?.state, 'queued');
    assert.equal(r.store.head('receipt')?.orderNo, fresh, 'only the fresh order is to print');
    const events = r.events();
    assert.deepEqual(
      events.filter((e) => e.orderNo === stale).map((e) => [e.state, e.reason?.code]),
      [['failed', 'STALE_ORDER']],
      'one failed event, no queued one',
    );
    assert.equal(r.store.getCatchUpCursor(), fresh);
    // A person can still print it.
    assert.equal(r.store.retry(staleJob.id).state, 'queued');
  });

  it('clock not known synchronized: no order is judged stale; the event says the age was not checked', async () => {
    // print-protocol v1.1 §4: the agent's own clock never drops a receipt. A Pi whose clock runs
    // an hour ahead would otherwise store every order it pulls `failed` STALE_ORDER.
    const untrusted = new ClockSync({ mode: 'unsynchronized' });
    await untrusted.refresh();
    const r = await rig({ clockSync: untrusted });
    const [first] = await r.create(1, 'First');
    r.store.setCatchUpCursor(first!);
    const [old] = await r.create(1, 'Cold soup');
    r.clock.advance(61 * MINUTE);

    r.poller.start();
    r.poller.request();
    const round = await r.round(1);
    assert.equal(round.error, null);
    assert.equal(round.stale, 0);
    assert.equal(r.store.getReceipt(old!)?.state, 'queued', 'printed, not judged by the clock');
    const queued = r.events().find((e) => e.orderNo === old && e.state === 'queued');
    assert.deepEqual(
      queued?.warnings?.map((w) => w.code),
      ['CLOCK_UNSYNCHRONIZED'],
    );
    assert.match(queued!.warnings![0]!.message, /catchUp\.maxAgeMinutes/);
  });

  it('clock not known synchronized: a record older than the time floor by more than the anti-replay age is STALE_ORDER (v1.2 §10)', async () => {
    const untrusted = new ClockSync({ mode: 'unsynchronized' });
    await untrusted.refresh();
    const r = await rig({ clockSync: untrusted, antiReplayAgeMs: 7 * 24 * 60 * MINUTE });
    // The agent already authenticated an order 200 days after the service's clock: a page of
    // records from then is a replay as far as it can tell.
    r.store.enqueueInstruction(
      printInstructionSchema.parse({
        jobId: 'P-floor-1',
        orderNo: 'O-floor-1',
        createTime: formatWallClock(r.clock.now() + 200 * 24 * 60 * MINUTE),
        order: {
          productInfo: [{ productName: 'Later', price: 100, quantity: 1 }],
          orderType: 1,
          paymentWay: 2,
          paymentTransactionId: 'M-floor-1',
        },
      }),
    );
    const [old] = await r.create(1, 'Replayed');
    r.poller.start();
    r.poller.request();
    const round = await r.round(1);
    assert.equal(round.error, null);
    assert.equal(round.stale, 1);
    const job = r.store.getReceipt(old!);
    assert.equal(job?.state, 'failed');
    assert.equal(job?.lastError?.code, 'STALE_ORDER');
    assert.match(job!.lastError!.message, /newest order this agent has authenticated/);
  });

  it('a stale catch-up record gives its order up to the signed instruction that arrives later', async () => {
    const r = await rig();
    const [first] = await r.create(1, 'First');
    r.store.setCatchUpCursor(first!);
    const [stale] = await r.create(1, 'Held by the broker');
    r.clock.advance(61 * MINUTE);
    r.poller.start();
    r.poller.request();
    await r.round(1);
    assert.equal(r.store.getReceipt(stale!)?.lastError?.code, 'STALE_ORDER');

    // The broker delivers the instruction it held: the service's word, judged by its own rule.
    const instruction = printInstructionSchema.parse({
      jobId: 'P-held-1',
      orderNo: stale,
      createTime: formatWallClock(r.clock.now() - 61 * MINUTE),
      order: {
        productInfo: [{ productName: 'Held', price: 100, quantity: 1 }],
        orderType: 1,
        paymentWay: 2,
        paymentTransactionId: 'M-held-1',
      },
    });
    const result = r.store.enqueueInstruction(instruction, { source: 'mqtt' });
    assert.equal(result.status, 'inserted', 'not answered duplicate');
    assert.ok(result.status === 'inserted' && result.replaced?.jobId === `catch-up:${stale}`);
    const job = r.store.getReceipt(stale!)!;
    assert.deepEqual(
      [job.jobId, job.state, job.source, job.lastError],
      ['P-held-1', 'queued', 'mqtt', null],
    );
    assert.equal(r.store.head('receipt')?.orderNo, stale);
    // Once taken over it is an ordinary job: the same instruction again is a duplicate.
    assert.equal(r.store.enqueueInstruction(instruction, { source: 'mqtt' }).status, 'duplicate');
  });

  it('an order already received over MQTT is a quiet duplicate', async () => {
    const r = await rig();
    const [first] = await r.create(1, 'First');
    r.store.setCatchUpCursor(first!);
    r.clock.advance(10 * MINUTE); // out of the window
    const [viaMqtt] = await r.create(1, 'Via MQTT');
    const instruction = printInstructionSchema.parse({
      jobId: 'P-via-mqtt',
      orderNo: viaMqtt,
      createTime: formatWallClock(r.clock.now() + 1000),
      order: {
        productInfo: [{ productName: 'Via MQTT 1', price: 10_000, quantity: 1 }],
        orderType: 1,
        paymentWay: '2',
        paymentTransactionId: 'M-1',
      },
    });
    assert.equal(r.store.enqueueInstruction(instruction).status, 'inserted');
    const before = r.events().length;

    r.poller.start();
    r.poller.request();
    const round = await r.round(1);
    assert.equal(round.error, null);
    assert.equal(round.queued, 0);
    assert.ok(round.duplicates >= 1);
    assert.equal(r.jobs().length, 0, 'no catch-up job');
    assert.equal(r.store.getReceipt(viaMqtt!)?.jobId, 'P-via-mqtt');
    assert.equal(r.events().length, before, 'no event for the duplicate');
    assert.equal(r.store.getCatchUpCursor(), viaMqtt, 'the cursor still moves past it');
  });

  it('40006, a cursor the service does not know: reads the last maxAge by time range instead', async () => {
    const r = await rig();
    r.store.setCatchUpCursor('O19990101000001');
    const orders = await r.create(3, 'Dish');

    r.poller.start();
    r.poller.request();
    const round = await r.round(1);
    assert.equal(round.error, null);
    assert.equal(round.mode, 'time-range');
    assert.equal(round.queued, 3);
    const q = r.service.queries;
    assert.deepEqual(
      q.map((x) => [x.param.orderInnerNo ?? 'range', x.code]),
      [
        ['O19990101000001', 40006],
        ['range', 10000],
      ],
    );
    assert.equal(q[1]!.param.startTime, formatWallClock(q[1]!.at - 60 * MINUTE));
    assert.ok(q[1]!.at - q[0]!.at >= 10_000);
    assert.equal(r.store.getCatchUpCursor(), orders.at(-1));
    assert.ok(r.lines.some((l) => l.includes('does not know the catch-up cursor')));
  });

  it('a failed round is logged and the next one tries again; the storeKey is never logged', async () => {
    const r = await rig();
    const [first] = await r.create(1, 'First');
    r.store.setCatchUpCursor(first!);
    const orders = await r.create(2, 'Dish');
    r.service.tamper = () =>
      JSON.stringify({ code: 21000, message: `down (${STORE_KEY})`, data: null });

    r.poller.start();
    r.poller.request();
    const failed = await r.round(1);
    assert.equal(failed.error?.code, 'QUERY_REJECTED');
    assert.equal(failed.queued, 0);
    assert.equal(r.store.getCatchUpCursor(), first, 'the cursor did not move');
    assert.ok(r.lines.some((l) => l.includes('catch-up round failed')));

    r.service.tamper = null;
    r.clock.advance(OPTIONS.intervalMs);
    const next = await r.round(2);
    assert.equal(next.reason, 'schedule');
    assert.equal(next.error, null);
    assert.deepEqual(
      r.jobs().map((j) => j.orderNo),
      orders,
    );
    assert.ok(
      gaps(r.service.queries).every((g) => g >= 10_000),
      `gaps ${gaps(r.service.queries)}`,
    );
    assert.ok(!r.lines.join('\n').includes(STORE_KEY));
  });

  it('a service that cannot be reached fails the round, not the poller', async () => {
    const r = await rig();
    await r.service.app.close();
    r.poller.start();
    const round = await r.round(1);
    assert.equal(round.error?.code, 'QUERY_FAILED');
    r.clock.advance(OPTIONS.intervalMs);
    const again = await r.round(2);
    assert.equal(again.error?.code, 'QUERY_FAILED', 'tried again on schedule');
  });

  it('a malformed record is rejected once, and the cursor moves past it', async () => {
    const r = await rig();
    const [first] = await r.create(1, 'First');
    r.store.setCatchUpCursor(first!);
    r.clock.advance(10 * MINUTE); // out of the window
    const orders = await r.create(3, 'Dish');
    r.service.tamper = (body) => {
      const answer = JSON.parse(body) as { data: { list: Array<Record<string, unknown>> } };
      for (const record of answer.data.list)
        if (record.orderInnerNo === orders[2]) record.realAmount = 'twelve';
      return JSON.stringify(answer);
    };

    r.poller.start();
    r.poller.request();
    const round = await r.round(1);
    assert.equal(round.error, null);
    assert.equal(round.queued, 2);
    assert.equal(round.rejected, 1, 'reported once although the window read it again');
    assert.equal(r.store.getCatchUpCursor(), orders[2]);
    const rejected = r.events().filter((e) => e.state === 'rejected');
    assert.equal(rejected.length, 1);
    assert.equal(rejected[0]!.orderNo, orders[2]);
    assert.equal(rejected[0]!.reason?.code, 'PARAM_INVALID');
    assert.match(rejected[0]!.reason!.message, /realAmount/);
  });

  it('an unsigned or badly signed answer stores nothing and leaves the cursor (§8)', async () => {
    const r = await rig();
    const [first] = await r.create(1, 'First');
    r.store.setCatchUpCursor(first!);
    const [genuine] = await r.create(1, 'Genuine');
    // What a forger on the path sends: the genuine page with a record of its own making.
    const forge = (body: string) => {
      const answer = JSON.parse(body) as { data: { list: Array<Record<string, unknown>> } };
      const record = structuredClone(answer.data.list[0]!);
      record.orderInnerNo = 'O29991231999999';
      (record.skuList as Array<Record<string, unknown>>)[0]!.skuName = 'FORGED';
      answer.data.list.push(record);
      return JSON.stringify(answer);
    };
    const attempts: Array<[string, (body: string) => string | undefined]> = [
      ['unsigned', () => undefined],
      ['bad-signature', (body) => signBytes(Buffer.from(body), strangerKey)],
      // A genuine signature, but of other bytes (an earlier answer replayed with a new body).
      ['bad-signature', () => signBytes(Buffer.from('{"code":10000}'), serviceSigningKey)],
    ];
    r.poller.start();
    for (const [i, [refused, signature]] of attempts.entries()) {
      r.service.tamper = forge;
      r.service.signature = signature;
      if (i === 0) r.poller.request();
      else r.clock.advance(OPTIONS.intervalMs);
      const round = await r.round(i + 1);
      assert.equal(round.error?.code, 'QUERY_REJECTED', refused);
      assert.equal(round.error?.details.refused, refused);
      assert.equal(round.orders, 0, 'not one record of it was looked at');
      assert.equal(r.store.getCatchUpCursor(), first, 'the cursor did not move');
      assert.deepEqual(r.jobs(), []);
      assert.deepEqual(r.events(), []);
    }
    r.service.tamper = null;
    r.service.signature = null;
    r.clock.advance(OPTIONS.intervalMs);
    const round = await r.round(attempts.length + 1);
    assert.equal(round.error, null);
    assert.deepEqual(
      r.jobs().map((j) => j.orderNo),
      [genuine],
    );
  });

  it('a record for another restaurant or branch is rejected and never moves the cursor', async () => {
    const r = await rig({ restaurantNo: 'R100', branchIdentifier: 'B-1' });
    const [first] = await r.create(1, 'First');
    r.store.setCatchUpCursor(first!);
    r.clock.advance(10 * MINUTE); // out of the window
    const orders = await r.create(4, 'Dish');
    // The service itself (signed) lists two records that are not this store's.
    r.service.tamper = (body) => {
      const answer = JSON.parse(body) as { data: { list: Array<Record<string, unknown>> } };
      for (const record of answer.data.list) {
        if (record.orderInnerNo === orders[1]) record.restaurantNo = 'R999';
        if (record.orderInnerNo === orders[3]) record.branchIdentifier = 'B-9';
      }
      return JSON.stringify(answer);
    };

    r.poller.start();
    r.poller.request();
    const round = await r.round(1);
    assert.equal(round.error, null);
    assert.equal(round.queued, 2);
    assert.equal(round.rejected, 2);
    assert.deepEqual(
      r.jobs().map((j) => j.orderNo),
      [orders[0], orders[2]],
      'only our own records are stored',
    );
    const rejected = r.events().filter((e) => e.state === 'rejected');
    assert.deepEqual(
      rejected.map((e) => [e.orderNo, e.reason?.code]),
      [
        [orders[1], 'IDENTITY_MISMATCH'],
        [orders[3], 'IDENTITY_MISMATCH'],
      ],
    );
    assert.match(rejected[0]!.reason!.message, /restaurantNo "R999" is not this store's R100/);
    assert.match(rejected[1]!.reason!.message, /branchIdentifier "B-9" is not this store's B-1/);
    // The cursor is the last record of ours, not the foreign one after it.
    assert.equal(r.store.getCatchUpCursor(), orders[2]);

    // Read again from there while the service still lists it wrongly: reported once only.
    r.clock.advance(OPTIONS.intervalMs);
    const again = await r.round(2);
    assert.equal(again.rejected, 0);
    assert.equal(r.store.getCatchUpCursor(), orders[2]);
    // Once the service lists it as ours, it prints: nothing was lost by refusing it.
    r.service.tamper = null;
    r.clock.advance(OPTIONS.intervalMs);
    const fixed = await r.round(3);
    assert.equal(fixed.queued, 1);
    assert.deepEqual(
      r.jobs().map((j) => j.orderNo),
      [orders[0], orders[2], orders[3]],
    );
    assert.equal(r.store.getCatchUpCursor(), orders[3]);
  });

  it('takes only authenticated pages, and warns about the lab switch at every round', async () => {
    const clock = new VirtualClock();
    const store = JobStore.open({ stateDir: mkdtempSync(join(tmpdir(), 'pa-catchup-fake-')) });
    const lines: string[] = [];
    const record = (orderInnerNo: string) => ({
      orderInnerNo,
      restaurantNo: 'R100',
      branchIdentifier: 'B-1',
      orderSerialNumber: 1,
      realAmount: 100,
      orderStatus: 2,
      paymentStatus: 2,
      createTime: formatWallClock(clock.now()),
      paymentTime: formatWallClock(clock.now()),
      skuList: [],
    });
    let authenticated: string | undefined;
    // Any QueryApi, not only ours: a page without the mark is refused by the poller itself.
    const api: QueryApi = {
      transportWarning: 'catchUp.allowInsecureHttp is true: lab only',
      async query(request) {
        return {
          total: 1,
          pageNum: request.pageNum,
          pageSize: request.pageSize,
          entries: [{ ok: true, record: record('O20990101000001') as never }],
          authenticated: authenticated as never,
        };
      },
    };
    const poller = new CatchUpPoller(
      api,
      store,
      { ...OPTIONS, clock },
      createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(l) } }),
    );
    const rounds: RoundSummary[] = [];
    poller.on('round', (s) => rounds.push(s));
    try {
      poller.start();
      await waitFor('round 1', () => rounds.length === 1);
      assert.equal(rounds[0]!.error?.code, 'QUERY_REJECTED');
      assert.equal(rounds[0]!.error?.details.refused, 'unauthenticated');
      assert.equal(store.getCatchUpCursor(), null);
      assert.deepEqual(store.list({ limit: 10 }), []);

      authenticated = 'signature';
      clock.advance(OPTIONS.intervalMs);
      await waitFor('round 2', () => rounds.length === 2);
      assert.equal(rounds[1]!.error, null);
      assert.equal(rounds[1]!.queued, 1);
      clock.advance(OPTIONS.intervalMs);
      await waitFor('round 3', () => rounds.length === 3);
      const warnings = lines.filter((l) => l.includes('allowInsecureHttp is true'));
      assert.equal(warnings.length, 4, 'one at start, and one per round');
      assert.ok(warnings.every((l) => JSON.parse(l).level === 40));
    } finally {
      await poller.stop();
      store.close();
    }
  });

  it('a request during a round runs another round after it', async () => {
    const r = await rig();
    await r.create(2, 'Dish');
    r.poller.start(); // no cursor: the first-start round is under way
    r.poller.sessionLost();
    assert.equal((await r.round(1)).reason, 'first-start');
    const second = await r.round(2);
    assert.equal(second.reason, 'session-lost');
    assert.equal(second.mode, 'after-order');
    assert.equal(second.duplicates, 2, 'the window saw them again');
    assert.ok(
      gaps(r.service.queries).every((g) => g >= 10_000),
      `gaps ${gaps(r.service.queries)}`,
    );
  });

  it('keeps the spacing across a restart (the time of the last answer is stored)', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'pa-catchup-restart-'));
    const r = await rig({}, stateDir);
    await r.create(1, 'Dish');
    r.poller.start();
    await r.round(1);
    await r.poller.stop();
    const count = r.service.queries.length;
    const lastAt = r.service.queries.at(-1)!.at;

    // A new poller on the same store (the agent restarted at once), same clock and service.
    const again = new CatchUpPoller(
      new QueryClient({
        baseUrl: r.service.url,
        appId: APP_ID,
        storeKey: STORE_KEY,
        key: storeKey,
        serviceKey: servicePublicKey,
      }),
      r.store,
      { ...OPTIONS, clock: r.clock },
      createLogger({ level: 'silent' }),
    );
    const rounds: RoundSummary[] = [];
    again.on('round', (s) => rounds.push(s));
    again.start();
    again.sessionLost();
    await waitFor('a round after the restart', () => rounds.length === 1, 20_000);
    await again.stop();
    const next = r.service.queries[count];
    assert.ok(next, 'a query after the restart');
    assert.ok(next.at - lastAt >= 10_000, `${next.at - lastAt} ms after the last one`);
  });

  it('stops at once: while a query hangs, and while waiting for the next round', async () => {
    const r = await rig();
    r.service.hang = true;
    r.poller.start();
    await waitFor('the query to arrive', () => r.service.held() === 1);
    await r.poller.stop();
    assert.equal(r.rounds.length, 0, 'a round cut short by the stop is not reported');

    const idle = await rig();
    const [first] = await idle.create(1, 'First');
    idle.store.setCatchUpCursor(first!);
    idle.poller.start();
    await idle.poller.stop();
    assert.equal(idle.service.queries.length, 0);
  });
});
