/**
 * What `printer-agent setup` learnt (flags, answers on a terminal, identified printers) as the
 * config it will write, checked by the real schema (`validateConfig`, the one `config check`
 * runs) with each problem named by the flag that gave the value: `--broker: must start with
 * mqtt:// or mqtts://`, `--profile kitchen: must be a profile in config/printers/: ...`. The
 * messages are the schema's rules and never hold a value (one may be a secret typed in the wrong
 * place).
 *
 * The layout is the package's (config/config.example.json): secrets and keys in files beside the
 * config (`store-key`, `mqtt-password`, `service-public.pem`, `broker-ca.pem`), the config naming
 * them by absolute path.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { validateConfig } from '../config/load.js';
import { CONFIG_VERSION } from '../config/migrations.js';
import type { NewFile } from '../config/new-config.js';
import { isAgentError } from '../errors.js';
import { DEFAULT_PRINTER_ROLE } from '../protocol/print-protocol.js';
import { loadKeyFile } from '../protocol/signing.js';
import { FALLBACK_PROFILE } from '../receipt/profile-match.js';
import type { Identification } from './identify-printer.js';

export interface PrinterAnswer {
  /** The roles it serves; the first is its id (`--printer receipt,kitchen=URL`). */
  roles: string[];
  url: string;
  profile?: string;
  /** Where the profile came from, for the line a person reads. */
  profileFrom?: 'flag' | 'identified' | 'asked';
  identification?: Identification;
}

export interface SetupAnswers {
  appId?: string;
  /** SECRET: written to its file, never printed. */
  storeKey?: string;
  broker?: string;
  brokerUser?: string;
  /** SECRET. */
  brokerPassword?: string;
  /** A readable CA file, copied beside the config. */
  brokerCa?: string;
  /** The order service's public key (PEM file), copied beside the config. */
  serviceKey?: string;
  printers: PrinterAnswer[];
  stateDir?: string;
}

/** Where setup puts each file: the config's own directory, named as in the package's template. */
export interface SetupPaths {
  config: string;
  storeKey: string;
  mqttPassword: string;
  servicePublicKey: string;
  brokerCa: string;
}

export function setupPaths(configPath: string): SetupPaths {
  const dir = dirname(configPath);
  return {
    config: configPath,
    storeKey: join(dir, 'store-key'),
    mqttPassword: join(dir, 'mqtt-password'),
    servicePublicKey: join(dir, 'service-public.pem'),
    brokerCa: join(dir, 'broker-ca.pem'),
  };
}

/** The label a person typed for a printer: its roles as on the command line. */
export const printerLabel = (p: PrinterAnswer) => p.roles.join(',');

/** The config file setup writes; a printer without a profile yet is validated as the fallback. */
export function draftConfig(a: SetupAnswers, paths: SetupPaths): Record<string, unknown> {
  const mqtt: Record<string, unknown> = {};
  if (a.broker !== undefined) mqtt.url = a.broker;
  if (a.brokerUser !== undefined) mqtt.username = a.brokerUser;
  if (a.brokerPassword !== undefined) mqtt.passwordFile = paths.mqttPassword;
  if (a.brokerCa !== undefined) mqtt.tls = { caFile: paths.brokerCa };
  const roles = a.printers.flatMap((p) => p.roles);
  return {
    // Written by this agent, so at its version: nothing to migrate at the next start.
    version: CONFIG_VERSION,
    ...(a.appId !== undefined ? { appId: a.appId } : {}),
    ...(a.storeKey !== undefined ? { storeKeyFile: paths.storeKey } : {}),
    mqtt,
    keys: a.serviceKey !== undefined ? { servicePublicKeyFile: paths.servicePublicKey } : {},
    printers: a.printers.map((p) => ({
      id: p.roles[0],
      url: p.url,
      profile: p.profile ?? FALLBACK_PROFILE,
      ...(p.roles.length > 1 ? { roles: p.roles } : {}),
    })),
    // Every role given gets its tickets (the receipt first, the others a kitchen ticket): a
    // kitchen printer the technician named and nothing routed to it would stay silent.
    ...(roles.some((r) => r !== DEFAULT_PRINTER_ROLE)
      ? {
          routing: [
            ...roles.filter((r) => r === DEFAULT_PRINTER_ROLE),
            ...roles.filter((r) => r !== DEFAULT_PRINTER_ROLE),
          ].map((role) => ({ role })),
        }
      : {}),
    ...(a.stateDir !== undefined ? { stateDir: a.stateDir } : {}),
    // Catch-up needs the order service's query URL and the store's private key, which a first
    // setup does not have; `config set` turns it on later (decision 248).
    catchUp: { enabled: false },
  };
}

