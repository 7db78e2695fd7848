/**
 * print-protocol v1.1 §8: every response body the service sends carries `X-Signature`, the
 * configured scheme over the exact body bytes with the service private key. Checked over real
 * HTTP on the bytes as received, for every kind of answer the service gives.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { buildEnvelope, verifyBytes, verifyParam } from '../../src/protocol/index.js';
import {
  APP_ID,
  baseUrl,
  clientKey,
  makeService,
  newOrder,
  postRaw,
  type RawAnswer,
  STORE_KEY,
  servicePublicKey,
  signed,
  signedByService,
  strangerKey,
} from './harness.js';

const { app } = makeService();
after(() => app.close());

describe('order-service signed responses', () => {
  it('signs every kind of answer over its exact bytes', async () => {
    const url = await baseUrl(app);
    const create = `${url}/open-api/order/create`;
    const list = `${url}/open-api/order/list`;
    const answers: [string, RawAnswer, number][] = [
      ['created', await postRaw(create, signed(newOrder())), 10000],
      [
        'listed',
        await postRaw(
          list,
          signed({ startTime: '2026-01-01 00:00:00', endTime: '2026-01-02 00:00:00' }),
        ),
        10000,
      ],
      ['invalid param', await postRaw(create, signed(newOrder({ orderType: 9 }))), 40003],
      ['forged', await postRaw(create, signed(newOrder(), { key: strangerKey })), 40101],
      ['not JSON', await postRaw(create, '{not json'), 40001],
      ['too deep', await postRaw(list, '['.repeat(100)), 40007],
      ['too large', await postRaw(create, `"${'x'.repeat(300_000)}"`), 41300],
      ['wrong type', await postRaw(create, '{}', { 'content-type': 'text/plain' }), 41500],
      ['unknown path', await postRaw(`${url}/nope`, '{}'), 40400],
    ];
    for (const [what, answer, code] of answers) {
      assert.equal(answer.body.code, code, `${what}: ${answer.body.message}`);
      assert.ok(answer.signature, `${what}: has X-Signature`);
      assert.ok(signedByService(answer), `${what}: X-Signature verifies over the body`);
    }
  });

  it('signs a GET answer and a 500 too', async () => {
    const svc = makeService();
    try {
      const url = await baseUrl(svc.app);
      const res = await fetch(`${url}/open-api/order/create`);
      const bytes = new Uint8Array(await res.arrayBuffer());
      assert.equal(res.status, 404);
      assert.ok(verifyBytes(bytes, res.headers.get('x-signature') ?? '', servicePublicKey));
      await svc.store.close(); // the service's own failure: 21000 with HTTP 500, still signed
      const failed = await postRaw(`${url}/open-api/order/create`, signed(newOrder()));
      assert.equal(failed.status, 500);
      assert.equal(failed.body.code, 21000);
      assert.ok(signedByService(failed));
    } finally {
      await svc.app.close();
    }
  });

  it('does not verify over other bytes or with another key', async () => {
    const answer = await postRaw(`${await baseUrl(app)}/nope`, '{}');
    const other = new TextEncoder().encode(
      Buffer.from(answer.bytes).toString('utf8').replace('40400', '40401'),
    );
    assert.ok(!verifyBytes(other, answer.signature!, servicePublicKey));
    assert.ok(!verifyBytes(answer.bytes, answer.signature!, strangerKey));
  });

  it('signs with the configured scheme, answers and instructions alike', async () => {
    const svc = makeService({ config: { signatureScheme: 'RSA-PSS-SHA256' } });
    try {
      // The client signs its request with the same scheme.
      const env = buildEnvelope({
        appId: APP_ID,
        storeKey: STORE_KEY,
        param: newOrder(),
        key: clientKey,
        scheme: 'RSA-PSS-SHA256',
      });
      const answer = await postRaw(`${await baseUrl(svc.app)}/open-api/order/create`, env);
      assert.equal(answer.body.code, 10000, answer.body.message);
      const pss = verifyBytes(answer.bytes, answer.signature!, servicePublicKey, 'RSA-PSS-SHA256');
      assert.ok(pss);
      assert.ok(!signedByService(answer), 'not a PKCS#1 v1.5 signature');
      // A request signed with the other scheme does not verify.
      const pkcs1 = await postRaw(
        `${await baseUrl(svc.app)}/open-api/order/create`,
        signed(newOrder()),
      );
      assert.equal(pkcs1.body.code, 40101);
      const call = svc.publisher.calls.at(-1)!;
      assert.ok(verifyParam(call.param, call.sign, servicePublicKey, 'RSA-PSS-SHA256'));
    } finally {
      await svc.app.close();
    }
  });
});
