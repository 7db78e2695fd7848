/**
 * Writing a new configuration and the files it names (`printer-agent setup`, issue 41 item 3)
 * with the owners and modes of the package's layout (packaging/debian/postinst, decision 147):
 * run as root with the service's account known, the config is `root:<its group>` 0640 (root
 * writes it, the service reads it, nobody else), a secret (the store key, the broker password) is
 * the service user's alone, 0600, and a public file (the service's public key, a CA) is root's,
 * 0644. A directory that is missing is made 0750 like /etc/printer-agent. Run by anyone else,
 * the same modes with the caller as owner: only root can give a file away.
 *
 * Each file is replaced atomically and durably (src/host/durable-file.ts), the config last, so a
 * config never names a secret file that is not there yet.
 */
import { chmodSync, chownSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { AgentError } from '../errors.js';
import { writeFileDurably } from '../host/durable-file.js';
import { runningAsRoot, type ServiceAccount } from '../host/service-account.js';

export type NewFileKind = 'config' | 'secret' | 'public';

export interface NewFile {
  path: string;
  /** SECRET for kind `secret`: written, never echoed. */
  content: string;
  kind: NewFileKind;
}

export interface WrittenFile {
  path: string;
  kind: NewFileKind;
  mode: number;
  /** `user:group` when root chose it, else null (the caller owns it). */
  owner: string | null;
}

const MODES: Record<NewFileKind, number> = { config: 0o640, secret: 0o600, public: 0o644 };
const DIRECTORY_MODE = 0o750;

interface Owner {
  uid: number;
  gid: number;
  label: string;
}

/** Who owns a new file of `kind`: only root chooses; without the account, root keeps it. */
function ownerOf(kind: NewFileKind | 'directory', account: ServiceAccount | null): Owner | null {
  if (!runningAsRoot()) return null;
  if (!account) return { uid: 0, gid: 0, label: 'root:root' };
  if (kind === 'secret')
    return {
      uid: account.uid,
      gid: account.gid,
      label: `${account.name}:${account.groupName}`,
    };
  if (kind === 'public') return { uid: 0, gid: 0, label: 'root:root' };
  return { uid: 0, gid: account.gid, label: `root:${account.groupName}` };
}

/** The hint for a permission refused: the package's files are root's to write. */
const asRoot = (code: string) =>
  code === 'EACCES' || code === 'EPERM' ? '; run setup as root (sudo)' : '';

/** Makes `dir` (one level: a missing parent is a mistake in the path, not ours to invent). */
function ensureDirectory(dir: string, account: ServiceAccount | null): void {
  try {
    if (statSync(dir).isDirectory()) return;
    throw new AgentError('INPUT_INVALID', `${dir}: is not a directory`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  try {
    mkdirSync(dir, { mode: DIRECTORY_MODE });
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'failed';
    throw new AgentError(
      'INPUT_INVALID',
      `${dir}: cannot make the directory (${code})${asRoot(code)}`,
      {
        cause,
      },
    );
  }
  chmodSync(dir, DIRECTORY_MODE); // the umask applied to mkdir (sudo may keep a 077 one)
  const owner = ownerOf('directory', account);
  if (owner) chownSync(dir, owner.uid, owner.gid);
}

/** Writes `files` in order (put the config last); returns what each became. */
export function writeNewFiles(
  files: readonly NewFile[],
  account: ServiceAccount | null,
): WrittenFile[] {
  for (const dir of new Set(files.map((f) => dirname(f.path)))) ensureDirectory(dir, account);
  return files.map((file) => {
    const mode = MODES[file.kind];
    const owner = ownerOf(file.kind, account);
    try {
      writeFileDurably(file.path, file.content, {
        mode,
        ...(owner ? { owner: { uid: owner.uid, gid: owner.gid } } : {}),
      });
    } catch (cause) {
      const code = (cause as NodeJS.ErrnoException).code ?? 'failed';
      throw new AgentError('INPUT_INVALID', `${file.path}: cannot write (${code})${asRoot(code)}`, {
        cause,
      });
    }
    return { path: file.path, kind: file.kind, mode, owner: owner?.label ?? null };
  });
}
