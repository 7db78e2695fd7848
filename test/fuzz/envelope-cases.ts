/**
 * Envelope cases for the fuzz tests, around a pool of signed envelopes: the same envelope
 * re-wrapped (alias, extra keys, key order, bytes or text or a parsed object), one envelope field
 * changed, bytes damaged or oversize, and hostile input (arbitrary bytes, JSON, objects). Each
 * case says what opening it must give where that is known (code and field), else only that the
 * outcome is typed; `checkOpened` holds every outcome to that and to the rules that always apply.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { ErrorCode } from '../../src/errors.js';
import { DEFAULT_MAX_MESSAGE_BYTES, type Opened } from '../../src/protocol/index.js';
import {
  assertTypedRejection,
  bytes,
  corruptBytes,
  type Json,
  jsonText,
  oddValue,
  textIn,
} from './arbitraries.js';
import { APP_ID, type Envelope, STORE_KEY } from './harness.js';

export type Expect =
  | { kind: 'accept' }
  | { kind: 'reject'; code: ErrorCode; path?: string }
  /** Anything typed; if accepted, it must be authentic. */
  | { kind: 'typed' };

export interface PoolEntry {
  env: Envelope;
  /** What opening the untouched envelope gives. */
  expect: Expect;
}

export interface Case {
  label: string;
  body: Buffer | string | object;
  rawSize?: number;
  expect: Expect;
}

const ENCODINGS = ['bytes', 'pretty', 'string', 'object', 'object-sized'] as const;

function encode(value: object, how: (typeof ENCODINGS)[number]): Pick<Case, 'body' | 'rawSize'> {
  switch (how) {
    case 'bytes':
      return { body: Buffer.from(JSON.stringify(value)) };
    case 'pretty':
      return { body: Buffer.from(JSON.stringify(value, null, 2)) };
    case 'string':
      return { body: JSON.stringify(value) };
    case 'object':
      return { body: value };
    case 'object-sized':
      return { body: value, rawSize: Buffer.byteLength(JSON.stringify(value) ?? '') };
  }
}

const encoding = fc.constantFrom(...ENCODINGS);

const TYPED: Expect = { kind: 'typed' };

/** No NaN or Infinity: JSON would turn them into null and so repair the broken field. */
export function jsonSafe(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(jsonSafe);
  if (value !== null && typeof value === 'object') return Object.values(value).every(jsonSafe);
  return true;
}

export const reject = (code: ErrorCode, path?: string): Expect => ({ kind: 'reject', code, path });

/** The identity checks come after the signature: a bad signature is reported first. */
const afterSignature = (e: PoolEntry, expect: Expect): Expect =>
  e.expect.kind === 'reject' && e.expect.code === 'SIGNATURE_INVALID' ? e.expect : expect;

const otherText = (range: { min: number; max: number }, not: string) =>
  textIn(range).filter((s) => s !== not);

/** Not a string of 1 to `max` characters (`null`: no upper limit). */
const badEnvelopeString = (max: number | null) =>
  fc.oneof(
    fc.constant(''),
    ...(max === null ? [] : [fc.integer({ min: max + 1, max: max + 5 }).map((n) => 'k'.repeat(n))]),
    fc.constantFrom<unknown>(null, 42, true, [], {}, ['a']),
    oddValue.filter((v) => typeof v !== 'string' && v !== undefined),
  );

