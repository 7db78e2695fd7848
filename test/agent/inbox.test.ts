/**
 * The inbox's issue 13 rules on a real job store, without a broker (the child-process versions are
 * in test/security/): `storeId` binds the store, a rejection whose signature held names the job,
 * and freshness (print-protocol v1.1 §4): stale while the clock is trusted, skipped and said so
 * while it is not, createTime read in the service's zone, duplicates first.
 */
import assert from 'node:assert/strict';
import { dirname } from 'node:path';
import { describe, it } from 'node:test';
import { ClockSync } from '../../src/host/clock-sync.js';
import { RECEIVE_MAXIMUM } from '../../src/mqtt/connection.js';
import type { InboxOptions } from '../../src/mqtt/inbox.js';
import {
  buildEnvelope,
  formatTimestamp,
  generateKeyPair,
  parseKey,
  signBytes,
  signParam,
  topics,
} from '../../src/protocol/index.js';
import { inboxRig } from '../helpers/inbox-rig.js';
import { walCommitCounter } from '../jobs/fixtures.js';

const pair = generateKeyPair();
const serviceKey = parseKey(pair.privatePem, 'private');
const APP_ID = 'A-inbox';
const STORE_KEY = 'sk-inbox-secret-1234';
const STORE_ID = 'inboxstore000001';
const T = topics('printer-agent/v1', STORE_ID);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const rig = (options: Partial<InboxOptions> = {}, stateDir?: string) =>
  inboxRig(
    { appId: APP_ID, storeKey: STORE_KEY, storeId: STORE_ID, servicePublicPem: pair.publicPem },
    options,
    stateDir,
  );

function instruction(n: number, extra: Record<string, unknown> = {}) {
  return {
    storeId: STORE_ID,
    jobId: `P-${n}`,
    orderNo: `O-${n}`,
    createTime: formatTimestamp(new Date()),
    order: {
      productInfo: [{ productName: `Dish ${n}`, price: 1000, quantity: 1 }],
      orderType: 1,
      paymentWay: 2,
      paymentTransactionId: `M-${n}`,
    },
    ...extra,
  };
}

const body = (param: object) =>
  Buffer.from(
    JSON.stringify(buildEnvelope({ appId: APP_ID, storeKey: STORE_KEY, param, key: serviceKey })),
  );
const ago = (ms: number, timeZone?: string) => formatTimestamp(new Date(Date.now() - ms), timeZone);

describe('inbox: storeId binds the store (print-protocol v1.1 §4)', () => {
  it("another store's genuine instruction or command is rejected naming storeId, with its ids", async () => {
    const r = rig();
    try {
      await r.inbox.handle(T.print, body(instruction(1, { storeId: 'otherstore000002' })));
      await r.inbox.handle(
        T.command,
        body({ storeId: 'otherstore000002', commandId: 'C-1', type: 'reprint', orderNo: 'O-9' }),
      );
      const [print, command] = r.events();
      assert.equal(print?.state, 'rejected');
      assert.equal(print?.reason?.code, 'IDENTITY_MISMATCH');
      assert.match(print?.reason?.message ?? '', /^storeId: /);
      assert.deepEqual([print?.jobId, print?.orderNo], ['P-1', 'O-1']);
      assert.equal(command?.reason?.code, 'IDENTITY_MISMATCH');
      assert.deepEqual(
        [command?.jobId, command?.commandId, command?.orderNo],
        ['command:C-1', 'C-1', 'O-9'],
      );
      assert.equal(r.store.list().length, 0, 'nothing stored');
    } finally {
      r.store.close();
    }
  });

  it('an oversized instruction whose signature holds is TOO_LARGE naming the job; a forged one names nothing', async () => {
    const r = rig();
    try {
      const big = instruction(2, { pad: 'x'.repeat(100 * 1024) });
      await r.inbox.handle(T.print, body(big));
      const forged = JSON.parse(body(big).toString()) as { sign: string };
      forged.sign = Buffer.from('not a signature').toString('base64');
      await r.inbox.handle(T.print, Buffer.from(JSON.stringify(forged)));
      const [signed, unsigned] = r.events();
      assert.deepEqual(
        [signed?.state, signed?.reason?.code, signed?.jobId, signed?.orderNo],
        ['rejected', 'TOO_LARGE', 'P-2', 'O-2'],
      );
      assert.deepEqual(
        [unsigned?.reason?.code, unsigned?.jobId, unsigned?.orderNo],
        ['TOO_LARGE', null, null],
      );
    } finally {
      r.store.close();
    }
  });
});

