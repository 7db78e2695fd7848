/**
 * `config set KEY VALUE`: one change to the config file, validated as a whole before it is
 * written, so a typo can never leave a config the agent refuses at its next start. The file is
 * rewritten atomically with mode 0600 (config-file.ts); on any problem it is not touched.
 *
 * Validation here is the schema plus the environment, without reading the files the config points
 * at: a store can be configured before its key files are copied in (`config check` reads them).
 */
import { AgentError } from '../errors.js';
import type { ServiceAccount } from '../host/service-account.js';
import { openConfigFile, resolveConfigPath } from './config-file.js';
import { validateConfig } from './load.js';
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

/** Sets `key` to `value` (text from the command line) in the config file; returns the file path. */
export function setConfigValue(key: string, valueText: string, options: SetOptions = {}): string {
  const env = options.env ?? process.env;
  const path = parseKeyPath(key);
  const file = openConfigFile(resolveConfigPath(options.configPath, env, options.cwd));
  const next = withValueAt(file.read(), path, parseCliValue(valueText), key);
  const { config } = validateConfig(next, { file: file.path, env, cwd: options.cwd });
  if (options.serviceAccount)
    assertServiceCanRead(options.serviceAccount, config, file.path, ['config file', key]);
  file.write(next);
  return file.path;
}
