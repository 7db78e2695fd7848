/**
 * Fuzzing the config file (issue 9): `parseConfigText` (the text of the file) and
 * `validateConfig` (the schema, the cross-field rules and the environment overrides), the two
 * steps `printer-agent config check` runs before it reads any file the config names.
 *
 * The configs are config/config.example.json with the secrets inline (`storeKey`,
 * `mqtt.password`, generated per case) and one thing changed: a field of another type, out of
 * range, deleted, an unknown key, an arbitrary value, a secret typed into another field, or the
 * file's text damaged. Every outcome: a config, or an AgentError CONFIG_INVALID (CONFIG_TOO_NEW for
 * a `version` above this agent's) whose every issue has a path; no secret, nor a 12-character piece of one, in any message. The untouched config
 * must validate (positive control); a change of type or range is reported on that very field.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  CONFIG_VERSION,
  ENV_OVERRIDES,
  locateJsonError,
  parseConfigText,
  validateConfig,
} from '../../src/config/index.js';
import { AgentError } from '../../src/errors.js';
import { formatPath } from '../../src/protocol/validation.js';
import {
  assertIssues,
  assertNoSecret,
  FUZZ_TIMEOUT_MS,
  fuzzOptions,
  type Json,
  targetRuns,
} from './arbitraries.js';

const FILE = '/etc/printer-agent/config.json';
const EXAMPLE = JSON.parse(
  readFileSync(new URL('../../config/config.example.json', import.meta.url), 'utf8'),
) as Json;

/** The example with its secrets inline instead of in files. */
function withSecrets(storeKey: string, password: string): Json {
  const { storeKeyFile: _k, ...rest } = structuredClone(EXAMPLE);
  const { passwordFile: _p, ...mqtt } = rest.mqtt as Json;
  return { ...rest, storeKey, mqtt: { ...mqtt, password } };
}

/** A secret with enough variety that no message could contain a piece of it by chance. */
const secret = fc
  .oneof(
    fc.stringMatching(/^[A-Za-z0-9]{16,40}$/),
    fc.string({
      unit: fc.constantFrom(...'abcdefXYZ0123456789:"@/?&=#%-_. '),
      minLength: 16,
      maxLength: 40,
    }),
    fc.string({ unit: 'binary', minLength: 16, maxLength: 40 }),
  )
  .filter((s) => new Set(s).size >= 8 && s.trim() === s && !s.includes('\n'));

type Path = (string | number)[];

/** Every path in a JSON value: objects, arrays and leaves. */
function paths(value: unknown, base: Path = []): Path[] {
  const out: Path[] = [base];
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) out.push(...paths(v, [...base, i]));
  } else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...base, k]));
  return out;
}

function getAt(value: unknown, path: Path): unknown {
  let node = value;
  for (const key of path) node = (node as Record<string | number, unknown>)[key];
  return node;
}

/** A copy with the value at `path` replaced (undefined: deleted). */
function setAt(value: Json, path: Path, next: unknown): Json {
  const copy = structuredClone(value);
  if (path.length === 0) return copy;
  const parent = getAt(copy, path.slice(0, -1)) as Record<string | number, unknown>;
  const key = path[path.length - 1]!;
  if (next === undefined) {
    if (Array.isArray(parent)) parent.splice(key as number, 1);
    else delete parent[key];
  } else parent[key] = next;
  return copy;
}

const ALL_PATHS = paths(withSecrets('k', 'p'));
const LEAF_PATHS = ALL_PATHS.filter((p) => {
  const v = getAt(withSecrets('k', 'p'), p);
  return v === null || typeof v !== 'object';
});
const OBJECT_PATHS = ALL_PATHS.filter((p) => {
  const v = getAt(withSecrets('k', 'p'), p);
  return v !== null && typeof v === 'object' && !Array.isArray(v);
});
/** Deleting these must be reported on them (the schema or a cross-field rule requires them). */
const REQUIRED = new Set([
  'appId',
  'storeKey',
  'mqtt',
  'mqtt.url',
  'mqtt.username',
  'keys',
  'keys.servicePublicKeyFile',
  'keys.storePrivateKeyFile',
  'printers',
  'printers[0].id',
  'printers[0].url',
  'printers[0].profile',
  'printers[1].id',
  'printers[1].url',
  'printers[1].profile',
  'catchUp.baseUrl',
]);

const otherType = (v: unknown) =>
  fc
    .constantFrom<unknown>('text', 'true', '5', 7, 0, -1.5, true, false, [], {}, ['a'], { a: 1 })
    .filter((x) => typeof x !== typeof v || Array.isArray(x) !== Array.isArray(v));

/** Prefixes that put a secret where a URL or a path would parse it (query keys, hosts, paths). */
const EMBED = [
  '',
  'tcp://',
  'tcp://printer.local:9100/',
  'tcp://printer.local:9100?',
  'serial:/dev/ttyUSB0?',
  'serial:/dev/ttyUSB0?baudRate=',
  'file:/dev/usb/lp0?',
  'usb:04b8:0202?',
  'usb:04b8:0202?serial=x&',
  'mqtts://',
  'mqtts://broker:8883/',
  'https://orders.example.com/?',
  'https://',
];

