/**
 * Files the config points at: secrets given as file paths (first line, trimmed, like
 * `--store-key-file` of the CLI), key and certificate files that must be readable, and the
 * permission check that warns when a secret file is readable by group or others.
 *
 * Messages name the file and the rule; the file's content never appears in them.
 */
import { accessSync, constants, readFileSync, statSync } from 'node:fs';

export type FileCheck = { ok: true } | { ok: false; message: string };

function reason(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? 'unreadable';
}

/** A readable regular file, or the rule it breaks. */
export function checkReadableFile(path: string): FileCheck {
  try {
    if (!statSync(path).isFile()) return { ok: false, message: `${path} is not a file` };
    accessSync(path, constants.R_OK);
    return { ok: true };
  } catch (error) {
    return { ok: false, message: `cannot read ${path} (${reason(error)})` };
  }
}

export type SecretRead = { ok: true; value: string } | { ok: false; message: string };

/** The first line of `path`, trimmed, between `min` and `max` characters. */
export function readSecretFile(path: string, max: number): SecretRead {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return { ok: false, message: `cannot read ${path} (${reason(error)})` };
  }
  const value = text.split(/\r?\n/, 1)[0]?.trim() ?? '';
  if (value === '')
    return { ok: false, message: `${path} is empty (the secret is its first line)` };
  if ([...value].length > max)
    return { ok: false, message: `the first line of ${path} must be 1 to ${max} characters` };
  return { ok: true, value };
}

/** A warning when group or others may read `path` (mode & 0o044), else null. */
export function exposedSecretWarning(field: string, path: string): string | null {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return null; // unreadable files are reported as errors elsewhere
  }
  if ((mode & 0o044) === 0) return null;
  const octal = mode.toString(8).padStart(4, '0');
  return `${field}: ${path} can be read by group or others (mode ${octal}); run chmod 600 ${path}`;
}
