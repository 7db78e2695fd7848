/**
 * The config rules that span fields (secret forms, TLS halves, printer ids and roles, catch-up
 * bounds and transport), reported on the path a person has to change. The schema runs them even when single
 * fields failed, so `config check` lists every problem at once; they therefore read the value
 * defensively, as plain JSON that may be only partly valid.
 */
import { catchUpTransportIssues, catchUpTransportWarnings } from '../catchup/transport.js';
import { isLoopbackHost } from '../host/loopback.js';
import { DEFAULT_PRINTER_ROLE } from '../protocol/print-protocol.js';

export type Issue = { path: PropertyKey[]; message: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function section(value: Record<string, unknown>, key: string): Record<string, unknown> {
  const inner = value[key];
  return isRecord(inner) ? inner : {};
}

/** Every cross-field problem of a (possibly partly valid) config value. */
export function crossFieldIssues(value: unknown): Issue[] {
  if (!isRecord(value)) return [];
  const issues: Issue[] = [];
  const has = (obj: Record<string, unknown>, key: string) => obj[key] !== undefined;

  if (has(value, 'storeKey') && has(value, 'storeKeyFile'))
    issues.push({ path: ['storeKeyFile'], message: 'give storeKey or storeKeyFile, not both' });
  else if (!has(value, 'storeKey') && !has(value, 'storeKeyFile'))
    issues.push({ path: ['storeKey'], message: 'is required (or give storeKeyFile)' });

  const mqtt = section(value, 'mqtt');
  if (has(mqtt, 'password') && has(mqtt, 'passwordFile'))
    issues.push({
      path: ['mqtt', 'passwordFile'],
      message: 'give mqtt.password or mqtt.passwordFile, not both',
    });
  if ((has(mqtt, 'password') || has(mqtt, 'passwordFile')) && !has(mqtt, 'username'))
    issues.push({ path: ['mqtt', 'username'], message: 'is required when a password is given' });
  const tls = section(mqtt, 'tls');
  if (has(tls, 'certFile') !== has(tls, 'keyFile'))
    issues.push({
      path: ['mqtt', 'tls', has(tls, 'certFile') ? 'keyFile' : 'certFile'],
      message: 'is required with the other half of the client certificate (certFile and keyFile)',
    });
  if (typeof mqtt.url === 'string' && mqtt.url.startsWith('mqtt://')) {
    for (const key of ['caFile', 'certFile', 'keyFile'])
      if (has(tls, key))
        issues.push({
          path: ['mqtt', 'tls', key],
          // Both ways out: a plain-MQTT broker (a LAN one, the demo's) drops the TLS files.
          message: `applies only to mqtts:// URLs: change mqtt.url to mqtts://, or remove it (printer-agent config unset mqtt.tls.${key})`,
        });
  }
  issues.push(...consoleIssues(section(value, 'console')));
  const { reconnectMinMs, reconnectMaxMs } = mqtt;
  if (
    typeof reconnectMinMs === 'number' &&
    typeof reconnectMaxMs === 'number' &&
    reconnectMaxMs < reconnectMinMs
  )
    issues.push({
      path: ['mqtt', 'reconnectMaxMs'],
      message: 'must be at least mqtt.reconnectMinMs',
    });

  issues.push(...printerIssues(value.printers));
  issues.push(...routingIssues(value.routing, value.printers));

  const catchUp = section(value, 'catchUp');
  if (catchUp.enabled !== false) {
    if (!has(catchUp, 'baseUrl'))
      issues.push({
        path: ['catchUp', 'baseUrl'],
        message: 'is required while catch-up is enabled (or set catchUp.enabled to false)',
      });
    if (!has(section(value, 'keys'), 'storePrivateKeyFile'))
      issues.push({
        path: ['keys', 'storePrivateKeyFile'],
        message: 'is required while catch-up is enabled: it signs the queries',
      });
    issues.push(...catchUpTransportRules(catchUp));
  }
  const { intervalSec, minIntervalSec, maxAgeMinutes, windowMinutes } = catchUp;
  if (
    typeof intervalSec === 'number' &&
    typeof minIntervalSec === 'number' &&
    intervalSec < minIntervalSec
  )
    issues.push({
      path: ['catchUp', 'intervalSec'],
      message: 'must be at least catchUp.minIntervalSec',
    });
  if (
    typeof maxAgeMinutes === 'number' &&
    typeof windowMinutes === 'number' &&
    maxAgeMinutes <= windowMinutes
  )
    issues.push({
      path: ['catchUp', 'maxAgeMinutes'],
      message: 'must be more than catchUp.windowMinutes, or every late order would be stale',
    });
  return issues;
}

/** print-protocol §8: https, or http to loopback or with the lab switch; see catchup/transport.ts. */
function catchUpTransportRules(catchUp: Record<string, unknown>): Issue[] {
  if (typeof catchUp.baseUrl !== 'string') return [];
  return catchUpTransportIssues(catchUp.baseUrl, {
    allowInsecureHttp: catchUp.allowInsecureHttp === true,
    caFile: catchUp.caFile !== undefined,
    responseSignature: catchUp.responseSignature === 'off' ? 'off' : 'required',
  }).map((issue) => ({ path: ['catchUp', issue.field], message: issue.message }));
}

/**
 * Allowed settings that weaken catch-up (the lab switch, signatures off, version 1 signatures),
 * for `config check`, `doctor` and the agent's start; empty while catch-up is off.
 */
export function catchUpWarnings(value: unknown): string[] {
  if (!isRecord(value)) return [];
  const catchUp = section(value, 'catchUp');
  if (catchUp.enabled === false || typeof catchUp.baseUrl !== 'string') return [];
  return catchUpTransportWarnings(catchUp.baseUrl, {
    allowInsecureHttp: catchUp.allowInsecureHttp === true,
    responseSignature: catchUp.responseSignature === 'off' ? 'off' : 'required',
    allowV1Signatures: catchUp.allowV1Signatures === true,
  });
}

/** Unique ids, one printer per role, and a printer for the receipt role. */
function printerIssues(printers: unknown): Issue[] {
  if (!Array.isArray(printers)) return [];
  const issues: Issue[] = [];
  const ids = new Map<string, number>();
  const roles = new Map<string, number>();
  printers.forEach((printer, index) => {
    if (!isRecord(printer) || typeof printer.id !== 'string') return;
    const firstWithId = ids.get(printer.id);
    if (firstWithId !== undefined) {
      issues.push({
        path: ['printers', index, 'id'],
        message: `must be unique; printers[${firstWithId}] has the same id`,
      });
      return; // its roles would only repeat the same conflict
    }
    ids.set(printer.id, index);
    const explicit = Array.isArray(printer.roles);
    const served = explicit ? (printer.roles as unknown[]) : [printer.id];
    served.forEach((name, roleIndex) => {
      if (typeof name !== 'string') return;
      const owner = roles.get(name);
      if (owner !== undefined && owner !== index) {
        issues.push({
          path: explicit ? ['printers', index, 'roles', roleIndex] : ['printers', index, 'id'],
          message: `role ${name} is already served by printers[${owner}]; a role has one printer`,
        });
      } else roles.set(name, index);
    });
  });
  if (ids.size > 0 && !roles.has(DEFAULT_PRINTER_ROLE)) {
    issues.push({
      path: ['printers'],
      message: `must include a printer for the ${DEFAULT_PRINTER_ROLE} role (id ${DEFAULT_PRINTER_ROLE} or ${DEFAULT_PRINTER_ROLE} in its roles)`,
    });
  }
  return issues;
}

/**
 * Routing rules (issue 18): one rule per role, each role served by a printer (a ticket routed to
 * no printer would wait for ever), and item filters only on tickets: a payment receipt lists the
 * whole order.
 */
function routingIssues(routing: unknown, printers: unknown): Issue[] {
  if (!Array.isArray(routing)) return [];
  const served = new Set<string>();
  if (Array.isArray(printers))
    for (const printer of printers) {
      if (!isRecord(printer)) continue;
      const roles = Array.isArray(printer.roles) ? printer.roles : [printer.id];
      for (const role of roles) if (typeof role === 'string') served.add(role);
    }
  const issues: Issue[] = [];
  const seen = new Map<string, number>();
  routing.forEach((rule, index) => {
    if (!isRecord(rule) || typeof rule.role !== 'string') return;
    const first = seen.get(rule.role);
    if (first !== undefined)
      issues.push({
        path: ['routing', index, 'role'],
        message: `must be unique; routing[${first}] already routes to role ${rule.role}`,
      });
    else seen.set(rule.role, index);
    if (served.size > 0 && !served.has(rule.role))
      issues.push({
        path: ['routing', index, 'role'],
        message: `no printer serves role ${rule.role}: add it to a printer's roles`,
      });
    const layout = rule.layout ?? (rule.role === DEFAULT_PRINTER_ROLE ? 'receipt' : 'kitchen');
    if (layout === 'receipt')
      for (const key of ['items', 'skus'])
        if (Array.isArray(rule[key]))
          issues.push({
            path: ['routing', index, key],
            message: 'applies only to the kitchen layout: a payment receipt lists the whole order',
          });
  });
  return issues;
}

/** The console off loopback: HTTPS and a token, never a token over plain HTTP (issue 17). */
function consoleIssues(c: Record<string, unknown>): Issue[] {
  const issues: Issue[] = [];
  const has = (key: string) => c[key] !== undefined;
  if (has('certFile') !== has('keyFile'))
    issues.push({
      path: ['console', has('certFile') ? 'keyFile' : 'certFile'],
      message: 'is required with the other half of the HTTPS certificate (certFile and keyFile)',
    });
  if (has('metricsTokenFile') && c.metrics !== true)
    issues.push({
      path: ['console', 'metricsTokenFile'],
      message: 'applies only with console.metrics: true (it opens /metrics and nothing else)',
    });
  if (c.enabled === false || typeof c.host !== 'string' || isLoopbackHost(c.host)) return issues;
  const why = `is required when console.host is not a loopback address (${c.host} is reached over the LAN)`;
  for (const key of ['certFile', 'keyFile', 'tokenFile'])
    if (!has(key)) issues.push({ path: ['console', key], message: why });
  return issues;
}
