/**
 * The OpenAPI 3.1 document of the order API as the reference order service implements it
 * (order-api 4.1, 4.2; print-protocol v1.1 §8-9): the create and list operations, the request
 * envelope with the content of `param`, the response envelopes, the response codes. Schemas come
 * from the zod schemas the service validates with (contract-documents.ts).
 *
 * The response codes belong to the order service (order-service/codes.ts), which this room does
 * not import: the caller passes them (order-service/openapi-route.ts).
 */
import type { z } from 'zod';
import {
  CONTRACT_VERSION,
  createParamsDocument,
  envelopeDocument,
  type JsonSchema,
  jsonText,
  queryParamsDocument,
  type SchemaOptions,
  toJsonSchema,
} from './contract-documents.js';
import { createParamsSchema, createResultSchema } from './create-params.js';
import { SUCCESS_CODE } from './envelope.js';
import { MAX_JSON_DEPTH } from './limits.js';
import { orderRecordSchema } from './order-record.js';
import { queryParamsSchema, queryResultSchema } from './query.js';
import {
  REQUEST_NONCE_HEADER,
  RESPONSE_SIGNATURE_CONTEXT,
  RESPONSE_SIGNATURE_VERSION_HEADER,
} from './response-binding.js';
import { RESPONSE_SIGNATURE_HEADER } from './signing.js';

export interface ResponseCodeEntry {
  code: number;
  message: string;
}

export interface OrderApiOptions {
  /** Every response code the service answers with, by name. */
  responseCodes: Readonly<Record<string, ResponseCodeEntry>>;
  /** The HTTP status of the answers that are not HTTP 200, by response code name. */
  httpStatuses: Readonly<Record<string, number>>;
  /** Where the service serves this document (GET). */
  documentPath: string;
  /** The default request body limit in bytes. */
  maxBodyBytes: number;
}

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** As the code spells it (lower case); HTTP header names are case-insensitive. */
const SIGNATURE_HEADER = RESPONSE_SIGNATURE_HEADER;
const VERSION_HEADER = RESPONSE_SIGNATURE_VERSION_HEADER;
/** The signature headers of every answer. */
const SIGNATURE_HEADERS = {
  [SIGNATURE_HEADER]: { $ref: '#/components/headers/Signature' },
  [VERSION_HEADER]: { $ref: '#/components/headers/SignatureVersion' },
};

function responseCodeTable(codes: Readonly<Record<string, ResponseCodeEntry>>): string {
  const rows = Object.entries(codes)
    .sort(([, a], [, b]) => a.code - b.code)
    .map(([name, { code, message }]) => `| ${code} | ${name} | ${message} |`);
  return ['| code | name | message |', '|---|---|---|', ...rows].join('\n');
}

