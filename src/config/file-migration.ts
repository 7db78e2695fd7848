/**
 * Writing a migrated config back to its file (issue 43 item 7): the original is first copied beside
 * it as `config.json.v1.bak` (the version it was), with the file's owner, group and mode, then the
 * file is replaced atomically (config-file.ts), so a power cut at any moment leaves the original
 * either in place or in its backup, never only half of it.
 *
 * A backup that already holds the same bytes is kept as it is (an earlier attempt was cut between
 * the two writes); one that holds something else is never overwritten: the next free name
 * `config.json.v1.bak.1`, `.2`... is used, so the first original a person may want back stays.
 */
import { readFileSync, rmSync } from 'node:fs';
import { AgentError } from '../errors.js';
import type { ConfigFileHandle } from './config-file.js';

/** The first backup name for `path` at version `from`. */
export function backupName(path: string, from: number): string {
  return `${path}.v${from}.bak`;
}

/** Where the original of `path` goes: an existing copy of the same bytes, else a free name. */
export function backupFor(path: string, from: number): { path: string; exists: boolean } {
  let original: Buffer;
  try {
    original = readFileSync(path);
  } catch (cause) {
    throw new AgentError('CONFIG_MISSING', `${path}: cannot read`, { cause });
  }
  for (let n = 0; ; n++) {
    const candidate = n === 0 ? backupName(path, from) : `${backupName(path, from)}.${n}`;
    let existing: Buffer;
    try {
      existing = readFileSync(candidate);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        return { path: candidate, exists: false };
      throw new AgentError(
        'INPUT_INVALID',
        `${candidate}: cannot read the backup there (${(error as NodeJS.ErrnoException).code ?? 'failed'})`,
        { cause: error },
      );
    }
    if (existing.equals(original)) return { path: candidate, exists: true };
  }
}

/**
 * Keeps the file's original (version `from`) beside it and writes `value` (the migrated object,
 * possibly with a change) over it. Returns the backup's path. On a failure the file is as it was,
 * and a backup made by this call is removed again.
 */
export function writeMigrated(
  file: ConfigFileHandle,
  from: number,
  value: Record<string, unknown>,
): string {
  const backup = backupFor(file.path, from);
  if (!backup.exists) file.keepCopy(backup.path);
  try {
    file.write(value);
  } catch (error) {
    if (!backup.exists) rmSync(backup.path, { force: true });
    throw error;
  }
  return backup.path;
}
