/**
 * Issue 13 item 5, the service side: one set of limits on both sides. A create whose signed print
 * instruction no agent would accept is refused before anything is stored or published; free text
 * is bounded by the create schema; JSON nested 20,000 deep (body or param) is the client's error,
 * never an HTTP 500, and the service goes on answering. Against the service as it runs, over real
 * HTTP, with what it publishes collected from a real Mosquitto.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Mosquitto, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  FREE_TEXT_MAX_CHARS,
  inboundInstructionSchema,
} from '../../src/protocol/index.js';
import {
  newOrder,
  postRaw,
  type RealService,
  signed,
  signedByService,
  startRealService,
} from '../order-service/harness.js';

const DEADLINE = 20_000;

describe('service: limits agree with the agents (issue 13 item 5)', {
  skip: skipWithoutMosquitto(),
}, () => {
  let broker: Mosquitto;
  let service: RealService;
  let barriers = 0;

  before(async () => {
    broker = await Mosquitto.start();
    service = await startRealService({ brokerUrl: broker.url });
  });
  after(async () => {
    await service?.close();
    await broker?.stop();
  });

  const item = (productName: string) => ({ productName, price: 5000, quantity: 1 });
  /** A distinct order whose instruction arrived: everything published before it did too. */
  const barrier = async () => {
    barriers++;
    const res = await service.create(newOrder({ productInfo: [item(`Barrier ${barriers}`)] }));
    assert.equal(res.body.code, 10000, res.body.message);
    await waitFor(
      'the barrier published',
      () => service.instructionsFor(res.body.data.orderNo).length > 0,
      DEADLINE,
    );
    return res.body.data.orderNo as string;
  };
  const listAll = async () => {
    const today = new Date().toISOString().slice(0, 10);
    const res = await service.list({
      startTime: `${today} 00:00:00`,
      endTime: `${today} 23:59:59`,
      pageSize: 100,
    });
    assert.equal(res.body.code, 10000, res.body.message);
    return res.body.data.list as { orderInnerNo: string }[];
  };

  it('refuses a create whose instruction would exceed the agents’ 64 KiB, storing nothing', async () => {
    const before = (await listAll()).length;
    const first = await barrier();
    // Valid in every field; the bulk is in `paymentTransaction`, the sample's undocumented field
    // that is kept and travels in the instruction's `order`. The body (~70 KiB) is well within
    // the service's body limit: only the instruction is too large for an agent.
    const big = newOrder({
      productInfo: [item('Too big to print')],
      paymentTransaction: { note: 'x'.repeat(DEFAULT_MAX_MESSAGE_BYTES) },
    });
    const res = await service.create(big);
    assert.equal(res.status, 200);
    assert.equal(res.body.code, 41301, res.body.message);
    assert.equal(res.body.data, null);
    assert.match(
      res.body.message,
      new RegExp(
        `^param: its print instruction would be \\d+ bytes; agents accept at most ${DEFAULT_MAX_MESSAGE_BYTES}`,
      ),
    );
    assert.ok(signedByService(res));
    const last = await barrier();
    // Nothing stored (the list has just the two barriers more) and nothing published between.
    const orders = await listAll();
    assert.equal(orders.length, before + 2);
    const between = service.published.filter(
      (p) => p.param.orderNo > first && p.param.orderNo < last,
    );
    assert.deepEqual(between, []);
    // No number used up either: the barriers are consecutive.
    assert.equal(Number(last.slice(9)), Number(first.slice(9)) + 1);
  });

  it('publishes an instruction just under the limit, and the agents’ schema accepts it', async () => {
    const res = await service.create(
      newOrder({
        productInfo: [item('Just fits')],
        paymentTransaction: { note: 'x'.repeat(DEFAULT_MAX_MESSAGE_BYTES - 2000) },
      }),
    );
    assert.equal(res.body.code, 10000, res.body.message);
    await waitFor(
      'the large instruction published',
      () => service.instructionsFor(res.body.data.orderNo).length === 1,
      DEADLINE,
    );
    const [instruction] = service.instructionsFor(res.body.data.orderNo);
    assert.ok(inboundInstructionSchema.safeParse(instruction!.param).success);
  });

  it('uses the configured agents’ limit', async () => {
    const small = await startRealService({
      brokerUrl: broker.url,
      config: { agentMaxMessageBytes: 1024 },
    });
    try {
      const ok = await small.create(newOrder({ customPrintContext: 'y'.repeat(50) }));
      assert.equal(ok.body.code, 10000, ok.body.message);
      const tooBig = await small.create(newOrder({ customPrintContext: 'y'.repeat(1000) }));
      assert.equal(tooBig.body.code, 41301);
      assert.match(tooBig.body.message, /agents accept at most 1024/);
    } finally {
      await small.close();
    }
  });

  it('refuses customPrintContext over the free-text limit, naming the field', async () => {
    const res = await service.create(
      newOrder({ customPrintContext: 'z'.repeat(FREE_TEXT_MAX_CHARS + 1) }),
    );
    assert.equal(res.body.code, 40003);
    assert.equal(
      res.body.message,
      `customPrintContext: must be at most ${FREE_TEXT_MAX_CHARS} characters`,
    );
    const lines = await service.create(
      newOrder({ customPrintContext: '\n'.repeat(FREE_TEXT_MAX_CHARS + 1) }),
    );
    assert.equal(lines.body.code, 40003, 'line breaks count as characters');
    const atLimit = await service.create(
      newOrder({ customPrintContext: 'z'.repeat(FREE_TEXT_MAX_CHARS) }),
    );
    assert.equal(atLimit.body.code, 10000, atLimit.body.message);
  });

  const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  const deepObject = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

  for (const path of ['create', 'list'] as const) {
    it(`answers a ${path} body nested 20,000 deep with 40007, then goes on answering`, async () => {
      const url = `${service.url}/open-api/order/${path}`;
      for (const body of [deep(20_000), deepObject(20_000)]) {
        const res = await postRaw(url, body);
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, {
          code: 40007,
          message: 'body: nests deeper than 32 levels',
          data: null,
        });
        assert.ok(signedByService(res));
      }
      // An envelope whose fields nest (not valid, but not deep either) is an envelope problem.
      const shallow = await postRaw(url, `{"appId":${deep(31)}}`);
      assert.equal(shallow.body.code, 40001);
      const ok = await service.create(newOrder({ productInfo: [item(`After deep ${path}`)] }));
      assert.equal(ok.body.code, 10000, ok.body.message);
    });

    it(`answers a signed ${path} whose param nests 20,000 deep with 40007`, async () => {
      const param =
        path === 'create'
          ? JSON.stringify(newOrder()).replace(/}$/, `,"paymentTransaction":${deep(20_000)}}`)
          : `{"pageSize":10,"extra":${deepObject(20_000)}}`;
      const res = await postRaw(`${service.url}/open-api/order/${path}`, signed(param));
      assert.equal(res.status, 200);
      assert.equal(res.body.code, 40007, res.body.message);
      assert.equal(res.body.message, 'param: nests deeper than 32 levels');
      const ok = await service.create(
        newOrder({ productInfo: [item(`After deep param ${path}`)] }),
      );
      assert.equal(ok.body.code, 10000, ok.body.message);
    });
  }

  it('refuses a body over the body limit (41300) before reading it all', async () => {
    const res = await service.create(
      newOrder({ paymentTransaction: { note: 'x'.repeat(300_000) } }),
    );
    assert.equal(res.body.code, 41300);
    assert.equal(res.body.message, 'body: the limit is 262144 bytes');
  });
});
