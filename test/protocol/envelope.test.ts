/**
 * The request envelope (order-api 2.1, 4.1 rule 6), the response envelope (2.2, 2.10, 4.1 rule 7)
 * and opening a signed envelope (print-protocol §3): every error code, the order of the checks
 * (nothing unauthenticated is parsed) and that no error text ever carries the storeKey.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { z } from 'zod';
import { type AgentError, isAgentError } from '../../src/errors.js';
import {
  buildEnvelope,
  buildResponse,
  commandSchema,
  createResultSchema,
  DEFAULT_MAX_MESSAGE_BYTES,
  generateKeyPair,
  inboundInstructionSchema,
  MAX_JSON_DEPTH,
  type Opened,
  type OpenOptions,
  openEnvelope,
  type PrintInstructionInput,
  parseKey,
  parseResponse,
  parseWith,
  printInstructionSchema,
  type RsaKey,
  requestEnvelopeSchema,
  STORE_KEY_MAX,
  signParam,
} from '../../src/protocol/index.js';

const APP_ID = 'A1';
/** Distinctive secrets: no error text may ever contain them. */
const STORE_KEY = 'sk-SECRET-9f2c71e4-never-log';
const OTHER_STORE_KEY = 'sk-OTHER-SECRET-55aa03-never-log';
const SECRETS = [STORE_KEY, OTHER_STORE_KEY];

const IDENTITY = { appId: APP_ID, storeKey: STORE_KEY };

const instruction: PrintInstructionInput = {
  jobId: 'P20261125-000123',
  orderNo: 'O202611250001',
  pickUpNo: 'A023',
  takeoutNo: null,
  createTime: '2026-11-25 12:30:05',
  order: {
    productInfo: [
      { productName: 'Lechon ₱ 烧鸡', price: 15000, quantity: 2 },
      { productName: 'Rice', price: 2000, quantity: 1 },
    ],
    orderType: 2,
    paymentWay: '2', // a numeric string, as in the spec's sample
    paymentTransactionId: 'M-0001',
    paymentAmount: 32000,
  },
};

const STORE_ID = '3f2a9c0d41b7e655';
const command = {
  storeId: STORE_ID,
  commandId: 'C-0042',
  type: 'reprint',
  orderNo: 'O202611250001',
} as const;

let key: RsaKey;
let pub: RsaKey;
let otherKey: RsaKey;

before(() => {
  const pair = generateKeyPair();
  key = parseKey(pair.privatePem, 'private');
  pub = parseKey(pair.publicPem, 'public');
  otherKey = parseKey(generateKeyPair().privatePem, 'private');
});

/** Every field of the envelope (sign included) from options. */
function envelope(
  param: string | object,
  options: { appId?: string; storeKey?: string; signer?: RsaKey } = {},
) {
  return buildEnvelope({
    appId: options.appId ?? APP_ID,
    storeKey: options.storeKey ?? STORE_KEY,
    param,
    key: options.signer ?? key,
  });
}

function options<S extends z.ZodType>(
  paramSchema: S,
  extra: Partial<OpenOptions<S>> = {},
): OpenOptions<S> {
  return { verifyKey: pub, identity: IDENTITY, paramSchema, ...extra };
}

/** Asserts the message did not open: `code`, and no secret in any text of the error. */
function expectRejected<T>(result: Opened<T>, code: AgentError['code']): AgentError {
  assert.equal(result.ok, false, 'expected a rejection');
  if (result.ok) throw new Error('unreachable');
  const { error } = result;
  assert.ok(isAgentError(error));
  assert.equal(error.code, code, `${error.code}: ${error.message}`);
  assert.equal(error.retryable, false);
  const texts = [error.message, JSON.stringify(error.issues), JSON.stringify(error.toReason())];
  for (const secret of SECRETS)
    for (const text of texts) assert.ok(!text.includes(secret), `secret in error text: ${text}`);
  return error;
}

function expectOpened<T>(result: Opened<T>) {
  if (!result.ok)
    assert.fail(`expected to open, got ${result.error.code}: ${result.error.message}`);
  return result;
}

