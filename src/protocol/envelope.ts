/**
 * The common request envelope (order-api 2.1), the response envelope (2.2), and the helpers to
 * build and open a signed envelope (print-protocol §3).
 *
 * Opening is ordered so that nothing unauthenticated is ever parsed: size, envelope shape,
 * signature over the raw `param` string, and only then `JSON.parse(param)` (kept for the failure's
 * `signed` part, which names the job), identity, `storeId` (v1.1 §4) and the schema. No JSON text
 * nested deeper than MAX_JSON_DEPTH is parsed (print-protocol §9). Every failure is an
 * `AgentError` with a stable code and never echoes the storeKey.
 */
import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { AgentError } from '../errors.js';
import { DEFAULT_MAX_MESSAGE_BYTES, MAX_JSON_DEPTH, tooDeep } from './limits.js';
import {
  DEFAULT_SIGNATURE_SCHEME,
  type RsaKey,
  type SignatureScheme,
  signParam,
  verifyParam,
} from './signing.js';
import { appIdSchema } from './store-id.js';
import { describeIssues, parseWith, text, typeError } from './validation.js';

export const STORE_KEY_MAX = 100;

const requiredString = () => z.string({ error: typeError('a string') }).min(1, 'must not be empty');

/**
 * 2.1, as received. `restaurantKey` is the incremental-query samples' name for `storeKey`
 * (4.1 rule 6): accepted as an alias and normalized to `storeKey`.
 */
