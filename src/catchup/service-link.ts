/**
 * The catch-up link to the order service (print-protocol v1.1 §8): one POST, its answer read off
 * the socket up to a cap, and the answer's `X-Signature` checked, before anything else looks at
 * it. The query client builds on it, and `doctor` probes the service with it.
 *
 * - Transport: https with the certificate verified (system CAs, or the pinned `catchUp.caFile`);
 *   http only to loopback, or with the lab switch (`transportWarning` says so, and the poller
 *   logs it every round). The rules live in transport.ts and are checked again here, so a link can
 *   never be built for a transport the config would refuse.
 * - The body is read up to QUERY_RESPONSE_MAX_BYTES: a larger one is refused and its connection
 *   destroyed, never buffered. node:http rather than fetch, which can neither stop a body at a cap
 *   nor take a CA file without another dependency.
 * - An answer without a valid signature is refused whole (QUERY_REJECTED, `details.refused`
 *   unsigned or bad-signature), unless signatures are off, which is allowed over https only.
 * - The answer is bound to its request (print-protocol v1.2 §10): each POST carries a fresh
 *   `X-Request-Nonce`, and the signature must be version 2 over the context line, this method,
 *   this request target, this nonce and this store, then the body. A signature for another
 *   request, nonce or store is a bad signature. Version 1 (the body alone, which verifies for any
 *   request) is refused (`details.refused` v1-signature) unless `allowV1Signatures` says
 *   otherwise; the poller then warns at every round. An answer bound to no store (the service
 *   could not tell whose request it was) is marked so: it can only be a refusal (query-client.ts).
 */
import type { IncomingMessage, RequestOptions } from 'node:http';
import { createRequire } from 'node:module';
import type { LookupFunction } from 'node:net';
import { AgentError } from '../errors.js';
import { isLoopbackAddress } from '../host/loopback.js';
import { tlsFailure } from '../host/tls-failure.js';
import { QUERY_RESPONSE_MAX_BYTES } from '../protocol/limits.js';
import {
  boundResponseBytes,
  newRequestNonce,
  REQUEST_NONCE_HEADER,
  RESPONSE_SIGNATURE_VERSION_HEADER,
  type ResponseBinding,
} from '../protocol/response-binding.js';
import {
  DEFAULT_SIGNATURE_SCHEME,
  RESPONSE_SIGNATURE_HEADER,
  type RsaKey,
  type SignatureScheme,
  verifyBytes,
} from '../protocol/signing.js';
import {
  type CatchUpTransportKind,
  catchUpTransportIssues,
  catchUpTransportKind,
  insecureHttpWarning,
} from './transport.js';

export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

export interface ServiceLinkOptions {
  /** The full URL requests go to. */
  url: string;
  scheme?: SignatureScheme;
  /** Bound on one request, answer body included. */
  timeoutMs?: number;
  /** The service's public key: verifies `X-Signature`. Required unless `responseSignature` is off. */
  serviceKey?: RsaKey;
  /** print-protocol §8: `required` (default) or `off` (https only). */
  responseSignature?: 'required' | 'off';
  /**
   * The store answers must be bound to (v1.2 §10): the agent's storeId. Unset: answers are bound
   * to no store, which only a refusal of the request is (the `doctor` probe).
   */
  storeId?: string;
  /** v1.2 §10: accept version 1 signatures (the body alone, not bound to the request). */
  allowV1Signatures?: boolean;
  /** PEM certificates that verify the service (https); default the system CAs. */
  ca?: string;
  /** Lab switch: http:// to a host other than loopback. */
  allowInsecureHttp?: boolean;
  /** Cap of one answer body; default QUERY_RESPONSE_MAX_BYTES (tests use a smaller one). */
  maxResponseBytes?: number;
  /** Takes secrets out of a message (the query client's storeKey). */
  scrub?: (text: string) => string;
}

/** An answer as read off the socket: nothing of it trusted yet. */
export interface RawAnswer {
  status: number;
  signature: string | undefined;
  /** `X-Signature-Version` as received: absent (version 1), `2`, or anything. */
  signatureVersion: string | undefined;
  bytes: Buffer;
}

/**
 * What a verified signature bound the answer to (v1.2 §10): `store`, this request for this store;
 * `no-store`, this request, which the service did not attribute to a store (only a refusal can
 * be that); `none`, nothing (version 1, allowed explicitly, or signatures off).
 */
export type AnswerBinding = 'store' | 'no-store' | 'none';

/**
 * How an answer was authenticated: its `X-Signature` verified with the service key, or it came
 * over verified https with signatures explicitly off. There is no third value.
 */
export type Authentication = 'signature' | 'tls';

