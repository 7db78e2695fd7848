/**
 * Files only the service user may read (issue 13 item 9): the job database holds customer data,
 * the order service's database holds store keys. Both SQLite stores use this one helper; the
 * emulator's ticket files use the modes (issue 40 item 9).
 */
import { chmodSync, closeSync, existsSync, openSync, statSync } from 'node:fs';

/** Owner read and write, nothing for group and others. */
export const PRIVATE_FILE_MODE = 0o600;

/** A directory only its owner may list, enter or change (the emulator's ticket files). */
export const PRIVATE_DIRECTORY_MODE = 0o700;

/**
 * Makes a SQLite database file private before SQLite opens it: creates it 0600 when missing
 * (mode `a` never truncates, so a file another process created meanwhile loses nothing; SQLite
 * then gives its -wal and -shm files the same mode), and takes group and other access away from
 * an existing file and its -wal/-shm left by an older run. Best effort on files this user does not
 * own: opening then fails with the real reason.
 */
export function keepDatabasePrivate(path: string, options: { create: boolean }): void {
  if (options.create && !existsSync(path)) closeSync(openSync(path, 'a', PRIVATE_FILE_MODE));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      const mode = statSync(file).mode & 0o777;
      if ((mode & 0o077) !== 0) chmodSync(file, mode & 0o700);
    } catch {
      // missing (-wal and -shm before the first write) or not ours: nothing to tighten
    }
  }
}
