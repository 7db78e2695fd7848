/**
 * `printer-agent doctor [--config FILE] [--json]`: checks what the agent needs to run, in order
 * (config, key files, secret files and their permissions, the logo, the fonts, state dir, broker,
 * printers, clock), and
 * prints a checklist with a fix under each failure. Exit code 1 when any check failed.
 *
 * The package's template (config/config.example.json, installed as /etc/printer-agent/config.json)
 * is said to be the template, with the fields still to fill, and none of its placeholder hosts is
 * contacted (issue 43 item 5). While the agent runs it holds the printers, so their state is the
 * running agent's, asked over its local API (doctor-printers.ts).
 *
 * Only paths and rules are printed: secrets (storeKey, mqtt.password) are read to connect, never
 * shown. The broker check connects as `<clientId>-doctor` with a clean session, so it never takes
 * the running agent's session over.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { openConfigFile, resolveConfigPath } from '../config/config-file.js';
import { CONFIG_PATH_ENV, DEFAULT_CONFIG_PATH } from '../config/env.js';
import { type AgentConfig, getAt, resolveConfig, validateConfig } from '../config/load.js';
import { type ConfigFile, PATH_FIELDS, SECRET_FILE_FIELDS } from '../config/schema.js';
import { checkReadableFile, exposedSecretWarning, readSecretFile } from '../config/secret-files.js';
import { serviceAccessProblems, serviceReadFiles } from '../config/service-access.js';
import { errorMessage, isAgentError } from '../errors.js';
import {
  findServiceAccount,
  runningAsRoot,
  SERVICE_USER,
  SERVICE_USER_ENV,
  type ServiceAccount,
} from '../host/service-account.js';
import { probeBroker } from '../mqtt/probe.js';
import { STORE_KEY_MAX } from '../protocol/envelope.js';
import { mqttMaxPacketBytes } from '../protocol/limits.js';
import { loadKeyFile } from '../protocol/signing.js';
import { defaultClientId, deriveStoreId } from '../protocol/store-id.js';
import { LOGO_FIELD, LOGO_MAX_FILE_BYTES, loadLogo } from '../receipt/logo.js';
import { getProfile, type PrinterProfile } from '../receipt/profile.js';
import { type FontCandidate, LineRasterizer, SYSTEM_FONTS } from '../receipt/raster-text.js';
import type { AgentEndpoint } from './agent-client.js';
import { catchUpChecks } from './doctor-catch-up.js';
import { agentLine, askRunningAgent, printerChecks } from './doctor-printers.js';
import type { CliContext } from './io.js';
import { type TemplateCheck, templateCheck } from './shipped-template.js';

export type CheckStatus = 'ok' | 'warn' | 'FAIL';

export interface CheckLine {
  status: CheckStatus;
  /** What was checked: `config`, `keys`, `printer receipt`... */
  name: string;
  detail: string;
  fix?: string;
}

const BROKER_TIMEOUT_MS = 5000;
const MIN_SANE_YEAR = 2024;

/** Schema-valid file and, when every file it names is readable, the effective config. */
interface Loaded {
  path: string;
  file: ConfigFile;
  config: AgentConfig | null;
  /** What of it is still the package's template. */
  template: TemplateCheck;
  /** `sudo ` when changing the config takes root, for the commands in fixes. */
  sudo: string;
  /** ` --config FILE` when the config is not found without it, for the commands in fixes. */
  configOption: string;
}

/** The `sudo ` a command changing `path` needs: root's file, or the caller is root already. */
function sudoFor(path: string): string {
  if (runningAsRoot()) return 'sudo ';
  try {
    accessSync(path, constants.W_OK);
    return '';
  } catch {
    return 'sudo ';
  }
}

/** Where doctor looks: the environment (PRINTER_AGENT_*, PATH) and the directory it runs in. */
interface Surroundings {
  env: NodeJS.ProcessEnv;
  cwd: string;
}

