/**
 * Replacing a file so that a power cut leaves either the old file or the new one, and once the
 * call returns, the new one: the bytes go to a temporary file beside it, which is fsync'd, renamed
 * over the file, and then the directory is fsync'd, because the rename is only a change of the
 * directory and a card keeps it only once the directory is synced (issue 39: without that last
 * fsync, `config set` answered and a power cut took the change back).
 *
 * Our own instead of write-file-atomic: that one syncs the file but not the directory, and as
 * CommonJS inside the ESM bundle it crashed `config set` in the package (issue 43).
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fchmodSync,
  fchownSync,
  fsyncSync,
  openSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';

export interface DurableWriteOptions {
  /** The new file's mode (the process umask does not apply). */
  mode: number;
  /** Owner and group to keep; a change this user may not make is skipped, as the kernel says. */
  owner?: { uid: number; gid: number };
}

/** fsync of a directory: what makes a name created, renamed or removed in it durable. */
export function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function writeFileDurably(
  path: string,
  data: string | Uint8Array,
  options: DurableWriteOptions,
): void {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  const fd = openSync(temp, 'wx', options.mode);
  try {
    try {
      let written = 0;
      while (written < bytes.length) written += writeSync(fd, bytes, written);
      if (options.owner) {
        try {
          fchownSync(fd, options.owner.uid, options.owner.gid);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error;
        }
      }
      fchmodSync(fd, options.mode);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  syncDirectory(dir);
}
