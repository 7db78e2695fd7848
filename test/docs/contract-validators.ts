/**
 * Validating values against the contract documents (docs/api/) with a standard JSON Schema
 * validator, ajv: JSON Schema 2020-12 for the OpenAPI 3.1 document, draft-07 for the AsyncAPI 3.0
 * one (its default schema format). Both run in strict mode, so a schema ajv does not understand
 * fails instead of passing everything.
 *
 * A validator does not look inside a JSON string by itself: `contentSchema` is an annotation. Here
 * it is made a check, as an integrator's code would do by hand: a string under `contentSchema` is
 * parsed and its content validated against that schema, wherever it occurs (every `param`, and
 * `data` when the service sends it as a string). `contentChecks` counts them, so a test can show
 * that the content was in fact looked at.
 */
import assert from 'node:assert/strict';
import {
  Ajv as AjvDraft07,
  type AnySchemaObject,
  type ErrorObject,
  type SchemaObjCxt,
  type ValidateFunction,
} from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type AjvInstance = AjvDraft07 | Ajv2020;

/** The documents' top-level members, which are not JSON Schema keywords. */
const DOCUMENT_MEMBERS = {
  openapi: ['openapi', 'info', 'paths', 'components', 'servers', 'webhooks', 'jsonSchemaDialect'],
  asyncapi: ['asyncapi', 'info', 'channels', 'operations', 'components', 'defaultContentType'],
} as const;