describe('inbox: freshness (print-protocol v1.1 §4)', () => {
  it('clock synchronized: older than the limit is stored failed STALE_ORDER, logged, not queued', async () => {
    const r = rig();
    try {
      await r.inbox.handle(T.print, body(instruction(1, { createTime: ago(8 * DAY) })));
      const events = r.events();
      assert.deepEqual(
        events.map((e) => [e.state, e.reason?.code, e.markings]),
        [['failed', 'STALE_ORDER', undefined]],
      );
      assert.match(
        events[0]!.reason!.message,
        /8(\.0)? days old, older than 7 days \(freshness\.maxAgeDays\)/,
      );
      assert.equal(r.store.head('receipt'), null, 'nothing to print');
      assert.ok(r.log.some((l) => l.includes('stale instruction stored failed')));
      // A duplicate is a duplicate before the age is looked at.
      await r.inbox.handle(T.print, body(instruction(1, { createTime: ago(8 * DAY) })));
      assert.deepEqual(
        r.events().map((e) => e.state),
        ['duplicate'],
      );
    } finally {
      r.store.close();
    }
  });

  it('clock synchronized: a late instruction younger than the limit is queued to print (LATE stays the store-time rule)', async () => {
    const r = rig();
    try {
      await r.inbox.handle(T.print, body(instruction(1, { createTime: ago(2 * HOUR) })));
      await r.inbox.handle(T.print, body(instruction(2, { createTime: ago(60_000) })));
      await r.inbox.handle(T.print, body(instruction(3, { createTime: ago(-HOUR) })));
      const events = r.events();
      assert.deepEqual(
        events.map((e) => [e.jobId, e.state, e.markings ?? [], e.warnings ?? []]),
        [
          ['P-1', 'queued', [], []],
          ['P-2', 'queued', [], []],
          ['P-3', 'queued', [], []],
        ],
      );
      // createTime's zone is only configured: an hour's zone error must not mark it LATE.
      assert.equal(r.store.getByJobId('P-1')?.markings.late, undefined);
    } finally {
      r.store.close();
    }
  });

  it('clock not known synchronized: the age is not checked, and the queued event says so', async () => {
    for (const clock of [
      new ClockSync({ mode: 'unsynchronized' }),
      new ClockSync({ flagFile: '/nonexistent/flag', command: ['false'] }),
    ]) {
      await clock.refresh();
      const r = rig({ clock });
      try {
        await r.inbox.handle(T.print, body(instruction(1, { createTime: ago(105 * DAY) })));
        const [event] = r.events();
        assert.equal(event?.state, 'queued');
        assert.equal(event?.markings, undefined, 'no LATE from an untrusted clock');
        assert.deepEqual(
          event?.warnings?.map((w) => w.code),
          ['CLOCK_UNSYNCHRONIZED'],
        );
        assert.match(event!.warnings![0]!.message, /not checked/);
        assert.ok(r.log.some((l) => l.includes('instruction ages are not checked')));
      } finally {
        r.store.close();
      }
    }
  });

  it('clock not known synchronized: older than the newest authenticated order by more than the age is STALE_ORDER, durably (v1.2 §10)', async () => {
    const clock = new ClockSync({ mode: 'unsynchronized' });
    await clock.refresh();
    const r = rig({ clock });
    const stateDir = dirname(r.store.path);
    try {
      // The store's first order has no floor to meet: printed, with the clock warning.
      await r.inbox.handle(T.print, body(instruction(1, { createTime: ago(6 * DAY) })));
      await r.inbox.handle(T.print, body(instruction(2, { createTime: ago(0) })));
      // A genuine instruction 200 days old, replayed: the floor is now, it is refused.
      await r.inbox.handle(T.print, body(instruction(3, { createTime: ago(200 * DAY) })));
      // Six days behind the floor is within the age: printed.
      await r.inbox.handle(T.print, body(instruction(4, { createTime: ago(6 * DAY) })));
      const events = r.events();
      assert.deepEqual(
        events.map((e) => [e.jobId, e.state, e.reason?.code ?? null]),
        [
          ['P-1', 'queued', null],
          ['P-2', 'queued', null],
          ['P-3', 'failed', 'STALE_ORDER'],
          ['P-4', 'queued', null],
        ],
      );
      assert.match(
        events[2]!.reason!.message,
        /200 days older than the newest order this agent has authenticated .*freshness\.maxAgeDays.*clock is not synchronized/,
      );
      assert.deepEqual(
        events[2]!.warnings?.map((w) => w.code),
        ['CLOCK_UNSYNCHRONIZED'],
      );
    } finally {
      r.store.close();
    }
    // The floor is in the job database: a restart (a power cut, a reboot without NTP) keeps it.
    const again = rig({ clock }, stateDir);
    try {
      await again.inbox.handle(T.print, body(instruction(5, { createTime: ago(30 * DAY) })));
      assert.deepEqual(
        again.events().map((e) => [e.jobId, e.state, e.reason?.code ?? null]),
        [['P-5', 'failed', 'STALE_ORDER']],
      );
    } finally {
      again.store.close();
    }
  });

  it("createTime is read in the service's zone (catchUp.timeZone, the inbox's timeZone option)", async () => {
    // 25 hours apart: now in Kiritimati (UTC+14) read as Pago Pago time (UTC-11) lies in the
    // future; now in Pago Pago read as Kiritimati time is a day old.
    const r = rig({ timeZone: 'Pacific/Kiritimati', maxAgeMs: 12 * HOUR });
    try {
      await r.inbox.handle(
        T.print,
        body(instruction(1, { createTime: formatTimestamp(new Date(), 'Pacific/Kiritimati') })),
      );
      await r.inbox.handle(
        T.print,
        body(instruction(2, { createTime: formatTimestamp(new Date(), 'Pacific/Pago_Pago') })),
      );
      assert.deepEqual(
        r.events().map((e) => [e.jobId, e.state, e.reason?.code ?? null]),
        [
          ['P-1', 'queued', null],
          ['P-2', 'failed', 'STALE_ORDER'],
        ],
      );
    } finally {
      r.store.close();
    }
  });
});

