/**
 * `config set KEY VALUE` and `config unset KEY`: one change to the config file, validated as a
 * whole before it is written, so a typo can never leave a config the agent refuses at its next
 * start. The file is rewritten atomically, keeping its owner, group and mode (config-file.ts); on
 * any problem it is not touched. A file of an older version is migrated first (the change is made
 * to the current shape, the one docs/config-reference.md describes) and written at the current
 * version, its original kept beside it (file-migration.ts).
 *
 * Validation here is the schema plus the environment, without reading the files the config points
 * at: a store can be configured before its key files are copied in (`config check` reads them).
 */
import { AgentError, isAgentError } from '../errors.js';
import type { ServiceAccount } from '../host/service-account.js';
import { formatPath } from '../protocol/validation.js';
import { openConfigFile, resolveConfigPath } from './config-file.js';
import { backupFor, writeMigrated } from './file-migration.js';
import { validateConfig } from './load.js';
import { migrateConfig } from './migrations.js';
import { configJsonSchema } from './reference.js';
import { assertServiceCanRead } from './service-access.js';

export type KeyPath = (string | number)[];

const SEGMENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);
const KEY_RULE =
  'must be names joined by dots, with [N] or .N for list items, e.g. printers[0].url';

/** `mqtt.tls.caFile`, `printers[0].url` or `printers.0.url` -> its segments. */
export function parseKeyPath(key: string): KeyPath {
  const bad = (rule: string) =>
    new AgentError('INPUT_INVALID', `key ${JSON.stringify(key)}: ${rule}`);
  const path: KeyPath = [];
  for (const part of key.replace(/\[(\d+)\]/g, '.$1').split('.')) {
    if (/^\d+$/.test(part)) path.push(Number(part));
    else if (SEGMENT.test(part) && !FORBIDDEN.has(part)) path.push(part);
    else throw bad(KEY_RULE);
  }
  if (typeof path[0] === 'number') throw bad('must start with a name');
  // The version says what shape the rest has: only a migration may change it, with the rest.
  if (path[0] === 'version')
    throw bad('is written by the agent; printer-agent config migrate brings a file up to date');
  return path;
}

/** The value as JSON when it parses (`4`, `true`, `["a"]`, `"text"`), else the text itself. */
export function parseCliValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A copy of `raw` with `value` at `path`; missing objects and lists on the way are created. */
export function withValueAt(
  raw: Record<string, unknown>,
  path: KeyPath,
  value: unknown,
  key = path.join('.'),
): Record<string, unknown> {
  const copy = structuredClone(raw);
  let node: unknown = copy;
  path.forEach((segment, index) => {
    const last = index === path.length - 1;
    const where = path.slice(0, index).join('.') || '(root)';
    if (typeof segment === 'number') {
      if (!Array.isArray(node))
        throw new AgentError('INPUT_INVALID', `key ${key}: ${where} is not a list`);
      if (segment > node.length)
        throw new AgentError(
          'INPUT_INVALID',
          `key ${key}: ${where} has ${node.length} items; use an index up to ${node.length}`,
        );
    } else if (typeof node !== 'object' || node === null || Array.isArray(node)) {
      throw new AgentError('INPUT_INVALID', `key ${key}: ${where} is not an object`);
    }
    const container = node as Record<string | number, unknown>;
    if (last) {
      container[segment] = value;
      return;
    }
    if (container[segment] === undefined)
      container[segment] = typeof path[index + 1] === 'number' ? [] : {};
    node = container[segment];
  });
  return copy;
}

export interface SetOptions {
  configPath?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /**
   * The service's account when root runs the command: the write is refused when that account
   * could not read the config file, or the file the changed setting names (issue 15).
   */
  serviceAccount?: ServiceAccount | null;
}

/** What an edit did to the file. */
export interface EditResult {
  /** The config file's absolute path. */
  path: string;
  /** false: `unset` found nothing to remove, and the file was not touched. */
  changed: boolean;
  /** The file was an older version: migrated with the change, the original kept at `backup`. */
  migrated: { from: number; to: number; backup: string } | null;
}

/**
 * Reads the file (migrated to the current version), applies `change` (null: nothing to change),
 * validates the whole result and writes it; `fields` are those whose files the service account
 * must still be able to read afterwards.
 */
function editConfig(
  options: SetOptions,
  fields: readonly string[],
  change: (raw: Record<string, unknown>) => Record<string, unknown> | null,
): EditResult {
  const env = options.env ?? process.env;
  const file = openConfigFile(resolveConfigPath(options.configPath, env, options.cwd));
  const { value, from, to } = migrateConfig(file.read(), file.path);
  const next = change(value);
  if (next === null) return { path: file.path, changed: false, migrated: null };
  const { config } = validateConfig(next, { file: file.path, env, cwd: options.cwd });
  if (options.serviceAccount)
    assertServiceCanRead(options.serviceAccount, config, file.path, fields);
  if (from === to) {
    file.write(next);
    return { path: file.path, changed: true, migrated: null };
  }
  const backup = writeMigrated(file, from, next);
  return { path: file.path, changed: true, migrated: { from, to, backup } };
}