describe('requestEnvelopeSchema (order-api 2.1)', () => {
  const valid = { appId: APP_ID, storeKey: STORE_KEY, param: '{}', sign: 'c2ln' };

  it('accepts the four fields and returns exactly them', () => {
    const r = parseWith(requestEnvelopeSchema, { ...valid, extra: 1 });
    assert.deepEqual(r, { ok: true, value: valid });
  });

  it('every field is required: "is required" on that field', () => {
    for (const field of ['appId', 'storeKey', 'param', 'sign'] as const) {
      const { [field]: _omitted, ...rest } = valid;
      const r = parseWith(requestEnvelopeSchema, rest);
      assert.deepEqual(r, { ok: false, issues: [{ path: field, message: 'is required' }] }, field);
    }
  });

  it('rejects empty and non-string fields', () => {
    for (const field of ['appId', 'storeKey', 'param', 'sign'] as const) {
      for (const bad of ['', 42, null]) {
        const r = parseWith(requestEnvelopeSchema, { ...valid, [field]: bad });
        assert.equal(r.ok, false, `${field}=${JSON.stringify(bad)}`);
        if (!r.ok) assert.equal(r.issues[0]?.path, field);
      }
    }
  });

  it('storeKey is at most 100 characters (counted as characters, not UTF-16 units)', () => {
    assert.equal(STORE_KEY_MAX, 100);
    assert.equal(
      parseWith(requestEnvelopeSchema, { ...valid, storeKey: 'k'.repeat(100) }).ok,
      true,
    );
    const astral = '𠀀'.repeat(100); // 200 UTF-16 units, 100 characters
    assert.equal(parseWith(requestEnvelopeSchema, { ...valid, storeKey: astral }).ok, true);
    const r = parseWith(requestEnvelopeSchema, { ...valid, storeKey: 'k'.repeat(101) });
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.issues[0]?.path, 'storeKey');
    const viaAlias = parseWith(requestEnvelopeSchema, {
      appId: APP_ID,
      restaurantKey: 'k'.repeat(101),
      param: '{}',
      sign: 'c2ln',
    });
    assert.equal(viaAlias.ok, false);
  });

  it('restaurantKey (4.1 rule 6) is an alias, normalized to storeKey', () => {
    const { storeKey: _s, ...rest } = valid;
    const r = parseWith(requestEnvelopeSchema, { ...rest, restaurantKey: STORE_KEY });
    assert.deepEqual(r, { ok: true, value: valid });
    if (r.ok) assert.ok(!('restaurantKey' in r.value));
    const both = parseWith(requestEnvelopeSchema, { ...valid, restaurantKey: STORE_KEY });
    assert.deepEqual(both, { ok: true, value: valid });
  });

  it('storeKey and restaurantKey both given and different: an issue on restaurantKey', () => {
    const r = parseWith(requestEnvelopeSchema, { ...valid, restaurantKey: OTHER_STORE_KEY });
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.equal(r.issues.length, 1);
    assert.equal(r.issues[0]?.path, 'restaurantKey');
    for (const secret of SECRETS) assert.ok(!JSON.stringify(r.issues).includes(secret));
  });
});

