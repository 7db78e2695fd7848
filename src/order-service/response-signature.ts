/**
 * Signed responses (print-protocol v1.1 §8): every body the service sends carries
 * `X-Signature: <base64>`, the configured scheme over the exact body bytes with the service
 * private key, so an agent's catch-up can tell the service's answers from anyone else's.
 *
 * Signing costs about a millisecond of CPU. Many answers an unauthenticated client can provoke
 * are the same bytes every time (404, 415, a body too deep, a 408 timeout), so the signatures of
 * recent bodies are remembered: a flood of bad requests does not become a flood of RSA operations.
 */
import { type RsaKey, type SignatureScheme, signBytes } from '../protocol/index.js';

/** Bodies remembered; enough for every constant error answer, small enough to be irrelevant. */
const REMEMBERED = 256;

export class ResponseSigner {
  private readonly recent = new Map<string, string>();

  constructor(
    private readonly key: RsaKey,
    private readonly scheme: SignatureScheme,
  ) {}

  /** The signature of `body` as sent (its UTF-8 bytes). */
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
}
