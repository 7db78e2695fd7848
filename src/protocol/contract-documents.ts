/**
 * What the two contract documents share (issue 19): the OpenAPI document of the order API
 * (openapi.ts) and the AsyncAPI document of the print protocol (asyncapi.ts), written to
 * docs/api/ by packaging/api-docs.ts and served by the reference service.
 *
 * Every schema in them is generated from the zod schemas the code validates with, so the documents
 * cannot drift from the code. What `z.toJSONSchema` cannot see is handled here, each in one place:
 * - checks zod runs as refinements (lengths in code points, integers, code tables, timestamps)
 *   come from the `contractFacts` registry that the building blocks of validation.ts fill;
 * - the cross-field rules (order-api 4.2 rules 2-4, one query mode per request) are restated as
 *   JSON Schema below; test/docs/contract-documents.test.ts checks on generated and broken values
 *   that the documents accept exactly what the code accepts;
 * - what JSON Schema cannot say at all (a time range's order and length, the signature, the
 *   identity, nesting depth, sizes) is said in descriptions.
 */
import { z } from 'zod';
import { DISCOUNT_PWD, DISCOUNT_SC, ORDER_TYPE_TAKEOUT, PAYMENT_WAY_ONLINE } from './codes.js';
import { requestEnvelopeSchema } from './envelope.js';
import { MAX_JSON_DEPTH } from './limits.js';
import { QUERY_LIMITS } from './query.js';
import { SIGNATURE_SCHEMES } from './signing.js';
import { contractFacts, lenientCodePattern } from './validation.js';

/** The contract's version (print-protocol.md "Version"): both documents carry it. */
export const CONTRACT_VERSION = 'v1.1';

export type JsonSchema = Record<string, unknown>;

/**
 * OpenAPI 3.1 schemas are JSON Schema 2020-12. AsyncAPI 3.0's default schema format is a superset
 * of draft-07, which every AsyncAPI tool reads (a 2020-12 schema would need a schemaFormat that
 * AsyncAPI tools are not required to support).
 */
export type Dialect = 'draft-2020-12' | 'draft-07';

export interface SchemaOptions {
  dialect: Dialect;
  /**
   * Schemas that are components of the document, by their reference: wherever one occurs inside
   * the schema being converted, it becomes `{"$ref": ...}` instead of a copy.
   */
  refs?: ReadonlyMap<z.core.$ZodType, string>;
}

/**
 * The facts of the contract registry over whatever the global registry holds (`.meta()`,
 * `.describe()`): a description added to a protocol schema later still reaches the documents.
 * toJSONSchema only ever calls `get` on it.
 */
const metadata = {
  get(schema: z.core.$ZodType): Record<string, unknown> | undefined {
    const global = z.globalRegistry.get(schema);
    const fact = contractFacts.get(schema);
    return global === undefined && fact === undefined ? undefined : { ...global, ...fact };
  },
} as unknown as z.core.$ZodRegistry<Record<string, unknown>>;

/**
 * The JSON Schema of what `schema` accepts as input (what a sender must send; zod strips unknown
 * keys, so objects stay open). Nothing unrepresentable passes silently: zod throws.
 */
export function toJsonSchema(schema: z.ZodType, options: SchemaOptions): JsonSchema {
  const refs = options.refs ?? new Map<z.core.$ZodType, string>();
  const root: z.core.$ZodType = schema;
  const json = z.toJSONSchema(schema, {
    target: options.dialect,
    io: 'input',
    unrepresentable: 'throw',
    metadata,
    override: (ctx) => {
      const ref = refs.get(ctx.zodSchema);
      if (ref === undefined || ctx.zodSchema === root) return;
      const target = ctx.jsonSchema as JsonSchema;
      for (const key of Object.keys(target)) delete target[key];
      target.$ref = ref;
    },
  }) as JsonSchema;
  // Each schema is a part of a document, which says its dialect once.
  delete json.$schema;
  return json;
}

/** A string whose content is JSON described by `contentSchema` (JSON Schema 2019-09 and later). */
export function jsonText(contentSchema: JsonSchema, description: string): JsonSchema {
  return {
    type: 'string',
    description,
    contentMediaType: 'application/json',
    contentSchema,
  };
}

/** `fields` are present and not null: the code's rules read null as "not given". */
function given(...fields: string[]): JsonSchema {
  return {
    required: fields,
    properties: Object.fromEntries(fields.map((f) => [f, { not: { type: 'null' } }])),
  };
}

/** Not given: absent or null. */
function absent(field: string): JsonSchema {
  return { not: given(field) };
}

/** The value is one of `values` of a lenient code (a number, or the number in a string). */
function lenientCode(...values: number[]): JsonSchema {
  return {
    anyOf: [{ enum: values }, { type: 'string', pattern: lenientCodePattern(values) }],
  };
}

/**
 * order-api 4.2 rules 2-4 as JSON Schema (create-params.ts checks them in a refinement, which
 * toJSONSchema cannot see).
 */
