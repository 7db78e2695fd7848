/**
 * `GET /openapi.json`: the OpenAPI document of the order API (issue 19), generated from the
 * schemas this service validates with and identical to the committed docs/api/openapi.json, so an
 * integrator can read the contract from the running service. Answered like every other body:
 * signed (`x-signature`) by the service's onSend hook.
 */
import type { FastifyInstance } from 'fastify';
import { orderApiDocument } from '../protocol/openapi.js';
import { RESPONSE_CODES, type ResponseCodeName } from './codes.js';
import { DEFAULT_MAX_BODY_BYTES } from './config.js';

export const OPENAPI_PATH = '/openapi.json';

/**
 * The statuses other than 200 an operation may answer with (codes.ts, "HTTP status policy"). An
 * unknown path or method (404) is not an operation's answer; the document says it in general.
 */
export const OPERATION_HTTP_STATUSES = {
  HTTP_INVALID: 400,
  REQUEST_TIMEOUT: 408,
  UNSUPPORTED_MEDIA_TYPE: 415,
  HEADERS_TOO_LARGE: 431,
  SERVICE_ERROR: 500,
} as const satisfies Partial<Record<ResponseCodeName, number>>;

/** The OpenAPI 3.1 document of this service (docs/api/openapi.json). */
export function orderServiceOpenApi(): Record<string, unknown> {
  return orderApiDocument({
    responseCodes: RESPONSE_CODES,
    httpStatuses: OPERATION_HTTP_STATUSES,
    documentPath: OPENAPI_PATH,
    maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
  });
}

/** Registers `GET /openapi.json` on the service's fastify instance. */
export function registerOpenApiRoute(app: FastifyInstance): void {
  // Generated at the first request, not at start (a few ms of schema conversion), then kept.
  let body: string | undefined;
  app.get(OPENAPI_PATH, async (_request, reply) => {
    body ??= JSON.stringify(orderServiceOpenApi());
    return reply.type('application/json; charset=utf-8').send(body);
  });
}
