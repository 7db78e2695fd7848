/**
 * The common request envelope (order-api 2.1), the response envelope (2.2), and the helpers to
 * build and open a signed envelope (print-protocol §3).
 *
 * Opening is ordered so that nothing unauthenticated is ever parsed: size, envelope shape,
 * signature over the raw `param` string, identity, and only then `JSON.parse(param)` and the
 * schema. Every failure is an `AgentError` with a stable code and never echoes the storeKey.
 */
import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { AgentError } from '../errors.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from './print-protocol.js';
import {
  DEFAULT_SIGNATURE_SCHEME,
  type RsaKey,
  type SignatureScheme,
  signParam,
  verifyParam,
} from './signing.js';
import { describeIssues, parseWith, text, typeError } from './validation.js';

export const STORE_KEY_MAX = 100;

const requiredString = () => z.string({ error: typeError('a string') }).min(1, 'must not be empty');

/**
 * 2.1, as received. `restaurantKey` is the incremental-query samples' name for `storeKey`
 * (4.1 rule 6): accepted as an alias and normalized to `storeKey`.
 */
export const requestEnvelopeSchema = z
  .object({
    appId: text(1, 64),
    storeKey: text(1, STORE_KEY_MAX).optional(),
    restaurantKey: text(1, STORE_KEY_MAX).optional(),
    param: requiredString(),
    sign: requiredString(),
  })
  .transform((e, ctx) => {
    if (
      e.storeKey !== undefined &&
      e.restaurantKey !== undefined &&
      e.storeKey !== e.restaurantKey
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['restaurantKey'],
        message: 'must equal storeKey when both are given (restaurantKey is an alias)',
      });
      return z.NEVER;
    }
    const storeKey = e.storeKey ?? e.restaurantKey;
    if (storeKey === undefined) {
      ctx.addIssue({ code: 'custom', path: ['storeKey'], message: 'is required' });
      return z.NEVER;
    }
    return { appId: e.appId, storeKey, param: e.param, sign: e.sign };
  });

export type RequestEnvelope = z.output<typeof requestEnvelopeSchema>;

export const SUCCESS_CODE = 10000;
export const SERVICE_ERROR_CODE = 21000;

/** 2.2 as sent by a service: `data` nested, a JSON-encoded string, a boolean, or null. */
export const responseEnvelopeSchema = z.object({
  code: z.number().int('must be an integer'),
  message: z.string().nullish(),
  data: z.unknown().optional(),
});

export type ResponseData<T> =
  | { kind: 'object'; value: T }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'null' };

export interface ParsedResponse<T> {
  code: number;
  message: string;
  ok: boolean;
  data: ResponseData<T>;
}

/**
 * Reads a response envelope whichever documented shape `data` has (order-api 4.1 rule 7, 2.10):
 * a nested object, the same object encoded as a JSON string, a boolean, or null.
 */
export function parseResponse<S extends z.ZodType>(
  body: unknown,
  dataSchema: S,
): ParsedResponse<z.output<S>> {
  const env = parseWith(responseEnvelopeSchema, body);
  if (!env.ok)
    throw new AgentError('ENVELOPE_INVALID', `response: ${describeIssues(env.issues)}`, {
      issues: env.issues,
    });
  const { code, message, data } = env.value;
  const base = { code, message: message ?? '', ok: code === SUCCESS_CODE };
  if (data === null || data === undefined) return { ...base, data: { kind: 'null' } };
  if (typeof data === 'boolean')
    return { ...base, ok: base.ok && data, data: { kind: 'boolean', value: data } };
  let value: unknown = data;
  if (typeof data === 'string') {
    try {
      value = JSON.parse(data);
    } catch {
      throw new AgentError('ENVELOPE_INVALID', 'response.data: is a string but not JSON');
    }
  }
  const parsed = parseWith(dataSchema, value, 'data');
  if (!parsed.ok)
    throw new AgentError('PARAM_INVALID', describeIssues(parsed.issues), { issues: parsed.issues });
  return { ...base, data: { kind: 'object', value: parsed.value } };
}

/** A response envelope to send; `dataAsString` mimics the spec's sample (data JSON-encoded). */
export function buildResponse(
  code: number,
  message: string,
  data: unknown,
  options: { dataAsString?: boolean } = {},
) {
  const encoded =
    options.dataAsString && data !== null && typeof data === 'object' ? JSON.stringify(data) : data;
  return { code, message, data: encoded ?? null };
}

/**
 * Builds a signed envelope. An object `param` is serialized once with JSON.stringify; the
 * signature covers exactly that string, which travels unchanged.
 */
