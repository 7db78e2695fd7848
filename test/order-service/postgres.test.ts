/**
 * The reference service on PostgreSQL (issue 19 item 1): several instances on one database behave
 * as one service. Each test has a database of its own on the machine's PostgreSQL and two service
 * instances on it (two stores, two pools, two HTTP servers), as two hosts would run them.
 *
 * - Order numbers are unique across instances, and the list order is safe for the agent's cursor:
 *   an agent polling "after orderInnerNo X" while creates race on both instances sees every order
 *   once. One instance reaches the database through a proxy that delays every packet, so its
 *   transactions are slow and interleave with the other's: without the store's lock an order read
 *   its time, got overtaken, and committed with a place before one already listed.
 * - Idempotent create holds when two copies of a request reach two instances at once.
 * - Each outbox instruction and each callback is sent by one instance (claimed, SKIP LOCKED), and
 *   the claim of an instance that dies mid-send (its connection terminated, as when its host goes)
 *   goes to the other.
 * - Migrations run at start, safely when instances start together.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Mosquitto, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { freshDatabase, skipWithoutPostgres, type TestDatabase } from '../../harness/postgres.js';
import { waitFor } from '../../harness/waiting.js';
import { serviceSecrets } from '../../src/cli/order-service.js';
import { isAgentError } from '../../src/errors.js';
import type { OrderStore } from '../../src/order-service/index.js';
import { parseServiceConfig } from '../../src/order-service/index.js';
import {
  POSTGRES_SCHEMA_VERSION,
  PostgresOrderStore,
} from '../../src/order-service/store-postgres.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { baseUrl, makeService, newOrder, post, signed, startRealService } from './harness.js';

type Svc = ReturnType<typeof makeService>;

/** Two instances of the service on one database; `slowA` puts a delaying proxy before A's. */
async function twoInstances(
  db: TestDatabase,
  options: {
    slowA?: boolean;
    callbackUrl?: string;
    publishTimeoutMs?: number;
    callbackTimeoutMs?: number;
  } = {},
) {
  let proxy: TcpProxy | undefined;
  let urlA = db.url;
  if (options.slowA) {
    const u = new URL(db.url);
    proxy = await TcpProxy.start({ targetPort: Number(u.port || 5432), delayMs: 3 });
    u.host = proxy.address;
    urlA = u.toString();
  }
  const stores: OrderStore[] = await Promise.all([
    PostgresOrderStore.open(urlA, { applicationName: `${db.name}-a` }),
    PostgresOrderStore.open(db.url, { applicationName: `${db.name}-b` }),
  ]);
  const callbacks = {
    attempts: 4,
    firstRetryMs: 10,
    timeoutMs: options.callbackTimeoutMs ?? 5000,
    pollMs: 5,
  };
  const make = (store: OrderStore) =>
    makeService({
      store,
      ...(options.callbackUrl ? { callbackUrl: options.callbackUrl, callbacks } : {}),
      ...(options.publishTimeoutMs ? { publishTimeoutMs: options.publishTimeoutMs } : {}),
    });
  const a = make(stores[0]!);
  const b = make(stores[1]!);
  // Listening before the requests race (the harness starts a server at its first request).
  await Promise.all([baseUrl(a.app), baseUrl(b.app)]);
  return {
    a,
    b,
    async close() {
      for (const svc of [a, b]) {
        await svc.app.close();
        await svc.store.close();
      }
      await proxy?.close();
    },
  };
}

async function create(svc: Svc, param: object) {
  const res = await post(svc.app, 'create', signed(param));
  assert.equal(res.body.code, 10000, res.body.message);
  return res.body.data.orderNo as string;
}

/** `test` with a database of its own, dropped afterwards. */
const withDatabase = (test: (db: TestDatabase) => Promise<void>) => async () => {
  const db = await freshDatabase();
  try {
    await test(db);
  } finally {
    await db.drop();
  }
};