export interface FlagProblem {
  /** `--broker`, `--printer kitchen`, `--profile receipt`. */
  flag: string;
  message: string;
}

/** The flag that gives the value at a config path. */
function flagOf(path: string, a: SetupAnswers): string {
  if (path === 'appId') return '--app-id';
  if (path === 'storeKey' || path === 'storeKeyFile') return '--store-key-file';
  if (path === 'mqtt.url' || path === 'mqtt') return '--broker';
  if (path === 'mqtt.username') return '--broker-user';
  if (path.startsWith('mqtt.password')) return '--broker-password-file';
  if (path.startsWith('mqtt.tls')) return '--broker-ca';
  if (path.startsWith('keys')) return '--service-key';
  if (path === 'stateDir') return '--state-dir';
  const printer = /^printers\[(\d+)\](?:\.(\w+))?/.exec(path);
  if (printer) {
    const answer = a.printers[Number(printer[1])];
    const label = answer ? printerLabel(answer) : printer[1];
    return printer[2] === 'profile' ? `--profile ${label}` : `--printer ${label}`;
  }
  if (path === 'printers' || path.startsWith('routing')) return '--printer';
  return path;
}

/** Every schema problem of the draft, named by flag. */
export function draftProblems(a: SetupAnswers, paths: SetupPaths): FlagProblem[] {
  try {
    // An empty environment: what is checked is the file setup writes, not an override.
    validateConfig(draftConfig(a, paths), { file: paths.config, env: {} });
    return [];
  } catch (error) {
    if (!isAgentError(error) || error.code !== 'CONFIG_INVALID') throw error;
    return error.issues.map((issue) => ({
      flag: flagOf(issue.path, a),
      message: issue.message,
    }));
  }
}

/** The rules `readSecretFile` applies when the agent reads the file back: one line, 1 to max. */
export function secretProblem(value: string, max: number): string | null {
  if (value === '') return 'must not be empty';
  if (/[\r\n]/.test(value)) return 'must be one line';
  if ([...value].length > max) return `must be 1 to ${max} characters`;
  return null;
}

/** Why `path` is no usable public key (the agent's own loader says), or null. */
export function publicKeyProblem(path: string): string | null {
  try {
    loadKeyFile(path, 'public');
    return null;
  } catch (error) {
    if (!isAgentError(error)) throw error;
    return error.message;
  }
}

/** The longest broker password the agent reads (`mqtt.password`, load.ts). */
export const PASSWORD_MAX = 1024;

/** The files to write, the config last (it names the others). */
export function setupFiles(a: SetupAnswers, paths: SetupPaths): NewFile[] {
  const files: NewFile[] = [];
  if (a.storeKey !== undefined)
    files.push({ path: paths.storeKey, content: `${a.storeKey}\n`, kind: 'secret' });
  if (a.brokerPassword !== undefined)
    files.push({ path: paths.mqttPassword, content: `${a.brokerPassword}\n`, kind: 'secret' });
  if (a.serviceKey !== undefined)
    files.push({
      path: paths.servicePublicKey,
      content: readFileSync(a.serviceKey, 'utf8'),
      kind: 'public',
    });
  if (a.brokerCa !== undefined)
    files.push({ path: paths.brokerCa, content: readFileSync(a.brokerCa, 'utf8'), kind: 'public' });
  files.push({
    path: paths.config,
    content: `${JSON.stringify(draftConfig(a, paths), null, 2)}\n`,
    kind: 'config',
  });
  return files;
}
