/**
 * Redaction for `config show` and logs. Secret values (storeKey, the broker password) become
 * `***`; file paths stay, since a path is not a secret and an operator needs it to find the file.
 * Private keys are never read into the config at all (the key room loads them), so their content
 * cannot leak through it.
 */
import { SCRUBBED } from '../logging.js';
import { redactUrl } from '../printer/printer-url.js';
import { SECRET_FIELDS } from './schema.js';

/** The same mark the logger leaves where it scrubbed a secret. */
export const REDACTED = SCRUBBED;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parentOf(root: unknown, path: readonly string[]): Record<string, unknown> | null {
  let node = root;
  for (const key of path.slice(0, -1)) {
    if (!isRecord(node)) return null;
    node = node[key];
  }
  return isRecord(node) ? node : null;
}

/**
 * A deep copy of a config (loaded, or a raw file object) with every secret replaced by `***`, and
 * credentials someone put into a URL masked too (the schema forbids them; a raw file may not).
 */
export function redactConfig(config: object): Record<string, unknown> {
  const copy = structuredClone(config) as Record<string, unknown>;
  for (const field of SECRET_FIELDS) {
    const path = field.split('.');
    const parent = parentOf(copy, path);
    const key = path[path.length - 1]!;
    if (parent && parent[key] !== undefined) parent[key] = REDACTED;
  }
  const mask = (holder: unknown, key: string) => {
    if (isRecord(holder) && typeof holder[key] === 'string') holder[key] = redactUrl(holder[key]);
  };
  mask(copy.mqtt, 'url');
  mask(copy.catchUp, 'baseUrl');
  if (Array.isArray(copy.printers)) for (const printer of copy.printers) mask(printer, 'url');
  return copy;
}

/**
 * The secret values a loaded config holds, for tests that scan output and for a log redaction
 * hook. Values are returned as they are; never print this list.
 */
export function secretValues(config: object): string[] {
  const out = new Set<string>();
  for (const field of SECRET_FIELDS) {
    const path = field.split('.');
    const value = parentOf(config, path)?.[path[path.length - 1]!];
    if (typeof value === 'string' && value !== '') out.add(value);
  }
  return [...out];
}
