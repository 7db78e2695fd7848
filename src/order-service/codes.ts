/**
 * Response codes of the reference order service (order-api §7 defines only 10000 and 21000; the
 * rest is ours, documented in docs/decisions.md). Codes are grouped like HTTP statuses so a
 * reader can guess the family: 400xx bad request, 401xx authentication, 413xx size, 415xx media.
 *
 * HTTP status policy: every request the service answers with an envelope is HTTP 200 with the
 * outcome in `code`, except a wrong Content-Type (415, since the body was never read as JSON), an
 * unknown path (404), and what node's HTTP parser refuses before there is a request to route
 * (400 malformed, 408 too slow, 431 headers too large; the connection is then closed).
 * 5xx is only used when the service itself fails (code 21000), never for a client's mistake.
 * Every answer, whatever its status, is the envelope and carries `X-Signature`.
 */
import { AgentError } from '../errors.js';
import { MAX_JSON_DEPTH, SERVICE_ERROR_CODE, SUCCESS_CODE } from '../protocol/index.js';

export const RESPONSE_CODES = {
  SUCCESS: { code: SUCCESS_CODE, message: 'success' },
  SERVICE_ERROR: {
    code: SERVICE_ERROR_CODE,
    message: 'Service error, please contact administrator',
  },
  /**
   * Body is not a JSON object, or the 2.1 envelope is malformed (field missing, wrong type, an
   * appId with `:`, which print-protocol v1.2 §10 refuses).
   */
  ENVELOPE_INVALID: { code: 40001, message: 'invalid request envelope' },
  /** `param` is not a JSON object encoded as a string. */
  PARAM_NOT_JSON: { code: 40002, message: 'param is not a JSON object string' },
  /**
   * `param` breaks a rule of 2.3/2.9/4.2/§8, or of print-protocol v1.2 §10 (a look-alike
   * paymentTransactionId); the message lists `path: rule`.
   */
  PARAM_INVALID: { code: 40003, message: 'invalid parameter' },
  /** More than one query mode in one request (order-api 4.1 rule 8 leaves it open). */
  QUERY_MODES_MIXED: { code: 40004, message: 'give one query mode per request' },
  /** Time range longer than 30 days (order-api §8). */
  RANGE_TOO_LONG: { code: 40005, message: 'time range exceeds 30 days' },
  /** Incremental query from an orderInnerNo or receiptNo this store does not have. */
  START_ORDER_UNKNOWN: { code: 40006, message: 'starting order not found' },
  /** The body, or the JSON in `param`, nests deeper than MAX_JSON_DEPTH (32); refused unparsed. */
  TOO_DEEP: { code: 40007, message: 'JSON nested too deep' },
  /**
   * print-protocol v1.1 §9: the paymentTransactionId already made an order of this store, and
   * this create asks for a different one (the message names the order and the differing fields).
   * Like HTTP 409: the request conflicts with what exists; sending it again cannot succeed, a
   * new paymentTransactionId can.
   */
  CREATE_CONFLICT: { code: 40901, message: 'paymentTransactionId already used for another order' },
  /** `sign` does not verify with the public key registered for the appId. */
  SIGNATURE_INVALID: { code: 40101, message: 'signature invalid' },
  /** Unknown appId, or storeKey not registered for that app. */
  IDENTITY_UNKNOWN: { code: 40102, message: 'unknown app or store' },
  /** Body larger than the configured limit. */
  TOO_LARGE: { code: 41300, message: 'request too large' },
  /**
   * print-protocol v1.1 §9: the order's signed print instruction would exceed the agents' message
   * limit (`agentMaxMessageBytes`, default 64 KiB), so no agent would print it; nothing is stored.
   */
  INSTRUCTION_TOO_LARGE: { code: 41301, message: 'print instruction too large' },
  /** Content-Type is not application/json (order-api 4.1, 4.2 header rule). */
  UNSUPPORTED_MEDIA_TYPE: { code: 41500, message: 'Content-Type must be application/json' },
  /** Unknown path or method. */
  NOT_FOUND: { code: 40400, message: 'not found' },
  /** Malformed HTTP, refused by node's parser (HTTP 400, connection closed). */
  HTTP_INVALID: { code: 40000, message: 'malformed HTTP request' },
  /** Headers or request not complete within the configured timeouts (HTTP 408, closed). */
  REQUEST_TIMEOUT: { code: 40800, message: 'request not received in time' },
  /** Headers larger than node's limit (HTTP 431, closed). */
  HEADERS_TOO_LARGE: { code: 43100, message: 'request headers too large' },
} as const;

export type ResponseCodeName = keyof typeof RESPONSE_CODES;

/**
 * A body (ENVELOPE_INVALID) or `param` (PARAM_INVALID) nested deeper than MAX_JSON_DEPTH, refused
 * before anything parses it. `details.maxDepth` is what sets it apart from other envelope and
 * param errors: it is answered 40007, not 40001 or 40003.
 */
export function nestedTooDeep(where: 'body' | 'param'): AgentError {
  return new AgentError(
    where === 'body' ? 'ENVELOPE_INVALID' : 'PARAM_INVALID',
    `${where}: nests deeper than ${MAX_JSON_DEPTH} levels`,
    { details: { maxDepth: MAX_JSON_DEPTH } },
  );
}

/**
 * The response code for a client's mistake (an `openEnvelope` failure, a body nested too deep),
 * from its catalogue code; null for a code that is not a client's mistake (the service's own
 * failure: 21000).
 */
export function codeForClientError(error: AgentError): ResponseCodeName | null {
  const deep = error.details.maxDepth !== undefined;
  switch (error.code) {
    case 'TOO_LARGE':
      return 'TOO_LARGE';
    case 'SIGNATURE_INVALID':
      return 'SIGNATURE_INVALID';
    case 'IDENTITY_MISMATCH':
      return 'IDENTITY_UNKNOWN';
    case 'PARAM_NOT_JSON':
      return 'PARAM_NOT_JSON';
    case 'PARAM_INVALID':
      return deep ? 'TOO_DEEP' : 'PARAM_INVALID';
    case 'ENVELOPE_INVALID':
      return deep ? 'TOO_DEEP' : 'ENVELOPE_INVALID';
    default:
      return null;
  }
}