function checkConfig(
  out: CheckLine[],
  configPath: string | undefined,
  { env, cwd }: Surroundings,
): Loaded | null {
  let path: string;
  try {
    path = resolveConfigPath(configPath, env, cwd);
  } catch (error) {
    out.push({ status: 'FAIL', name: 'config', detail: errorMessage(error) });
    return null;
  }
  let file: ConfigFile;
  try {
    file = validateConfig(openConfigFile(path).read(), { file: path, env, cwd }).config;
  } catch (error) {
    if (!isAgentError(error)) throw error;
    if (error.code === 'CONFIG_MISSING') {
      const detail = error.message.split(';')[0] ?? error.message;
      out.push({
        status: 'FAIL',
        name: 'config',
        detail,
        // The command, not the template's path: config/config.example.json is in the sources
        // only, and the package's copy of it is the very file that is missing.
        fix: exists(path)
          ? `run doctor as root (sudo printer-agent doctor${configOption(path, { env, cwd })}): the config is root's and the service's only`
          : `write it with ${sudoFor(dirname(path))}printer-agent setup${configOption(path, { env, cwd })} (it asks for each value), or pass --config FILE`,
      });
    } else {
      const issues = error.issues.map((i) => `${i.path}: ${i.message}`);
      out.push({
        status: 'FAIL',
        name: 'config',
        detail: issues.length > 0 ? `${path}: ${issues.join('; ')}` : error.message,
        fix: `correct each field listed (printer-agent config check --config ${path})`,
      });
    }
    return null;
  }
  let config: AgentConfig | null = null;
  let warnings: string[] = [];
  try {
    ({ config, warnings } = resolveConfig(file, { file: path }));
  } catch (error) {
    // Unreadable files the config names: the checks below report each with its fix.
    if (!isAgentError(error) || error.code !== 'CONFIG_INVALID') throw error;
  }
  const loaded: Loaded = {
    path,
    file,
    config,
    template: templateCheck(file),
    sudo: sudoFor(path),
    configOption: configOption(path, { env, cwd }),
  };
  out.push(
    loaded.template.isTemplate
      ? templateLine(loaded)
      : { status: 'ok', name: 'config', detail: path },
  );
  // Permission warnings get their own lines (with a fix) under `permissions`.
  for (const warning of warnings.filter((w) => !w.includes('can be read by group or others')))
    out.push({ status: 'warn', name: 'config', detail: warning });
  return loaded;
}

/** ` --config FILE`, unless the commands find `path` on their own (the default, or the env's). */
function configOption(path: string, { env, cwd }: Surroundings): string {
  return resolveConfigPath(undefined, env, cwd) === path ? '' : ` --config ${path}`;
}

/**
 * The config is the package's template: one line naming what to fill and how. Its hosts are
 * placeholders (broker.example.com, orders.example.com) and its printer address an example, so
 * nothing of it is contacted: a probe could only fail, and would send the template's broker
 * account name to whoever answers for a name that is not ours.
 */
