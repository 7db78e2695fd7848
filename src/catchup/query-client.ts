/**
 * The agent's client of the order query API (order-api 4.1; print-protocol §8): one signed POST
 * per page to `{baseUrl}/open-api/order/list`, over the catch-up link (service-link.ts).
 *
 * - The envelope (2.1) carries appId, storeKey and the query param as a JSON string, signed with
 *   the store's private key (print-protocol §3); the service verifies it with the public key it
 *   registered for the appId.
 * - The link enforces the transport rules and the body cap, and refuses an answer whose
 *   `X-Signature` does not verify before a byte of it is parsed: not one of its records, and not
 *   even its response code (an unauthenticated 40006 would otherwise reset the cursor).
 * - The answer is the answer to this request (print-protocol v1.2 §10): signed for this request's
 *   nonce, target and this store (`storeId`), and its `pageNum` is the page asked for, or it is
 *   refused whole (QUERY_REJECTED, `details.refused` bad-signature, wrong-store, wrong-page). An
 *   answer the service signed for no store (it could not tell whose request it was) is taken
 *   only as a refusal of the request: never as records, nor as 40006.
 * - Then, on the authenticated body: nesting depth (`tooDeep`) before JSON.parse, the protocol's
 *   own `parseResponse` (so `data` may come nested or as a JSON-encoded string, 2.10's sample),
 *   the result shell (2.4), at most `pageSize` records, and each order record (2.5) on its own, so
 *   one malformed record cannot hide the rest of its page.
 * - Every failure is an `AgentError`: QUERY_FAILED when no usable answer came (unreachable, TLS
 *   refused, timeout, not JSON, malformed), QUERY_REJECTED when the answer was refused (unsigned,
 *   badly signed, over a cap: `details.refused`) or the service answered with a failure code
 *   (`details.responseCode`). The storeKey never appears in an error: it is scrubbed from the
 *   service's message text, and bodies are never quoted.
 */
import { z } from 'zod';
import { AgentError, isAgentError } from '../errors.js';
import { scrubText, secretForms } from '../logging.js';
import {
  buildEnvelope,
  DEFAULT_SIGNATURE_SCHEME,
  describeIssues,
  type OrderRecord,
  orderRecordSchema,
  parseResponse,
  parseWith,
  type QueryParamsInput,
  queryParamsSchema,
  queryResultSchema,
  type RsaKey,
  SERVICE_ERROR_CODE,
} from '../protocol/index.js';
import { MAX_JSON_DEPTH, tooDeep } from '../protocol/limits.js';
import { deriveStoreId } from '../protocol/store-id.js';
import {
  type AnswerBinding,
  type Authentication,
  type RawAnswer,
  ServiceLink,
  type ServiceLinkOptions,
} from './service-link.js';
import type { CatchUpTransportKind } from './transport.js';

export const QUERY_PATH = '/open-api/order/list';
/** The reference order service's answer to an incremental query from an order it does not have. */
export const START_ORDER_UNKNOWN_CODE = 40006;

export interface QueryClientOptions extends Omit<ServiceLinkOptions, 'url' | 'scrub'> {
  /** The service's base URL; a path prefix is kept (`https://host/api` -> `.../api/open-api/...`). */
  baseUrl: string;
  appId: string;
  /** SECRET: travels in the envelope only. */
  storeKey: string;
  /** The store's private key: signs `param`. */
  key: RsaKey;
  /**
   * The store answers must be signed for (v1.2 §10): the agent's storeId. Default: derived from
   * appId and storeKey (print-protocol §1), as the reference service derives it.
   */
  storeId?: string;
}

/** One query's parameters (order-api 2.3): exactly one mode, plus the page. */
export type QueryRequest = (
  | { startTime: string; endTime: string }
  | { orderInnerNo: string }
  | { receiptNo: string }
) & { pageNum: number; pageSize: number };

/** An element of `list`: a record that holds to 2.5, or why one does not. */
export type PageEntry =
  | { ok: true; record: OrderRecord }
  | { ok: false; orderNo: string | null; problem: string };

