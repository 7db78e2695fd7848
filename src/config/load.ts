/**
 * Loading the agent's configuration: the file (config-file.ts), migrated to the current version
 * (migrations.ts), then the environment overrides, then the zod schema (every problem as
 * `path: message`), then the files it points at (secrets read, keys and certificates checked),
 * then the derived values (storeId, MQTT client id).
 *
 * Relative file paths in the config resolve against the config file's folder, so a config and its
 * key files can be moved together; paths from the environment resolve against the working
 * directory, like any command-line path.
 */
import { statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { AgentError, errorMessage, type FieldIssue } from '../errors.js';
import { STORE_KEY_MAX } from '../protocol/envelope.js';
import { defaultClientId, deriveStoreId } from '../protocol/store-id.js';
import { describeIssues, formatPath, toFieldIssues } from '../protocol/validation.js';
import { type ConfigFileHandle, openConfigFile, resolveConfigPath } from './config-file.js';
import { type AppliedOverride, applyEnvOverrides } from './env.js';
import { writeMigrated } from './file-migration.js';
import { type MigratedConfig, migrateConfig } from './migrations.js';
import {
  agentConfigSchema,
  type ConfigFile,
  configErrorMessage,
  METRICS_TOKEN_MIN,
  PATH_FIELDS,
  SECRET_FILE_FIELDS,
} from './schema.js';
import { checkReadableFile, exposedSecretWarning, readSecretFile } from './secret-files.js';

type MqttFile = ConfigFile['mqtt'];

/** The effective configuration the agent runs with: defaulted, secrets read, ids derived. */
export type AgentConfig = Omit<
  ConfigFile,
  '$schema' | 'version' | 'storeKey' | 'storeId' | 'mqtt' | 'console'
> & {
  console: ConfigFile['console'] & {
    /** SECRET, from console.tokenFile. */
    token: string | undefined;
    /** SECRET, from console.metricsTokenFile. */
    metricsToken: string | undefined;
  };
  /** SECRET: never log it; `redactConfig` before printing. */
  storeKey: string;
  storeId: string;
  mqtt: Omit<MqttFile, 'clientId' | 'password'> & {
    clientId: string;
    /** SECRET, from mqtt.password or mqtt.passwordFile. */
    password: string | undefined;
  };
};

export interface LoadedConfig {
  /** Absolute path of the config file. */
  path: string;
  /** The file as validated (paths resolved, secrets not read): what names the other files. */
  file: ConfigFile;
  config: AgentConfig;
  /** Problems that do not stop the agent (e.g. a secret file readable by others). */
  warnings: string[];
  /** The file was an older version, read migrated; null when it was current. */
  migration: ConfigMigration | null;
  /**
   * The file's modification time as this load read it (after a migration's rewrite). doctor
   * compares it with the file's now to tell that a running agent runs older settings: an
   * equality test, so neither clock (the agent's start, the kernel's file times) is compared
   * with the other; they differ after an NTP step at boot on a Pi without a clock.
   */
  modifiedAt: Date;
}

/** What became of a config file of an older version when it was loaded. */
export interface ConfigMigration {
  from: number;
  to: number;
  /** What each step did. */
  steps: string[];
  /** Where the original was kept, when the file was rewritten at the current version. */
  backup: string | null;
  /** Why the file was not rewritten (the config was migrated in memory only), when it was tried. */
  notWritten: string | null;
}

export interface LoadOptions {
  /** `--config FILE`; else $PRINTER_AGENT_CONFIG, else /etc/printer-agent/config.json. */
  configPath?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /**
   * `run`: write a migrated file back (original kept beside it) once it validates. A file that
   * cannot be written is run migrated in memory, and `migration.notWritten` says why.
   */
  rewriteOlder?: boolean;
}

export interface ValidateOptions {
  /** The config file's absolute path: relative paths resolve against its folder. */
  file: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

function invalid(file: string, issues: FieldIssue[]): AgentError {
  return new AgentError('CONFIG_INVALID', `${file}: ${describeIssues(issues)}`, {
    issues,
    details: { file },
  });
}

/** The value at a key path of a parsed JSON object, or undefined. */
export function getAt(value: unknown, path: readonly string[]): unknown {
  let node = value;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function setAt(value: object, path: readonly string[], next: unknown): void {
  const parent = getAt(value, path.slice(0, -1)) as Record<string, unknown>;
  parent[path[path.length - 1]!] = next;
}

/**
 * Migrates the file's object to the current version, applies the environment and validates
 * against the schema, without reading any file the config points at (so `config set` works before
 * the key files are in place). Throws CONFIG_INVALID listing every problem (a problem in a value
 * the environment set names the variable), CONFIG_TOO_NEW for a file of a newer agent.
 */
export function validateConfig(
  raw: Record<string, unknown>,
  options: ValidateOptions,
): { config: ConfigFile; applied: AppliedOverride[]; migrated: MigratedConfig } {
  const env = options.env ?? process.env;
  // Before the environment: the overrides name the current shape's paths.
  const migrated = migrateConfig(raw, options.file);
  const { value, applied } = applyEnvOverrides(migrated.value, env, options.cwd);
  // jitless: zod compiles a parser for each object schema on its first parse, which pays off
  // only on repeated parses; the config is parsed once per start (12 -> 8 ms of the agent's
  // start here, issue 16).
  const result = agentConfigSchema.safeParse(value, { error: configErrorMessage, jitless: true });
  if (!result.success) {
    const fromEnv = new Map(applied.map((a) => [formatPath(a.path), a.name]));
    const issues = toFieldIssues(result.error).map((issue) => {
      const name = fromEnv.get(issue.path);
      return name ? { ...issue, message: `${issue.message} (set by ${name})` } : issue;
    });
    throw invalid(options.file, issues);
  }
  const config = result.data;
  const base = dirname(options.file);
  for (const field of PATH_FIELDS) {
    const path = field.split('.');
    const current = getAt(config, path);
    if (typeof current === 'string' && !isAbsolute(current))
      setAt(config, path, resolve(base, current));
  }
  return { config, applied, migrated };
}

/**
 * Reads the secrets given as files, checks the other files are readable, derives storeId and the
 * client id, and collects warnings. Throws CONFIG_INVALID listing every file problem.
 */
export function resolveConfig(
  file: ConfigFile,
  options: { file: string },
): { config: AgentConfig; warnings: string[] } {
  const issues: FieldIssue[] = [];
  const warnings: string[] = [];

  let storeKey = file.storeKey;
  if (file.storeKeyFile !== undefined) {
    const read = readSecretFile(file.storeKeyFile, STORE_KEY_MAX);
    if (read.ok) storeKey = read.value;
    else issues.push({ path: 'storeKeyFile', message: read.message });
  }
  let password = file.mqtt.password;
  if (file.mqtt.passwordFile !== undefined) {
    const read = readSecretFile(file.mqtt.passwordFile, 1024);
    if (read.ok) password = read.value;
    else issues.push({ path: 'mqtt.passwordFile', message: read.message });
  }
  let consoleToken: string | undefined;
  if (file.console.tokenFile !== undefined) {
    const read = readSecretFile(file.console.tokenFile, 1024);
    if (read.ok) consoleToken = read.value;
    else issues.push({ path: 'console.tokenFile', message: read.message });
  }
  let metricsToken: string | undefined;
  if (file.console.metricsTokenFile !== undefined) {
    const read = readSecretFile(file.console.metricsTokenFile, 1024);
    if (!read.ok) issues.push({ path: 'console.metricsTokenFile', message: read.message });
    else if ([...read.value].length < METRICS_TOKEN_MIN)
      issues.push({
        path: 'console.metricsTokenFile',
        message: `the first line of ${file.console.metricsTokenFile} must be at least ${METRICS_TOKEN_MIN} characters: this token is never locked out, so it must not be guessable (openssl rand -hex 32)`,
      });
    else metricsToken = read.value;
  }
  const mustRead: [string, string | undefined][] = [
    ['console.certFile', file.console.certFile],
    ['console.keyFile', file.console.keyFile],
    ['keys.servicePublicKeyFile', file.keys.servicePublicKeyFile],
    ['keys.storePrivateKeyFile', file.keys.storePrivateKeyFile],
    ['mqtt.tls.caFile', file.mqtt.tls.caFile],
    ['mqtt.tls.certFile', file.mqtt.tls.certFile],
    ['mqtt.tls.keyFile', file.mqtt.tls.keyFile],
    ['catchUp.caFile', file.catchUp.caFile],
  ];
  for (const [path, value] of mustRead) {
    if (value === undefined) continue;
    const check = checkReadableFile(value);
    if (!check.ok) issues.push({ path, message: check.message });
  }
  if (issues.length > 0 || storeKey === undefined) throw invalid(options.file, issues);

  for (const field of SECRET_FILE_FIELDS) {
    const value = getAt(file, field.split('.'));
    if (typeof value !== 'string') continue;
    const warning = exposedSecretWarning(field, value);
    if (warning) warnings.push(warning);
  }
  if (file.storeKey !== undefined || file.mqtt.password !== undefined) {
    const warning = exposedSecretWarning('config file (holds a secret inline)', options.file);
    if (warning) warnings.push(warning);
  }
  if (!file.mqtt.tls.rejectUnauthorized)
    warnings.push('mqtt.tls.rejectUnauthorized: false: the broker certificate is not checked');
  if (password !== undefined && file.mqtt.url.startsWith('mqtt://'))
    warnings.push('mqtt.url: the broker password travels unencrypted over mqtt://; use mqtts://');

  const storeId = file.storeId ?? deriveStoreId(file.appId, storeKey);
  const { mqtt } = file;
  // Spelt out so that a new schema field fails to compile here until it is carried over, and so
  // that `config show` lists the fields in the order of the file.
  const config: AgentConfig = {
    appId: file.appId,
    storeKey,
    storeKeyFile: file.storeKeyFile,
    storeId,
    mqtt: {
      url: mqtt.url,
      protocolVersion: mqtt.protocolVersion,
      prefix: mqtt.prefix,
      keepaliveSec: mqtt.keepaliveSec,
      clientId: mqtt.clientId ?? defaultClientId(storeId, storeKey, file.storeId === undefined),
      sessionExpirySec: mqtt.sessionExpirySec,
      username: mqtt.username,
      password,
      passwordFile: mqtt.passwordFile,
      tls: mqtt.tls,
      reconnectMinMs: mqtt.reconnectMinMs,
      reconnectMaxMs: mqtt.reconnectMaxMs,
      maxMessageBytes: mqtt.maxMessageBytes,
    },
    keys: file.keys,
    printers: file.printers,
    routing: file.routing,
    receipt: file.receipt,
    stateDir: file.stateDir,
    catchUp: file.catchUp,
    freshness: file.freshness,
    retention: file.retention,
    drawer: file.drawer,
    logLevel: file.logLevel,
    logFormat: file.logFormat,
    console: { ...file.console, token: consoleToken, metricsToken },
  };
  return { config, warnings };
}

/** What `migrated` means for the file; with `rewrite`, written back (a failure recorded). */
export function fileMigration(
  handle: ConfigFileHandle,
  migrated: MigratedConfig,
  rewrite: boolean,
): ConfigMigration | null {
  if (migrated.from === migrated.to) return null;
  const { from, to, steps } = migrated;
  if (!rewrite) return { from, to, steps, backup: null, notWritten: null };
  try {
    return {
      from,
      to,
      steps,
      backup: writeMigrated(handle, from, migrated.value),
      notWritten: null,
    };
  } catch (error) {
    // Not fatal: the agent runs the migrated config, and says how to make the file current.
    return { from, to, steps, backup: null, notWritten: errorMessage(error) };
  }
}

/** The whole pipeline: file, migration, environment, schema, files, derived values. */
export function loadConfig(options: LoadOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const path = resolveConfigPath(options.configPath, env, options.cwd);
  const handle = openConfigFile(path);
  // Taken before the read: a change between the two shows as changed (a needless restart
  // advised), never as the settings read (a change missed).
  let modifiedAt = statSync(path).mtime;
  const { config: file, migrated } = validateConfig(handle.read(), {
    file: path,
    env,
    cwd: options.cwd,
  });
  // Written back only once the migrated file validates: a rewrite never leaves a config that the
  // agent refuses, nor changes a file the person must fix first anyway.
  const migration = fileMigration(handle, migrated, options.rewriteOlder === true);
  if (migration?.backup) modifiedAt = statSync(path).mtime;
  const { config, warnings } = resolveConfig(file, { file: path });
  return { path, file, config, warnings, migration, modifiedAt };
}
