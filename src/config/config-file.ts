/**
 * The config file on disk: read whole, parsed by our JSON reader, and replaced atomically by
 * `write-file-atomic` (temp file beside it, fsync, rename), so a crash or a full disk never leaves
 * half a config. A write keeps the file's owner and group and its mode without any permission for
 * others: `sudo printer-agent config set` on the installed `0640 root:printer-agent` file leaves it
 * readable by the service (the lock-out trap of issue 15: conf rewrote it `0600 root`), and a file
 * that may hold the store key never becomes readable by everyone after we touch it (decision 139).
 *
 * Validation is zod's, in `load.ts`; this module only reads and writes.
 */
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { AgentError, isAgentError } from '../errors.js';
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
}

function unreadable(path: string, cause: unknown): AgentError {
  const code = (cause as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    return new AgentError(
      'CONFIG_MISSING',
      `${path}: no such file; copy config/config.example.json there or pass --config FILE`,
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
    write: (value) => {
      const { mode, uid, gid } = statSync(path);
      writeFileAtomic.sync(path, `${JSON.stringify(value, null, 2)}\n`, {
        mode: mode & 0o777 & ~OTHERS,
        // Owner and group stay as they were; only root can give a file away, so a write by the
        // owner (a test, a technician's own copy) keeps them by creating the file as itself.
        chown: { uid, gid },
      });
    },
  };
}

/** Reads and parses the config file: CONFIG_MISSING or CONFIG_INVALID (broken JSON) on failure. */
export function readConfigFile(file: string): Record<string, unknown> {
  return openConfigFile(file).read();
}
