/**
 * The agent's client of the order query API (order-api 4.1; print-protocol §8): one signed POST
 * per page to `{baseUrl}/open-api/order/list`.
 *
 * - The envelope (2.1) carries appId, storeKey and the query param as a JSON string, signed with
 *   the store's private key (print-protocol §3); the service verifies it with the public key it
 *   registered for the appId.
 * - The answer is read with the protocol's own `parseResponse`, so `data` may come nested or as a
 *   JSON-encoded string (2.10's sample). The result shell (2.4) must hold; each order record (2.5)
 *   is checked on its own, so one malformed record cannot hide the rest of its page.
 * - Every failure is an `AgentError`: QUERY_FAILED when no usable answer came (unreachable,
 *   timeout, not JSON, malformed), QUERY_REJECTED when the service answered with a failure code
 *   (`details.responseCode`). The storeKey never appears in an error: it is scrubbed from the
 *   service's message text, and bodies are never quoted.
 */
import { z } from 'zod';
import { AgentError, isAgentError } from '../errors.js';
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
  type SignatureScheme,
} from '../protocol/index.js';

export const QUERY_PATH = '/open-api/order/list';
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

export interface QueryClientOptions {
  /** The service's base URL; a path prefix is kept (`https://host/api` -> `.../api/open-api/...`). */
  baseUrl: string;
  appId: string;
  /** SECRET: travels in the envelope only. */
  storeKey: string;
  /** The store's private key: signs `param`. */
  key: RsaKey;
  scheme?: SignatureScheme;
  /** Bound on one request, answer body included. */
  timeoutMs?: number;
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

/** 2.4, with the records checked one by one. */
export interface QueryPage {
  total: number;
  pageNum: number;
  pageSize: number;
  entries: PageEntry[];
}

/** What the poller needs of a client (a fake can stand in for it). */
export interface QueryApi {
  query(request: QueryRequest, signal?: AbortSignal): Promise<QueryPage>;
}

/** 2.4 with `list` left open: records are checked one at a time below. */
const pageSchema = queryResultSchema.extend({
  list: z.array(z.unknown(), { error: 'must be an array' }),
});

export class QueryClient implements QueryApi {
  readonly url: string;
  private readonly timeoutMs: number;

  constructor(private readonly options: QueryClientOptions) {
    this.url = `${options.baseUrl.replace(/\/+$/, '')}${QUERY_PATH}`;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
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

    const timeout = AbortSignal.timeout(this.timeoutMs);
    const combined = signal ? anySignal(signal, timeout) : timeout;
    let status: number;
    let text: string;
    try {
      const response = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(envelope),
        signal: combined,
      });
      status = response.status;
      text = await response.text();
    } catch (cause) {
      throw this.transportError(cause, timeout, signal);
    }

    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new AgentError(
        'QUERY_FAILED',
        `${this.url}: HTTP ${status}, and the answer is not JSON (${text.length} bytes)`,
        { details: { httpStatus: status } },
      );
    }
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
    return {
      total: page.total,
      pageNum: page.pageNum,
      pageSize: page.pageSize,
      entries: page.list.map((item, i) => entry(item, i)),
    };
  }

  private transportError(cause: unknown, timeout: AbortSignal, signal?: AbortSignal): AgentError {
    if (signal?.aborted)
      return new AgentError('QUERY_FAILED', `${this.url}: cancelled (the agent is stopping)`, {
        cause,
        details: { cancelled: true },
      });
    if (timeout.aborted)
      return new AgentError('QUERY_FAILED', `${this.url}: no answer within ${this.timeoutMs} ms`, {
        cause,
        details: { timeout: true },
      });
    // undici puts the useful part (ECONNREFUSED, ENOTFOUND...) in the cause.
    const inner = (cause as { cause?: { code?: string; message?: string } })?.cause;
    const reason = inner?.code ?? inner?.message ?? (cause as Error)?.message ?? String(cause);
    return new AgentError('QUERY_FAILED', `${this.url}: unreachable (${this.scrub(reason)})`, {
      cause,
    });
  }

  private scrub(text: string): string {
    const secret = this.options.storeKey;
    return secret.length > 0 ? text.split(secret).join('***') : text;
  }
}

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
