/**
 * The config file on disk, through `conf` 15 (the last major that runs on Node 20): `cwd` and
 * `configName` point it at exactly one file, and every write is atomic (temp file + rename) with
 * mode 0600, so the file that may hold the store key is never readable by others after we touch it.
 *
 * conf validates nothing here: its ajv validation would report ajv's wording, and with ajv's
 * `useDefaults` it writes the defaults back into the file on load. Validation is zod's, in
 * `load.ts`; conf is the file's reader and writer.
 */
import { statSync } from 'node:fs';
import { basename, dirname, extname, resolve } from 'node:path';
import Conf from 'conf';
import { AgentError, isAgentError } from '../errors.js';
import { CONFIG_PATH_ENV, DEFAULT_CONFIG_PATH } from './env.js';
import { parseConfigText } from './json-text.js';

export const CONFIG_FILE_MODE = 0o600;

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
  /** Replaces the file atomically, mode 0600. */
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
 * config (conf would create the folder and an empty file), and a half-written one would not
 * validate anyway.
 */
export function openConfigFile(file: string): ConfigFileHandle {
  const path = resolve(file);
  try {
    if (!statSync(path).isFile()) throw new AgentError('CONFIG_MISSING', `${path}: is not a file`);
  } catch (error) {
    throw isAgentError(error) ? error : unreadable(path, error);
  }
  const extension = extname(path);
  let store: Conf<Record<string, unknown>>;
  try {
    store = new Conf<Record<string, unknown>>({
      cwd: dirname(path),
      configName: basename(path, extension),
      fileExtension: extension.slice(1),
      configFileMode: CONFIG_FILE_MODE,
      accessPropertiesByDotNotation: false,
      deserialize: (text) => parseConfigText(text, path),
      serialize: (value) => `${JSON.stringify(value, null, 2)}\n`,
    });
  } catch (error) {
    throw isAgentError(error) ? error : unreadable(path, error);
  }
  return {
    path,
    read: () => {
      try {
        // conf hands back a null-prototype copy; spread it into a plain object for zod.
        return { ...store.store };
      } catch (error) {
        throw isAgentError(error) ? error : unreadable(path, error);
      }
    },
    write: (value) => {
      store.store = value;
    },
  };
}

/** Reads and parses the config file: CONFIG_MISSING or CONFIG_INVALID (broken JSON) on failure. */
export function readConfigFile(file: string): Record<string, unknown> {
  return openConfigFile(file).read();
}
