/**
 * Issue 13 item 2: a POS that retries a create after a timeout must not get a second order, and a
 * paid order must not print twice. Against the service as it runs (its composition root, a SQLite
 * file, its MQTT publisher to a real Mosquitto), over real HTTP; what it publishes is collected by
 * a subscriber on the broker, and what it stored is read through its own list API.
 *
 * "Nothing more was published" is observed without sleeping: after the step under test a new,
 * distinct order (a barrier) is created; the service publishes its outbox in order over one
 * connection and the broker keeps that order per topic, so once the barrier's instruction has
 * arrived, anything published before it has arrived too.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { cliEntry } from '../../harness/child-entry.js';
import { Mosquitto, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import Database from '../../src/host/sqlite.js';
import { buildEnvelope } from '../../src/protocol/index.js';
import { ROOT } from '../helpers/cli.js';
import {
  APP_ID,
  clientKey,
  dir,
  newOrder,
  postRaw,
  type RealService,
  STORE_KEY,
  signed,
  signedByService,
  startRealService,
} from '../order-service/harness.js';

const DEADLINE = 20_000;

describe('service: idempotent create (issue 13 item 2)', { skip: skipWithoutMosquitto() }, () => {
  let broker: Mosquitto;
  let service: RealService;
  let barriers = 0;
  // The brand party's callback endpoint (order-api §6): every callback received, by orderNo.
  const callbacks: string[] = [];
  const receiver = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    req.on('end', () => {
      const { param } = JSON.parse(text) as { param: string };
      callbacks.push((JSON.parse(param) as { order: { orderInnerNo: string } }).order.orderInnerNo);
      res.end('ok');
    });
  });

  before(async () => {
    broker = await Mosquitto.start();
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.address() as AddressInfo;
    service = await startRealService({
      brokerUrl: broker.url,
      callbackUrl: `http://127.0.0.1:${port}/callback`,
    });
  });
  after(async () => {
    await service?.close();
    await broker?.stop();
    receiver.close();
  });

  /**
   * A distinct order; resolves once its instruction and its callback arrived (so everything
   * published before it did, and every callback due before it was sent).
   */
  const barrier = async () => {
    barriers++;
    const res = await service.create(newOrder({ productInfo: [b(`Barrier ${barriers}`)] }));
    assert.equal(res.body.code, 10000, res.body.message);
    const orderNo = res.body.data.orderNo as string;
    await waitFor(
      `the barrier ${orderNo} published`,
      () => service.instructionsFor(orderNo).length > 0,
      DEADLINE,
    );
    await waitFor(
      `the barrier ${orderNo} called back`,
      () => callbacks.includes(orderNo),
      DEADLINE,
    );
  };
  const b = (productName: string) => ({ productName, price: 5000, quantity: 1 });

  /** Orders the store has, through the service's own list API (createTime is today, UTC). */
  const storedOrders = async () => {
    const today = new Date().toISOString().slice(0, 10);
    const res = await service.list({
      startTime: `${today} 00:00:00`,
      endTime: `${today} 23:59:59`,
      pageSize: 100,
    });
    assert.equal(res.body.code, 10000, res.body.message);
    return res.body.data.list as { orderInnerNo: string; skuList: { productName: string }[] }[];
  };
  const ordersNamed = async (productName: string) =>
    (await storedOrders()).filter((o) => o.skuList[0]?.productName === productName);

  it('answers a repeat of the same bytes with the original order and publishes once', async () => {
    const param = newOrder({
      orderType: 2,
      productInfo: [b('Same bytes')],
      paymentTransactionId: 'POS-same-bytes',
    });
    const body = JSON.stringify(signed(param));
    const url = `${service.url}/open-api/order/create`;
    const first = await postRaw(url, body);
    assert.equal(first.body.code, 10000, first.body.message);
    const again = await postRaw(url, body);
    assert.equal(again.body.code, 10000, again.body.message);
    assert.deepEqual(again.body.data, first.body.data, 'same orderNo, pickUpNo, takeoutNo');
    assert.match(first.body.data.pickUpNo, /^A\d{3}$/);
    assert.ok(signedByService(again), 'the repeat is answered signed, like any answer');
    await barrier();
    assert.equal(service.instructionsFor(first.body.data.orderNo).length, 1);
    assert.equal((await ordersNamed('Same bytes')).length, 1, 'one order stored');
    // The identity includes the store: the same id at another store of the app is its own order.
    const there = await service.create(param, { storeKey: 'K2' });
    assert.equal(there.body.code, 10000, there.body.message);
    assert.notEqual(there.body.data.orderNo, first.body.data.orderNo);
  });

  it('treats a re-serialized retry as the same create', async () => {
    const param = newOrder({
      orderType: 3,
      deliveryFee: 1500,
      packingFee: 200,
      productInfo: [b('Reserialized'), b('Side dish')],
      paymentTransactionId: 'POS-reserialized',
      paymentWay: '2',
      discountType: '1',
      discountAmount: 500,
    });
    const first = await service.create(param);
    assert.equal(first.body.code, 10000, first.body.message);
    // The POS's second attempt: other key order, whitespace, the numeric strings as numbers,
    // optional fields sent as null, an empty pickUpNum, a field the service does not know, and
    // escapes for plain characters: a different string, signed anew, asking for the same order.
    const reordered = Object.fromEntries(Object.entries(param).reverse());
    const retry = JSON.stringify(
      {
        ...reordered,
        paymentWay: 2,
        discountType: 1,
        userName: null,
        customPrintContext: null,
        pickUpNum: '',
        posTerminal: 'T-2',
      },
      null,
      2,
    ).replace('Reserialized', '\\u0052eserialized');
    assert.notEqual(retry, JSON.stringify(param));
    const again = await service.create(retry);
    assert.equal(again.body.code, 10000, again.body.message);
    assert.deepEqual(again.body.data, first.body.data);
    assert.match(first.body.data.takeoutNo, /^T\d{3}$/);
    await barrier();
    assert.equal(service.instructionsFor(first.body.data.orderNo).length, 1);
    assert.equal((await ordersNamed('Reserialized')).length, 1);
  });

  it('refuses the same paymentTransactionId with different content (40901)', async () => {
    const param = newOrder({ productInfo: [b('Conflict')], paymentTransactionId: 'POS-conflict' });
    const first = await service.create(param);
    assert.equal(first.body.code, 10000, first.body.message);
    const orderNo = first.body.data.orderNo as string;
    const changed = await service.create({
      ...param,
      productInfo: [{ ...b('Conflict'), quantity: 2 }],
      paymentAmount: 10_000,
    });
    assert.equal(changed.body.code, 40901);
    assert.equal(changed.body.data, null);
    assert.equal(
      changed.body.message,
      `paymentTransactionId: already used for order ${orderNo} with different content (paymentAmount, productInfo)`,
    );
    assert.ok(signedByService(changed));
    // The original is untouched, and still what a genuine retry gets.
    const retry = await service.create(param);
    assert.deepEqual(retry.body.data, first.body.data);
    await barrier();
    assert.equal(service.instructionsFor(orderNo).length, 1);
    assert.equal(service.published.filter((p) => p.param.order.paymentAmount === 10_000).length, 0);
    assert.equal((await ordersNamed('Conflict')).length, 1);
  });

  it('makes one order and one instruction from 12 identical requests at once', async () => {
    const param = newOrder({
      orderType: 2,
      productInfo: [b('Concurrent')],
      paymentTransactionId: 'POS-concurrent',
    });
    const sameBytes = JSON.stringify(signed(param));
    const reserialized = JSON.stringify(signed(JSON.stringify(param, null, 1)));
    const url = `${service.url}/open-api/order/create`;
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => postRaw(url, i % 2 ? sameBytes : reserialized)),
    );
    for (const a of answers) assert.equal(a.body.code, 10000, a.body.message);
    const numbers = new Set(answers.map((a) => JSON.stringify(a.body.data)));
    assert.equal(numbers.size, 1, `one answer for all: ${[...numbers].join(' ')}`);
    const orderNo = answers[0]!.body.data.orderNo as string;
    await barrier();
    assert.equal(service.instructionsFor(orderNo).length, 1);
    assert.equal((await ordersNamed('Concurrent')).length, 1);
  });

  it('sends one callback for a create and its repeats', async () => {
    const param = newOrder({ productInfo: [b('One callback')] });
    const first = await service.create(param);
    assert.equal(first.body.code, 10000, first.body.message);
    await service.create(param);
    await service.create(JSON.stringify(param, null, 4));
    await barrier();
    const named = await ordersNamed('One callback');
    assert.equal(named.length, 1);
    assert.deepEqual(
      callbacks.filter((orderNo) => named.some((o) => o.orderInnerNo === orderNo)),
      [first.body.data.orderNo],
    );
    // And none waiting to be sent: the service's own file has one callback row for the order.
    const db = new Database(service.database, { readonly: true, fileMustExist: true });
    try {
      const rows = db
        .prepare(
          "SELECT count(*) AS n FROM callbacks c JOIN orders o ON o.order_no = c.order_no WHERE o.raw_param LIKE '%One callback%'",
        )
        .get() as { n: number };
      assert.equal(rows.n, 1);
    } finally {
      db.close();
    }
  });
});

