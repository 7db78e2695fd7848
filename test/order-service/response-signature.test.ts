/**
 * print-protocol v1.1 §8: every response body the service sends carries `X-Signature`, the
 * configured scheme over the exact body bytes with the service private key. Checked over real
 * HTTP on the bytes as received, for every kind of answer the service gives. v1.2 §10: to a
 * request with `X-Request-Nonce` the signature is version 2, bound to the request and its store.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  boundResponseBytes,
  buildEnvelope,
  deriveStoreId,
  newRequestNonce,
  REQUEST_NONCE_HEADER,
  RESPONSE_SIGNATURE_HEADER,
  RESPONSE_SIGNATURE_VERSION_HEADER,
  verifyBytes,
  verifyParam,
} from '../../src/protocol/index.js';
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

  it('binds the answer to a request with a nonce (v2): method, target, nonce, store, then body', async () => {
    const url = await baseUrl(app);
    const storeId = deriveStoreId(APP_ID, STORE_KEY);
    const range = { startTime: '2026-01-01 00:00:00', endTime: '2026-01-02 00:00:00' };
    const ask = async (path: string, body: string | object, nonce?: string) => {
      const res = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(nonce !== undefined ? { [REQUEST_NONCE_HEADER]: nonce } : {}),
        },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      const bytes = new Uint8Array(await res.arrayBuffer());
      return {
        bytes,
        code: (JSON.parse(Buffer.from(bytes).toString('utf8')) as { code: number }).code,
        signature: res.headers.get(RESPONSE_SIGNATURE_HEADER) ?? '',
        version: res.headers.get(RESPONSE_SIGNATURE_VERSION_HEADER),
      };
    };
    const over = (path: string, nonce: string, store: string, bytes: Uint8Array) =>
      boundResponseBytes({ method: 'POST', path, nonce, storeId: store }, bytes);

    // A list of this store, its target with a query string: all of it is covered.
    const nonce = newRequestNonce();
    const path = '/open-api/order/list?from=agent';
    const listed = await ask(path, signed(range), nonce);
    assert.equal(listed.code, 10000);
    assert.equal(listed.version, '2');
    const verifies = (bytes: Uint8Array) => verifyBytes(bytes, listed.signature, servicePublicKey);
    assert.ok(verifies(over(path, nonce, storeId, listed.bytes)), 'bound to this request');
    assert.ok(!verifies(listed.bytes), 'not the body alone (version 1)');
    assert.ok(!verifies(over(path, newRequestNonce(), storeId, listed.bytes)), 'another nonce');
    assert.ok(!verifies(over('/open-api/order/list', nonce, storeId, listed.bytes)), 'target');
    assert.ok(!verifies(over(path, nonce, deriveStoreId(APP_ID, 'K2'), listed.bytes)), 'store');
    assert.ok(!verifies(over(path, nonce, '', listed.bytes)), 'no store');

    // Refused before the envelope held: the service cannot tell whose it was, store empty.
    for (const [what, body, code] of [
      ['forged', signed(range, { key: strangerKey }), 40101],
      ['not JSON', '{not json', 40001],
    ] as const) {
      const n = newRequestNonce();
      const refused = await ask('/open-api/order/list', body, n);
      assert.equal(refused.code, code, what);
      assert.equal(refused.version, '2', what);
      const bound = over('/open-api/order/list', n, '', refused.bytes);
      assert.ok(verifyBytes(bound, refused.signature, servicePublicKey), what);
    }

    // Without a nonce, or with one that is not base64url of 16+ bytes: version 1 (decision 235).
    for (const n of [undefined, 'short', `${newRequestNonce()}!`]) {
      const plain = await ask('/open-api/order/list', signed(range), n);
      assert.equal(plain.code, 10000);
      assert.equal(plain.version, null, `nonce ${n}`);
      assert.ok(signedByService({ bytes: plain.bytes, signature: plain.signature }), `nonce ${n}`);
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