function createRules(): JsonSchema[] {
  const when = (field: string, value: JsonSchema) => ({
    required: [field],
    properties: { [field]: value },
  });
  return [
    conditional(
      'order-api 4.2 rule 2: takeout orders (orderType 3) give both fees',
      when('orderType', { const: ORDER_TYPE_TAKEOUT }),
      given('deliveryFee', 'packingFee'),
    ),
    conditional(
      'order-api 4.2 rule 3: online payment (paymentWay 1) gives the channel and both transaction times',
      when('paymentWay', lenientCode(PAYMENT_WAY_ONLINE)),
      given('paymentChannel', 'transactionCreateTime', 'transactionReturnTime'),
    ),
    conditional(
      'order-api 4.2 rule 4: PWD and SC discounts (discountType 2, 4) give discountNo and discounterName',
      when('discountType', lenientCode(DISCOUNT_PWD, DISCOUNT_SC)),
      given('discountNo', 'discounterName'),
    ),
    conditional(
      'order-api 4.2 rule 4: a PWD discount (discountType 2) also gives its validity',
      when('discountType', lenientCode(DISCOUNT_PWD)),
      given('discountValidityPeriod'),
    ),
  ];
}

/** JSON Schema's `if`/`then`. */
function conditional(description: string, condition: JsonSchema, rule: JsonSchema): JsonSchema {
  // biome-ignore lint/suspicious/noThenProperty: the JSON Schema keyword; this object is data, never awaited
  return { description, if: condition, then: rule };
}

/** The create parameters (order-api 2.9), with the rules of 4.2. */
export function createParamsDocument(
  schema: z.ZodType,
  options: SchemaOptions,
  description: string,
): JsonSchema {
  return {
    ...toJsonSchema(schema, options),
    description: `${description} Null stands for an absent optional field. Fields not listed are ignored.`,
    allOf: createRules(),
  };
}

/**
 * The query parameters (order-api 2.3, 4.1): exactly one mode. query.ts decides the mode in a
 * transform; the same decision as JSON Schema.
 */
export function queryParamsDocument(schema: z.ZodType, options: SchemaOptions): JsonSchema {
  const timeFields = ['startTime', 'endTime'];
  const modes: Array<[string, string[], string[]]> = [
    ['time range', timeFields, ['orderInnerNo', 'receiptNo']],
    ['after an order number', ['orderInnerNo'], [...timeFields, 'receiptNo']],
    ['after the order of a receipt number', ['receiptNo'], [...timeFields, 'orderInnerNo']],
  ];
  return {
    ...toJsonSchema(schema, options),
    description:
      `Query parameters (order-api 2.3): exactly one query mode per request; a mixed request is ` +
      `refused (4.1 rule 8 leaves it open; ours). Not expressible here, checked by the service: ` +
      `endTime must not be before startTime, and a time range spans at most ` +
      `${QUERY_LIMITS.maxRangeDays} days. pageNum defaults to ${QUERY_LIMITS.pageNumDefault}, ` +
      `pageSize to ${QUERY_LIMITS.pageSizeDefault}.`,
    oneOf: modes.map(([title, required, others]) => ({
      title,
      allOf: [given(...required), ...others.map(absent)],
    })),
  };
}

/**
 * The signed envelope (order-api 2.1, print-protocol §3) whose `param` carries JSON described by
 * `paramContent`.
 */
export function envelopeDocument(
  paramContent: JsonSchema,
  options: SchemaOptions,
  description: string,
): JsonSchema {
  const json = toJsonSchema(requestEnvelopeSchema, options);
  const properties = json.properties as Record<string, JsonSchema>;
  properties.param = {
    ...properties.param,
    description:
      `The parameters as a JSON object serialized into a string; the signature covers the exact ` +
      `UTF-8 bytes of this string, so it travels unchanged and is parsed only after the signature ` +
      `holds. Nested at most ${MAX_JSON_DEPTH} levels deep.`,
    contentMediaType: 'application/json',
    contentSchema: paramContent,
  };
  properties.sign = {
    ...properties.sign,
    description:
      `Standard base64 RSA signature over the UTF-8 bytes of param, with the scheme the receiver ` +
      `is configured for (${SIGNATURE_SCHEMES.join(' or ')}; the default RSA-SHA256 is ` +
      `PKCS#1 v1.5 with SHA-256, as \`openssl dgst -sha256 -sign\` makes it), by a key of 2048 ` +
      `bits or more.`,
  };
  properties.storeKey = {
    ...properties.storeKey,
    description: 'The store key issued by the service. A secret: never put it in logs or topics.',
  };
  properties.restaurantKey = {
    ...properties.restaurantKey,
    description:
      'Accepted as another name of storeKey (the incremental query samples of order-api 4.1 ' +
      'rule 6); when both are given they must be equal.',
  };
  return {
    ...json,
    description,
    anyOf: [{ required: ['storeKey'] }, { required: ['restaurantKey'] }],
  };
}