function templateLine(loaded: Loaded): CheckLine {
  const { path, file, template, sudo, configOption: cfg } = loaded;
  const fields = template.placeholders.map((p) => `${p.field} (${p.why})`);
  const missing = PATH_FIELDS.filter((field) => {
    if (field === 'stateDir') return false;
    const value = getAt(file, field.split('.'));
    return typeof value === 'string' && !exists(value);
  });
  const files =
    missing.length > 0 ? `; and the files it names are not there yet: ${missing.join(', ')}` : '';
  return {
    status: 'FAIL',
    name: 'config',
    detail: `${path} is still the package's template: fill in ${fields.join(', ')}${files}. Nothing was contacted: the broker, the order service and the printers are checked once it is filled in`,
    fix: `${sudo}printer-agent setup${cfg} (it asks for each value, writes the key and secret files beside the config and replaces the template), or field by field: ${sudo}printer-agent config set${cfg} mqtt.url mqtts://BROKER:8883, and so on for each field named; then ${sudo}printer-agent doctor${cfg}`,
  };
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The commands that put a file the agent reads in place, owned and moded as `config check` wants
 * it run as root (host/service-account.ts `readProblem`): a secret the service user's alone
 * (`chown user:group`, 0600), anything else readable by it. A bare `chmod 600` on a file root
 * made would leave it root's, unreadable by the service (issue 43 item 5). Without a service
 * account (a developer's machine) the caller runs the agent and owns the files: no chown.
 */
interface FileFixes {
  account: ServiceAccount | null;
}

/** `sudo chown user:group F && sudo chmod 0600 F`: the service user's alone, as `readProblem`. */
function ownSecret(path: string, account: ServiceAccount): string {
  return `sudo chown ${account.name}:${account.groupName} ${path} && sudo chmod 0600 ${path}`;
}

/** Puts `source` (a file the technician has) at `path` with the right owner and mode. */
function installFile(
  path: string,
  source: string,
  secret: boolean,
  { account }: FileFixes,
): string {
  if (!account) return `cp ${source} ${path} && chmod ${secret ? '600' : '644'} ${path}`;
  return secret
    ? `sudo install -m 0600 -o ${account.name} -g ${account.groupName} ${source} ${path}`
    : `sudo install -m 0644 ${source} ${path}`;
}

/**
 * The fix for a secret file (first line the secret) that cannot be used: missing, unreadable by
 * this user, or empty. sudoedit writes into the existing file, so it keeps the owner and mode
 * `install` gave it; the secret is never on a command line (shell history, process list).
 */
function secretFileFix(path: string, fixes: FileFixes): string {
  const { account } = fixes;
  let stats: ReturnType<typeof statSync> | undefined;
  try {
    stats = statSync(path);
  } catch {
    stats = undefined;
  }
  if (!account)
    return stats
      ? `write the secret as the first line of ${path}, then chmod 600 ${path}`
      : `write the secret as the first line of ${path} (umask 077; an editor), then chmod 600 ${path}`;
  if (!stats)
    return `sudo install -m 0600 -o ${account.name} -g ${account.groupName} /dev/null ${path} && sudoedit ${path} (write the secret as its first line)`;
  try {
    accessSync(path, constants.R_OK);
  } catch {
    // Not root: the file is the service user's, as it should be; root can tell more.
    return `run doctor as root (sudo printer-agent doctor): ${path} is the service user's, and as root doctor checks what that user can read`;
  }
  return `sudoedit ${path} (write the secret as its first line), then ${ownSecret(path, account)}`;
}

function checkKeys(out: CheckLine[], file: ConfigFile, fixes: FileFixes): void {
  const keys: [string, string | undefined, 'public' | 'private', string][] = [
    ['service public key', file.keys.servicePublicKeyFile, 'public', 'SERVICE-PUBLIC.pem'],
    ['store private key', file.keys.storePrivateKeyFile, 'private', 'STORE-PRIVATE.pem'],
  ];
  for (const [label, path, kind, source] of keys) {
    if (path === undefined) continue;
    try {
      loadKeyFile(path, kind);
      out.push({ status: 'ok', name: 'keys', detail: `${path} (${label})` });
    } catch (error) {
      if (!isAgentError(error)) throw error;
      const put =
        kind === 'public'
          ? `${installFile(path, source, false, fixes)} (the order service's public key, PEM)`
          : `${installFile(path, source, true, fixes)} (the store private key, PEM; printer-agent keys generate makes a pair)`;
      out.push({
        status: 'FAIL',
        name: 'keys',
        detail: error.message.startsWith(path) ? error.message : `${path}: ${error.message}`,
        fix:
          error.code === 'KEY_FILE_MISSING'
            ? put
            : `replace ${path} with the ${label} as PEM (RSA, 2048 bits or more): ${put}`,
      });
    }
  }
}

function checkFiles(out: CheckLine[], file: ConfigFile, fixes: FileFixes): void {
  const secrets: [string, string | undefined, number][] = [
    ['storeKeyFile', file.storeKeyFile, STORE_KEY_MAX],
    ['mqtt.passwordFile', file.mqtt.passwordFile, 1024],
  ];
  for (const [field, path, max] of secrets) {
    if (path === undefined) continue;
    const read = readSecretFile(path, max); // the value stays here
    out.push(
      read.ok
        ? { status: 'ok', name: 'secret', detail: `${field}: ${path}` }
        : {
            status: 'FAIL',
            name: 'secret',
            detail: `${field}: ${read.message}`,
            fix: secretFileFix(path, fixes),
          },
    );
  }
  const tls: [string, string | undefined][] = [
    ['mqtt.tls.caFile', file.mqtt.tls.caFile],
    ['mqtt.tls.certFile', file.mqtt.tls.certFile],
    ['mqtt.tls.keyFile', file.mqtt.tls.keyFile],
  ];
  for (const [field, path] of tls) {
    if (path === undefined) continue;
    const check = checkReadableFile(path);
    out.push(
      check.ok
        ? { status: 'ok', name: 'tls', detail: `${field}: ${path}` }
        : {
            status: 'FAIL',
            name: 'tls',
            detail: `${field}: ${check.message}`,
            fix: `${installFile(path, field === 'mqtt.tls.keyFile' ? 'KEY.pem' : 'FILE.pem', field === 'mqtt.tls.keyFile', fixes)}, or correct ${field}`,
          },
    );
  }
}

/** Scripts of names and remarks, each with one character to ask the fonts for. */
const SCRIPT_SAMPLES: ReadonlyArray<readonly [string, string]> = [
  ['Greek', 'Ω'],
  ['Cyrillic', 'Ж'],
  ['Arabic', 'ب'],
  ['Hebrew', 'א'],
  ['Thai', 'ก'],
  ['Chinese', '中'],
  ['Japanese', 'あ'],
  ['Korean', '한'],
];

/**
 * The fonts raster lines are drawn with (issue 18) and the scripts none of them has: a character
 * of those prints as `?` on a printer whose own fonts lack it (issue 42 item 13). A warning, not a
 * failure: a store whose orders never hold such characters loses nothing.
 */
export function checkFonts(
  out: CheckLine[],
  file: ConfigFile,
  fonts: readonly FontCandidate[] = SYSTEM_FONTS,
): void {
  if (file.receipt.rasterLines === false) {
    out.push({
      status: 'ok',
      name: 'fonts',
      detail:
        'raster lines are off (receipt.rasterLines: false): characters the printers lack print as ?',
    });
    return;
  }
  const rasterizer = LineRasterizer.fromSystem(fonts);
  if (!rasterizer) {
    out.push({
      status: 'warn',
      name: 'fonts',
      detail: 'no fonts for raster lines: characters the printers cannot print come out as ?',
      fix: 'apt-get install fonts-dejavu-core fonts-unifont',
    });
    return;
  }
  const lacking = SCRIPT_SAMPLES.filter(([, ch]) => !rasterizer.covers(ch)).map(([name]) => name);
  const drawn = `raster lines drawn with ${rasterizer.fonts.join(', ')}`;
  out.push(
    lacking.length === 0
      ? { status: 'ok', name: 'fonts', detail: drawn }
      : {
          status: 'warn',
          name: 'fonts',
          detail: `${drawn}; none has ${lacking.join(', ')}: such characters print as ? on printers without them in their own fonts`,
          fix: 'apt-get install fonts-unifont (every character of the BMP), or fonts-noto-cjk for Chinese, Japanese and Korean',
        },
  );
}

/**
 * The store logo, decoded and converted for every printer's profile as the agent does at start. A
 * FAIL, though the agent still runs: it prints receipts without the logo until this is fixed.
 */
async function checkLogo(out: CheckLine[], file: ConfigFile): Promise<void> {
  const logo = file.receipt.logo;
  if (!logo) return;
  const profiles: PrinterProfile[] = [];
  for (const p of file.printers) {
    try {
      profiles.push(getProfile(p.profile));
    } catch {
      // reported by the printer checks
    }
  }
  try {
    const converted = await loadLogo(logo, profiles);
    const sizes = [...new Set(profiles)].map((profile) => {
      const image = converted.images.get(profile.id)!;
      return `${image.width}x${image.height} dots on ${profile.id}`;
    });
    out.push({ status: 'ok', name: 'logo', detail: `${logo.file} (${sizes.join(', ')})` });
  } catch (error) {
    if (!isAgentError(error)) throw error;
    out.push({
      status: 'FAIL',
      name: 'logo',
      detail: error.message,
      fix: `put the logo at ${logo.file} as PNG or SVG (at most ${LOGO_MAX_FILE_BYTES / 1024 / 1024} MB), or correct or remove ${LOGO_FIELD}; until then receipts print without it`,
    });
  }
}

function checkPermissions(out: CheckLine[], loaded: Loaded, { account }: FileFixes): void {
  const { file, path } = loaded;
  const targets: [string, string][] = [];
  for (const field of SECRET_FILE_FIELDS) {
    const value = getAt(file, field.split('.'));
    if (typeof value === 'string') targets.push([field, value]);
  }
  if (file.storeKey !== undefined || file.mqtt.password !== undefined)
    targets.push(['config file (holds a secret inline)', path]);
  for (const [field, target] of targets) {
    if (!exists(target)) continue; // reported by the keys and secret checks
    const warning = exposedSecretWarning(field, target);
    out.push(
      warning
        ? {
            status: 'warn',
            name: 'permissions',
            detail: warning.replace(/; run chmod 600 .*$/, ''),
            // chmod alone would leave a file root made root's: the service could not read it.
            fix: account ? ownSecret(target, account) : `chmod 600 ${target}`,
          }
        : { status: 'ok', name: 'permissions', detail: `${field}: ${target}` },
    );
  }
}

/**
 * Run as root, every file check above passes whatever the modes: root reads everything. What
 * counts is whether the service's own account can read them (the lock-out trap of issue 15).
 */
function checkServiceAccess(out: CheckLine[], loaded: Loaded, env: NodeJS.ProcessEnv): void {
  if (!runningAsRoot()) return;
  const account = findServiceAccount(env);
  if (!account) {
    out.push({
      status: 'warn',
      name: 'service user',
      detail: `no account ${env[SERVICE_USER_ENV] || SERVICE_USER} here: as root, doctor cannot tell what the service can read`,
      fix: `install the package (it creates the account), or set ${SERVICE_USER_ENV} to the unit's User=`,
    });
    return;
  }
  const problems = serviceAccessProblems(account, loaded.file, loaded.path);
  for (const problem of problems)
    out.push({
      status: 'FAIL',
      name: 'service user',
      detail: `${problem.field}: ${problem.detail}`,
      fix: problem.fix,
    });
  // readProblem passes a file that is not there (its own check names it): it is not readable
  // all the same, and must not count as read (the template's five files, issue 43 item 5).
  const named = serviceReadFiles(loaded.file, loaded.path).slice(1);
  const missing = named.filter((f) => !exists(f.path));
  if (missing.length > 0)
    out.push({
      status: 'FAIL',
      name: 'service user',
      detail: `${account.name} cannot read ${missing.length} of the ${named.length} files the config names: not there (${missing.map((f) => `${f.field} ${f.path}`).join(', ')})`,
      fix: 'put each in place as its line above says; doctor then checks the service user can read it',
    });
  else if (problems.length === 0)
    out.push({
      status: 'ok',
      name: 'service user',
      detail: `${account.name} can read the config and the ${named.length} file${named.length === 1 ? '' : 's'} it names`,
    });
}

function checkStateDir(out: CheckLine[], dir: string): void {
  const fix = `sudo install -d -o printer-agent -m 0750 ${dir} (systemd creates it with StateDirectory=printer-agent)`;
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    out.push({ status: 'FAIL', name: 'state dir', detail: `${dir}: missing (${code})`, fix });
    return;
  }
  if (!isDir) {
    out.push({ status: 'FAIL', name: 'state dir', detail: `${dir} is not a directory`, fix });
    return;
  }
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
    out.push({ status: 'ok', name: 'state dir', detail: `${dir} (writable)` });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'denied';
    out.push({
      status: 'FAIL',
      name: 'state dir',
      detail: `${dir}: not writable (${code})`,
      fix: `sudo chown -R printer-agent: ${dir}`,
    });
  }
}