/**
 * How a page was authenticated (print-protocol §8): its `X-Signature` verified with the service
 * key, or it came over verified https with signatures explicitly off. There is no third value: an
 * answer that is neither never becomes a page.
 */
export type PageAuthentication = Authentication;

/** 2.4, with the records checked one by one. */
export interface QueryPage {
  total: number;
  pageNum: number;
  pageSize: number;
  entries: PageEntry[];
  authenticated: PageAuthentication;
  /** The signature's version (v1.2 §10): 2 bound to the request, 1 the body alone; null: off. */
  signedVersion?: 1 | 2 | null;
}

/** What the poller needs of a client (a fake can stand in for it). */
export interface QueryApi {
  query(request: QueryRequest, signal?: AbortSignal): Promise<QueryPage>;
  /** Set when the transport is allowed but unsafe (the lab switch): logged at every round. */
  readonly transportWarning?: string | null;
  /**
   * Set when version 1 signatures are accepted (v1.2 §10, `catchUp.allowV1Signatures`): logged
   * at every round, with how many of the round's answers were version 1.
   */
  readonly signatureWarning?: string | null;
}

/** 2.4 with `list` left open: records are checked one at a time below. */
const pageSchema = queryResultSchema.extend({
  list: z.array(z.unknown(), { error: 'must be an array' }),
});

export class QueryClient implements QueryApi {
  readonly url: string;
  private readonly link: ServiceLink;
  private readonly secretForms: readonly string[];

  constructor(private readonly options: QueryClientOptions) {
    this.url = `${options.baseUrl.replace(/\/+$/, '')}${QUERY_PATH}`;
    this.secretForms = secretForms([options.storeKey]);
    const {
      baseUrl: _baseUrl,
      appId: _appId,
      storeKey: _storeKey,
      key: _key,
      storeId,
      ...link
    } = options;
    this.link = new ServiceLink({
      ...link,
      url: this.url,
      storeId: storeId ?? deriveStoreId(options.appId, options.storeKey),
      scrub: (text: string) => this.scrub(text),
    });
  }

  get signatureWarning(): string | null {
    if (this.options.allowV1Signatures !== true || this.link.signatures === 'off') return null;
    return (
      'catchUp.allowV1Signatures is true: answers signed version 1 (the body alone) are accepted, ' +
      'so a captured page of the service verifies as the answer to any other query, page or ' +
      "store's query (print-protocol v1.2 §10). Remove it once the order service signs v2"
    );
  }

  get transport(): CatchUpTransportKind {
    return this.link.transport;
  }

  get transportWarning(): string | null {
    return this.link.transportWarning;
  }

  async query(request: QueryRequest, signal?: AbortSignal): Promise<QueryPage> {
    // Our own mistakes are caught here rather than spent on the service's rate limit.
    const checked = parseWith(queryParamsSchema, request as QueryParamsInput);
    if (!checked.ok)
      throw new AgentError('PARAM_INVALID', `query: ${describeIssues(checked.issues)}`, {
        issues: checked.issues,
      });
    const envelope = buildEnvelope({
      appId: this.options.appId,
      storeKey: this.options.storeKey,
      param: request,
      key: this.options.key,
      scheme: this.options.scheme ?? DEFAULT_SIGNATURE_SCHEME,
    });

    // Authenticated (or refused) before a byte of the body is parsed.
    const answer = await this.link.post(JSON.stringify(envelope), signal);
    return this.read(answer, request, answer);
  }

