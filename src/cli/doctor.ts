/**
 * `printer-agent doctor [--config FILE] [--json]`: checks what the agent needs to run, in order
 * (config, key files, secret files and their permissions, the logo, state dir, broker, printers,
 * clock), and
 * prints a checklist with a fix under each failure. Exit code 1 when any check failed.
 *
 * Only paths and rules are printed: secrets (storeKey, mqtt.password) are read to connect, never
 * shown. The broker check connects as `<clientId>-doctor` with a clean session, so it never takes
 * the running agent's session over.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import type { Command } from 'commander';
import { openConfigFile, resolveConfigPath } from '../config/config-file.js';
import { CONFIG_PATH_ENV, DEFAULT_CONFIG_PATH } from '../config/env.js';
import { type AgentConfig, getAt, resolveConfig, validateConfig } from '../config/load.js';
import { type ConfigFile, SECRET_FILE_FIELDS } from '../config/schema.js';
import { checkReadableFile, exposedSecretWarning, readSecretFile } from '../config/secret-files.js';
import { serviceAccessProblems, serviceReadFiles } from '../config/service-access.js';
import { errorMessage, isAgentError } from '../errors.js';
import {
  findServiceAccount,
  runningAsRoot,
  SERVICE_USER,
  SERVICE_USER_ENV,
} from '../host/service-account.js';
import { probeBroker } from '../mqtt/probe.js';
import { openPrinter } from '../printer/open-printer.js';
import { STORE_KEY_MAX } from '../protocol/envelope.js';
import { mqttMaxPacketBytes } from '../protocol/limits.js';
import { loadKeyFile } from '../protocol/signing.js';
import { defaultClientId, deriveStoreId } from '../protocol/store-id.js';
import { LOGO_FIELD, LOGO_MAX_FILE_BYTES, loadLogo } from '../receipt/logo.js';
import { getProfile, type PrinterProfile } from '../receipt/profile.js';
import { catchUpChecks } from './doctor-catch-up.js';
import type { CliContext } from './io.js';

export type CheckStatus = 'ok' | 'warn' | 'FAIL';

export interface CheckLine {
  status: CheckStatus;
  /** What was checked: `config`, `keys`, `printer receipt`... */
  name: string;
  detail: string;
  fix?: string;
}

const BROKER_TIMEOUT_MS = 5000;
const PRINTER_TIMEOUT_MS = 10_000;
const MIN_SANE_YEAR = 2024;

/** Schema-valid file and, when every file it names is readable, the effective config. */
interface Loaded {
  path: string;
  file: ConfigFile;
  config: AgentConfig | null;
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
      out.push({
        status: 'FAIL',
        name: 'config',
        detail: error.message.split(';')[0] ?? error.message,
        fix: `copy config/config.example.json to ${path} and fill it in, or pass --config FILE`,
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
  out.push({ status: 'ok', name: 'config', detail: path });
  // Permission warnings get their own lines (with a fix) under `permissions`.
  for (const warning of warnings.filter((w) => !w.includes('can be read by group or others')))
    out.push({ status: 'warn', name: 'config', detail: warning });
  return { path, file, config };
}

function checkKeys(out: CheckLine[], file: ConfigFile): void {
  const keys: [string, string | undefined, 'public' | 'private', string][] = [
    [
      'service public key',
      file.keys.servicePublicKeyFile,
      'public',
      'copy the service public key to FILE (mode 0644)',
    ],
    [
      'store private key',
      file.keys.storePrivateKeyFile,
      'private',
      'put the store private key (PEM) at FILE and chmod 600 FILE (printer-agent keys generate)',
    ],
  ];
  for (const [label, path, kind, fix] of keys) {
    if (path === undefined) continue;
    try {
      loadKeyFile(path, kind);
      out.push({ status: 'ok', name: 'keys', detail: `${path} (${label})` });
    } catch (error) {
      if (!isAgentError(error)) throw error;
      out.push({
        status: 'FAIL',
        name: 'keys',
        detail: error.message.startsWith(path) ? error.message : `${path}: ${error.message}`,
        fix:
          error.code === 'KEY_FILE_MISSING'
            ? fix.replaceAll('FILE', path)
            : `replace ${path} with the ${label} as PEM (RSA, 2048 bits or more)`,
      });
    }
  }
}

function checkFiles(out: CheckLine[], file: ConfigFile): void {
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
            fix: `write the secret as the first line of ${path}, then chmod 600 ${path}`,
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
            fix: `copy the file to ${path} (readable by the service user) or correct ${field}`,
          },
    );
  }
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