/** Built once: `stringMatching` compiles its regex on every construction. */
const settingName = fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9]{0,12}$/);

interface ConfigCase {
  label: string;
  secrets: [string, string];
  /** The file's text (damaged cases) or undefined: JSON.stringify of `value`. */
  text?: string;
  value: unknown;
  env: Record<string, string>;
  /** The change must be reported on this path. */
  path?: string;
}

const configCase: fc.Arbitrary<ConfigCase> = fc
  .tuple(secret, secret)
  .filter(([a, b]) => a !== b)
  .chain(([storeKey, password]) => {
    const base = withSecrets(storeKey, password);
    const secrets: [string, string] = [storeKey, password];
    const leaf = fc.constantFrom(...LEAF_PATHS);
    const make = (label: string, value: unknown, path?: Path): ConfigCase => ({
      label,
      secrets,
      value,
      env: {},
      ...(path ? { path: formatPath(path) } : {}),
    });
    const changes: fc.Arbitrary<ConfigCase>[] = [
      fc.constant(make('untouched', base)),
      leaf.chain((p) =>
        otherType(getAt(base, p)).map((v) =>
          make(`${formatPath(p)} of another type`, setAt(base, p, v), p),
        ),
      ),
      leaf
        .filter((p) => typeof getAt(base, p) === 'number')
        .chain((p) =>
          fc
            .constantFrom(-1, 0.5, 1e12, -1e12, 2 ** 53)
            .map((v) => make(`${formatPath(p)} = ${v}`, setAt(base, p, v), p)),
        ),
      fc.constantFrom(...ALL_PATHS.filter((p) => p.length > 0)).map((p) => {
        const name = formatPath(p);
        return make(
          `${name} deleted`,
          setAt(base, p, undefined),
          REQUIRED.has(name) ? p : undefined,
        );
      }),
      fc
        .tuple(fc.constantFrom(...OBJECT_PATHS), settingName)
        .filter(([p, k]) => (getAt(base, p) as Json)[k] === undefined)
        .map(([p, k]) =>
          make(`unknown key ${k} in ${formatPath(p)}`, setAt(base, [...p, k], 1), p),
        ),
      fc
        .tuple(fc.constantFrom(...ALL_PATHS), fc.jsonValue({ maxDepth: 3 }))
        .map(([p, v]) => make(`${formatPath(p)} arbitrary`, setAt(base, p, v))),
      // A secret typed (or pasted inside a URL) into another field.
      fc
        .tuple(
          leaf,
          fc.constantFrom(...secrets),
          fc.constantFrom(...EMBED),
          fc.constantFrom('', '/x', ': y', '"'),
        )
        .map(([p, s, before, after]) =>
          make(
            `secret in ${formatPath(p)} after ${before}`,
            setAt(base, p, `${before}${s}${after}`),
          ),
        ),
      // The same, through the environment overrides.
      fc
        .tuple(
          fc.constantFrom(...ENV_OVERRIDES),
          fc.constantFrom(...secrets),
          fc.constantFrom(...EMBED),
        )
        .map(([o, s, before]) => ({
          ...make(`secret in ${o.name} after ${before}`, base),
          env: { [o.name]: `${before}${s}` },
        })),
      // The file's text damaged: a character changed, inserted or deleted, or cut short.
      fc
        .tuple(fc.boolean(), fc.nat(), fc.nat(3), fc.string({ maxLength: 3, unit: 'binary' }))
        .map(([pretty, at, del, ins]) => {
          const text = JSON.stringify(base, null, pretty ? 2 : undefined);
          const i = at % (text.length + 1);
          return {
            ...make(`text damaged at ${i}`, base),
            text: text.slice(0, i) + ins + text.slice(i + del),
          };
        }),
    ];
    return fc.oneof(...changes);
  });

/**
 * The code a refused file gets: CONFIG_TOO_NEW for a `version` above this agent's (a file of a
 * newer agent, issue 43 item 7), CONFIG_INVALID for everything else.
 */
function expectedCode(raw: unknown): string {
  const version = (raw as { version?: unknown } | null)?.version;
  return typeof version === 'number' && Number.isSafeInteger(version) && version > CONFIG_VERSION
    ? 'CONFIG_TOO_NEW'
    : 'CONFIG_INVALID';
}

/** parse + validate the way `config check` does; the outcome or the typed error. */
function check(c: ConfigCase): { ok: true } | { ok: false; error: AgentError } {
  let raw: Record<string, unknown> | undefined;
  try {
    raw = parseConfigText(c.text ?? JSON.stringify(c.value), FILE);
    validateConfig(raw, { file: FILE, env: c.env, cwd: '/' });
    return { ok: true };
  } catch (error) {
    assert.ok(error instanceof AgentError, `${c.label}: untyped ${String(error)}`);
    assert.equal(error.code, expectedCode(raw), `${c.label}: ${error.code}`);
    assert.ok(error.message.startsWith(`${FILE}: `), error.message);
    assertIssues(error.issues);
    for (const text of [error.message, ...error.issues.map((i) => `${i.path}: ${i.message}`)])
      assertNoSecret(text, c.secrets);
    return { ok: false, error };
  }
}

