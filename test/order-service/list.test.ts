import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { orderRecordSchema, queryResultSchema } from '../../src/protocol/index.js';
import {
  baseOrder,
  makeService,
  newOrder,
  OTHER_STORE_KEY,
  post,
  signed,
  steppingClock,
  strangerKey,
} from './harness.js';

type Svc = ReturnType<typeof makeService>;

async function createMany(svc: Svc, n: number, patch: object = {}): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await post(svc.app, 'create', signed(newOrder(patch)));
    assert.equal(res.body.code, 10000, res.body.message);
    out.push(res.body.data.orderNo);
  }
  return out;
}

async function list(svc: Svc, param: object, storeKey?: string) {
  return post(svc.app, 'list', signed(param, storeKey ? { storeKey } : {}));
}

describe('order-service list', () => {
  it('pages through 250 orders with no order missing or repeated', async () => {
    // Three orders per second: many share a createTime, so the tie-break is exercised.
    let tick = 0;
    const base = Date.parse('2026-11-20T08:00:00Z');
    const svc = makeService({ now: () => new Date(base + Math.floor(tick++ / 3) * 1000) });
    try {
      const created = await createMany(svc, 250);
      for (const pageSize of [100, 15, 7]) {
        const seen: string[] = [];
        for (let pageNum = 1; ; pageNum++) {
          const res = await list(svc, {
            startTime: '2026-11-20 00:00:00',
            endTime: '2026-11-20 23:59:59',
            pageNum,
            pageSize,
          });
          assert.equal(res.body.code, 10000, res.body.message);
          const data = queryResultSchema.parse(res.body.data);
          assert.equal(data.total, 250);
          assert.equal(data.pageNum, pageNum);
          assert.equal(data.pageSize, pageSize);
          if (data.list.length === 0) break;
          seen.push(...data.list.map((r) => r.orderInnerNo));
        }
        assert.deepEqual(seen, created, `pageSize ${pageSize}: every order once, oldest first`);
      }
      // Incremental by order number over the same data, page by page.
      const after = await list(svc, { orderInnerNo: created[99], pageSize: 100, pageNum: 2 });
      assert.equal(after.body.data.total, 150);
      assert.deepEqual(
        after.body.data.list.map((r: { orderInnerNo: string }) => r.orderInnerNo),
        created.slice(200),
      );
    } finally {
      await svc.app.close();
    }
  });

  it('supports the three modes and returns valid order records', async () => {
    const clock = steppingClock('2026-11-25 09:00:00', 60_000);
    const svc = makeService({ now: clock });
    try {
      const [first, second, third] = await createMany(svc, 3, {
        orderType: 3,
        deliveryFee: 500,
        packingFee: 100,
        paymentWay: 1,
        paymentChannel: 'CHANNEL_B_URL',
        transactionCreateTime: '2026-11-25 08:59:00',
        transactionReturnTime: '2026-11-25 08:59:30',
        discountType: '2',
        discountAmount: 1000,
        discountNo: 'PWD-1',
        discounterName: 'Ana',
        discountValidityPeriod: '2027-01-01',
      });
      await createMany(svc, 1); // on the other store: must never show up below
      const other = await post(svc.app, 'create', signed(baseOrder, { storeKey: OTHER_STORE_KEY }));
      assert.equal(other.body.code, 10000);

      const range = await list(svc, {
        startTime: '2026-11-25 09:00:00',
        endTime: '2026-11-25 09:01:00',
      });
      assert.equal(range.body.code, 10000);
      assert.equal(range.body.data.pageNum, 1);
      assert.equal(range.body.data.pageSize, 15);
      assert.deepEqual(
        range.body.data.list.map((r: { orderInnerNo: string }) => r.orderInnerNo),
        [first, second],
      );
      const record = orderRecordSchema.parse(range.body.data.list[0]);
      assert.equal(record.restaurantNo, 'R100');
      assert.equal(record.branchIdentifier, 'B-1');
      assert.equal(record.orderStatus, 2);
      assert.equal(record.paymentStatus, 2);
      assert.equal(record.createTime, '2026-11-25 09:00:00');
      assert.equal(record.paymentTime, '2026-11-25 08:59:30');
      assert.equal(record.totalAmount, 2 * 12_000 + 3_500 + 500 + 100);
      assert.equal(record.realAmount, record.totalAmount! - 1000);
      assert.equal(record.discountType, 1); // create PWD (2) is record pwd (1)
      assert.equal(record.channelCode, 'CHANNEL_B_URL');
      assert.deepEqual(record.skuList[0], {
        categoryNo: 'C0',
        productNo: '1',
        productName: 'Beef noodles',
        variant: 2,
        skuName: 'Beef noodles',
        count: 2,
        price: 12_000,
        optionAmount: 0,
        optionList: [],
      });

      const afterOrder = await list(svc, { orderInnerNo: first });
      assert.deepEqual(
        afterOrder.body.data.list.map((r: { orderInnerNo: string }) => r.orderInnerNo),
        [second, third, afterOrder.body.data.list[2].orderInnerNo],
      );
      assert.equal(afterOrder.body.data.total, 3);

      const receiptNo = range.body.data.list[1].receiptNo;
      const afterReceipt = await list(svc, { receiptNo, pageSize: 1 });
      assert.equal(afterReceipt.body.data.total, 2);
      assert.deepEqual(
        afterReceipt.body.data.list.map((r: { orderInnerNo: string }) => r.orderInnerNo),
        [third],
      );

      const last = await list(svc, { orderInnerNo: afterOrder.body.data.list[2].orderInnerNo });
      assert.equal(last.body.code, 10000);
      assert.deepEqual(last.body.data.list, []);
      assert.equal(last.body.data.total, 0);

      // Another store's order is not a starting point here.
      const foreign = await list(svc, { orderInnerNo: other.body.data.orderNo });
      assert.equal(foreign.body.code, 40006);
      const unknown = await list(svc, { receiptNo: 'R-none' });
      assert.equal(unknown.body.code, 40006);
      assert.match(unknown.body.message, /^receiptNo: /);
      const otherStore = await list(svc, { orderInnerNo: first }, OTHER_STORE_KEY);
      assert.equal(otherStore.body.code, 40006);
    } finally {
      await svc.app.close();
    }
  });

  it('enforces the 30-day rule, one mode per request and the page limits', async () => {
    const svc = makeService();
    try {
      const exactly30 = await list(svc, {
        startTime: '2026-10-01 00:00:00',
        endTime: '2026-10-31 00:00:00',
      });
      assert.equal(exactly30.body.code, 10000);
      const over = await list(svc, {
        startTime: '2026-10-01 00:00:00',
        endTime: '2026-10-31 00:00:01',
      });
      assert.equal(over.body.code, 40005);
      assert.match(over.body.message, /endTime: must be at most 30 days after startTime/);
      assert.equal(over.body.data, null);

      const mixed = await list(svc, {
        startTime: '2026-10-01 00:00:00',
        endTime: '2026-10-02 00:00:00',
        orderInnerNo: 'O1',
      });
      assert.equal(mixed.body.code, 40004);
      const mixed2 = await list(svc, { orderInnerNo: 'O1', receiptNo: 'R1' });
      assert.equal(mixed2.body.code, 40004);

      const cases: [object, string][] = [
        [{}, 'startTime: is required'],
        [{ startTime: '2026-10-01 00:00:00' }, 'endTime: is required'],
        [{ orderInnerNo: 'O1', pageSize: 101 }, 'pageSize: must be between 1 and 100'],
        [{ orderInnerNo: 'O1', pageNum: 0 }, 'pageNum: must be between 1'],
        [
          { startTime: '2026-10-02 00:00:00', endTime: '2026-10-01 00:00:00' },
          'endTime: must not be before startTime',
        ],
        [
          { startTime: '2026-02-30 00:00:00', endTime: '2026-03-01 00:00:00' },
          'startTime: must be a real date',
        ],
      ];
      for (const [param, expected] of cases) {
        const res = await list(svc, param);
        assert.equal(res.body.code, 40003, JSON.stringify(param));
        assert.ok(res.body.message.includes(expected), res.body.message);
      }
      const forged = await post(
        svc.app,
        'list',
        signed({ orderInnerNo: 'O1' }, { key: strangerKey }),
      );
      assert.equal(forged.body.code, 40101);
      // 4.1 rule 6: the samples' restaurantKey and restaurantNo are accepted.
      const env = signed({
        startTime: '2026-10-01 00:00:00',
        endTime: '2026-10-02 00:00:00',
        restaurantNo: 'R100',
      });
      const { storeKey, ...rest } = env;
      const alias = await post(svc.app, 'list', { ...rest, restaurantKey: storeKey });
      assert.equal(alias.body.code, 10000);
    } finally {
      await svc.app.close();
    }
  });

  it('sends data as a JSON-encoded string when the switch is on', async () => {
    const svc = makeService({ dataAsString: true });
    try {
      const created = await post(svc.app, 'create', signed({ ...baseOrder, orderType: 2 }));
      assert.equal(typeof created.body.data, 'string');
      const data = JSON.parse(created.body.data);
      assert.equal(data.pickUpNo, 'A001');
      const listed = await list(svc, {
        startTime: '2000-01-01 00:00:00',
        endTime: '2000-01-02 00:00:00',
      });
      assert.equal(typeof listed.body.data, 'string');
      assert.deepEqual(JSON.parse(listed.body.data), {
        total: 0,
        pageNum: 1,
        pageSize: 15,
        list: [],
      });
      const failed = await list(svc, {});
      assert.equal(failed.body.data, null, 'failures keep data null');
    } finally {
      await svc.app.close();
    }
  });

  it('serves real HTTP requests on a listening port', async () => {
    const svc = makeService();
    try {
      await svc.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = svc.app.server.address() as AddressInfo;
      const call = (path: string, body: unknown, type = 'application/json') =>
        fetch(`http://127.0.0.1:${port}/open-api/order/${path}`, {
          method: 'POST',
          headers: { 'content-type': type },
          body: JSON.stringify(body),
        });
      const created = await call('create', signed(baseOrder));
      assert.equal(created.status, 200);
      const { data } = (await created.json()) as { data: { orderNo: string } };
      const now = new Date();
      const fmt = (d: Date) => d.toISOString().slice(0, 19).replace('T', ' ');
      const listed = await call(
        'list',
        signed({
          startTime: fmt(new Date(now.getTime() - 3600_000)),
          endTime: fmt(new Date(now.getTime() + 3600_000)),
        }),
      );
      const body = (await listed.json()) as {
        code: number;
        data: { list: { orderInnerNo: string }[] };
      };
      assert.equal(body.code, 10000);
      assert.deepEqual(
        body.data.list.map((r) => r.orderInnerNo),
        [data.orderNo],
      );
      const wrongType = await call('list', signed({ orderInnerNo: 'x' }), 'text/plain');
      assert.equal(wrongType.status, 415);
      assert.equal(((await wrongType.json()) as { code: number }).code, 41500);
    } finally {
      await svc.app.close();
    }
  });
});