function checkPermissions(out: CheckLine[], loaded: Loaded): void {
  const { file, path } = loaded;
  const targets: [string, string][] = [];
  for (const field of SECRET_FILE_FIELDS) {
    const value = getAt(file, field.split('.'));
    if (typeof value === 'string') targets.push([field, value]);
  }
  if (file.storeKey !== undefined || file.mqtt.password !== undefined)
    targets.push(['config file (holds a secret inline)', path]);
  for (const [field, target] of targets) {
    let exists = true;
    try {
      statSync(target);
    } catch {
      exists = false; // reported by the keys and secret checks
    }
    if (!exists) continue;
    const warning = exposedSecretWarning(field, target);
    out.push(
      warning
        ? {
            status: 'warn',
            name: 'permissions',
            detail: warning.replace(/; run chmod 600 .*$/, ''),
            fix: `chmod 600 ${target}`,
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
  if (problems.length === 0) {
    const count = serviceReadFiles(loaded.file, loaded.path).length;
    out.push({
      status: 'ok',
      name: 'service user',
      detail: `${account.name} can read the config and the ${count - 1} file${count === 2 ? '' : 's'} it names`,
    });
  }
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
      fix: `set message_size_limit ${mqttMaxPacketBytes(m.maxMessageBytes)} in the broker's config (Mosquitto; see the README), or use protocolVersion 5`,
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

function printerFix(url: string, state: string, causes: string[]): string {
  const text = causes.join(' ');
  if (state === 'disconnected') {
    if (/EACCES|permission/i.test(text))
      return 'add the service user to group lp (sudo usermod -aG lp printer-agent), then restart the agent';
    if (url.startsWith('tcp:'))
      return `check the printer is on and reachable at ${url} (same network, port 9100 open)`;
    return `check the cable and that ${url} names the device (ls -l /dev/usb /dev/serial/by-id)`;
  }
  if (state === 'paper-out') return 'load a paper roll and close the cover';
  if (state === 'cover-open') return 'close the printer cover';
  if (state === 'offline') return 'bring the printer online (cover, paper, cooling down)';
  return 'clear the error on the printer (switch it off and on)';
}

async function checkPrinters(out: CheckLine[], file: ConfigFile): Promise<void> {
  for (const p of file.printers) {
    const name = `printer ${p.id}`;
    let profile: ReturnType<typeof getProfile>;
    try {
      profile = getProfile(p.profile);
    } catch (error) {
      out.push({
        status: 'FAIL',
        name,
        detail: `${p.url}: ${errorMessage(error)}`,
        fix: 'set printers[].profile to a profile in config/printers/',
      });
      continue;
    }
    const printer = openPrinter(p.url, {
      realtimeStatus: profile.realtimeStatus,
      confirm: p.confirm ?? profile.confirm,
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${PRINTER_TIMEOUT_MS} ms`)),
          PRINTER_TIMEOUT_MS,
        );
      });
      const condition = await Promise.race([printer.status(), timeout]);
      const causes = condition.causes.length > 0 ? ` (${condition.causes.join(', ')})` : '';
      const detail = `${p.url}: ${condition.state}${causes}`;
      if (condition.state === 'ready') out.push({ status: 'ok', name, detail });
      else if (condition.state === 'paper-near-end')
        out.push({ status: 'warn', name, detail, fix: 'load a new paper roll soon' });
      else if (condition.state === 'unknown')
        out.push({
          status: 'warn',
          name,
          detail: `${detail}: the printer does not report its status`,
        });
      else
        out.push({
          status: 'FAIL',
          name,
          detail,
          fix: printerFix(p.url, condition.state, condition.causes),
        });
    } catch (error) {
      out.push({
        status: 'FAIL',
        name,
        detail: `${p.url}: ${errorMessage(error)}`,
        fix: printerFix(p.url, 'disconnected', [errorMessage(error)]),
      });
    } finally {
      clearTimeout(timer);
      await printer.close().catch(() => undefined);
    }
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

/** Every check, in order; later checks that need a valid config are left out without one. */
export async function runDoctor(options: {
  configPath?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}): Promise<CheckLine[]> {
  const around = { env: options.env ?? process.env, cwd: options.cwd ?? process.cwd() };
  const out: CheckLine[] = [];
  const loaded = checkConfig(out, options.configPath, around);
  if (loaded) {
    checkKeys(out, loaded.file);
    checkFiles(out, loaded.file);
    await checkLogo(out, loaded.file);
    checkPermissions(out, loaded);
    checkServiceAccess(out, loaded, around.env);
    checkStateDir(out, loaded.file.stateDir);
    await checkBroker(out, loaded);
    out.push(...(await catchUpChecks(loaded.file)));
    await checkPrinters(out, loaded.file);
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
      'check config, keys, permissions, state dir, broker, printers and clock; print fixes',
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