/**
 * This target's FUZZ_RUNS (10,000 in `npm test`) over its properties (decision 259); the positive
 * control's 200 cases come on top.
 */
const RUNS = targetRuns({ oneChange: 50, text: 50 });

/** The text's JSON value, or null when it is none (then no version can make it too new). */
function parsedOrNull(text: string): unknown {
  try {
    return parseConfigText(text, FILE);
  } catch {
    return null;
  }
}

describe('fuzz: config files', { timeout: FUZZ_TIMEOUT_MS }, () => {
  it('the example with its secrets inline validates (positive control)', {
    timeout: FUZZ_TIMEOUT_MS,
  }, () => {
    fc.assert(
      fc.property(secret, secret, (a, b) => {
        const result = check({
          label: 'untouched',
          secrets: [a, b],
          value: withSecrets(a, b),
          env: {},
        });
        assert.ok(result.ok, result.ok ? '' : result.error.message);
      }),
      fuzzOptions(200),
    );
  });

  it('one change: typed CONFIG_INVALID naming the field, never a secret', {
    timeout: FUZZ_TIMEOUT_MS,
  }, () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(configCase, (c) => {
        const result = check(c);
        seen.add(result.ok ? 'valid' : 'invalid');
        if (c.label === 'untouched') assert.ok(result.ok, `untouched config rejected`);
        if (c.path === undefined) return;
        assert.ok(!result.ok, `${c.label}: accepted`);
        assert.ok(
          result.error.issues.some((i) => i.path === c.path),
          `${c.label}: no issue at ${c.path}: ${result.error.message}`,
        );
      }),
      fuzzOptions(RUNS.oneChange),
    );
    assert.deepEqual([...seen].sort(), ['invalid', 'valid']);
  });

  it('found by fuzzing: a secret inside a printer URL is not echoed by the config messages', () => {
    const secret = 'Zq7Lm2Xw9Rk4Tp8V';
    for (const url of [
      `serial:/dev/ttyUSB0?${secret}`,
      `tcp://a: ${secret}`,
      `file:/x?k": ${secret}`,
    ]) {
      const result = check({
        label: url,
        secrets: [secret, 'unused-secret-0123'],
        value: setAt(
          withSecrets('store-key-0123456789', 'password-0123456789'),
          ['printers', 0, 'url'],
          url,
        ),
        env: {},
      });
      assert.ok(!result.ok);
      assert.ok(result.error.issues.some((i) => i.path === 'printers[0].url'));
    }
  });

  it('arbitrary text: a valid config or CONFIG_INVALID, and the scanner finds every JSON error', {
    timeout: FUZZ_TIMEOUT_MS,
  }, () => {
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.json({ maxDepth: 4 }),
      fc
        .json({ maxDepth: 4 })
        .chain((j) =>
          fc
            .tuple(fc.nat(j.length), fc.string({ unit: 'binary', maxLength: 2 }))
            .map(([i, s]) => j.slice(0, i) + s + j.slice(i + 1)),
        ),
      fc.nat(600).map((n) => '['.repeat(n) + ']'.repeat(n)),
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify({ ...EXAMPLE, mqtt: v })),
      fc.object({ maxDepth: 3 }).map((o) => `\uFEFF${JSON.stringify(o)}`),
    );
    fc.assert(
      fc.property(text, (t) => {
        let jsonOk = true;
        try {
          JSON.parse(t.charCodeAt(0) === 0xfeff ? t.slice(1) : t);
        } catch {
          jsonOk = false;
        }
        // Where JSON.parse fails, the scanner finds the error, inside the text.
        const where = locateJsonError(t.charCodeAt(0) === 0xfeff ? t.slice(1) : t);
        if (!jsonOk) {
          assert.ok(
            where,
            `JSON.parse failed but the scanner found nothing in ${JSON.stringify(t)}`,
          );
          assert.ok(where.position >= 0 && where.position <= t.length);
        }
        try {
          const raw = parseConfigText(t, FILE);
          assert.ok(jsonOk);
          assert.ok(typeof raw === 'object' && raw !== null && !Array.isArray(raw));
          // Any JSON object goes on to the schema, which must fail it the same typed way.
          validateConfig(raw, { file: FILE, env: {}, cwd: '/' });
        } catch (error) {
          assert.ok(error instanceof AgentError, String(error));
          assert.equal(error.code, expectedCode(parsedOrNull(t)));
          assert.ok(error.message.startsWith(`${FILE}: `));
          assertIssues(error.issues);
        }
      }),
      fuzzOptions(RUNS.text),
    );
  });
});
