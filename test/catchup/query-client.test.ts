/**
 * The query API client against the real reference order service over HTTP: the service verifies
 * the store's signature, both shapes of `data` are read, and every failure comes back as a typed
 * error that never contains the storeKey.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { QueryClient, type QueryPage } from '../../src/catchup/query-client.js';
import { AgentError } from '../../src/errors.js';
import {
  APP_ID,
  OTHER_STORE_KEY,
  STORE_KEY,
  servicePublicKey,
  startService,
  storeKey,
  strangerKey,
  type TestService,
} from './harness.js';

const range = { startTime: '2000-01-01 00:00:00', endTime: '2000-01-30 00:00:00' };

/** A range around the service's clock (UTC, the host's now): every order created by the test. */
function aroundNow() {
  const now = Date.now();
  const f = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
  return { startTime: f(now - 3_600_000), endTime: f(now + 3_600_000) };
}

async function rejection(promise: Promise<unknown>): Promise<AgentError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AgentError, `an AgentError, got ${String(error)}`);
    assert.ok(!error.message.includes(STORE_KEY), `storeKey in: ${error.message}`);
    return error;
  }
  throw new Error('expected a rejection');
}

describe('query client against the reference order service', () => {
  let service: TestService;
  let plain: TestService;
  let client: QueryClient;
  const orderNos: string[] = [];

  before(async () => {
    service = await startService({ dataAsString: true });
    plain = await startService({ dataAsString: false });
    client = new QueryClient({
      baseUrl: service.url,
      appId: APP_ID,
      storeKey: STORE_KEY,
      key: storeKey,
      serviceKey: servicePublicKey,
    });
    for (let i = 1; i <= 5; i++) orderNos.push(await service.create(`Dish ${i}`));
    await plain.create('Plain dish');
  });

  after(async () => {
    await service?.close();
    await plain?.close();
  });

  it('sends a signed query the service verifies, and reads data sent as a JSON string', async () => {
    const page = await client.query({ ...aroundNow(), pageNum: 1, pageSize: 100 });
    assert.equal(page.total, 5);
    assert.equal(page.pageNum, 1);
    assert.equal(page.pageSize, 100);
    const records = page.entries.map((e) => (e.ok ? e.record : assert.fail(e.problem)));
    assert.deepEqual(
      records.map((r) => r.orderInnerNo),
      orderNos,
    );
    assert.equal(records[0]!.skuList[0]!.skuName, 'Dish 1');
    // What the service received: the param as we built it, answered with success.
    const seen = service.queries.at(-1)!;
    assert.equal(seen.code, 10000);
    assert.equal(seen.param.pageSize, 100);
    assert.equal(seen.param.pageNum, 1);
  });

  it('reads data sent as a nested object the same way', async () => {
    const nested = new QueryClient({
      baseUrl: `${plain.url}/`,
      appId: APP_ID,
      storeKey: STORE_KEY,
      key: storeKey,
      serviceKey: servicePublicKey,
    });
    assert.equal(nested.url, `${plain.url}/open-api/order/list`);
    const page = await nested.query({ ...aroundNow(), pageNum: 1, pageSize: 10 });
    assert.equal(page.total, 1);
    assert.equal(page.entries[0]?.ok && page.entries[0].record.skuList[0]?.skuName, 'Plain dish');
  });

  it('pages: incremental after an order, every page in creation order', async () => {
    const seen: string[] = [];
    let last: QueryPage | null = null;
    for (let pageNum = 1; pageNum <= 3; pageNum++) {
      last = await client.query({ orderInnerNo: orderNos[0]!, pageNum, pageSize: 2 });
      for (const e of last.entries) if (e.ok) seen.push(e.record.orderInnerNo);
    }
    assert.equal(last?.total, 4);
    assert.deepEqual(seen, orderNos.slice(1));
  });

  it('a signature by another key: QUERY_REJECTED with the service code, not retryable', async () => {
    const forged = new QueryClient({
      baseUrl: service.url,
      appId: APP_ID,
      storeKey: STORE_KEY,
      key: strangerKey,
      serviceKey: servicePublicKey,
    });
    const error = await rejection(forged.query({ ...range, pageNum: 1, pageSize: 10 }));
    assert.equal(error.code, 'QUERY_REJECTED');
    assert.equal(error.retryable, false);
    assert.equal(error.details.responseCode, 40101);
    assert.equal(service.queries.at(-1)?.code, 40101);
  });

  it('an unknown store: QUERY_REJECTED, and the storeKey appears nowhere', async () => {
    const secret = 'sk-unregistered-store-secret';
    const stranger = new QueryClient({
      baseUrl: service.url,
      appId: APP_ID,
      storeKey: secret,
      key: storeKey,
      serviceKey: servicePublicKey,
    });
    const error = await rejection(stranger.query({ ...range, pageNum: 1, pageSize: 10 }));
    assert.equal(error.code, 'QUERY_REJECTED');
    assert.equal(error.details.responseCode, 40102);
    assert.ok(!error.message.includes(secret));
    assert.ok(!JSON.stringify(error.details).includes(secret));
  });

  it('an unknown starting order: QUERY_REJECTED 40006', async () => {
    const error = await rejection(
      client.query({ orderInnerNo: 'O19990101000001', pageNum: 1, pageSize: 10 }),
    );
    assert.equal(error.code, 'QUERY_REJECTED');
    assert.equal(error.details.responseCode, 40006);
    assert.match(error.message, /40006: orderInnerNo: no such order/);
  });

  it("another store's orders are not ours", async () => {
    const other = new QueryClient({
      baseUrl: service.url,
      appId: APP_ID,
      storeKey: OTHER_STORE_KEY,
      key: storeKey,
      serviceKey: servicePublicKey,
    });
    const page = await other.query({ ...aroundNow(), pageNum: 1, pageSize: 10 });
    assert.equal(page.total, 0);
    assert.deepEqual(page.entries, []);
  });

  it('a service error (21000): QUERY_REJECTED, retryable', async () => {
    service.tamper = () =>
      JSON.stringify({ code: 21000, message: `Service error near ${STORE_KEY}`, data: null });
    try {
      const error = await rejection(client.query({ ...range, pageNum: 1, pageSize: 10 }));
      assert.equal(error.code, 'QUERY_REJECTED');
      assert.equal(error.retryable, true);
      assert.equal(error.details.responseCode, 21000);
      assert.match(error.message, /Service error near \*\*\*/);
    } finally {
      service.tamper = null;
    }
  });

  it('answers that are not JSON, or not a result: QUERY_FAILED, retryable', async () => {
    const bodies = [
      '<html>bad gateway</html>',
      JSON.stringify({ message: 'no code' }),
      JSON.stringify({ code: 10000, message: 'ok', data: null }),
      JSON.stringify({ code: 10000, message: 'ok', data: true }),
      JSON.stringify({ code: 10000, message: 'ok', data: '{"total":' }),
      JSON.stringify({ code: 10000, message: 'ok', data: { total: 1, pageNum: 1 } }),
    ];
    try {
      for (const body of bodies) {
        service.tamper = () => body;
        const error = await rejection(client.query({ ...range, pageNum: 1, pageSize: 10 }));
        assert.equal(error.code, 'QUERY_FAILED', body);
        assert.equal(error.retryable, true);
      }
    } finally {
      service.tamper = null;
    }
  });

  it('a malformed record is reported on its own; the rest of the page stands', async () => {
    service.tamper = (body) => {
      const answer = JSON.parse(body) as { data: string };
      const data = JSON.parse(answer.data) as { list: Array<Record<string, unknown>> };
      data.list[1]!.realAmount = 'twelve';
      data.list[2] = { orderInnerNo: { nested: true } };
      return JSON.stringify({ ...answer, data: JSON.stringify(data) });
    };
    try {
      const page = await client.query({ ...aroundNow(), pageNum: 1, pageSize: 100 });
      assert.equal(page.entries.length, 5);
      assert.deepEqual(
        page.entries.map((e) => e.ok),
        [true, false, false, true, true],
      );
      const bad = page.entries[1]!;
      assert.ok(!bad.ok);
      assert.equal(bad.orderNo, orderNos[1]);
      assert.match(bad.problem, /data\.list\[1\]\.realAmount/);
      const worse = page.entries[2]!;
      assert.ok(!worse.ok);
      assert.equal(worse.orderNo, null);
    } finally {
      service.tamper = null;
    }
  });

  it('a service that does not answer: QUERY_FAILED after the timeout', async () => {
    const impatient = new QueryClient({
      baseUrl: service.url,
      appId: APP_ID,
      storeKey: STORE_KEY,
      key: storeKey,
      serviceKey: servicePublicKey,
      timeoutMs: 200,
    });
    service.hang = true;
    try {
      const error = await rejection(impatient.query({ ...range, pageNum: 1, pageSize: 10 }));
      assert.equal(error.code, 'QUERY_FAILED');
      assert.equal(error.details.timeout, true);
      assert.match(error.message, /no answer within 200 ms/);
    } finally {
      service.hang = false;
    }
  });

  it('a query in flight is cancelled by its signal (the agent stopping)', async () => {
    service.hang = true;
    try {
      const controller = new AbortController();
      const pending = client.query({ ...range, pageNum: 1, pageSize: 10 }, controller.signal);
      controller.abort();
      const error = await rejection(pending);
      assert.equal(error.code, 'QUERY_FAILED');
      assert.equal(error.details.cancelled, true);
    } finally {
      service.hang = false;
    }
  });

  it('a service that cannot be reached: QUERY_FAILED naming the cause', async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((r) => server.close(() => r()));
    const nowhere = new QueryClient({
      baseUrl: `http://127.0.0.1:${port}`,
      appId: APP_ID,
      storeKey: STORE_KEY,
      key: storeKey,
      serviceKey: servicePublicKey,
    });
    const error = await rejection(nowhere.query({ ...range, pageNum: 1, pageSize: 10 }));
    assert.equal(error.code, 'QUERY_FAILED');
    assert.equal(error.retryable, true);
    assert.match(error.message, /unreachable \(ECONNREFUSED\)/);
  });

  it('refuses to send a query that breaks order-api 2.3 (page size over 100, mixed modes)', async () => {
    const before = service.queries.length;
    const big = await rejection(client.query({ ...range, pageNum: 1, pageSize: 101 }));
    assert.equal(big.code, 'PARAM_INVALID');
    const mixed = await rejection(
      client.query({ ...range, orderInnerNo: 'O1', pageNum: 1, pageSize: 10 } as never),
    );
    assert.equal(mixed.code, 'PARAM_INVALID');
    assert.equal(service.queries.length, before, 'nothing was sent');
  });
});