describe('service: two instances on one database (issue 13 item 2)', () => {
  const children: ChildProcess[] = [];
  after(() => {
    for (const child of children) child.kill('SIGTERM');
  });

  /** `printer-agent order-service` as a child process; resolves with its URL. */
  const startInstance = (config: string) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [...cliEntry(), 'order-service', '--config', config], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.push(child);
      child.once('exit', (code) => reject(new Error(`service exited ${code}`)));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'order service listening' && entry.url) resolve(entry.url);
      });
    });

  it('makes one order from 16 identical creates spread over both at once', async () => {
    const database = join(dir, 'shared-orders.sqlite');
    const config = join(dir, 'two-instances.json');
    writeFileSync(
      config,
      JSON.stringify({
        apps: [
          {
            appId: APP_ID,
            publicKeyFile: 'client.pub',
            stores: [{ storeKey: STORE_KEY, restaurantNo: 'R1', branchIdentifier: 'B1' }],
          },
        ],
        servicePrivateKeyFile: 'service.key',
        database,
        listen: { host: '127.0.0.1', port: 0 },
      }),
    );
    const urls = await Promise.all([startInstance(config), startInstance(config)]);
    const body = JSON.stringify(
      buildEnvelope({
        appId: APP_ID,
        storeKey: STORE_KEY,
        key: clientKey,
        param: newOrder({ paymentTransactionId: 'POS-two-instances' }),
      }),
    );
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) => postRaw(`${urls[i % 2]}/open-api/order/create`, body)),
    );
    for (const a of answers) assert.equal(a.body.code, 10000, a.body.message);
    assert.equal(new Set(answers.map((a) => a.body.data.orderNo)).size, 1);
    const db = new Database(database, { readonly: true, fileMustExist: true });
    try {
      const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
      assert.equal(count('SELECT count(*) AS n FROM orders'), 1);
      assert.equal(count('SELECT count(*) AS n FROM outbox'), 1, 'one instruction waiting');
    } finally {
      db.close();
    }
  });
});
