/**
 * Schema building blocks shared by every contract in this room, and the one place that turns a
 * zod error into `path: rule` lines (`order.productInfo[3].quantity: must be between 1 and 1000`).
 *
 * Messages are written as rules ("must be ...", "is required ...") so that an integrator reading
 * a rejection knows what to change without reading our code.
 */
import { z } from 'zod';
import type { FieldIssue } from '../errors.js';

/**
 * JSON Schema facts of checks that zod runs as refinements, which `z.toJSONSchema` cannot see:
 * lengths in code points, integers, code tables, the timestamp form. The contract documents
 * (issue 19, protocol/contract-documents.ts) are generated with this registry, so they state the
 * limits the code enforces. A registry of its own rather than `.meta()`: adding to it changes
 * nothing in the schemas or their parsing, and the config's generated JSON schema (which reads
 * the global registry) stays as it is.
 */
export const contractFacts = z.registry<Record<string, unknown>>();

/** Length in characters as a person counts them (code points), not UTF-16 units: `'𠀀'` is one. */
export function charCount(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

/** Error text for a wrong type: `is required` when missing or null, else `must be <expected>`. */
export function typeError(expected: string) {
  return (issue: { input: unknown }) =>
    issue.input === undefined || issue.input === null ? 'is required' : `must be ${expected}`;
}

/** A string of `min` to `max` characters (order-api 2.9 "Length / range"). */
export function text(min: number, max: number) {
  const schema = z.string({ error: typeError('a string') }).refine((value) => {
    // A string has between length/2 and length code points: most need no counting (issue 16:
    // every name and note of every instruction passes here).
    if (value.length <= max && value.length >= 2 * min) return true;
    const n = charCount(value);
    return n >= min && n <= max;
  }, `must be ${min} to ${max} characters`);
  // JSON Schema counts code points too (minLength/maxLength), so the bound is stated exactly.
  contractFacts.add(schema, { minLength: min, maxLength: max });
  return schema;
}

/**
 * print-protocol v1.2 §10, look-alike identifiers: what an identifier may hold, as an ECMAScript
 * pattern with the `u` flag (the contract documents state it as is). No control, format,
 * surrogate or invisible character (Unicode categories Cc, Cf, Cs; Default_Ignorable_Code_Point,
 * e.g. U+3164 HANGUL FILLER, variation selectors), no separator but U+0020 (Z: every other white
 * space is Cc or Z), and U+0020 neither first nor last. `TX-1`, `TX-1 ` and `TX-1` + U+200B print
 * the same, so only the first is an identifier; comparison stays exact (case is kept).
 */
export const IDENTIFIER_PATTERN =
  '^(?! )(?:[^\\p{Cc}\\p{Cf}\\p{Cs}\\p{Z}\\p{Default_Ignorable_Code_Point}]| (?!$))*$';
const IDENTIFIER = new RegExp(IDENTIFIER_PATTERN, 'u');
/** Printable ASCII, no space at either end: nearly every identifier, without the Unicode tables. */
const PLAIN_ASCII_IDENTIFIER = /^[!-~](?:[ -~]*[!-~])?$/;
const REFUSED_CHARACTER = /[\p{Cc}\p{Cf}\p{Cs}\p{Z}\p{Default_Ignorable_Code_Point}]/u;

/**
 * The one test of print-protocol v1.2 §10 (look-alike identifiers), for the service and the agent
 * alike: null when `value` may be an identifier (`paymentTransactionId`, `orderNo`, `jobId`), else
 * the rule it breaks, naming the first offending character (`must not contain ... (U+200B at
 * character 5)`).
 */
export function identifierProblem(value: string): string | null {
  if (PLAIN_ASCII_IDENTIFIER.test(value) || IDENTIFIER.test(value)) return null;
  let at = 0;
  for (const ch of value) {
    at++;
    if (ch !== ' ' && REFUSED_CHARACTER.test(ch)) {
      const cp = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
      return `must not contain control, format or invisible characters, nor white space other than a plain space (U+${cp} at character ${at})`;
    }
  }
  return 'must not start or end with white space';
}

/**
 * `schema` (a string's) that also refuses look-alike identifiers (`identifierProblem`); `facts`
 * are its other contract facts (they belong to one schema object, so they are given again).
 */
export function refusingLookAlikes(schema: z.ZodString, facts: Record<string, unknown> = {}) {
  const refusing = schema.refine((value) => identifierProblem(value) === null, {
    error: (issue) => identifierProblem(String(issue.input)) ?? 'must be an identifier',
  });
  contractFacts.add(refusing, { ...facts, pattern: IDENTIFIER_PATTERN });
  return refusing;
}

/**
 * An identifier of `min` to `max` characters that cannot pass for another on paper
 * (print-protocol v1.2 §10).
 */
export function identifier(min: number, max: number) {
  return refusingLookAlikes(text(min, max), { minLength: min, maxLength: max });
}

/** An integer between `min` and `max` inclusive. */
export function int(min: number, max: number) {
  const range = `must be between ${min} and ${max}`;
  // A refinement rather than .int(): zod's int check aborts the whole object, which would hide the
  // other fields' problems (and the 4.2 rules) behind one fraction. Written with zod's own checks
  // so that `z.compile` turns them into comparisons (issue 16: a function with `.check()` costs an
  // allocated context per amount and quantity of every item of every instruction).
  const schema = z
    .number({ error: typeError('a number') })
    .refine(Number.isInteger, 'must be an integer')
    .min(min, { error: range })
    .max(max, { error: range });
  contractFacts.add(schema, { type: 'integer' });
  return schema;
}

/** An amount in cents: a whole number, never a float (order-api conventions). */
export function cents(max: number) {
  return int(0, max);
}

/**
 * A numeric code from one of the code tables. `lenient` also accepts the number written as a
 * string, because the spec's own samples send `paymentWay` and `transactionFeeType` that way;
 * the output is always the number.
 */
export function code<const T extends Readonly<Record<number, string>>>(
  table: T,
  options: { lenient?: boolean } = {},
) {
  const values = Object.keys(table).map(Number);
  const listing = values.map((v) => `${v} (${table[v]})`).join(', ');
  const schema = z
    .number({ error: typeError(`one of ${listing}`) })
    .refine((v) => values.includes(v), `must be one of ${listing}`);
  if (!options.lenient) {
    contractFacts.add(schema, { type: 'integer', enum: values, description: `one of ${listing}` });
    return schema;
  }
  const lenient = z.preprocess(
    (v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v),
    schema,
  ) as unknown as z.ZodType<number, number | string>;
  // Registered on the outer schema only: facts of the inner one (its enum) would be merged in.
  contractFacts.add(lenient, {
    type: ['integer', 'string'],
    anyOf: [
      { type: 'integer', enum: values },
      { type: 'string', pattern: lenientCodePattern(values) },
    ],
    description: `one of ${listing}; also accepted as the number written in a string, as the spec's samples send it`,
  });
  return lenient;
}

/**
 * The strings a lenient `code` accepts for `values`: what its preprocessing turns into one of
 * them (digits with optional surrounding white space; `Number` ignores leading zeros).
 */
export function lenientCodePattern(values: readonly number[]): string {
  return `^\\s*0*(?:${values.join('|')})\\s*$`;
}

/** `order.productInfo[3].quantity` from `['order', 'productInfo', 3, 'quantity']`. */
export function formatPath(path: readonly PropertyKey[], prefix = ''): string {
  let out = prefix;
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(root)' : out;
}

/** Flattens a zod error into field issues; union errors report their most specific branch. */
export function toFieldIssues(error: z.ZodError, prefix = ''): FieldIssue[] {
  const out: FieldIssue[] = [];
  const visit = (issues: readonly z.core.$ZodIssue[], base: readonly PropertyKey[]) => {
    for (const issue of issues) {
      const path = [...base, ...issue.path];
      if (issue.code === 'invalid_union' && issue.errors.length > 0) {
        // When some branch got past the union's own level (e.g. a discriminated object with a bad
        // field), that branch's issues say more than "invalid input"; when every branch failed at
        // the union itself, the union's own message describes the accepted shapes.
        const deeper = issue.errors.filter((branch) => branch.some((i) => i.path.length > 0));
        const best = [...deeper].sort((a, b) => a.length - b.length)[0];
        if (best) {
          visit(best, path);
          continue;
        }
      }
      out.push({ path: formatPath(path, prefix), message: issue.message });
    }
  };
  visit(error.issues, []);
  return out;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; issues: FieldIssue[] };

/** Validates without throwing; `prefix` roots the paths (e.g. `order` inside an instruction). */
export function parseWith<S extends z.ZodType>(
  schema: S,
  value: unknown,
  prefix = '',
): Parsed<z.output<S>> {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, issues: toFieldIssues(result.error, prefix) };
}