export class ServiceLink {
  readonly url: string;
  readonly transport: CatchUpTransportKind;
  /** Set for the lab switch (http to a host other than loopback). */
  readonly transportWarning: string | null;
  readonly signatures: 'required' | 'off';
  /** The store answers are bound to (v1.2 §10); empty: none (the probe). */
  readonly storeId: string;
  private readonly target: URL;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly scrub: (text: string) => string;

  constructor(private readonly options: ServiceLinkOptions) {
    this.url = options.url;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    this.maxBytes = options.maxResponseBytes ?? QUERY_RESPONSE_MAX_BYTES;
    this.signatures = options.responseSignature ?? 'required';
    this.storeId = options.storeId ?? '';
    this.scrub = options.scrub ?? ((text) => text);
    const kind = catchUpTransportKind(options.url);
    if (kind === null)
      throw new AgentError('CONFIG_INVALID', 'catchUp.baseUrl: must start with https://');
    // The config check refuses these first; repeated so no caller can build an unsafe link.
    const issues = catchUpTransportIssues(options.url, {
      allowInsecureHttp: options.allowInsecureHttp === true,
      caFile: options.ca !== undefined,
      responseSignature: this.signatures,
    });
    if (issues.length > 0)
      throw new AgentError(
        'CONFIG_INVALID',
        issues.map((i) => `catchUp.${i.field}: ${i.message}`).join('; '),
      );
    if (this.signatures === 'required' && !options.serviceKey)
      throw new AgentError(
        'CONFIG_INVALID',
        'keys.servicePublicKeyFile: is required to verify catch-up answers (catchUp.responseSignature is "required")',
      );
    this.transport = kind;
    this.transportWarning = kind === 'http-insecure' ? insecureHttpWarning(options.url) : null;
    this.target = new URL(options.url);
  }

  /** The request target as node sends it: path and query. */
  private get path(): string {
    return `${this.target.pathname}${this.target.search}`;
  }

  /** POSTs `body` and returns the answer only once it is authenticated. */
  async post(
    body: string,
    signal?: AbortSignal,
  ): Promise<
    RawAnswer & { authenticated: Authentication; signedVersion: 1 | 2 | null; bound: AnswerBinding }
  > {
    const nonce = newRequestNonce();
    const answer = await this.exchange(body, nonce, signal);
    const binding = { method: 'POST', path: this.path, nonce, storeId: this.storeId };
    return { ...answer, ...this.authenticate(answer, binding) };
  }

  /**
   * For `doctor`: POSTs an empty object (no secret, no query: the service answers it with an
   * error envelope, signed like every answer) and says whether the answer's signature verifies.
   * Transport failures (unreachable, TLS refused, too large) throw as they would for a query.
   */
  async probe(): Promise<{
    status: number;
    /** `v1`: a valid signature of the body alone (a service older than v1.2 §10). */
    signature: 'valid' | 'v1' | 'missing' | 'invalid' | 'unchecked';
  }> {
    const nonce = newRequestNonce();
    const answer = await this.exchange('{}', nonce);
    const header = answer.signature?.trim();
    const status = answer.status;
    if (!header) return { status, signature: 'missing' };
    if (!this.options.serviceKey) return { status, signature: 'unchecked' };
    // The probe sends no store: the service's answer is bound to no store.
    const binding = { method: 'POST', path: this.path, nonce, storeId: '' };
    if (answer.signatureVersion?.trim() === '2')
      return { status, signature: this.verify(answer, header, binding) ? 'valid' : 'invalid' };
    return { status, signature: this.verify(answer, header, null) ? 'v1' : 'invalid' };
  }

  /** Whether `signature` verifies over the answer as bound (version 2), or its body alone. */
  private verify(answer: RawAnswer, signature: string, binding: ResponseBinding | null): boolean {
    return verifyBytes(
      binding ? boundResponseBytes(binding, answer.bytes) : answer.bytes,
      signature,
      this.options.serviceKey!,
      this.options.scheme ?? DEFAULT_SIGNATURE_SCHEME,
    );
  }