describe('order service on PostgreSQL, from its config', {
  skip: skipWithoutPostgres() || skipWithoutMosquitto(),
}, () => {
  it(
    'starts from a postgres:// database setting, publishes, and keeps its orders across a restart',
    withDatabase(async (db) => {
      const broker = await Mosquitto.start();
      // trust authentication ignores the password; the service must still keep it secret.
      const url = new URL(db.url);
      url.password = 'pw-Secret%2F1';
      const config = { database: url.toString() };
      try {
        const first = await startRealService({ brokerUrl: broker.url, config });
        let orderNo: string;
        try {
          const res = await first.create(newOrder());
          assert.equal(res.body.code, 10000, res.body.message);
          orderNo = res.body.data.orderNo;
          await waitFor('published', () => first.instructionsFor(orderNo).length === 1);
          const secrets = serviceSecrets(first.running.config);
          assert.ok(secrets.includes('pw-Secret%2F1') && secrets.includes('pw-Secret/1'));
        } finally {
          await first.close();
        }
        const again = await startRealService({ brokerUrl: broker.url, config });
        try {
          const listed = await again.list({ orderInnerNo: orderNo, pageSize: 10 });
          assert.equal(listed.body.code, 10000, 'the order is still known after the restart');
          assert.equal((await db.query('SELECT count(*)::int AS n FROM orders'))[0]!.n, 1);
        } finally {
          await again.close();
        }
      } finally {
        await broker.stop();
      }
    }),
  );

  it('refuses a PostgreSQL URL without a host or database, naming the field', () => {
    for (const database of ['postgres://', 'postgres://127.0.0.1:5432', 'postgresql://host']) {
      assert.throws(
        () => parseServiceConfig({ apps: [], servicePrivateKeyFile: 'k', database }),
        (error: Error) => /database: must name the (host|database)/.test(error.message),
        database,
      );
    }
  });
});

