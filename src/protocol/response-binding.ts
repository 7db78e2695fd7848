/**
 * print-protocol v1.2 §10: a catch-up answer is bound to its question. The agent sends a fresh
 * random nonce with every list request (`X-Request-Nonce`, 16+ random bytes, base64url); the
 * service's `X-Signature` then covers a context line and the request as well as the body:
 *
 *     "printer-agent catch-up response v2\n" + METHOD + "\n" + path-and-query + "\n" +
 *     nonce + "\n" + storeId + "\n" + <the exact body bytes>
 *
 * and `X-Signature-Version: 2` says so. Version 1 (no version header) is the signature of the
 * body alone (v1.1 §8): any captured answer verifies as the answer to any request.
 *
 * None of the four fields can hold a line feed (a method is a token, a request target has no
 * white space, a nonce is base64url, a store id is letters, digits, `-` and `_`), so the framing
 * is unambiguous; `boundResponseBytes` refuses anything else rather than sign it.
 *
 * `storeId` is the store whose request the service authenticated (the agent's own storeId), or
 * empty when the service could not tell whose request it was (a refusal before the envelope
 * held): such an answer can only be a refusal of that request, never records (decision 234).
 */
import { randomBytes } from 'node:crypto';

/** The request header that carries the agent's nonce. */
export const REQUEST_NONCE_HEADER = 'x-request-nonce';
/** The answer header that says which bytes `X-Signature` covers: absent or `1`, or `2`. */
export const RESPONSE_SIGNATURE_VERSION_HEADER = 'x-signature-version';
/** The first line of the bytes a version 2 signature covers. */
export const RESPONSE_SIGNATURE_CONTEXT = 'printer-agent catch-up response v2';
/** Random bytes in each nonce the agent makes (the protocol asks for 16 or more). */
export const REQUEST_NONCE_BYTES = 24;

/**
 * A nonce the service binds its answer to: base64url of 16 or more bytes (22 characters
 * unpadded), at most 128 characters, `=` padding tolerated.
 */
const NONCE = /^[A-Za-z0-9_-]{22,128}={0,2}$/;
/** A store id in the context line: what `storeId` allows (config), or empty (no store). */
const STORE_ID = /^[A-Za-z0-9_-]{0,64}$/;
const METHOD = /^[A-Z]{1,16}$/;
/** A request target as sent in origin form: no white space or control characters. */
const PATH = /^\/[\x21-\x7e]*$/;

/** What a version 2 signature binds the answer to. */
export interface ResponseBinding {
  method: string;
  /** The request target as sent: path and query (`/open-api/order/list`). */
  path: string;
  nonce: string;
  /** The store the request was authenticated for; empty when the service could not tell. */
  storeId: string;
}

/** A fresh nonce for one request: REQUEST_NONCE_BYTES random bytes, base64url, unpadded. */
export function newRequestNonce(): string {
  return randomBytes(REQUEST_NONCE_BYTES).toString('base64url');
}

/** Whether a request's `X-Request-Nonce` is one a version 2 signature may bind to. */
export function isRequestNonce(value: unknown): value is string {
  return typeof value === 'string' && NONCE.test(value);
}

/** The bytes a version 2 signature covers: the context lines, then the exact body bytes. */
export function boundResponseBytes(binding: ResponseBinding, body: Uint8Array): Buffer {
  const { method, path, nonce, storeId } = binding;
  if (!METHOD.test(method) || !PATH.test(path) || !isRequestNonce(nonce) || !STORE_ID.test(storeId))
    throw new Error('response binding: a field is not what the context line allows');
  const context = `${RESPONSE_SIGNATURE_CONTEXT}\n${method}\n${path}\n${nonce}\n${storeId}\n`;
  return Buffer.concat([Buffer.from(context, 'utf8'), body]);
}