describe('inbox: the messages of one turn share one commit (decision 211)', () => {
  it('stores a burst, a duplicate and a forgery in one commit, each settled ack, events in order', async () => {
    const r = rig();
    try {
      await r.inbox.handle(T.print, body(instruction(1)));
      r.events();
      const commits = walCommitCounter(r.store);
      const forged = JSON.parse(body(instruction(20)).toString()) as { sign: string };
      forged.sign = Buffer.from('not a signature').toString('base64');
      const messages = [
        body(instruction(2)),
        body(instruction(1)), // stored by the turn before: a duplicate
        Buffer.from(JSON.stringify(forged)),
        ...Array.from({ length: 7 }, (_, i) => body(instruction(3 + i))),
      ];
      // Handed over in one turn, as mqtt.js hands over the messages of one read.
      const settled = await Promise.all(messages.map((m) => r.inbox.handle(T.print, m)));
      assert.deepEqual(settled, Array(messages.length).fill('ack'));
      assert.equal(commits(), 1, 'one commit for the turn');
      assert.deepEqual(
        r.events().map((e) => `${e.jobId} ${e.state}`),
        [
          'P-2 queued',
          'P-1 duplicate',
          'null rejected', // unsigned: it names nothing
          ...Array.from({ length: 7 }, (_, i) => `P-${3 + i} queued`),
        ],
      );
      assert.equal(r.store.list().length, 9, 'P-1 to P-9');
    } finally {
      r.store.close();
    }
  });

  it('a turn holds at most RECEIVE_MAXIMUM messages: a full batch is committed at once', async () => {
    const r = rig();
    try {
      const commits = walCommitCounter(r.store);
      const n = RECEIVE_MAXIMUM + 5;
      const settled = await Promise.all(
        Array.from({ length: n }, (_, i) => r.inbox.handle(T.print, body(instruction(i + 1)))),
      );
      assert.deepEqual(settled, Array(n).fill('ack'));
      assert.equal(commits(), 2, 'twenty in one commit, five in the next');
      assert.equal(r.store.list().length, n);
    } finally {
      r.store.close();
    }
  });

  it('a message whose handling fails is undone alone: the others of its turn are stored and acked', async () => {
    const r = rig();
    try {
      const enqueue = r.store.enqueueOrder.bind(r.store);
      // A bug after the job's own writes: its savepoint must take them back.
      r.store.enqueueOrder = (order, routes, options) => {
        const results = enqueue(order, routes, options);
        if (order.kind === 'instruction' && order.instruction.jobId === 'P-2')
          throw new Error('a bug');
        return results;
      };
      const outcomes = await Promise.allSettled(
        [1, 2, 3].map((n) => r.inbox.handle(T.print, body(instruction(n)))),
      );
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.deepEqual(
        r.store
          .list()
          .map((j) => j.jobId)
          .sort(),
        ['P-1', 'P-3'],
      );
      assert.deepEqual(
        r.events().map((e) => `${e.jobId} ${e.state}`),
        ['P-1 queued', 'P-3 queued'],
      );
      // Logged once committed, and only for what was.
      const queued = r.log.filter((l) => l.includes('instruction queued'));
      assert.equal(queued.length, 2, queued.join('\n'));
    } finally {
      r.store.close();
    }
  });
});