  /** Step 2: the authenticated body, parsed with every bound checked before the work it bounds. */
  private read(
    answer: RawAnswer,
    request: QueryRequest,
    signed: {
      authenticated: PageAuthentication;
      signedVersion: 1 | 2 | null;
      bound: AnswerBinding;
    },
  ): QueryPage {
    const { pageSize, pageNum } = request;
    const status = answer.status;
    const text = answer.bytes.toString('utf8');
    if (tooDeep(text)) throw this.tooDeep(status);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new AgentError(
        'QUERY_FAILED',
        `${this.url}: HTTP ${status}, and the answer is not JSON (${answer.bytes.length} bytes)`,
        { details: { httpStatus: status } },
      );
    }
    // `data` may be a JSON text of its own (2.10): bounded the same way before it is parsed.
    const data = (body as { data?: unknown } | null)?.data;
    if (typeof data === 'string' && tooDeep(data)) throw this.tooDeep(status);
    let parsed: ReturnType<typeof parseResponse<typeof pageSchema>>;
    try {
      parsed = parseResponse(body, pageSchema);
    } catch (cause) {
      const detail = isAgentError(cause) ? this.scrub(cause.message) : String(cause);
      throw new AgentError('QUERY_FAILED', `${this.url}: malformed answer: ${detail}`, {
        cause,
        details: { httpStatus: status },
      });
    }
    // Signed for this request, but not for a store: the service did not know whose it was, so it
    // can only have refused it. Records, or "no such order for this store", are not that.
    if (signed.bound === 'no-store' && (parsed.ok || parsed.code === START_ORDER_UNKNOWN_CODE))
      throw new AgentError(
        'QUERY_REJECTED',
        `${this.url}: HTTP ${status}, the answer is signed for no store, not for this store ` +
          `(${this.link.storeId}), yet it ${parsed.ok ? 'lists orders' : `answers ${parsed.code}`}: ` +
          'refused (print-protocol v1.2 §10)',
        { details: { httpStatus: status, refused: 'wrong-store' } },
      );
    if (!parsed.ok) {
      const message = this.scrub(parsed.message);
      throw new AgentError(
        'QUERY_REJECTED',
        `${this.url}: the service answered ${parsed.code}${message ? `: ${message}` : ''}`,
        {
          // 21000 is the service's own trouble (order-api §7): worth trying again.
          retryable: parsed.code === SERVICE_ERROR_CODE,
          details: { responseCode: parsed.code, httpStatus: status },
        },
      );
    }
    if (parsed.data.kind !== 'object') {
      throw new AgentError(
        'QUERY_FAILED',
        `${this.url}: success without a result (data is ${parsed.data.kind})`,
        { details: { httpStatus: status } },
      );
    }
    const page = parsed.data.value;
    // v1.2 §10: the page asked for, not another page of the same query (a page signed for this
    // request says which page it is; the service echoes the pageNum it was asked for).
    if (page.pageNum !== pageNum)
      throw new AgentError(
        'QUERY_REJECTED',
        `${this.url}: the answer is page ${page.pageNum}, page ${pageNum} was asked for: refused ` +
          'whole (print-protocol v1.2 §10)',
        {
          details: {
            httpStatus: status,
            refused: 'wrong-page',
            pageNum: page.pageNum,
            asked: pageNum,
          },
        },
      );
    if (page.list.length > pageSize)
      throw new AgentError(
        'QUERY_REJECTED',
        `${this.url}: ${page.list.length} records on a page of ${pageSize} asked for: refused whole`,
        { details: { httpStatus: status, refused: 'too-many-records', records: page.list.length } },
      );
    return {
      total: page.total,
      pageNum: page.pageNum,
      pageSize: page.pageSize,
      entries: page.list.map((item, i) => entry(item, i)),
      authenticated: signed.authenticated,
      signedVersion: signed.signedVersion,
    };
  }

  private tooDeep(status: number): AgentError {
    return new AgentError(
      'QUERY_REJECTED',
      `${this.url}: the answer nests deeper than ${MAX_JSON_DEPTH} levels: refused unparsed`,
      { details: { httpStatus: status, refused: 'too-deep' } },
    );
  }

  /** The storeKey out of a text that may quote it (the logger's forms: raw, escaped, encoded). */
  private scrub(text: string): string {
    return scrubText(text, this.secretForms);
  }
}

function entry(item: unknown, index: number): PageEntry {
  const parsed = parseWith(orderRecordSchema, item, `data.list[${index}]`);
  if (parsed.ok) return { ok: true, record: parsed.value };
  const orderNo = (item as { orderInnerNo?: unknown } | null)?.orderInnerNo;
  return {
    ok: false,
    orderNo:
      typeof orderNo === 'string' && orderNo.length > 0 && orderNo.length <= 64 ? orderNo : null,
    problem: describeIssues(parsed.issues),
  };
}