export function buildEnvelope(options: {
  appId: string;
  storeKey: string;
  param: string | object;
  key: RsaKey;
  scheme?: SignatureScheme;
}) {
  const param = typeof options.param === 'string' ? options.param : JSON.stringify(options.param);
  return {
    appId: options.appId,
    storeKey: options.storeKey,
    param,
    sign: signParam(param, options.key, options.scheme ?? DEFAULT_SIGNATURE_SCHEME),
  };
}

export interface OpenOptions<S extends z.ZodType> {
  /** The key that must have signed `param`; a function looks it up by appId (unknown app: undefined). */
  verifyKey: RsaKey | ((appId: string) => RsaKey | undefined);
  scheme?: SignatureScheme;
  /** Whose envelope this may be: a fixed identity, or a predicate over appId and storeKey. */
  identity: { appId: string; storeKey: string } | ((appId: string, storeKey: string) => boolean);
  paramSchema: S;
  maxBytes?: number;
}

export type Opened<T> =
  | { ok: true; envelope: RequestEnvelope; param: T }
  | { ok: false; error: AgentError };

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

function fail(
  code: ConstructorParameters<typeof AgentError>[0],
  message: string,
  issues?: AgentError['issues'],
) {
  return { ok: false as const, error: new AgentError(code, message, issues ? { issues } : {}) };
}

/**
 * Opens an envelope received as raw bytes, a string or an already-parsed object (the HTTP
 * framework parses JSON bodies; pass `rawSize` then). Never throws for bad input.
 */
export function openEnvelope<S extends z.ZodType>(
  body: Uint8Array | string | object,
  options: OpenOptions<S>,
  rawSize?: number,
): Opened<z.output<S>> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  let size = rawSize;
  let value: unknown = body;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    size = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.byteLength;
    if (size > maxBytes)
      return fail('TOO_LARGE', `body: is ${size} bytes; the limit is ${maxBytes}`);
    let textBody: string;
    try {
      textBody =
        typeof body === 'string' ? body : new TextDecoder('utf-8', { fatal: true }).decode(body);
    } catch {
      return fail('ENVELOPE_INVALID', 'body: must be UTF-8 text');
    }
    try {
      value = JSON.parse(textBody);
    } catch {
      return fail('ENVELOPE_INVALID', 'body: must be a JSON object');
    }
  } else if (size !== undefined && size > maxBytes) {
    return fail('TOO_LARGE', `body: is ${size} bytes; the limit is ${maxBytes}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return fail('ENVELOPE_INVALID', 'body: must be a JSON object');
  }
  const env = parseWith(requestEnvelopeSchema, value);
  if (!env.ok) return fail('ENVELOPE_INVALID', describeIssues(env.issues), env.issues);
  const envelope = env.value;

  const key =
    typeof options.verifyKey === 'function' ? options.verifyKey(envelope.appId) : options.verifyKey;
  if (key === undefined) return fail('IDENTITY_MISMATCH', 'appId: is not a known application');
  if (
    !verifyParam(envelope.param, envelope.sign, key, options.scheme ?? DEFAULT_SIGNATURE_SCHEME)
  ) {
    return fail(
      'SIGNATURE_INVALID',
      'sign: does not verify over param with the configured key and scheme',
    );
  }

  const identity = options.identity;
  if (typeof identity === 'function') {
    if (!identity(envelope.appId, envelope.storeKey)) {
      return fail('IDENTITY_MISMATCH', 'storeKey: is not a store of this appId');
    }
  } else {
    if (envelope.appId !== identity.appId)
      return fail('IDENTITY_MISMATCH', "appId: is not this store's appId");
    if (!sameSecret(envelope.storeKey, identity.storeKey)) {
      return fail('IDENTITY_MISMATCH', "storeKey: is not this store's storeKey");
    }
  }

  let param: unknown;
  try {
    param = JSON.parse(envelope.param);
  } catch {
    return fail('PARAM_NOT_JSON', 'param: must be a JSON object encoded as a string');
  }
  if (typeof param !== 'object' || param === null || Array.isArray(param)) {
    return fail('PARAM_NOT_JSON', 'param: must be a JSON object encoded as a string');
  }
  // Paths are relative to param (`order.productInfo[3].quantity`); the code says it is param.
  const parsed = parseWith(options.paramSchema, param);
  if (!parsed.ok) return fail('PARAM_INVALID', describeIssues(parsed.issues), parsed.issues);
  return { ok: true, envelope, param: parsed.value };
}