describe('parseResponse and buildResponse (order-api 2.2, 2.10, 4.1 rule 7)', () => {
  const result = { orderNo: 'O202611250001', pickUpNo: 'A023' };

  function expectThrows(fn: () => unknown, code: AgentError['code']): AgentError {
    let caught: unknown;
    try {
      fn();
    } catch (error) {
      caught = error;
    }
    assert.ok(isAgentError(caught), `expected AgentError ${code}, got ${String(caught)}`);
    assert.equal(caught.code, code, caught.message);
    return caught;
  }

  it('data nested as an object', () => {
    const r = parseResponse({ code: 10000, message: 'success', data: result }, createResultSchema);
    assert.deepEqual(r, {
      code: 10000,
      message: 'success',
      ok: true,
      data: { kind: 'object', value: result },
    });
  });

  it("data as a JSON-encoded string (the spec sample's form), with the extra takeoutNo", () => {
    const data = JSON.stringify({ ...result, takeoutNo: 'T-9' });
    const r = parseResponse({ code: 10000, message: 'success', data }, createResultSchema);
    assert.equal(r.ok, true);
    assert.deepEqual(r.data, { kind: 'object', value: { ...result, takeoutNo: 'T-9' } });
  });

  it('data as a boolean: true is success, false is not', () => {
    const t = parseResponse({ code: 10000, message: 'success', data: true }, createResultSchema);
    assert.deepEqual(t, {
      code: 10000,
      message: 'success',
      ok: true,
      data: { kind: 'boolean', value: true },
    });
    const f = parseResponse({ code: 10000, message: 'success', data: false }, createResultSchema);
    assert.equal(f.ok, false);
    assert.deepEqual(f.data, { kind: 'boolean', value: false });
    const failed = parseResponse({ code: 21000, message: 'x', data: true }, createResultSchema);
    assert.equal(failed.ok, false);
  });

  it('data null (a failure) or absent', () => {
    const message = 'Service error, please contact administrator';
    const r = parseResponse({ code: 21000, message, data: null }, createResultSchema);
    assert.deepEqual(r, { code: 21000, message, ok: false, data: { kind: 'null' } });
    const absent = parseResponse({ code: 10000, message: null }, createResultSchema);
    assert.deepEqual(absent, { code: 10000, message: '', ok: true, data: { kind: 'null' } });
  });

  it('data as a string that is not JSON: ENVELOPE_INVALID', () => {
    for (const data of ['not json', '{"orderNo":', ''])
      expectThrows(
        () => parseResponse({ code: 10000, message: 'ok', data }, createResultSchema),
        'ENVELOPE_INVALID',
      );
  });

  it('data breaking the schema: PARAM_INVALID with a path under data', () => {
    for (const data of [{ pickUpNo: 'A023' }, JSON.stringify({ pickUpNo: 'A023' })]) {
      const error = expectThrows(
        () => parseResponse({ code: 10000, message: 'ok', data }, createResultSchema),
        'PARAM_INVALID',
      );
      assert.deepEqual(error.issues, [{ path: 'data.orderNo', message: 'is required' }]);
    }
    expectThrows(
      () => parseResponse({ code: 10000, message: 'ok', data: '[1,2]' }, createResultSchema),
      'PARAM_INVALID',
    );
  });

  it('a body that is not a response envelope: ENVELOPE_INVALID', () => {
    for (const body of [null, 'x', [], {}, { code: '10000' }, { code: 1.5 }, { message: 'ok' }])
      expectThrows(() => parseResponse(body, createResultSchema), 'ENVELOPE_INVALID');
  });

  it('buildResponse nests data, or encodes it as a string with dataAsString', () => {
    assert.deepEqual(buildResponse(10000, 'success', result), {
      code: 10000,
      message: 'success',
      data: result,
    });
    const asString = buildResponse(10000, 'success', result, { dataAsString: true });
    assert.equal(typeof asString.data, 'string');
    assert.deepEqual(JSON.parse(asString.data as string), result);
    // Null, undefined and booleans are not encoded.
    assert.equal(buildResponse(21000, 'err', null, { dataAsString: true }).data, null);
    assert.equal(buildResponse(21000, 'err', undefined).data, null);
    assert.equal(buildResponse(10000, 'ok', true, { dataAsString: true }).data, true);
  });

  it('buildResponse round-trips through JSON and parseResponse in both forms', () => {
    for (const dataAsString of [false, true]) {
      const wire = JSON.parse(
        JSON.stringify(buildResponse(10000, 'success', result, { dataAsString })),
      );
      const r = parseResponse(wire, createResultSchema);
      assert.deepEqual(r.data, { kind: 'object', value: result });
      assert.equal(r.ok, true);
    }
    const failure = parseResponse(
      JSON.parse(JSON.stringify(buildResponse(21000, 'err', null, { dataAsString: true }))),
      createResultSchema,
    );
    assert.deepEqual(failure.data, { kind: 'null' });
    assert.equal(failure.ok, false);
  });
});

