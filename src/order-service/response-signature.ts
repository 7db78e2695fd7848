/**
 * Signed responses (print-protocol v1.1 §8, v1.2 §10): every body the service sends carries
 * `X-Signature: <base64>`, the configured scheme with the service private key, so an agent's
 * catch-up can tell the service's answers from anyone else's.
 *
 * - A request with a valid `X-Request-Nonce` gets a version 2 signature, `X-Signature-Version: 2`:
 *   the context line, the method, the request target as received, the nonce and the store the
 *   request was authenticated for (empty when the service could not tell), then the body
 *   (protocol/response-binding.ts). The answer is then the answer to that request only.
 * - A request without one (an agent older than v1.2, a POS, curl), or with one that is not
 *   base64url of 16+ bytes, gets version 1: the body's bytes alone, no version header. Agents of
 *   v1.2 refuse those unless configured otherwise (decision 235).
 *
 * Signing costs about a millisecond of CPU. Many version 1 answers an unauthenticated client can
 * provoke are the same bytes every time (404, 415, a body too deep, a 408 timeout), so their
 * signatures are remembered: a flood of bad requests does not become a flood of RSA operations.
 * A version 2 signature is unique to its nonce and cannot be remembered; the connection caps
 * bound how many a client can ask for (decision 234).
 */
import {
  boundResponseBytes,
  isRequestNonce,
  RESPONSE_SIGNATURE_HEADER,
  RESPONSE_SIGNATURE_VERSION_HEADER,
  type RsaKey,
  type SignatureScheme,
  signBytes,
} from '../protocol/index.js';

/** Bodies remembered; enough for every constant error answer, small enough to be irrelevant. */
const REMEMBERED = 256;

/** What of a request its answer's signature binds to. */
export interface AnsweredRequest {
  method: string;
  /** The request target as received (path and query). */
  url: string;
  /** The request's `X-Request-Nonce` header, as it came (anything). */
  nonce: unknown;
  /** The store the request was authenticated for; empty when it was not. */
  storeId: string;
}

export class ResponseSigner {
  private readonly recent = new Map<string, string>();

  constructor(
    private readonly key: RsaKey,
    private readonly scheme: SignatureScheme,
  ) {}

  /** The signature of `body` as sent (its UTF-8 bytes): version 1. */
  sign(body: string | Uint8Array): string {
    if (typeof body !== 'string') return signBytes(body, this.key, this.scheme);
    const known = this.recent.get(body);
    if (known !== undefined) return known;
    const signature = signBytes(Buffer.from(body, 'utf8'), this.key, this.scheme);
    // Bodies with an order's data are unique: only short ones are worth remembering.
    if (body.length <= 512) {
      if (this.recent.size >= REMEMBERED) this.recent.delete(this.recent.keys().next().value!);
      this.recent.set(body, signature);
    }
    return signature;
  }

  /**
   * The signature headers of `body` as the answer to `request`: version 2 when it carries a valid
   * nonce (and a target the context line can hold), else version 1.
   */
  headers(body: string | Uint8Array, request: AnsweredRequest): Record<string, string> {
    if (isRequestNonce(request.nonce)) {
      const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
      let bound: Buffer | null = null;
      try {
        bound = boundResponseBytes(
          {
            method: request.method,
            path: request.url,
            nonce: request.nonce,
            storeId: request.storeId,
          },
          bytes,
        );
      } catch {
        // A target the context line cannot hold (white space, non-ASCII): version 1.
      }
      if (bound !== null)
        return {
          [RESPONSE_SIGNATURE_HEADER]: signBytes(bound, this.key, this.scheme),
          [RESPONSE_SIGNATURE_VERSION_HEADER]: '2',
        };
    }
    return { [RESPONSE_SIGNATURE_HEADER]: this.sign(body) };
  }
}