describe('order service on PostgreSQL', { skip: skipWithoutPostgres() }, () => {
  it(
    'migrates at start, once, when three instances start together; refuses a newer schema',
    withDatabase(async (own) => {
      const stores = await Promise.all(
        [1, 2, 3].map(() => PostgresOrderStore.open(own.url, { poolSize: 2 })),
      );
      await Promise.all(stores.map((s) => s.close()));
      assert.deepEqual(await own.query('SELECT version FROM order_service_schema'), [
        { version: POSTGRES_SCHEMA_VERSION },
      ]);
      // Opening again changes nothing; a schema from a newer service is refused, named.
      await (await PostgresOrderStore.open(own.url)).close();
      await own.query('UPDATE order_service_schema SET version = 99');
      await assert.rejects(PostgresOrderStore.open(own.url), (error: unknown) => {
        assert.ok(isAgentError(error));
        assert.equal(error.code, 'STORE_FAILED');
        assert.match(error.message, /schema version 99, newer than this service's/);
        assert.match(error.message, new RegExp(`postgres://127\\.0\\.0\\.1:5432/${own.name}\\)`));
        return true;
      });
    }),
  );

  it(
    'numbers orders uniquely across instances, and an agent polling after its cursor misses none',
    withDatabase(async (db) => {
      const svc = await twoInstances(db, { slowA: true });
      try {
        let cursor = await create(svc.b, newOrder());
        const created: string[] = [];
        const seen: string[] = [];
        let creating = true;
        // The agent's catch-up: pages after the last order it saw, until the creates are over and a
        // poll finds nothing new.
        const poller = (async () => {
          for (;;) {
            const done = !creating;
            const res = await post(
              svc.b.app,
              'list',
              signed({ orderInnerNo: cursor, pageSize: 100 }),
            );
            assert.equal(res.body.code, 10000, res.body.message);
            const page = res.body.data.list.map((r: { orderInnerNo: string }) => r.orderInnerNo);
            seen.push(...page);
            if (page.length > 0) cursor = page.at(-1);
            else if (done) return;
          }
        })();
        await Promise.all(
          Array.from({ length: 60 }, async (_, i) => {
            created.push(await create(i % 2 === 0 ? svc.a : svc.b, newOrder()));
          }),
        );
        creating = false;
        await poller;
        assert.equal(new Set(created).size, 60, 'order numbers unique across the instances');
        assert.deepEqual(
          [...seen].sort(),
          [...created].sort(),
          'every order seen once by the cursor',
        );
        // The list order is the numbering order: each order committed after the ones before it.
        assert.deepEqual(seen, [...seen].sort());
      } finally {
        await svc.close();
      }
    }),
  );

  it(
    'makes one order when two copies of a create reach two instances at once',
    withDatabase(async (db) => {
      const svc = await twoInstances(db);
      try {
        for (let i = 0; i < 15; i++) {
          const body = signed(newOrder());
          const [x, y] = await Promise.all([
            post(svc.a.app, 'create', body),
            post(svc.b.app, 'create', body),
          ]);
          assert.equal(x.body.code, 10000, x.body.message);
          assert.equal(y.body.code, 10000, y.body.message);
          assert.equal(x.body.data.orderNo, y.body.data.orderNo, `copy ${i}: the same order`);
        }
        const published = [...svc.a.publisher.calls, ...svc.b.publisher.calls];
        assert.equal(new Set(published.map((c) => JSON.parse(c.param).orderNo)).size, 15);
        assert.equal(published.length, 15, 'one instruction per order, published once');
      } finally {
        await svc.close();
      }
    }),
  );

  it(
    'publishes each instruction from one instance; a dying instance leaves its claim to the other',
    withDatabase(async (db) => {
      const svc = await twoInstances(db, { publishTimeoutMs: 60_000 });
      try {
        // Both brokers away: the creates wait in the outbox, then both instances drain at once.
        svc.a.publisher.down = true;
        svc.b.publisher.down = true;
        for (let i = 0; i < 20; i++) await create(i % 2 === 0 ? svc.a : svc.b, newOrder());
        assert.equal(await svc.a.store.outboxSize(), 20);
        svc.a.publisher.down = false;
        svc.b.publisher.down = false;
        await Promise.all([svc.a.app.outbox.drain(), svc.b.app.outbox.drain()]);
        const jobIds = [...svc.a.publisher.calls, ...svc.b.publisher.calls].map(
          (c) => JSON.parse(c.param).jobId,
        );
        assert.equal(jobIds.length, 20, 'published once each');
        assert.equal(new Set(jobIds).size, 20);
        assert.equal(await svc.b.store.outboxSize(), 0);

        // A claims the next instructions and hangs in the publish (its broker link stalled).
        svc.b.publisher.down = true;
        for (let i = 0; i < 5; i++) await create(svc.b, newOrder());
        svc.b.publisher.down = false;
        const before = svc.b.publisher.calls.length;
        let release: (error: Error) => void = () => {};
        const stalled = new Promise<void>((_, reject) => {
          release = reject;
        });
        let aTried = 0;
        svc.a.publisher.publish = async () => {
          aTried++;
          return stalled;
        };
        const aDrain = svc.a.app.outbox.drain();
        await waitFor('A publishing', () => aTried > 0);
        // Held: B finds nothing to claim while A's transaction holds them.
        await svc.b.app.outbox.drain();
        assert.equal(svc.b.publisher.calls.length, before, 'B sends nothing A holds');
        // A's host goes: the server closes its connections and rolls its claim back.
        const killed = await db.query(
          'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1',
          [`${db.name}-a`],
        );
        assert.ok(killed.length > 0);
        await waitFor(
          'B published what A held',
          async () =>
            (await svc.b.app.outbox.drain()) === 0 && svc.b.publisher.calls.length === before + 5,
        );
        release(new Error('link gone'));
        assert.equal(await aDrain, -1, 'A learns its database connection is gone');
      } finally {
        await svc.close();
      }
    }),
  );

  it(
    'delivers each callback from one instance only',
    withDatabase(async (db) => {
      const received: string[] = [];
      const endpoint: Server = createServer((req, res) => {
        let body = '';
        req.on('data', (c) => {
          body += c;
        });
        req.on('end', () => {
          received.push(JSON.parse(JSON.parse(body).param).order.orderInnerNo);
          res.end('{}');
        });
      });
      await new Promise<void>((r) => endpoint.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/cb`;
      const svc = await twoInstances(db, { callbackUrl: url });
      try {
        const orders: string[] = [];
        for (let i = 0; i < 20; i++)
          orders.push(await create(i % 2 === 0 ? svc.a : svc.b, newOrder()));
        await waitFor('every callback delivered', async () => {
          const states = await Promise.all(orders.map((o) => svc.a.store.callbacksFor(o)));
          return states.every((s) => s[0]?.state === 'delivered');
        });
        assert.deepEqual([...received].sort(), [...orders].sort(), 'each delivered exactly once');
      } finally {
        await svc.close();
        await new Promise((r) => endpoint.close(r));
      }
    }),
  );

  it(
    'a dying instance leaves the callback it was sending to the other, which delivers it',
    withDatabase(async (db) => {
      // The brand endpoint: requests wait unanswered while `hold` is set (a stalled send).
      const arrived: { orderInnerNo: string; answered: boolean }[] = [];
      const held: (() => void)[] = [];
      let hold = true;
      const endpoint: Server = createServer((req, res) => {
        let body = '';
        req.on('data', (c) => {
          body += c;
        });
        req.on('end', () => {
          const call = {
            orderInnerNo: JSON.parse(JSON.parse(body).param).order.orderInnerNo as string,
            answered: false,
          };
          arrived.push(call);
          const answer = () => {
            call.answered = true;
            res.end('{}');
          };
          if (hold) held.push(answer);
          else answer();
        });
      });
      await new Promise<void>((r) => endpoint.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/cb`;
      const svc = await twoInstances(db, { callbackUrl: url, callbackTimeoutMs: 60_000 });
      try {
        // B sends only when the test asks it to (its timer stopped): A is the one that claims.
        await svc.b.app.callbacks!.close();
        const orderNo = await create(svc.a, newOrder());
        await waitFor('A sending the callback', () => arrived.length === 1);
        assert.equal(arrived[0]!.orderInnerNo, orderNo);
        hold = false; // from now on the endpoint answers at once; A's send stays stalled

        // Held: B finds nothing to claim while A's transaction holds it.
        await svc.b.app.callbacks!.deliverDue();
        assert.equal(arrived.length, 1, 'B sends nothing A holds');
        assert.equal((await svc.b.store.callbacksFor(orderNo))[0]?.state, 'pending');

        // A's host goes: the server closes its connections and rolls its claim back.
        const killed = await db.query(
          'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1',
          [`${db.name}-a`],
        );
        assert.ok(killed.length > 0);
        await waitFor('B delivered what A held', async () => {
          await svc.b.app.callbacks!.deliverDue();
          return (await svc.b.store.callbacksFor(orderNo))[0]?.state === 'delivered';
        });
        assert.deepEqual(
          arrived.map((c) => [c.orderInnerNo, c.answered]),
          [
            [orderNo, false],
            [orderNo, true],
          ],
          "A's stalled send, then B's delivery",
        );

        // A's stalled send ends: its outcome cannot be written (its connection is gone), and the
        // callback stays delivered once, by B.
        for (const answer of held) answer();
        await svc.a.app.callbacks!.deliverDue();
        const [entry] = await svc.b.store.callbacksFor(orderNo);
        assert.equal(entry?.state, 'delivered');
        assert.equal(entry?.attempts, 1);
      } finally {
        for (const answer of held) answer();
        await svc.close();
        await new Promise((r) => endpoint.close(r));
      }
    }),
  );
});