function components(options: OrderApiOptions): Record<string, JsonSchema> {
  const refs = new Map<z.core.$ZodType, string>([
    [createParamsSchema, '#/components/schemas/CreateParams'],
    [queryParamsSchema, '#/components/schemas/QueryParams'],
    [orderRecordSchema, '#/components/schemas/OrderRecord'],
    [createResultSchema, '#/components/schemas/CreateResult'],
    [queryResultSchema, '#/components/schemas/QueryResult'],
  ]);
  const o: SchemaOptions = { dialect: 'draft-2020-12', refs };
  const codes = Object.values(options.responseCodes).map((c) => c.code);
  const success = (result: string, description: string): JsonSchema => ({
    type: 'object',
    description,
    properties: {
      code: { const: SUCCESS_CODE },
      message: { type: 'string' },
      data: {
        description:
          'The result as an object, or (a service configured with dataAsString, as the ' +
          "spec's sample does) the same object encoded as a JSON string (order-api 2.10).",
        anyOf: [
          schemaRef(result),
          jsonText(schemaRef(result), `The ${result} object as a JSON string.`),
        ],
      },
    },
    required: ['code', 'message', 'data'],
  });
  return {
    CreateParams: createParamsDocument(
      createParamsSchema,
      o,
      'Create parameters (order-api 2.9), with the limits of 2.9 and §8 and the rules of 4.2. ' +
        'Tolerated as the spec samples send them: paymentWay, transactionFeeType and discountType ' +
        'as numeric strings, and the unexplained paymentTransaction field (kept, not interpreted). ' +
        'A create is identified by (appId, storeKey, paymentTransactionId): the same create again ' +
        'answers the original order; different content under the same paymentTransactionId is ' +
        'refused (print-protocol v1.1 §9).',
    ),
    QueryParams: queryParamsDocument(queryParamsSchema, o),
    OrderRecord: {
      ...toJsonSchema(orderRecordSchema, o),
      description: 'An order record (order-api 2.5-2.8). Amounts are integer cents.',
    },
    CreateResult: {
      ...toJsonSchema(createResultSchema, o),
      description: 'The create result (order-api 2.10); takeoutNo is in the sample, not the list.',
    },
    QueryResult: {
      ...toJsonSchema(queryResultSchema, o),
      description:
        'The query result (order-api 2.4): one page; list is empty when nothing matches.',
    },
    CreateRequest: envelopeDocument(
      schemaRef('CreateParams'),
      o,
      'The request envelope (order-api 2.1) of a create: param holds the create parameters, ' +
        "signed with the store's private key registered for the appId.",
    ),
    ListRequest: envelopeDocument(
      schemaRef('QueryParams'),
      o,
      'The request envelope (order-api 2.1) of a query: param holds the query parameters, ' +
        "signed with the store's private key registered for the appId.",
    ),
    ResponseCode: {
      type: 'integer',
      enum: [...codes].sort((a, b) => a - b),
      description: `The outcome (order-api 2.2, §7; codes other than 10000 and 21000 are ours):\n\n${responseCodeTable(options.responseCodes)}`,
    },
    Failure: {
      type: 'object',
      description: 'A refused request or a failure: the reason in code and message, data null.',
      properties: {
        code: { $ref: '#/components/schemas/ResponseCode', not: { const: SUCCESS_CODE } },
        message: {
          type: 'string',
          description:
            'What went wrong; for a refused parameter, `path: rule` for each problem, joined with "; ".',
        },
        data: { type: 'null' },
      },
      required: ['code', 'message', 'data'],
    },
    CreateSuccess: success('CreateResult', 'A created order, or the original one of a repeat.'),
    ListSuccess: success('QueryResult', 'One page of orders.'),
    CreateResponse: {
      description: 'The response envelope (order-api 2.2) of a create.',
      oneOf: [schemaRef('CreateSuccess'), schemaRef('Failure')],
    },
    ListResponse: {
      description: 'The response envelope (order-api 2.2) of a query.',
      oneOf: [schemaRef('ListSuccess'), schemaRef('Failure')],
    },
  };
}

function responses(success: string, options: OrderApiOptions): JsonSchema {
  const headers = SIGNATURE_HEADERS;
  const out: JsonSchema = {
    '200': {
      description:
        'Every answer to a request that reached the operation, success or refusal: the ' +
        'outcome is in code (ResponseCode).',
      headers,
      content: { 'application/json': { schema: schemaRef(success) } },
    },
  };
  const statuses = Object.entries(options.httpStatuses).sort(([, a], [, b]) => a - b);
  for (const [name, status] of statuses) {
    const entry = options.responseCodes[name];
    if (entry === undefined) throw new Error(`httpStatuses: ${name} is not a response code`);
    out[String(status)] = {
      description: `${entry.message} (code ${entry.code})`,
      headers,
      content: {
        'application/json': {
          schema: {
            allOf: [
              schemaRef('Failure'),
              { type: 'object', properties: { code: { const: entry.code } } },
            ],
          },
        },
      },
    };
  }
  return out;
}

function operation(
  operationId: string,
  summary: string,
  description: string,
  request: string,
  success: string,
  options: OrderApiOptions,
): JsonSchema {
  return {
    operationId,
    summary,
    description,
    parameters: [{ $ref: '#/components/parameters/RequestNonce' }],
    requestBody: {
      required: true,
      content: { 'application/json': { schema: schemaRef(request) } },
    },
    responses: responses(success, options),
  };
}