describe('one service key signs four kinds of bytes: none passes for another (decision 237)', () => {
  it('a callback, a catch-up page signed as bytes, a command and an instruction on the wrong topic are rejected, nothing stored', async () => {
    const r = rig();
    try {
      const record = {
        orderInnerNo: 'O20990101000001',
        restaurantNo: 'R100',
        orderSerialNumber: 1,
        realAmount: 1000,
        orderStatus: 2,
        paymentStatus: 2,
        createTime: ago(60_000),
        paymentTime: ago(60_000),
        skuList: [{ skuName: 'Dish', skuPrice: 1000, skuCount: 1 }],
      };
      // A v1 catch-up answer's X-Signature is the same RSA signature over the same bytes as an
      // envelope's `sign` over a param: it transfers, so the param's required fields must refuse.
      const page = JSON.stringify({
        code: 10000,
        message: 'ok',
        data: { total: 1, pageNum: 1, pageSize: 10, list: [record] },
      });
      assert.equal(
        signBytes(Buffer.from(page), serviceKey),
        signParam(page, serviceKey),
        'the signatures transfer',
      );
      const envelopeOf = (param: string) =>
        Buffer.from(
          JSON.stringify({
            appId: APP_ID,
            storeKey: STORE_KEY,
            param,
            sign: signBytes(Buffer.from(param), serviceKey),
          }),
        );
      const callback = JSON.stringify({ event: 'order.created', order: record });
      const command = { storeId: STORE_ID, commandId: 'C-1', type: 'test-print' };
      const sent: Array<[string, Buffer]> = [
        [T.print, envelopeOf(page)],
        [T.command, envelopeOf(page)],
        [T.print, envelopeOf(callback)],
        [T.command, envelopeOf(callback)],
        [T.print, body(command)],
        [T.command, body(instruction(1))],
      ];
      for (const [topic, bytes] of sent) await r.inbox.handle(topic, bytes);
      const events = r.events();
      assert.equal(events.length, sent.length);
      for (const [i, e] of events.entries()) {
        assert.equal(e.state, 'rejected', `message ${i}: ${JSON.stringify(e)}`);
        assert.match(e.reason?.code ?? '', /^(PARAM_INVALID|IDENTITY_MISMATCH)$/, `message ${i}`);
      }
      assert.equal(r.store.list().length, 0, 'nothing stored');
    } finally {
      r.store.close();
    }
  });
});
