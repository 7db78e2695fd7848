import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../../harness/waiting.js';
import { orderRecordSchema, verifyParam } from '../../src/protocol/index.js';
import { APP_ID, baseOrder, makeService, post, servicePublicKey, signed } from './harness.js';

/** A brand party's callback endpoint that answers each request with the next scripted status. */
class Endpoint {
  readonly received: { contentType: string | undefined; body: string }[] = [];
  statuses: number[] = [];
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => {
        body += chunk;
      });
      req.on('end', () => {
        this.received.push({ contentType: req.headers['content-type'], body });
        res.statusCode = this.statuses.shift() ?? 200;
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/orders/callback`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server!.close(() => resolve()));
  }
}

const fast = { attempts: 4, firstRetryMs: 10, timeoutMs: 2000, pollMs: 5 };

describe('order-service callbacks (order-api §6)', () => {
  const endpoint = new Endpoint();
  before(() => endpoint.start());
  after(() => endpoint.close());

  it('POSTs each created order, signed, retrying until the endpoint accepts', async () => {
    const svc = makeService({ callbackUrl: endpoint.url, callbacks: fast });
    try {
      endpoint.received.length = 0;
      endpoint.statuses = [500, 503];
      const res = await post(svc.app, 'create', signed(baseOrder));
      const { orderNo } = res.body.data;
      await waitFor(
        'callback delivered',
        async () => (await svc.store.callbacksFor(orderNo))[0]?.state === 'delivered',
      );
      const [entry] = await svc.store.callbacksFor(orderNo);
      assert.equal(entry!.attempts, 3);
      assert.equal(endpoint.received.length, 3, 'two failures, then the accepted attempt');
      const last = endpoint.received.at(-1)!;
      assert.equal(last.contentType, 'application/json');
      const body = JSON.parse(last.body) as { appId: string; param: string; sign: string };
      assert.equal(body.appId, APP_ID);
      assert.ok(!('storeKey' in body), 'the store key is not sent back');
      assert.ok(verifyParam(body.param, body.sign, servicePublicKey), 'signed by the service');
      const param = JSON.parse(body.param) as { event: string; order: unknown };
      assert.equal(param.event, 'order.created');
      const record = orderRecordSchema.parse(param.order);
      assert.equal(record.orderInnerNo, orderNo);
      assert.equal(record.restaurantNo, 'R100');
    } finally {
      await svc.app.close();
    }
  });

  it('gives up after 4 failed attempts', async () => {
    const svc = makeService({ callbackUrl: endpoint.url, callbacks: fast });
    try {
      endpoint.received.length = 0;
      endpoint.statuses = [500, 500, 500, 500, 500, 500];
      const res = await post(svc.app, 'create', signed(baseOrder));
      const { orderNo } = res.body.data;
      await waitFor(
        'callback given up',
        async () => (await svc.store.callbacksFor(orderNo))[0]?.state === 'given-up',
      );
      assert.equal((await svc.store.callbacksFor(orderNo))[0]!.attempts, 4);
      assert.equal((await svc.store.callbacksFor(orderNo))[0]!.lastError, 'HTTP 500');
      // Nothing is due any more: another round sends nothing.
      await svc.app.callbacks!.deliverDue();
      assert.equal(endpoint.received.length, 4);
    } finally {
      await svc.app.close();
    }
  });

  it('counts an unreachable endpoint as a failed attempt', async () => {
    // A port that was just free: nothing listens there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    const svc = makeService({ callbackUrl: `http://127.0.0.1:${port}/gone`, callbacks: fast });
    try {
      const res = await post(svc.app, 'create', signed(baseOrder));
      const { orderNo } = res.body.data;
      await waitFor(
        'callback given up',
        async () => (await svc.store.callbacksFor(orderNo))[0]?.state === 'given-up',
      );
      assert.match((await svc.store.callbacksFor(orderNo))[0]!.lastError ?? '', /ECONNREFUSED/);
    } finally {
      await svc.app.close();
    }
  });

  it('sends nothing for an app without a callback URL', async () => {
    const svc = makeService({ callbacks: fast });
    try {
      const res = await post(svc.app, 'create', signed(baseOrder));
      assert.equal(res.body.code, 10000);
      assert.deepEqual(await svc.store.callbacksFor(res.body.data.orderNo), []);
    } finally {
      await svc.app.close();
    }
  });
});