/** The OpenAPI 3.1 document of the order API. */
export function orderApiDocument(options: OrderApiOptions): JsonSchema {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Order API (printer-agent reference order service)',
      version: CONTRACT_VERSION,
      description: [
        'Creating and querying restaurant orders (order-api.md), as the reference order service ' +
          'of printer-agent implements them, with the choices of print-protocol.md v1.1.',
        '',
        '- Every request is a signed envelope: `param` is a JSON object serialized into a ' +
          'string, and `sign` is an RSA signature over the exact bytes of that string, verified ' +
          "with the store's public key registered for the `appId`. The content of `param` is " +
          'described by `contentSchema`; a validator does not look inside the string by itself.',
        `- Every answer is the response envelope, signed: the \`${SIGNATURE_HEADER}\` header is ` +
          "the service's signature over the exact body bytes (print-protocol v1.1 §8), or, to a " +
          `request with \`${REQUEST_NONCE_HEADER}\`, over the request and the body, bound to it ` +
          `(\`${VERSION_HEADER}: 2\`, print-protocol v1.2 §10).`,
        '- Refusals are HTTP 200 with the reason in `code`; other statuses are listed per ' +
          'operation. An unknown path or method is HTTP 404 with code 40400.',
        `- Bodies are at most ${options.maxBodyBytes} bytes by default (configurable), and the ` +
          `body and the JSON in \`param\` are nested at most ${MAX_JSON_DEPTH} levels deep.`,
        '- Fields a schema does not list are ignored; new optional fields may appear in answers ' +
          'within this version, so clients ignore fields they do not know.',
      ].join('\n'),
    },
    paths: {
      '/open-api/order/create': {
        post: operation(
          'createOrder',
          'Create an order (order-api 4.2)',
          'Creates the order and publishes the signed print instruction for its payment receipt ' +
            "to the store's printer agent (print-protocol §4). A repeat of a create (same " +
            'paymentTransactionId and content) answers the original order and prints nothing ' +
            'again. A create whose print instruction would exceed what agents accept is refused.',
          'CreateRequest',
          'CreateResponse',
          options,
        ),
      },
      '/open-api/order/list': {
        post: operation(
          'listOrders',
          'Query orders (order-api 4.1)',
          "Orders of the envelope's store, by creation time range or incrementally after an " +
            'order number or the order of a receipt number, sorted by creation time, one page per ' +
            'request. Read every page; query at most every 10 s; data may appear up to 5 minutes ' +
            'late (order-api §8).',
          'ListRequest',
          'ListResponse',
          options,
        ),
      },
      [options.documentPath]: {
        get: {
          operationId: 'openApiDocument',
          summary: 'This document',
          responses: {
            '200': {
              description: 'The OpenAPI document of this service.',
              headers: SIGNATURE_HEADERS,
              content: { 'application/json': { schema: { type: 'object' } } },
            },
          },
        },
      },
    },
    components: {
      schemas: components(options),
      parameters: {
        RequestNonce: {
          name: REQUEST_NONCE_HEADER,
          in: 'header',
          required: false,
          description:
            'A fresh random value for each request, 16 or more random bytes in base64url ' +
            '(print-protocol v1.2 §10; the printer agent sends one with every query). The answer ' +
            `is then signed for this request (\`${VERSION_HEADER}: 2\`). Without one, or with one ` +
            'that is not base64url of 16+ bytes, the answer is signed over its body alone.',
          schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{22,128}={0,2}$' },
        },
      },
      headers: {
        Signature: {
          description:
            "The service's signature, standard base64, the configured scheme, the service " +
            'private key. Version 1 (no version header): over the exact bytes of the body ' +
            '(print-protocol v1.1 §8). Version 2: over the UTF-8 text ' +
            `\`"${RESPONSE_SIGNATURE_CONTEXT}\\n" + method + "\\n" + path and query + "\\n" + ` +
            `nonce + "\\n" + storeId + "\\n"\` followed by the exact bytes of the body; storeId is ` +
            'the id of the store whose envelope was authenticated, empty when the request was ' +
            'refused before (print-protocol v1.2 §10).',
          required: true,
          schema: { type: 'string', minLength: 1 },
        },
        SignatureVersion: {
          description:
            `\`2\` when the request carried a valid \`${REQUEST_NONCE_HEADER}\` and the signature ` +
            'covers the request as well as the body (print-protocol v1.2 §10); absent when it ' +
            'covers the body alone.',
          required: false,
          schema: { type: 'string', enum: ['2'] },
        },
      },
    },
  };
}