/** The broker settings, from the effective config or, when a key file broke it, from the file. */
function brokerSettings(loaded: Loaded): { clientId: string; password?: string } | string {
  if (loaded.config)
    return { clientId: loaded.config.mqtt.clientId, password: loaded.config.mqtt.password };
  const { file } = loaded;
  let password = file.mqtt.password;
  if (file.mqtt.passwordFile !== undefined) {
    const read = readSecretFile(file.mqtt.passwordFile, 1024);
    if (!read.ok) return 'not checked: mqtt.passwordFile cannot be read (see above)';
    password = read.value;
  }
  let storeKey = file.storeKey;
  if (file.storeKeyFile !== undefined) {
    const read = readSecretFile(file.storeKeyFile, STORE_KEY_MAX);
    if (read.ok) storeKey = read.value;
  }
  const clientId =
    file.mqtt.clientId ??
    (storeKey !== undefined
      ? defaultClientId(
          file.storeId ?? deriveStoreId(file.appId, storeKey),
          storeKey,
          file.storeId === undefined,
        )
      : `printer-agent-${process.pid}`);
  return { clientId, password };
}

function brokerFix(reason: string): string {
  if (/authori[sz]ed|user ?name|password/i.test(reason))
    return 'check mqtt.username and mqtt.password / mqtt.passwordFile against the broker account';
  if (/certificate|self[- ]signed|TLS|SSL/i.test(reason))
    return 'check mqtt.tls.caFile (the CA that signed the broker certificate) and the broker host name';
  return 'check mqtt.url and that the broker runs (systemctl status mosquitto)';
}