export const requestEnvelopeSchema = z
  .object({
    appId: appIdSchema,
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
  /**
   * print-protocol v1.1 §4: the store this receiver is. A `storeId` in param other than this one
   * is IDENTITY_MISMATCH; a param without one is refused too (the schema usually says so first).
   */
  storeId?: string;
  /**
   * A body over `maxBytes` but at most this many bytes is still opened far enough to verify its
   * signature, so that its TOO_LARGE rejection can name the job when the signature holds
   * (`signed` of the failure). It stays TOO_LARGE whatever the signature says. Default: not done.
   */
  verifyOversizeUpTo?: number;
}

/**
 * What a failure knows for sure: set only when the signature over `param` held, so `param` (the
 * parsed object, when it is one and not nested too deep) is authentic enough to name the job or
 * command in the rejection. Never set for an unsigned or badly signed message.
 */
export interface SignedPart {
  envelope: RequestEnvelope;
  param: Record<string, unknown> | null;
}

export type Opened<T> =
  | { ok: true; envelope: RequestEnvelope; param: T }
  | { ok: false; error: AgentError; signed?: SignedPart };

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

function fail(
  code: ConstructorParameters<typeof AgentError>[0],
  message: string,
  issues?: AgentError['issues'],
  signed?: SignedPart,
) {
  return {
    ok: false as const,
    error: new AgentError(code, message, issues ? { issues } : {}),
    ...(signed ? { signed } : {}),
  };
}

const TOO_DEEP = `nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects (the limit, print-protocol §9)`;

/** One decoder for every body: without `stream`, `decode` keeps no state between calls. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** JSON.parse, refusing text nested deeper than MAX_JSON_DEPTH before anything walks it. */
function parseBounded(text: string): { ok: true; value: unknown } | { ok: false; deep: boolean } {
  if (tooDeep(text)) return { ok: false, deep: true };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, deep: false };
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The authentic part of an envelope whose signature held: its param when it parses. */
function signedPart(envelope: RequestEnvelope): SignedPart {
  const parsed = parseBounded(envelope.param);
  return { envelope, param: parsed.ok && isObject(parsed.value) ? parsed.value : null };
}

function keyFor(options: OpenOptions<z.ZodType>, appId: string): RsaKey | undefined {
  return typeof options.verifyKey === 'function' ? options.verifyKey(appId) : options.verifyKey;
}

/**
 * An oversized body (up to `verifyOversizeUpTo`): TOO_LARGE in every case, with the signed part
 * when the envelope parses and its signature holds. Nothing of param is read otherwise.
 */
function oversize(
  text: string,
  size: number,
  options: OpenOptions<z.ZodType>,
): ReturnType<typeof fail> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const message = `body: is ${size} bytes; the limit is ${maxBytes}`;
  const parsed = parseBounded(text);
  if (!parsed.ok || !isObject(parsed.value)) return fail('TOO_LARGE', message);
  const env = parseWith(requestEnvelopeSchema, parsed.value);
  if (!env.ok) return fail('TOO_LARGE', message);
  const key = keyFor(options, env.value.appId);
  const scheme = options.scheme ?? DEFAULT_SIGNATURE_SCHEME;
  if (key === undefined || !verifyParam(env.value.param, env.value.sign, key, scheme))
    return fail('TOO_LARGE', message);
  return fail('TOO_LARGE', message, undefined, signedPart(env.value));
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
    const oversized = size > maxBytes;
    if (
      oversized &&
      (options.verifyOversizeUpTo === undefined || size > options.verifyOversizeUpTo)
    )
      return fail('TOO_LARGE', `body: is ${size} bytes; the limit is ${maxBytes}`);
    let textBody: string;
    try {
      textBody = typeof body === 'string' ? body : STRICT_UTF8.decode(body);
    } catch {
      if (oversized) return fail('TOO_LARGE', `body: is ${size} bytes; the limit is ${maxBytes}`);
      return fail('ENVELOPE_INVALID', 'body: must be UTF-8 text');
    }
    if (oversized) return oversize(textBody, size, options);
    const parsed = parseBounded(textBody);
    if (!parsed.ok)
      return fail(
        'ENVELOPE_INVALID',
        parsed.deep ? `body: ${TOO_DEEP}` : 'body: must be a JSON object',
      );
    value = parsed.value;
  } else if (size !== undefined && size > maxBytes) {
    return fail('TOO_LARGE', `body: is ${size} bytes; the limit is ${maxBytes}`);
  }
  if (!isObject(value)) {
    return fail('ENVELOPE_INVALID', 'body: must be a JSON object');
  }
  const env = parseWith(requestEnvelopeSchema, value);
  if (!env.ok) return fail('ENVELOPE_INVALID', describeIssues(env.issues), env.issues);
  const envelope = env.value;

  const key = keyFor(options, envelope.appId);
  if (key === undefined) return fail('IDENTITY_MISMATCH', 'appId: is not a known application');
  if (
    !verifyParam(envelope.param, envelope.sign, key, options.scheme ?? DEFAULT_SIGNATURE_SCHEME)
  ) {
    return fail(
      'SIGNATURE_INVALID',
      'sign: does not verify over param with the configured key and scheme',
    );
  }
  // From here on the signature held: failures carry the authentic part (the job's ids).
  const parsed = parseBounded(envelope.param);
  const signed: SignedPart = {
    envelope,
    param: parsed.ok && isObject(parsed.value) ? parsed.value : null,
  };

  const identity = options.identity;
  if (typeof identity === 'function') {
    if (!identity(envelope.appId, envelope.storeKey)) {
      return fail('IDENTITY_MISMATCH', 'storeKey: is not a store of this appId', undefined, signed);
    }
  } else {
    if (envelope.appId !== identity.appId)
      return fail('IDENTITY_MISMATCH', "appId: is not this store's appId", undefined, signed);
    if (!sameSecret(envelope.storeKey, identity.storeKey)) {
      return fail('IDENTITY_MISMATCH', "storeKey: is not this store's storeKey", undefined, signed);
    }
  }

  if (!parsed.ok && parsed.deep)
    return fail('PARAM_INVALID', `param: ${TOO_DEEP}`, undefined, signed);
  if (!parsed.ok || signed.param === null) {
    return fail(
      'PARAM_NOT_JSON',
      'param: must be a JSON object encoded as a string',
      undefined,
      signed,
    );
  }
  const param = signed.param;
  // print-protocol v1.1 §4: a genuine instruction for another store, re-wrapped in this store's
  // envelope fields, must not print here. A storeId that is not a string is the schema's to name.
  if (
    options.storeId !== undefined &&
    typeof param.storeId === 'string' &&
    param.storeId !== options.storeId
  ) {
    return fail(
      'IDENTITY_MISMATCH',
      `storeId: names store ${JSON.stringify(param.storeId.slice(0, 64))}, not this store (${options.storeId})`,
      undefined,
      signed,
    );
  }
  // Paths are relative to param (`order.productInfo[3].quantity`); the code says it is param.
  const result = parseWith(options.paramSchema, param);
  if (!result.ok)
    return fail('PARAM_INVALID', describeIssues(result.issues), result.issues, signed);
  if (options.storeId !== undefined && param.storeId === undefined) {
    return fail(
      'IDENTITY_MISMATCH',
      `storeId: is required; it must name this store (${options.storeId})`,
      undefined,
      signed,
    );
  }
  return { ok: true, envelope, param: result.value };
}
