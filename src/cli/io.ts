/** Small I/O helpers every CLI command shares: reading an input file or stdin, and JSON. */
import { readFileSync } from 'node:fs';
import { AgentError } from '../errors.js';

/** Reads a file, or standard input for `-`. Errors name the file and the reason. */
export function readInput(path: string): string {
  try {
    return readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (cause) {
    const reason = (cause as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new AgentError('INPUT_INVALID', `${path}: cannot read (${reason})`, { cause });
  }
}

/** Parses a file that must hold one JSON object. */
export function readJsonObject(path: string): Record<string, unknown> {
  const raw = readInput(path);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new AgentError('INPUT_INVALID', `${path}: is not valid JSON (${detail})`, { cause });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AgentError('INPUT_INVALID', `${path}: must contain a JSON object`);
  }
  return value as Record<string, unknown>;
}

/** A secret from a flag or from a file (first line, trimmed); the file form keeps it out of `ps`. */
export function secretFrom(
  value: string | undefined,
  file: string | undefined,
  name: string,
): string | undefined {
  if (value !== undefined && file !== undefined) {
    throw new AgentError('INPUT_INVALID', `--${name} and --${name}-file: give one, not both`);
  }
  if (file !== undefined) {
    const secret = readInput(file).split(/\r?\n/, 1)[0]?.trim() ?? '';
    if (secret === '') throw new AgentError('INPUT_INVALID', `--${name}-file ${file}: is empty`);
    return secret;
  }
  return value;
}