  /**
   * Step 1, before anything of the body is looked at: is it the service's? A missing or bad
   * signature refuses the whole answer, success or failure code alike.
   */
  private authenticate(
    answer: RawAnswer,
    binding: ResponseBinding,
  ): { authenticated: Authentication; signedVersion: 1 | 2 | null; bound: AnswerBinding } {
    // Only a verified https connection gets here with signatures off (the constructor).
    if (this.signatures === 'off')
      return { authenticated: 'tls', signedVersion: null, bound: 'none' };
    const status = answer.status;
    const signature = answer.signature?.trim();
    if (signature === undefined || signature === '')
      throw new AgentError(
        'QUERY_REJECTED',
        `${this.url}: HTTP ${status}, the answer carries no X-Signature: refused unread ` +
          '(catchUp.responseSignature is "required"; print-protocol §8)',
        { details: { httpStatus: status, refused: 'unsigned' } },
      );
    const version = answer.signatureVersion?.trim();
    if (version === '2') {
      if (this.verify(answer, signature, binding))
        return { authenticated: 'signature', signedVersion: 2, bound: 'store' };
      // The service could not tell whose request it was (a refusal before the envelope held).
      if (binding.storeId !== '' && this.verify(answer, signature, { ...binding, storeId: '' }))
        return { authenticated: 'signature', signedVersion: 2, bound: 'no-store' };
      throw new AgentError(
        'QUERY_REJECTED',
        `${this.url}: HTTP ${status}, the answer's X-Signature does not verify with the service ` +
          'public key (keys.servicePublicKeyFile) for this request (its nonce, target and store; ' +
          'print-protocol v1.2 §10): refused unread',
        { details: { httpStatus: status, refused: 'bad-signature', signatureVersion: 2 } },
      );
    }
    if (version !== undefined && version !== '' && version !== '1')
      throw new AgentError(
        'QUERY_REJECTED',
        `${this.url}: HTTP ${status}, the answer's X-Signature-Version is not 1 or 2: refused unread`,
        { details: { httpStatus: status, refused: 'bad-signature' } },
      );
    if (this.options.allowV1Signatures !== true)
      throw new AgentError(
        'QUERY_REJECTED',
        `${this.url}: HTTP ${status}, the answer is signed version 1 (its body alone, not bound ` +
          'to this request: a captured answer would verify as the answer to any query): refused ' +
          'unread (print-protocol v1.2 §10: the service signs v2 when the request carries ' +
          'X-Request-Nonce; catchUp.allowV1Signatures accepts v1 from an older service)',
        { details: { httpStatus: status, refused: 'v1-signature', signatureVersion: 1 } },
      );
    if (!this.verify(answer, signature, null))
      throw new AgentError(
        'QUERY_REJECTED',
        `${this.url}: HTTP ${status}, the answer's X-Signature does not verify with the service ` +
          'public key (keys.servicePublicKeyFile): refused unread',
        { details: { httpStatus: status, refused: 'bad-signature', signatureVersion: 1 } },
      );
    return { authenticated: 'signature', signedVersion: 1, bound: 'none' };
  }