/** Sets `key` to `value` (text from the command line) in the config file. */
export function setConfigValue(
  key: string,
  valueText: string,
  options: SetOptions = {},
): EditResult {
  const path = parseKeyPath(key);
  const value = parseCliValue(valueText);
  try {
    return editConfig(options, ['config file', key], (raw) => withValueAt(raw, path, value, key));
  } catch (error) {
    // `set KEY null` is how many tools remove a setting (issue 43 item 4: `mqtt.tls null` got
    // "must be an object"): where null is not a value, say which command removes it.
    if (value !== null || !isAgentError(error) || error.code !== 'CONFIG_INVALID') throw error;
    const at = formatPath(path);
    const hint = `; to remove the setting: printer-agent config unset ${key}`;
    throw new AgentError('CONFIG_INVALID', error.message, {
      issues: error.issues.map((i) => (i.path === at ? { ...i, message: i.message + hint } : i)),
      details: error.details,
    });
  }
}

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
}

/**
 * Whether `path` names a setting of the schema (an object member, or an item of a list): `unset`
 * of a misspelt key must fail, not report "not set".
 */
export function isSettingPath(path: KeyPath): boolean {
  let node: SchemaNode | undefined = configJsonSchema() as SchemaNode;
  for (const segment of path) {
    if (node === undefined) return false;
    node = typeof segment === 'number' ? node.items : node.properties?.[segment];
  }
  return node !== undefined;
}

/**
 * A copy of `raw` without the value at `path` (an object member deleted, a list item taken out,
 * the items after it moving up), or null when there is nothing there.
 */
export function withoutValueAt(
  raw: Record<string, unknown>,
  path: KeyPath,
  key = path.join('.'),
): Record<string, unknown> | null {
  const copy = structuredClone(raw);
  let node: unknown = copy;
  for (const [index, segment] of path.entries()) {
    const where = path.slice(0, index).join('.') || '(root)';
    if (typeof segment === 'number' && !Array.isArray(node))
      throw new AgentError('INPUT_INVALID', `key ${key}: ${where} is not a list`);
    if (typeof segment === 'string' && (typeof node !== 'object' || Array.isArray(node)))
      throw new AgentError('INPUT_INVALID', `key ${key}: ${where} is not an object`);
    const container = node as Record<string | number, unknown>;
    if (!Object.hasOwn(container, segment) || container[segment] === undefined) return null;
    if (index === path.length - 1) {
      if (Array.isArray(container)) container.splice(segment as number, 1);
      else delete container[segment];
      return copy;
    }
    node = container[segment];
    if (node === null) return null;
  }
  return null;
}

/**
 * Removes `key` from the config file. A key the schema does not have is INPUT_INVALID; one it has
 * but the file does not set changes nothing (`changed: false`), so a script can run it again.
 */
export function unsetConfigValue(key: string, options: SetOptions = {}): EditResult {
  const path = parseKeyPath(key);
  if (!isSettingPath(path))
    throw new AgentError(
      'INPUT_INVALID',
      `key ${key}: no such setting (see printer-agent config reference)`,
    );
  return editConfig(options, ['config file'], (raw) => withoutValueAt(raw, path, key));
}

/** What `config migrate` found and did. */
export interface MigrateResult {
  path: string;
  from: number;
  to: number;
  steps: string[];
  /** Where the original is (or, with dryRun, would be) kept; null when the file was current. */
  backup: string | null;
}

/**
 * `config migrate`: brings the file to the current version, keeping the original beside it. The
 * result is validated like `config set`'s (schema and environment, not the files it names) and
 * not written when invalid; `dryRun` validates and says what would happen, writing nothing.
 */
export function migrateConfigFile(options: SetOptions & { dryRun?: boolean } = {}): MigrateResult {
  const env = options.env ?? process.env;
  const file = openConfigFile(resolveConfigPath(options.configPath, env, options.cwd));
  const raw = file.read();
  const { migrated, config } = validateConfig(raw, { file: file.path, env, cwd: options.cwd });
  const { from, to, steps } = migrated;
  if (from === to) return { path: file.path, from, to, steps, backup: null };
  if (options.serviceAccount)
    assertServiceCanRead(options.serviceAccount, config, file.path, ['config file']);
  const backup = options.dryRun
    ? backupFor(file.path, from).path
    : writeMigrated(file, from, migrated.value);
  return { path: file.path, from, to, steps, backup };
}