async function checkBroker(out: CheckLine[], loaded: Loaded): Promise<void> {
  const m = loaded.file.mqtt;
  const label = `${m.url} (MQTT ${m.protocolVersion === 4 ? '3.1.1' : '5'})`;
  const settings = brokerSettings(loaded);
  if (typeof settings === 'string') {
    out.push({
      status: 'FAIL',
      name: 'broker',
      detail: `${label}: ${settings}`,
      fix: 'fix mqtt.passwordFile first',
    });
    return;
  }
  const result = await probeBroker(
    {
      url: m.url,
      protocolVersion: m.protocolVersion === 4 ? 4 : 5,
      clientId: settings.clientId,
      username: m.username,
      password: settings.password,
      tls: m.tls,
    },
    BROKER_TIMEOUT_MS,
  );
  out.push(
    result.ok
      ? { status: 'ok', name: 'broker', detail: `${label}: connected` }
      : {
          status: 'FAIL',
          name: 'broker',
          detail: `${label}: ${result.reason}`,
          // A failed TLS check comes with its own fix (src/mqtt/tls-failure.ts).
          fix: result.fix ?? result.tls?.fix ?? brokerFix(result.reason),
        },
  );
  if (result.ok) checkPacketSize(out, m, result.maximumPacketSize);
}