  /**
   * One POST and its answer, the body read up to the cap. Over the cap (declared or counted) the
   * connection is destroyed at once: the rest is never read, so a huge answer costs no memory.
   */
  private exchange(body: string, nonce: string, signal?: AbortSignal): Promise<RawAnswer> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const combined = signal ? anySignal(signal, timeout) : timeout;
    const https = this.target.protocol === 'https:';
    const options: RequestOptions & { ca?: string; rejectUnauthorized?: boolean } = {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'content-length': Buffer.byteLength(body),
        // v1.2 §10: the service binds its answer to it (a fresh one per request).
        [REQUEST_NONCE_HEADER]: nonce,
      },
      // A connection of its own per query (queries are 10 s apart): destroying it on a refused
      // answer can never hurt another request.
      agent: false,
      ...(https ? { rejectUnauthorized: true } : {}),
      ...(https && this.options.ca !== undefined ? { ca: this.options.ca } : {}),
      ...(this.transport === 'http-loopback' ? { lookup: loopbackOnlyLookup } : {}),
    };
    return new Promise<RawAnswer>((resolve, reject) => {
      let settled = false;
      let response: IncomingMessage | null = null;
      const finish = (error: AgentError | null, answer?: RawAnswer) => {
        if (settled) return;
        settled = true;
        combined.removeEventListener('abort', onAbort);
        if (error) {
          response?.destroy();
          req.destroy();
          reject(error);
        } else resolve(answer!);
      };
      const onAbort = () => finish(this.abortError(timeout, signal));
      const req = requestFor(https)(this.target, options);
      if (combined.aborted) {
        onAbort();
        return;
      }
      combined.addEventListener('abort', onAbort, { once: true });
      req.on('error', (cause) => finish(this.transportError(cause)));
      req.on('response', (res) => {
        response = res;
        const status = res.statusCode ?? 0;
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > this.maxBytes) {
          finish(this.tooLarge(status, declared));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (settled) return;
          size += chunk.length;
          if (size > this.maxBytes) {
            finish(this.tooLarge(status, null));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          const header = res.headers[RESPONSE_SIGNATURE_HEADER];
          const version = res.headers[RESPONSE_SIGNATURE_VERSION_HEADER];
          finish(null, {
            status,
            // Two X-Signature headers are not one signature: joined, they fail to verify.
            signature: Array.isArray(header) ? header.join(', ') : header,
            // Nor are two versions one: joined, neither 1 nor 2.
            signatureVersion: Array.isArray(version) ? version.join(', ') : version,
            bytes: Buffer.concat(chunks, size),
          });
        });
        res.on('error', (cause) => finish(this.transportError(cause)));
        res.on('aborted', () =>
          finish(
            new AgentError('QUERY_FAILED', `${this.url}: the answer was cut off`, {
              details: { httpStatus: status },
            }),
          ),
        );
      });
      req.end(body);
    });
  }

  private tooLarge(status: number, declared: number | null): AgentError {
    return new AgentError(
      'QUERY_REJECTED',
      `${this.url}: HTTP ${status}, the answer is larger than ${this.maxBytes} bytes` +
        `${declared !== null ? ` (Content-Length ${declared})` : ''}: refused, connection closed ` +
        '(print-protocol §8)',
      {
        details: {
          httpStatus: status,
          refused: 'too-large',
          limitBytes: this.maxBytes,
          ...(declared !== null ? { declaredBytes: declared } : {}),
        },
      },
    );
  }

  private abortError(timeout: AbortSignal, signal?: AbortSignal): AgentError {
    if (signal?.aborted)
      return new AgentError('QUERY_FAILED', `${this.url}: cancelled (the agent is stopping)`, {
        details: { cancelled: true },
      });
    if (timeout.aborted)
      return new AgentError('QUERY_FAILED', `${this.url}: no answer within ${this.timeoutMs} ms`, {
        details: { timeout: true },
      });
    return new AgentError('QUERY_FAILED', `${this.url}: aborted`);
  }

  private transportError(cause: unknown): AgentError {
    const error = cause as NodeJS.ErrnoException | undefined;
    const code = error?.code;
    const text = this.scrub(error?.message ?? '');
    // One vocabulary with the broker's TLS failures (src/host/tls-failure.ts).
    const failure = error ? tlsFailure(error, { clientCertificate: false, peer: 'service' }) : null;
    if (failure)
      return new AgentError(
        'QUERY_FAILED',
        `${this.url}: TLS check failed (${failure.check}): ${this.scrub(failure.reason)}; ${failure.fix}`,
        {
          cause,
          details: { tls: code ?? failure.check, tlsCheck: failure.check, fix: failure.fix },
        },
      );
    if (code?.startsWith('ERR_SSL'))
      return new AgentError(
        'QUERY_FAILED',
        `${this.url}: the TLS handshake failed (${code}: ${text}); is it an https port?`,
        { cause, details: { tls: code } },
      );
    // Our own refusal of a loopback name that resolved elsewhere explains itself.
    const reason = code === 'ENOTLOOPBACK' ? text : (code ?? error?.message ?? String(cause));
    return new AgentError('QUERY_FAILED', `${this.url}: unreachable (${this.scrub(reason)})`, {
      cause,
    });
  }
}

/**
 * Node's http, https (with tls) and dns modules load with the first query, not with the agent:
 * the agent's start does not wait for what catch-up needs only later, and loading them cost it
 * about 10 ms (issue 16: exec -> online).
 */
const load = <T>(name: string): T => createRequire(import.meta.url)(name) as T;
const requestFor = (https: boolean): typeof import('node:http').request =>
  https
    ? load<typeof import('node:https')>('node:https').request
    : load<typeof import('node:http')>('node:http').request;

/**
 * http to a loopback name (`localhost`): connect only if it resolved to loopback. A literal
 * address never comes here (and was checked by the rules); this catches a hosts file or resolver
 * that maps `localhost` elsewhere.
 */
const loopbackOnlyLookup: LookupFunction = (hostname, options, callback) => {
  const { lookup } = load<typeof import('node:dns')>('node:dns');
  lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) {
      callback(error, '', 4);
      return;
    }
    const list = addresses as Array<{ address: string; family: number }>;
    const outside = list.find((a) => !isLoopbackAddress(a.address));
    if (outside || list.length === 0) {
      const refused = Object.assign(
        new Error(
          `${hostname} resolves to ${outside?.address ?? 'nothing'}, not loopback: http:// is only for loopback`,
        ),
        { code: 'ENOTLOOPBACK' },
      );
      callback(refused, '', 4);
      return;
    }
    if (options.all) (callback as (e: null, a: typeof list) => void)(null, list);
    else callback(null, list[0]!.address, list[0]!.family);
  });
};

/** `AbortSignal.any` (Node 20.3+), with a fallback for the first Node 20 releases. */
function anySignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  if (typeof AbortSignal.any === 'function') return AbortSignal.any([a, b]);
  const controller = new AbortController();
  for (const s of [a, b]) {
    if (s.aborted) controller.abort(s.reason);
    else s.addEventListener('abort', () => controller.abort(s.reason), { once: true });
  }
  return controller.signal;
}
