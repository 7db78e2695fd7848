/**
 * Environment overrides for deployment: one config file copied to many stores, with the values
 * that differ per machine (broker credentials, secret files, the printer's device) set by the
 * systemd unit or a drop-in. systemd's `%d` (the credentials folder of `LoadCredential=`) fits the
 * `*_FILE` variables: `Environment=PRINTER_AGENT_STORE_KEY_FILE=%d/store-key`.
 *
 * Only the names in ENV_OVERRIDES are read; an empty value counts as unset.
 */
import { resolve } from 'node:path';
import { DEFAULT_PRINTER_ROLE } from '../protocol/print-protocol.js';

/** Where the config file is, when `--config` is not given. */
export const CONFIG_PATH_ENV = 'PRINTER_AGENT_CONFIG';
export const DEFAULT_CONFIG_PATH = '/etc/printer-agent/config.json';

type Key = string | number;

export interface EnvOverride {
  name: string;
  /** The config field it sets, as printed in docs and messages. */
  path: string;
  description: string;
  /** A file path: a relative one resolves against the working directory. */
  isPath: boolean;
  /** The inline form of the same secret, removed when the file form comes from the environment. */
  replaces?: string;
  /** The field's location in a raw config, or null when there is none to set. */
  locate: (raw: Record<string, unknown>) => Key[] | null;
}

const at = (path: string) => (): Key[] => path.split('.');

/** The index of the printer that serves the receipt role, by the same default as the schema. */
function receiptPrinter(raw: Record<string, unknown>): Key[] | null {
  const printers = raw.printers;
  if (!Array.isArray(printers)) return null;
  const index = printers.findIndex((p: unknown) => {
    if (typeof p !== 'object' || p === null) return false;
    const { id, roles } = p as { id?: unknown; roles?: unknown };
    return Array.isArray(roles)
      ? roles.includes(DEFAULT_PRINTER_ROLE)
      : id === DEFAULT_PRINTER_ROLE;
  });
  return index < 0 ? null : ['printers', index, 'url'];
}

/** name -> path: the one table of environment overrides (also printed in the reference). */
export const ENV_OVERRIDES: readonly EnvOverride[] = [
  {
    name: 'PRINTER_AGENT_MQTT_URL',
    path: 'mqtt.url',
    description: 'Broker URL.',
    isPath: false,
    locate: at('mqtt.url'),
  },
  {
    name: 'PRINTER_AGENT_MQTT_USERNAME',
    path: 'mqtt.username',
    description: 'Broker user name.',
    isPath: false,
    locate: at('mqtt.username'),
  },
  {
    name: 'PRINTER_AGENT_MQTT_PASSWORD_FILE',
    path: 'mqtt.passwordFile',
    description: 'File holding the broker password; replaces mqtt.password from the file.',
    isPath: true,
    replaces: 'mqtt.password',
    locate: at('mqtt.passwordFile'),
  },
  {
    name: 'PRINTER_AGENT_STORE_KEY_FILE',
    path: 'storeKeyFile',
    description: 'File holding the store key; replaces storeKey from the file.',
    isPath: true,
    replaces: 'storeKey',
    locate: at('storeKeyFile'),
  },
  {
    name: 'PRINTER_AGENT_STATE_DIR',
    path: 'stateDir',
    description: 'Folder of the job database.',
    isPath: true,
    locate: at('stateDir'),
  },
  {
    name: 'PRINTER_AGENT_LOG_LEVEL',
    path: 'logLevel',
    description: 'Log level.',
    isPath: false,
    locate: at('logLevel'),
  },
  {
    name: 'PRINTER_AGENT_LOG_FORMAT',
    path: 'logFormat',
    description: 'Log format: auto, json or journal.',
    isPath: false,
    locate: at('logFormat'),
  },
  {
    name: 'PRINTER_AGENT_PRINTER_URL',
    path: 'printers[receipt].url',
    description: 'URL of the printer that serves the receipt role.',
    isPath: false,
    locate: receiptPrinter,
  },
];

export interface AppliedOverride {
  name: string;
  path: Key[];
}

export interface Overridden {
  value: Record<string, unknown>;
  applied: AppliedOverride[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sets `path` in `target`, creating missing objects; false when a non-object is in the way. */
function setAt(target: Record<string, unknown>, path: readonly Key[], value: unknown): boolean {
  let node: unknown = target;
  for (const key of path.slice(0, -1)) {
    const container = node as Record<Key, unknown>;
    if (container[key] === undefined) container[key] = {};
    node = container[key];
    if (typeof node !== 'object' || node === null) return false;
  }
  (node as Record<Key, unknown>)[path[path.length - 1]!] = value;
  return true;
}

function deleteAt(target: Record<string, unknown>, path: readonly string[]): void {
  let node: unknown = target;
  for (const key of path.slice(0, -1)) {
    if (!isRecord(node)) return;
    node = node[key];
  }
  if (isRecord(node)) delete node[path[path.length - 1]!];
}

/** A copy of `raw` with the environment's overrides applied; `raw` itself is not touched. */
export function applyEnvOverrides(
  raw: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  cwd = process.cwd(),
): Overridden {
  const value = structuredClone(raw);
  const applied: AppliedOverride[] = [];
  for (const override of ENV_OVERRIDES) {
    const given = env[override.name];
    if (given === undefined || given === '') continue;
    const path = override.locate(value);
    if (path === null) continue; // e.g. no receipt printer: the schema reports that
    if (!setAt(value, path, override.isPath ? resolve(cwd, given) : given)) continue;
    if (override.replaces) deleteAt(value, override.replaces.split('.'));
    applied.push({ name: override.name, path });
  }
  return { value, applied };
}