/** Base64 with one character changed, cut short, or re-encoded in a form we do not accept. */
function alteredSign(sign: string, entry: fc.Arbitrary<PoolEntry>): fc.Arbitrary<string> {
  const b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  return fc.oneof(
    fc
      .tuple(fc.nat(sign.length - 1), fc.constantFrom(...b64))
      .map(([i, c]) => sign.slice(0, i) + c + sign.slice(i + 1)),
    fc.integer({ min: 1, max: sign.length - 1 }).map((n) => sign.slice(0, n)),
    fc.constant(sign.replace(/(.{76})/g, '$1\n')),
    fc.constant(sign.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')),
    fc.constant(`${sign}AAAA`),
    fc.string({ minLength: 1, maxLength: 400 }),
    entry.map((other) => other.env.sign),
  );
}

/** RFC 4648 §4 with padding: the only spelling of a signature we accept. */
const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function signOutcome(e: PoolEntry, altered: string, pool: readonly PoolEntry[]): Expect {
  if (altered === e.env.sign) return e.expect;
  // Another entry's signature over the same param (the pool signs some params twice: with the
  // configured key and with another key or scheme) is what that entry gives.
  const twin = pool.find((o) => o.env.sign === altered && o.env.param === e.env.param);
  if (twin) return twin.expect;
  const same =
    STANDARD_BASE64.test(altered) &&
    Buffer.from(altered, 'base64').equals(Buffer.from(e.env.sign, 'base64'));
  // A different spelling of the same signature bytes may verify; it is still the signed param.
  return same ? TYPED : afterSignature(e, reject('SIGNATURE_INVALID', 'sign'));
}

function alteredParam(param: string, entry: fc.Arbitrary<PoolEntry>): fc.Arbitrary<string> {
  return fc.oneof(
    fc
      .tuple(fc.nat(param.length - 1), fc.string({ minLength: 1, maxLength: 3 }))
      .map(([i, s]) => param.slice(0, i) + s + param.slice(i + 1)),
    fc.nat(param.length - 1).map((n) => param.slice(0, n)),
    fc.constantFrom(`${param} `, ` ${param}`, `${param}\n`),
    entry.map((other) => other.env.param),
  );
}

/** Every kind of case around `pool`, weighted towards near-valid envelopes. */
export function envelopeCases(pool: readonly PoolEntry[]): fc.Arbitrary<Case> {
  const entry = fc.constantFrom(...pool);
  /** The same signed envelope, re-wrapped: alias, extra keys, key order, encoding. */
  const rewrapped: fc.Arbitrary<Case> = fc
    .record({
      e: entry,
      alias: fc.constantFrom('storeKey', 'restaurantKey', 'both'),
      extra: fc.dictionary(
        fc.string({ minLength: 1, maxLength: 6 }).map((k) => `x-${k}`),
        fc.jsonValue({ maxDepth: 1 }),
        { maxKeys: 2 },
      ),
      reverse: fc.boolean(),
      how: encoding,
    })
    .map(({ e, alias, extra, reverse, how }) => {
      const { storeKey, ...rest } = e.env;
      const keysPart =
        alias === 'storeKey'
          ? { storeKey }
          : alias === 'restaurantKey'
            ? { restaurantKey: storeKey }
            : { storeKey, restaurantKey: storeKey };
      let value: Json = { ...extra, ...rest, ...keysPart };
      if (reverse) value = Object.fromEntries(Object.entries(value).reverse());
      return { label: `rewrapped ${alias} ${how}`, ...encode(value, how), expect: e.expect };
    });

  /** One field of a signed envelope changed, with the outcome that change must have. */
  const nearValid: fc.Arbitrary<Case> = entry.chain((e) => {
    const base: Json = { ...e.env };
    const set = (key: string, v: unknown): Json => {
      const out = { ...base };
      if (v === undefined) delete out[key];
      else out[key] = v;
      return out;
    };
    const mutation: fc.Arbitrary<{ label: string; value: unknown; expect: Expect }> = fc.oneof(
      otherText({ min: 1, max: 64 }, APP_ID).map((v) => ({
        label: 'another appId',
        value: set('appId', v),
        // print-protocol v1.2 §10: an appId holds no ':', whoever signed the envelope.
        expect: v.includes(':')
          ? reject('ENVELOPE_INVALID', 'appId')
          : afterSignature(e, reject('IDENTITY_MISMATCH', 'appId')),
      })),
      fc.oneof(badEnvelopeString(64), fc.constant(undefined)).map((v) => ({
        label: 'appId broken',
        value: set('appId', v),
        expect: reject('ENVELOPE_INVALID', 'appId'),
      })),
      otherText({ min: 1, max: 100 }, STORE_KEY).map((v) => ({
        label: 'another storeKey',
        value: set('storeKey', v),
        expect: afterSignature(e, reject('IDENTITY_MISMATCH', 'storeKey')),
      })),
      fc.oneof(badEnvelopeString(100), fc.constant(undefined)).map((v) => ({
        label: 'storeKey broken',
        value: set('storeKey', v),
        expect: reject('ENVELOPE_INVALID', 'storeKey'),
      })),
      otherText({ min: 1, max: 100 }, STORE_KEY).map((v) => ({
        label: 'restaurantKey differs from storeKey',
        value: { ...base, restaurantKey: v },
        expect: reject('ENVELOPE_INVALID', 'restaurantKey'),
      })),
      alteredParam(e.env.param, entry).map((v) => ({
        label: 'param altered',
        value: set('param', v),
        expect:
          v === '' || v === e.env.param
            ? v === ''
              ? reject('ENVELOPE_INVALID', 'param')
              : e.expect
            : Buffer.from(v).equals(Buffer.from(e.env.param))
              ? TYPED
              : afterSignature(e, reject('SIGNATURE_INVALID', 'sign')),
      })),
      fc.oneof(badEnvelopeString(null), fc.constant(undefined)).map((v) => ({
        label: 'param broken',
        value: set('param', v),
        expect: reject('ENVELOPE_INVALID', 'param'),
      })),
      alteredSign(e.env.sign, entry).map((v) => ({
        label: 'sign altered',
        value: set('sign', v),
        expect: v === '' ? reject('ENVELOPE_INVALID', 'sign') : signOutcome(e, v, pool),
      })),
      fc.oneof(badEnvelopeString(null), fc.constant(undefined)).map((v) => ({
        label: 'sign broken',
        value: set('sign', v),
        expect: reject('ENVELOPE_INVALID', 'sign'),
      })),
      fc.constantFrom<unknown>([base], 'envelope', null, 1, true).map((v) => ({
        label: 'body not an object',
        value: v,
        expect: reject('ENVELOPE_INVALID', 'body'),
      })),
    );
    return fc.tuple(mutation, encoding).map(([m, how]): Case => {
      // Non-objects (and the fields JSON cannot carry) go as text; objects in any encoding.
      if (typeof m.value !== 'object' || m.value === null || Array.isArray(m.value))
        return { label: m.label, body: Buffer.from(JSON.stringify(m.value)), expect: m.expect };
      return { label: `${m.label} (${how})`, ...encode(m.value, how), expect: m.expect };
    });
  });

  /** Oversize bodies, invalid UTF-8 and byte-level damage to signed envelopes. */
  const damaged: fc.Arbitrary<Case> = entry.chain((e) => {
    const raw = Buffer.from(JSON.stringify(e.env));
    return fc.oneof(
      fc.integer({ min: 1, max: 1000 }).map((n) => ({
        label: 'padded past the limit',
        body: Buffer.concat([raw, Buffer.alloc(DEFAULT_MAX_MESSAGE_BYTES - raw.length + n, 0x20)]),
        expect: reject('TOO_LARGE', 'body'),
      })),
      fc.integer({ min: 1, max: 1_000_000 }).map((n) => ({
        label: 'parsed body declared too large',
        body: { ...e.env },
        rawSize: DEFAULT_MAX_MESSAGE_BYTES + n,
        expect: reject('TOO_LARGE', 'body'),
      })),
      fc.tuple(fc.nat(raw.length), fc.constantFrom(0xff, 0xfe, 0xc0, 0xc1, 0xf5)).map(([i, b]) => ({
        label: 'invalid UTF-8',
        body: Buffer.concat([raw.subarray(0, i), Buffer.of(b), raw.subarray(i)]),
        expect: reject('ENVELOPE_INVALID', 'body'),
      })),
      corruptBytes(raw).map((body) => ({
        label: 'bytes corrupted',
        body,
        expect: TYPED,
      })),
    );
  });

  const hostile: fc.Arbitrary<Case> = fc.oneof(
    bytes.map((body) => ({ label: 'arbitrary bytes', body, expect: TYPED })),
    jsonText.map((t) => ({
      label: 'arbitrary JSON',
      body: Buffer.from(t),
      expect: TYPED,
    })),
    fc.object({ maxDepth: 2, withNullPrototype: true }).map((body) => ({
      label: 'arbitrary object',
      body,
      expect: TYPED,
    })),
  );

  return fc.oneof(
    { weight: 3, arbitrary: hostile },
    { weight: 3, arbitrary: rewrapped },
    { weight: 5, arbitrary: nearValid },
    { weight: 2, arbitrary: damaged },
  );
}

/** The checks every outcome must pass, and the expected one where the case knows it. */
/** The store keys a body carries (long enough to be told apart): no rejection may echo them. */
function keysIn(body: Case['body']): string[] {
  let value: unknown = body;
  if (typeof body === 'string' || body instanceof Buffer) {
    try {
      value = JSON.parse(body.toString());
    } catch {
      return [];
    }
  }
  if (typeof value !== 'object' || value === null) return [];
  const { storeKey, restaurantKey } = value as Record<string, unknown>;
  return [storeKey, restaurantKey].filter(
    (k): k is string => typeof k === 'string' && [...k].length >= 12,
  );
}

export function checkOpened(
  c: Case,
  result: Opened<unknown>,
  signed: { authentic: ReadonlySet<string>; parse: (param: string) => unknown },
): void {
  if (result.ok) {
    assert.ok(
      signed.authentic.has(result.envelope.param),
      `${c.label}: accepted a param we never signed`,
    );
    assert.equal(result.envelope.appId, APP_ID);
    assert.equal(result.envelope.storeKey, STORE_KEY);
    assert.deepEqual(result.param, signed.parse(result.envelope.param));
    assert.notEqual(c.expect.kind, 'reject', `${c.label}: accepted, expected a rejection`);
    return;
  }
  const { error } = result;
  assertTypedRejection(error, { secrets: [STORE_KEY, ...keysIn(c.body)] });
  if (c.expect.kind === 'accept')
    assert.fail(`${c.label}: rejected a valid signed envelope: ${error.code} ${error.message}`);
  if (c.expect.kind === 'reject') {
    assert.equal(error.code, c.expect.code, `${c.label}: ${error.message}`);
    const { path } = c.expect;
    if (path !== undefined)
      assert.ok(
        error.message.startsWith(`${path}: `) || error.issues.some((i) => i.path === path),
        `${c.label}: expected ${path} to be named: ${error.message}`,
      );
  }
}