/**
 * `schema`, with zod's compiled fast path (`z.compile`) of `twin` for the input it accepts. `twin`
 * is `schema` without the refinements' `when` conditions, which zod cannot compile (the compiled
 * code would hand those parts back to the slow interpreter): a `when` only decides whether a rule
 * also runs beside another field's error, so on input that `twin` accepts both run the same checks
 * and give the same output. Whatever `twin` rejects is parsed again by `schema` itself, so every
 * rejection and its issues stay `schema`'s. Measured (issue 16): a 20-item instruction in 1.9 µs
 * instead of 6.4. If a later zod cannot compile `twin`, it still answers, only slower
 * (test/protocol/create-params.property.test.ts says so).
 */
export function withCompiledTwin<S extends z.ZodType>(schema: S, twin: z.ZodType): S {
  // Compiled on first use: ~7 ms each, which every process importing the protocol would pay at
  // start (the agent's start time is measured; most CLI commands never parse an instruction).
  let fast: z.ZodType | undefined;
  return z.withParser(schema, (input) => {
    fast ??= z.compile(twin);
    const result = fast.safeParse(input);
    return result.success ? (result.data as z.output<S>) : z.INVALID;
  });
}

/** `path: message` lines, the format every CLI and log uses for validation problems. */
export function describeIssues(issues: readonly FieldIssue[]): string {
  return issues.map((i) => `${i.path}: ${i.message}`).join('; ');
}