describe('buildEnvelope and openEnvelope', () => {
  describe('round trip', () => {
    it('a print instruction opens from an object, a string and bytes', () => {
      const env = envelope(instruction);
      assert.deepEqual(Object.keys(env).sort(), ['appId', 'param', 'sign', 'storeKey']);
      assert.equal(env.param, JSON.stringify(instruction));
      for (const body of [env, JSON.stringify(env), Buffer.from(JSON.stringify(env), 'utf8')]) {
        const opened = expectOpened(openEnvelope(body, options(printInstructionSchema)));
        assert.deepEqual(opened.envelope, env);
        assert.equal(opened.param.jobId, instruction.jobId);
        assert.equal(opened.param.order.paymentWay, 2, 'numeric string normalized');
        assert.equal(opened.param.order.productInfo[0]?.productName, 'Lechon ₱ 烧鸡');
        assert.equal(opened.param.printer, 'receipt', 'default printer');
        assert.equal(opened.param.copies, 1, 'default copies');
      }
    });

    it('a command opens with commandSchema', () => {
      const opened = expectOpened(openEnvelope(envelope(command), options(commandSchema)));
      assert.deepEqual(opened.param, command);
    });

    it('param travels as the exact signed string: nobody re-serializes', () => {
      const raw = `{ "type" : "status",\n  "commandId":"C-1", "storeId": "${STORE_ID}" }`;
      const env = envelope(raw);
      assert.equal(env.param, raw);
      const opened = expectOpened(openEnvelope(JSON.stringify(env), options(commandSchema)));
      assert.equal(opened.envelope.param, raw);
      assert.deepEqual(opened.param, { type: 'status', commandId: 'C-1', storeId: STORE_ID });
    });

    it('restaurantKey in place of storeKey opens, normalized to storeKey', () => {
      const { storeKey, ...rest } = envelope(command);
      const opened = expectOpened(
        openEnvelope({ ...rest, restaurantKey: storeKey }, options(commandSchema)),
      );
      assert.equal(opened.envelope.storeKey, STORE_KEY);
    });

    it('a key lookup by appId and an identity predicate (the service side)', () => {
      const looked: string[] = [];
      const asked: [string, string][] = [];
      const opened = expectOpened(
        openEnvelope(envelope(command), {
          verifyKey: (appId) => {
            looked.push(appId);
            return appId === APP_ID ? pub : undefined;
          },
          identity: (appId, storeKey) => {
            asked.push([appId, storeKey]);
            return appId === APP_ID && storeKey === STORE_KEY;
          },
          paramSchema: commandSchema,
        }),
      );
      assert.deepEqual(opened.param, command);
      assert.deepEqual(looked, [APP_ID]);
      assert.deepEqual(asked, [[APP_ID, STORE_KEY]]);
    });

    it('RSA-PSS-SHA256 by configuration; the message cannot choose the scheme', () => {
      const pss = buildEnvelope({
        appId: APP_ID,
        storeKey: STORE_KEY,
        param: command,
        key,
        scheme: 'RSA-PSS-SHA256',
      });
      expectOpened(openEnvelope(pss, options(commandSchema, { scheme: 'RSA-PSS-SHA256' })));
      expectRejected(openEnvelope(pss, options(commandSchema)), 'SIGNATURE_INVALID');
      const claiming = { ...pss, scheme: 'RSA-PSS-SHA256', signScheme: 'RSA-PSS-SHA256' };
      expectRejected(openEnvelope(claiming, options(commandSchema)), 'SIGNATURE_INVALID');
      const pkcs1 = envelope(command);
      expectRejected(
        openEnvelope(pkcs1, options(commandSchema, { scheme: 'RSA-PSS-SHA256' })),
        'SIGNATURE_INVALID',
      );
    });
  });

  describe('TOO_LARGE', () => {
    it('a string or byte body over maxBytes, counted in UTF-8 bytes', () => {
      const text = JSON.stringify(envelope(instruction));
      const bytes = Buffer.byteLength(text, 'utf8');
      assert.ok(bytes > text.length, 'test setup: the body has multi-byte characters');
      for (const body of [text, Buffer.from(text, 'utf8'), new TextEncoder().encode(text)]) {
        expectOpened(openEnvelope(body, options(printInstructionSchema, { maxBytes: bytes })));
        const error = expectRejected(
          openEnvelope(body, options(printInstructionSchema, { maxBytes: bytes - 1 })),
          'TOO_LARGE',
        );
        assert.match(error.message, new RegExp(`${bytes}`));
      }
    });

    it('the default limit is 64 KiB', () => {
      assert.equal(DEFAULT_MAX_MESSAGE_BYTES, 64 * 1024);
      const env = envelope(command);
      const base = Buffer.byteLength(JSON.stringify({ ...env, pad: '' }));
      const exact = JSON.stringify({ ...env, pad: 'x'.repeat(DEFAULT_MAX_MESSAGE_BYTES - base) });
      assert.equal(Buffer.byteLength(exact), DEFAULT_MAX_MESSAGE_BYTES);
      expectOpened(openEnvelope(exact, options(commandSchema)));
      const over = JSON.stringify({
        ...env,
        pad: 'x'.repeat(DEFAULT_MAX_MESSAGE_BYTES - base + 1),
      });
      expectRejected(openEnvelope(over, options(commandSchema)), 'TOO_LARGE');
      expectRejected(openEnvelope(Buffer.from(over), options(commandSchema)), 'TOO_LARGE');
    });

    it('size is checked before anything is parsed', () => {
      const garbage = '\u0000not json'.repeat(100);
      expectRejected(openEnvelope(garbage, options(commandSchema, { maxBytes: 100 })), 'TOO_LARGE');
    });

    it('an already-parsed object with rawSize over maxBytes', () => {
      const env = envelope(command);
      const opts = options(commandSchema, { maxBytes: 1000 });
      expectRejected(openEnvelope(env, opts, 1001), 'TOO_LARGE');
      expectRejected(openEnvelope({ not: 'an envelope' }, opts, 1001), 'TOO_LARGE');
      expectOpened(openEnvelope(env, opts, 1000));
      expectOpened(openEnvelope(env, opts));
      expectRejected(openEnvelope(env, options(commandSchema), 64 * 1024 + 1), 'TOO_LARGE');
    });
  });

  describe('ENVELOPE_INVALID', () => {
    it('a body that is not JSON', () => {
      for (const body of ['', '{', '{"appId":"A1",', 'not json', "{'appId':'A1'}"])
        expectRejected(openEnvelope(body, options(commandSchema)), 'ENVELOPE_INVALID');
    });

    it('JSON that is not an object', () => {
      for (const body of ['[]', '"envelope"', '42', 'null', 'true'])
        expectRejected(openEnvelope(body, options(commandSchema)), 'ENVELOPE_INVALID');
      expectRejected(openEnvelope([], options(commandSchema)), 'ENVELOPE_INVALID');
      expectRejected(
        openEnvelope(null as unknown as object, options(commandSchema)),
        'ENVELOPE_INVALID',
      );
      expectRejected(openEnvelope(Buffer.from('[1]'), options(commandSchema)), 'ENVELOPE_INVALID');
    });

    it('bytes that are not valid UTF-8, even outside the signed param', () => {
      const env = envelope(command);
      // A lenient decoder would turn 0xff into U+FFFD and the envelope would open.
      const json = JSON.stringify({ ...env, note: '@' });
      const [head, tail] = json.split('@') as [string, string];
      const body = Buffer.concat([Buffer.from(head), Buffer.from([0xff]), Buffer.from(tail)]);
      const lenient = JSON.parse(new TextDecoder().decode(body));
      expectOpened(openEnvelope(lenient, options(commandSchema)));
      expectRejected(openEnvelope(body, options(commandSchema)), 'ENVELOPE_INVALID');
      const overlong = Buffer.concat([
        Buffer.from(head),
        Buffer.from([0xc0, 0xaf]),
        Buffer.from(tail),
      ]);
      expectRejected(openEnvelope(overlong, options(commandSchema)), 'ENVELOPE_INVALID');
    });

    it('a missing or empty field, named in the message', () => {
      const env = envelope(command);
      for (const field of ['appId', 'storeKey', 'param', 'sign'] as const) {
        const { [field]: _omitted, ...rest } = env;
        const error = expectRejected(
          openEnvelope(rest, options(commandSchema)),
          'ENVELOPE_INVALID',
        );
        assert.equal(error.message, `${field}: is required`);
        assert.deepEqual(error.issues, [{ path: field, message: 'is required' }]);
        const empty = expectRejected(
          openEnvelope({ ...env, [field]: '' }, options(commandSchema)),
          'ENVELOPE_INVALID',
        );
        assert.equal(empty.issues[0]?.path, field);
      }
      const wrongType = expectRejected(
        openEnvelope({ ...env, sign: 12345 }, options(commandSchema)),
        'ENVELOPE_INVALID',
      );
      assert.equal(wrongType.issues[0]?.path, 'sign');
    });

    it('a storeKey over 100 characters', () => {
      const long = `${STORE_KEY}${'x'.repeat(101 - STORE_KEY.length)}`;
      const error = expectRejected(
        openEnvelope(envelope(command, { storeKey: long }), options(commandSchema)),
        'ENVELOPE_INVALID',
      );
      assert.equal(error.issues[0]?.path, 'storeKey');
    });
  });

  describe('SIGNATURE_INVALID', () => {
    it('a tampered param (one character changed) with the original sign', () => {
      const env = envelope(instruction);
      const tampered = env.param.replace('"quantity":2', '"quantity":3');
      assert.notEqual(tampered, env.param);
      expectRejected(
        openEnvelope({ ...env, param: tampered }, options(printInstructionSchema)),
        'SIGNATURE_INVALID',
      );
      const reordered = JSON.stringify(JSON.parse(env.param), Object.keys(instruction).reverse());
      expectRejected(
        openEnvelope({ ...env, param: reordered }, options(printInstructionSchema)),
        'SIGNATURE_INVALID',
      );
    });

    it('signed by another key', () => {
      expectRejected(
        openEnvelope(envelope(command, { signer: otherKey }), options(commandSchema)),
        'SIGNATURE_INVALID',
      );
    });

    it('the sign of another param by the right key', () => {
      const env = envelope(command);
      const sign = signParam(JSON.stringify({ ...command, orderNo: 'O-OTHER' }), key);
      expectRejected(openEnvelope({ ...env, sign }, options(commandSchema)), 'SIGNATURE_INVALID');
    });

    it('a sign that is not a signature', () => {
      const env = envelope(command);
      for (const sign of ['not base64!', 'c2ln', env.sign.slice(0, -4)])
        expectRejected(openEnvelope({ ...env, sign }, options(commandSchema)), 'SIGNATURE_INVALID');
    });
  });

  describe('IDENTITY_MISMATCH', () => {
    it('another appId, correctly signed', () => {
      const error = expectRejected(
        openEnvelope(envelope(command, { appId: 'A2' }), options(commandSchema)),
        'IDENTITY_MISMATCH',
      );
      assert.match(error.message, /appId/);
    });

    it('another storeKey, correctly signed', () => {
      const error = expectRejected(
        openEnvelope(envelope(command, { storeKey: OTHER_STORE_KEY }), options(commandSchema)),
        'IDENTITY_MISMATCH',
      );
      assert.match(error.message, /storeKey/);
      // A prefix, or the key with one more character, is not the key either.
      for (const storeKey of [STORE_KEY.slice(0, -1), `${STORE_KEY}x`])
        expectRejected(
          openEnvelope(envelope(command, { storeKey }), options(commandSchema)),
          'IDENTITY_MISMATCH',
        );
    });

    it('an unknown app: the key lookup returns undefined', () => {
      expectRejected(
        openEnvelope(envelope(command, { appId: 'UNKNOWN' }), {
          verifyKey: (appId) => (appId === APP_ID ? pub : undefined),
          identity: IDENTITY,
          paramSchema: commandSchema,
        }),
        'IDENTITY_MISMATCH',
      );
    });

    it('the identity predicate says no', () => {
      const asked: [string, string][] = [];
      expectRejected(
        openEnvelope(envelope(command), {
          verifyKey: pub,
          identity: (appId, storeKey) => {
            asked.push([appId, storeKey]);
            return false;
          },
          paramSchema: commandSchema,
        }),
        'IDENTITY_MISMATCH',
      );
      assert.deepEqual(asked, [[APP_ID, STORE_KEY]]);
    });
  });

  describe('PARAM_NOT_JSON', () => {
    it('a correctly signed param that is not JSON, or JSON but not an object', () => {
      for (const param of ['not json', '[1]', '[]', 'null', '42', '"str"', 'true', '{"a":1']) {
        const error = expectRejected(
          openEnvelope(envelope(param), options(commandSchema)),
          'PARAM_NOT_JSON',
        );
        assert.match(error.message, /^param: /);
      }
    });
  });

  describe('PARAM_INVALID', () => {
    it('issue paths are relative to param: order.productInfo[0].quantity', () => {
      const bad = {
        ...instruction,
        order: {
          ...instruction.order,
          productInfo: [{ productName: 'Rice', price: 2000, quantity: 0 }],
        },
      };
      const error = expectRejected(
        openEnvelope(envelope(bad), options(printInstructionSchema)),
        'PARAM_INVALID',
      );
      assert.deepEqual(error.issues, [
        { path: 'order.productInfo[0].quantity', message: 'must be between 1 and 1000' },
      ]);
      assert.equal(error.message, 'order.productInfo[0].quantity: must be between 1 and 1000');
    });

    it('a missing field and an unknown command type', () => {
      const { jobId: _j, ...noJobId } = instruction;
      const missing = expectRejected(
        openEnvelope(envelope(noJobId), options(printInstructionSchema)),
        'PARAM_INVALID',
      );
      assert.deepEqual(missing.issues, [{ path: 'jobId', message: 'is required' }]);
      const unknown = expectRejected(
        openEnvelope(
          envelope({ storeId: STORE_ID, commandId: 'C-1', type: 'self-destruct' }),
          options(commandSchema),
        ),
        'PARAM_INVALID',
      );
      assert.equal(unknown.issues[0]?.path, 'type');
    });
  });

  describe('order of the checks', () => {
    it('bad signature + wrong storeKey + non-JSON param: SIGNATURE_INVALID (signature first)', () => {
      const env = envelope('not json', { storeKey: OTHER_STORE_KEY, signer: otherKey });
      expectRejected(openEnvelope(env, options(commandSchema)), 'SIGNATURE_INVALID');
      const withAppId = envelope('not json', {
        appId: 'A2',
        storeKey: OTHER_STORE_KEY,
        signer: otherKey,
      });
      expectRejected(openEnvelope(withAppId, options(commandSchema)), 'SIGNATURE_INVALID');
    });

    it('correctly signed + wrong storeKey + non-JSON param: IDENTITY_MISMATCH', () => {
      const env = envelope('not json', { storeKey: OTHER_STORE_KEY });
      expectRejected(openEnvelope(env, options(commandSchema)), 'IDENTITY_MISMATCH');
    });

    it('size before shape, shape before signature, identity before the param schema', () => {
      const tooBigAndBroken = JSON.stringify({ appId: APP_ID, pad: 'x'.repeat(200) });
      expectRejected(
        openEnvelope(tooBigAndBroken, options(commandSchema, { maxBytes: 100 })),
        'TOO_LARGE',
      );
      const { storeKey: _s, ...noStoreKey } = envelope(command, { signer: otherKey });
      expectRejected(openEnvelope(noStoreKey, options(commandSchema)), 'ENVELOPE_INVALID');
      const invalidParam = envelope(
        { storeId: STORE_ID, commandId: 'C-1', type: 'bogus' },
        { appId: 'A2' },
      );
      expectRejected(openEnvelope(invalidParam, options(commandSchema)), 'IDENTITY_MISMATCH');
    });

    it('nothing unauthenticated reaches the identity predicate or the param schema', () => {
      let predicateCalls = 0;
      let schemaCalls = 0;
      const spySchema = z.looseObject({}).superRefine(() => {
        schemaCalls += 1;
      });
      const spyOptions = {
        verifyKey: pub,
        identity: () => {
          predicateCalls += 1;
          return true;
        },
        paramSchema: spySchema,
      };
      expectRejected(
        openEnvelope(envelope(command, { signer: otherKey }), spyOptions),
        'SIGNATURE_INVALID',
      );
      assert.equal(predicateCalls, 0);
      assert.equal(schemaCalls, 0);
      expectRejected(
        openEnvelope(envelope(command), { ...spyOptions, identity: () => false }),
        'IDENTITY_MISMATCH',
      );
      assert.equal(schemaCalls, 0);
      expectOpened(openEnvelope(envelope(command), spyOptions));
      assert.equal(predicateCalls, 1);
      assert.equal(schemaCalls, 1);
    });
  });

  describe('storeId binds the store (print-protocol v1.1 §4)', () => {
    const mine = { ...instruction, storeId: STORE_ID };
    const bound = (extra: Partial<OpenOptions<typeof inboundInstructionSchema>> = {}) =>
      options(inboundInstructionSchema, { storeId: STORE_ID, ...extra });

    it("a genuine instruction for this store opens; another store's is IDENTITY_MISMATCH naming storeId", () => {
      expectOpened(openEnvelope(envelope(mine), bound()));
      const error = expectRejected(
        openEnvelope(envelope({ ...mine, storeId: 'a0b1c2d3e4f5a6b7' }), bound()),
        'IDENTITY_MISMATCH',
      );
      assert.match(error.message, /^storeId: names store "a0b1c2d3e4f5a6b7", not this store/);
      const cmd = expectRejected(
        openEnvelope(envelope({ ...command, storeId: 'a0b1c2d3e4f5a6b7' }), {
          ...options(commandSchema),
          storeId: STORE_ID,
        }),
        'IDENTITY_MISMATCH',
      );
      assert.match(cmd.message, /^storeId: /);
    });

    it('a param without storeId is refused by the inbound schema, and by the storeId option alone', () => {
      const missing = expectRejected(openEnvelope(envelope(instruction), bound()), 'PARAM_INVALID');
      assert.equal(missing.issues[0]?.path, 'storeId');
      const anyObject = z.looseObject({});
      const error = expectRejected(
        openEnvelope(envelope({ jobId: 'J' }), options(anyObject, { storeId: STORE_ID })),
        'IDENTITY_MISMATCH',
      );
      assert.match(error.message, /^storeId: is required/);
    });

    it('the failure carries the signed param (its ids) only when the signature held', () => {
      const other = openEnvelope(envelope({ ...mine, storeId: 'a0b1c2d3e4f5a6b7' }), bound());
      assert.equal(other.ok, false);
      assert.equal(!other.ok && other.signed?.param?.jobId, instruction.jobId);
      const forged = openEnvelope(envelope(mine, { signer: otherKey }), bound());
      assert.equal(!forged.ok && forged.signed, undefined);
    });
  });

  describe('nesting bound (print-protocol §9: MAX_JSON_DEPTH)', () => {
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

    it('a body nested deeper than 32 levels: ENVELOPE_INVALID naming the rule, never parsed', () => {
      const error = expectRejected(
        openEnvelope(`{"appId":${deep(20_000)}}`, options(commandSchema)),
        'ENVELOPE_INVALID',
      );
      assert.match(error.message, /^body: nested deeper than 32 levels/);
      // 32 levels in all (the envelope object is one of them) still parse, then fail the shape.
      const shallow = expectRejected(
        openEnvelope(`{"appId":${deep(MAX_JSON_DEPTH - 1)}}`, options(commandSchema)),
        'ENVELOPE_INVALID',
      );
      assert.doesNotMatch(shallow.message, /nested/);
    });

    it('a signed param nested deeper than 32 levels: PARAM_INVALID naming the rule', () => {
      const param = `{"storeId":"${STORE_ID}","x":${deep(20_000)}}`;
      const error = expectRejected(
        openEnvelope(envelope(param), options(commandSchema)),
        'PARAM_INVALID',
      );
      assert.match(error.message, /^param: nested deeper than 32 levels/);
      const at = `{"x":${deep(MAX_JSON_DEPTH - 1)}}`;
      assert.equal(
        expectRejected(openEnvelope(envelope(at), options(commandSchema)), 'PARAM_INVALID')
          .issues[0]?.path,
        'type',
        '32 levels are allowed: the schema speaks',
      );
    });
  });

  describe('oversized bodies (verifyOversizeUpTo)', () => {
    const big = { ...instruction, storeId: STORE_ID, pad: 'x'.repeat(100 * 1024) };

    it('still TOO_LARGE, with the signed ids when the signature holds', () => {
      const opts = options(inboundInstructionSchema, { verifyOversizeUpTo: 1024 * 1024 });
      const result = openEnvelope(JSON.stringify(envelope(big)), opts);
      expectRejected(result, 'TOO_LARGE');
      assert.equal(!result.ok && result.signed?.param?.orderNo, instruction.orderNo);
    });

    it('no ids without a valid signature, nor beyond the bound, nor without the option', () => {
      const forged = openEnvelope(
        JSON.stringify(envelope(big, { signer: otherKey })),
        options(inboundInstructionSchema, { verifyOversizeUpTo: 1024 * 1024 }),
      );
      expectRejected(forged, 'TOO_LARGE');
      assert.equal(!forged.ok && forged.signed, undefined);
      const beyond = openEnvelope(
        JSON.stringify(envelope(big)),
        options(inboundInstructionSchema, { verifyOversizeUpTo: 100 * 1024 }),
      );
      assert.equal(!beyond.ok && beyond.signed, undefined);
      const off = openEnvelope(JSON.stringify(envelope(big)), options(inboundInstructionSchema));
      assert.equal(!off.ok && off.signed, undefined);
    });
  });

  describe('secrets', () => {
    it('no error text of openEnvelope contains a storeKey, whatever the failure', () => {
      const env = envelope(command);
      const long = `${STORE_KEY}${'x'.repeat(101 - STORE_KEY.length)}`;
      const cases: [unknown, AgentError['code'], Partial<OpenOptions<typeof commandSchema>>?][] = [
        [JSON.stringify(env), 'TOO_LARGE', { maxBytes: 10 }],
        [`{"storeKey":"${STORE_KEY}",`, 'ENVELOPE_INVALID'],
        [{ ...env, storeKey: long }, 'ENVELOPE_INVALID'],
        [{ ...env, storeKey: 42 }, 'ENVELOPE_INVALID'],
        [{ ...env, restaurantKey: OTHER_STORE_KEY }, 'ENVELOPE_INVALID'],
        [{ ...env, sign: undefined }, 'ENVELOPE_INVALID'],
        [{ ...env, param: `${env.param} ` }, 'SIGNATURE_INVALID'],
        [envelope(command, { storeKey: OTHER_STORE_KEY }), 'IDENTITY_MISMATCH'],
        [envelope(command, { appId: OTHER_STORE_KEY }), 'IDENTITY_MISMATCH'],
        [envelope(command), 'IDENTITY_MISMATCH', { identity: () => false }],
        [envelope(command), 'IDENTITY_MISMATCH', { verifyKey: () => undefined }],
        [envelope(`{"storeKey":"${STORE_KEY}"`), 'PARAM_NOT_JSON'],
        [envelope(STORE_KEY), 'PARAM_NOT_JSON'],
        [envelope({ ...command, orderNo: STORE_KEY.repeat(3) }), 'PARAM_INVALID'],
        [envelope({ storeId: STORE_ID, commandId: 'C-1', type: STORE_KEY }), 'PARAM_INVALID'],
      ];
      for (const [body, code, extra] of cases) {
        // expectRejected checks every text of the error for both secrets.
        expectRejected(openEnvelope(body as object, options(commandSchema, extra)), code);
      }
    });
  });
});