/**
 * Sizes (print-protocol §9): an MQTT 5 broker that accepts smaller packets than the agent's
 * message limit drops valid instructions without a word; on MQTT 3.1.1 the agent cannot bound
 * what the broker sends it, so only the broker's own limit protects it.
 */
function checkPacketSize(
  out: CheckLine[],
  m: ConfigFile['mqtt'],
  brokerMax: number | undefined,
): void {
  if (m.protocolVersion === 4) {
    out.push({
      status: 'warn',
      name: 'broker',
      detail:
        'MQTT 3.1.1: the agent cannot ask the broker to bound packet sizes, so an oversized publish reaches it whole',
      fix: `set message_size_limit ${mqttMaxPacketBytes(m.maxMessageBytes)} in the broker's config (Mosquitto; see /usr/share/doc/printer-agent/protocol.md "Message size on the broker"), or use protocolVersion 5`,
    });
    return;
  }
  if (brokerMax !== undefined && brokerMax < m.maxMessageBytes + 1024) {
    out.push({
      status: 'warn',
      name: 'broker',
      detail: `the broker accepts packets up to ${brokerMax} bytes (its CONNACK), less than mqtt.maxMessageBytes (${m.maxMessageBytes}) plus the packet header: valid instructions near the limit cannot pass through it`,
      fix: `raise the broker's max_packet_size to at least ${mqttMaxPacketBytes(m.maxMessageBytes)}, or lower mqtt.maxMessageBytes`,
    });
  }
}

function checkClock(out: CheckLine[], env: NodeJS.ProcessEnv): void {
  const now = new Date();
  const fix =
    'enable time sync: sudo timedatectl set-ntp true (a Raspberry Pi has no battery clock)';
  if (now.getUTCFullYear() < MIN_SANE_YEAR) {
    out.push({
      status: 'FAIL',
      name: 'clock',
      detail: `${now.toISOString()}: the system clock is not set`,
      fix,
    });
    return;
  }
  const r = spawnSync('timedatectl', ['show', '-p', 'NTPSynchronized', '--value'], {
    encoding: 'utf8',
    timeout: 5000,
    env,
  });
  // No timedatectl, or no systemd to ask: only the year check applies.
  const answer = r.error || r.status !== 0 ? '' : r.stdout.trim();
  if (answer === 'no') {
    out.push({
      status: 'FAIL',
      name: 'clock',
      detail: `${now.toISOString()}: not synchronized with NTP`,
      fix,
    });
    return;
  }
  out.push({
    status: 'ok',
    name: 'clock',
    detail: `${now.toISOString()}${answer === 'yes' ? ' (NTP synchronized)' : ''}`,
  });
}

/** How to reach the agent of this config, from the effective config or, without one, the file. */
function agentEndpoint(loaded: Loaded): AgentEndpoint {
  if (loaded.config) return loaded.config;
  // The token file may be what could not be read: the local token may still do.
  return { console: { ...loaded.file.console, token: undefined }, stateDir: loaded.file.stateDir };
}