/** A JSON pointer's segment (RFC 6901). */
export function pointerSegment(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The value at `pointer` (`#/a/b`) in `doc`. */
export function at(doc: unknown, pointer: string): unknown {
  let node = doc;
  for (const raw of pointer.replace(/^#\/?/, '').split('/')) {
    if (raw === '') continue;
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    assert.ok(
      node !== null && typeof node === 'object' && key in node,
      `no ${pointer} in document`,
    );
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * A copy of the document whose object schemas allow no field they do not list. The documents
 * leave objects open on purpose (receivers ignore unknown fields); checking real traffic against
 * the closed copy shows that the documents name every field the code sends. 2020-12 has
 * `unevaluatedProperties`, which sees through `$ref` and `anyOf`; draft-07 only
 * `additionalProperties`. A schema that is one part of an `allOf` is left open: its siblings
 * name the other fields.
 */
function closed(node: unknown, keyword: string, partOfAllOf = false): unknown {
  if (Array.isArray(node)) return node.map((n) => closed(n, keyword, partOfAllOf));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node))
    out[key] = closed(value, keyword, key === 'allOf');
  if (out.type === 'object' && out.properties && !('additionalProperties' in out) && !partOfAllOf)
    out[keyword] = false;
  return out;
}

export class DocumentValidator {
  readonly ajv: AjvInstance;
  private readonly id: string;
  private readonly compiled = new Map<string, ValidateFunction>();
  /** How many JSON strings were parsed and checked against their `contentSchema`. */
  contentChecks = 0;

  /** `closed`: validate against the closed copy of the document (see `closed`). */
  constructor(
    readonly doc: Record<string, unknown>,
    kind: 'openapi' | 'asyncapi',
    options: { closed?: boolean } = {},
  ) {
    const ajvOptions = {
      allErrors: true,
      strict: true,
      // Both are plain JSON Schema: `type: [a, b]`; `required` beside sibling `properties`.
      allowUnionTypes: true,
      strictRequired: false,
    };
    this.ajv = kind === 'openapi' ? new Ajv2020(ajvOptions) : new AjvDraft07(ajvOptions);
    addFormats.default(this.ajv);
    for (const member of DOCUMENT_MEMBERS[kind]) this.ajv.addKeyword(member);
    this.ajv.removeKeyword('contentSchema');
    this.ajv.addKeyword({
      keyword: 'contentSchema',
      schemaType: 'object',
      errors: true,
      compile: (schema: AnySchemaObject, parent: AnySchemaObject, it: SchemaObjCxt) =>
        this.contentCheck(schema, parent, it),
    });
    this.id = `https://contract.test/${kind}${options.closed ? '-closed' : ''}.json`;
    const schema = options.closed
      ? closed(doc, kind === 'openapi' ? 'unevaluatedProperties' : 'additionalProperties')
      : doc;
    this.ajv.addSchema({ ...(schema as Record<string, unknown>), $id: this.id });
  }

  private contentCheck(schema: AnySchemaObject, parent: AnySchemaObject, it: SchemaObjCxt) {
    assert.equal(parent.contentMediaType, 'application/json', 'contentSchema of a JSON string');
    // Our documents point contentSchema at a component; resolved against the document.
    const ref = typeof schema.$ref === 'string' ? new URL(schema.$ref, it.baseId).href : null;
    let inner: ValidateFunction | undefined;
    const check = (data: unknown): boolean => {
      if (typeof data !== 'string') return true; // the type is the sibling `type`'s business
      inner ??= ref ? this.ajv.getSchema(ref) : this.ajv.compile(schema);
      assert.ok(inner, `contentSchema ${ref} not found`);
      this.contentChecks++;
      let parsed: unknown;
      try {
        parsed = JSON.parse(data);
      } catch {
        check.errors = [
          {
            keyword: 'contentSchema',
            instancePath: '',
            schemaPath: '',
            params: {},
            message: 'is not JSON',
          },
        ];
        return false;
      }
      if (inner(parsed)) return true;
      check.errors = (inner.errors ?? []).map((e) => ({
        ...e,
        message: `(in the JSON string) ${e.instancePath || '/'} ${e.message}`,
      }));
      return false;
    };
    check.errors = undefined as Partial<ErrorObject>[] | undefined;
    return check;
  }

  /** The compiled schema at `pointer` of the document. */
  schema(pointer: string): ValidateFunction {
    let v = this.compiled.get(pointer);
    if (!v) {
      at(this.doc, pointer); // a clear message when the document has no such part
      v = this.ajv.getSchema(`${this.id}${pointer}`);
      assert.ok(v, `cannot compile ${pointer}`);
      this.compiled.set(pointer, v);
    }
    return v;
  }

  /** Null when `value` is valid against the schema at `pointer`, else the errors as text. */
  errors(pointer: string, value: unknown): string | null {
    const v = this.schema(pointer);
    return v(value) ? null : this.ajv.errorsText(v.errors, { separator: '\n' });
  }

  assertValid(pointer: string, value: unknown, what: string): void {
    const errors = this.errors(pointer, value);
    assert.equal(
      errors,
      null,
      `${what} is not valid against ${pointer}:\n${errors}\n${JSON.stringify(value).slice(0, 2000)}`,
    );
  }

  assertInvalid(pointer: string, value: unknown, what: string): void {
    assert.notEqual(this.errors(pointer, value), null, `${what} is valid against ${pointer}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Where a document keeps the schema of a request, a response, a message

const JSON_MEDIA = pointerSegment('application/json');

/** OpenAPI: the request body schema of `method path`. */
export function requestPointer(path: string, method: string): string {
  return `#/paths/${pointerSegment(path)}/${method}/requestBody/content/${JSON_MEDIA}/schema`;
}

/** OpenAPI: the response body schema of `method path` for an HTTP status. */
export function responsePointer(path: string, method: string, status: number): string {
  return `#/paths/${pointerSegment(path)}/${method}/responses/${status}/content/${JSON_MEDIA}/schema`;
}

interface Channel {
  address: string;
  messages: Record<string, { $ref: string }>;
}

/**
 * AsyncAPI: the names of the messages of the channel whose address matches `topic` that `payload`
 * is valid against (a consumer tells the messages of one channel apart this way), with each one's
 * errors. Fails when no channel has this address.
 */
export function matchMessage(
  validator: DocumentValidator,
  topic: string,
  payload: unknown,
): { channel: string; matched: string[]; errors: string[] } {
  const channels = validator.doc.channels as Record<string, Channel>;
  for (const [name, channel] of Object.entries(channels)) {
    const pattern = new RegExp(
      `^${channel.address.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`,
    );
    if (!pattern.test(topic)) continue;
    const matched: string[] = [];
    const errors: string[] = [];
    for (const [messageName, ref] of Object.entries(channel.messages)) {
      const error = validator.errors(`${ref.$ref}/payload`, payload);
      if (error === null) matched.push(messageName);
      else errors.push(`${messageName}: ${error}`);
    }
    return { channel: name, matched, errors };
  }
  assert.fail(`no channel of the document has an address matching ${topic}`);
}

/** AsyncAPI: `payload` on `topic` is exactly one of its channel's messages, `expected`. */
export function assertMessage(
  validator: DocumentValidator,
  topic: string,
  payload: unknown,
  expected: string,
): void {
  const { channel, matched, errors } = matchMessage(validator, topic, payload);
  assert.deepEqual(
    matched,
    [expected],
    `on ${topic} (channel ${channel}): expected message ${expected}, matched [${matched.join(', ')}]\n${errors.join('\n')}\n${JSON.stringify(payload).slice(0, 2000)}`,
  );
}
