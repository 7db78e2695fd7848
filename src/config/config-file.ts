/**
 * The config file on disk: read whole, parsed by our JSON reader, and replaced atomically and
 * durably (src/host/durable-file.ts: temp file beside it, fsync, rename, directory fsync), so a
 * crash, a power cut or a full disk never leaves half a config, nor takes back an answered write. A write keeps the file's owner and group and its mode without any permission for
 * others: `sudo printer-agent config set` on the installed `0640 root:printer-agent` file leaves it
 * readable by the service (the lock-out trap of issue 15: conf rewrote it `0600 root`), and a file
 * that may hold the store key never becomes readable by everyone after we touch it (decision 139).
 *
 * Validation is zod's, in `load.ts`; this module only reads and writes.
 */
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { AgentError, isAgentError } from '../errors.js';
import { writeFileDurably } from '../host/durable-file.js';
import { CONFIG_PATH_ENV, DEFAULT_CONFIG_PATH } from './env.js';
import { parseConfigText } from './json-text.js';

/** What a write never keeps of the file's mode: every permission for others. */
const OTHERS = 0o007;

/** `--config FILE`, else `$PRINTER_AGENT_CONFIG`, else /etc/printer-agent/config.json; absolute. */
export function resolveConfigPath(
  option: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): string {
  const chosen = option || env[CONFIG_PATH_ENV] || DEFAULT_CONFIG_PATH;
  return resolve(cwd, chosen);
}

export interface ConfigFileHandle {
  readonly path: string;
  /** The file's JSON object as written (no defaults, no environment). */
  read(): Record<string, unknown>;
  /** Replaces the file atomically, keeping its owner, group and mode (less others' access). */
  write(value: Record<string, unknown>): void;
  /**
   * Copies the file's bytes as they are to `to` (replacing it), durably, with the file's owner,
   * group and mode less others' access, as `write` would: the backup a migration keeps.
   */
  keepCopy(to: string): void;
}

/**
 * A write refused by the system as a typed error, instead of a stack trace: the package's config
 * is root's (`sudo` fixes that); a read-only file system (the unit's ProtectSystem=strict) is not.
 */
function unwritable(path: string, cause: unknown): AgentError {
  const code = (cause as NodeJS.ErrnoException).code ?? 'failed';
  const hint = code === 'EACCES' || code === 'EPERM' ? '; run it as root (sudo)' : '';
  return new AgentError('INPUT_INVALID', `${path}: cannot write (${code})${hint}`, { cause });
}

/** Writes `data` over `path` durably with the mode and owner of `like` (less others' access). */
function writeLike(like: string, path: string, data: string | Uint8Array): void {
  const { mode, uid, gid } = statSync(like);
  try {
    writeFileDurably(path, data, {
      mode: mode & 0o777 & ~OTHERS,
      // Owner and group stay as they were; only root can give a file away, so a write by the
      // owner (a test, a technician's own copy) keeps them by creating the file as itself.
      owner: { uid, gid },
    });
  } catch (error) {
    throw unwritable(path, error);
  }
}

function unreadable(path: string, cause: unknown): AgentError {
  const code = (cause as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    return new AgentError(
      'CONFIG_MISSING',
      `${path}: no such file; write it with printer-agent setup, or copy /usr/share/printer-agent/config.example.json there, or pass --config FILE`,
      { cause },
    );
  }
  return new AgentError('CONFIG_MISSING', `${path}: cannot read (${code ?? 'unreadable'})`, {
    cause,
  });
}

/**
 * Opens an existing config file. A missing one is CONFIG_MISSING: the agent never creates its
 * config, and a half-written one would not validate anyway.
 */
export function openConfigFile(file: string): ConfigFileHandle {
  const path = resolve(file);
  try {
    if (!statSync(path).isFile()) throw new AgentError('CONFIG_MISSING', `${path}: is not a file`);
  } catch (error) {
    throw isAgentError(error) ? error : unreadable(path, error);
  }
  return {
    path,
    read: () => {
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (error) {
        throw unreadable(path, error);
      }
      return parseConfigText(text, path);
    },
    write: (value) => writeLike(path, path, `${JSON.stringify(value, null, 2)}\n`),
    keepCopy: (to) => {
      let bytes: Buffer;
      try {
        bytes = readFileSync(path);
      } catch (error) {
        throw unreadable(path, error);
      }
      writeLike(path, to, bytes);
    },
  };
}

/** Reads and parses the config file: CONFIG_MISSING or CONFIG_INVALID (broken JSON) on failure. */
export function readConfigFile(file: string): Record<string, unknown> {
  return openConfigFile(file).read();
}