/** This config's store id, when doctor can tell it: an agent of another store is not this one's. */
function storeIdOf(loaded: Loaded): string | undefined {
  if (loaded.config) return loaded.config.storeId;
  const { file } = loaded;
  if (file.storeId !== undefined) return file.storeId;
  let storeKey = file.storeKey;
  if (file.storeKeyFile !== undefined) {
    const read = readSecretFile(file.storeKeyFile, STORE_KEY_MAX);
    storeKey = read.ok ? read.value : undefined;
  }
  return storeKey === undefined ? undefined : deriveStoreId(file.appId, storeKey);
}

/**
 * What needs the network: the broker, catch-up, the running agent and the printers. Placeholder
 * hosts a partly filled template still names are reported, not contacted.
 */
async function checkNetwork(out: CheckLine[], loaded: Loaded): Promise<void> {
  const { file, sudo, configOption: cfg } = loaded;
  await checkBroker(out, loaded);
  const placeholder = (field: string) =>
    loaded.template.placeholders.find((p) => p.field === field);
  const baseUrl = placeholder('catchUp.baseUrl');
  if (baseUrl)
    out.push({
      status: 'FAIL',
      name: 'catch-up',
      detail: `catchUp.baseUrl: ${file.catchUp.baseUrl}: ${baseUrl.why}: not contacted`,
      fix: `${sudo}printer-agent config set${cfg} catchUp.baseUrl https://ORDER-SERVICE (the order service's URL), or ${sudo}printer-agent config set${cfg} catchUp.enabled false`,
    });
  else out.push(...(await catchUpChecks(file)));
  const view = await askRunningAgent(agentEndpoint(loaded), storeIdOf(loaded));
  out.push(...agentLine(view, loaded.path, statSync(loaded.path).mtime));
  const real = file.printers.filter((p, i) => {
    const example = placeholder(`printers[${i}].url`);
    if (example)
      out.push({
        status: 'FAIL',
        name: `printer ${p.id}`,
        detail: `${p.url}: ${example.why}: not contacted`,
        fix: `${sudo}printer-agent config set${cfg} printers[${i}].url URL (printer-agent printers scan lists the printers it finds)`,
      });
    return !example;
  });
  out.push(...(await printerChecks(real, view)));
}

/** Every check, in order; later checks that need a valid config are left out without one. */
export async function runDoctor(options: {
  configPath?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** The fonts raster lines may use: the system's (tests: a set without CJK). */
  fonts?: readonly FontCandidate[];
}): Promise<CheckLine[]> {
  const around = { env: options.env ?? process.env, cwd: options.cwd ?? process.cwd() };
  const out: CheckLine[] = [];
  const loaded = checkConfig(out, options.configPath, around);
  if (loaded) {
    // Fixes name the service's account when there is one, as root or not: the files are its.
    const fixes: FileFixes = { account: findServiceAccount(around.env) };
    checkKeys(out, loaded.file, fixes);
    checkFiles(out, loaded.file, fixes);
    await checkLogo(out, loaded.file);
    checkFonts(out, loaded.file, options.fonts);
    checkPermissions(out, loaded, fixes);
    checkServiceAccess(out, loaded, around.env);
    checkStateDir(out, loaded.file.stateDir);
    // The template's hosts are placeholders and its printer address an example: nothing to ask.
    if (!loaded.template.isTemplate) await checkNetwork(out, loaded);
  }
  checkClock(out, around.env);
  return out;
}

export function formatChecklist(lines: readonly CheckLine[]): string {
  return lines
    .map(
      (l) => `${l.status.padEnd(4)} ${l.name}: ${l.detail}\n${l.fix ? `     fix: ${l.fix}\n` : ''}`,
    )
    .join('');
}

export function registerDoctor(program: Command, context: CliContext): void {
  const { io } = context;
  program
    .command('doctor')
    .description(
      'check config, keys, permissions, fonts, state dir, broker, printers and clock; print fixes',
    )
    .option(
      '--config <file>',
      `config file (default: $${CONFIG_PATH_ENV}, else ${DEFAULT_CONFIG_PATH})`,
    )
    .option('--json', 'print the checks as JSON')
    .action(async (opts: { config?: string; json?: boolean }) => {
      const lines = await runDoctor({ configPath: opts.config, env: io.env, cwd: io.cwd });
      const failed = lines.some((l) => l.status === 'FAIL');
      io.stdout.write(
        opts.json
          ? `${JSON.stringify({ ok: !failed, checks: lines }, null, 2)}\n`
          : formatChecklist(lines),
      );
      context.exitCode = failed ? 1 : 0;
    });
}
