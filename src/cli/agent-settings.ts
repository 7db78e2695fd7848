/**
 * The composition root's settings from the loaded configuration: the one place that maps config
 * keys (seconds, minutes, days, file sections) onto what `Agent.start` takes (milliseconds,
 * resolved options). `printer-agent run` and the demo both start the agent through it.
 */
import type { AgentSettings } from '../agent.js';
import type { AgentConfig } from '../config/load.js';

export function settingsFrom(config: AgentConfig): AgentSettings {
  const m = config.mqtt;
  return {
    appId: config.appId,
    storeKey: config.storeKey,
    storeId: config.storeId,
    mqtt: {
      url: m.url,
      protocolVersion: m.protocolVersion === 4 ? 4 : 5,
      prefix: m.prefix,
      clientId: m.clientId,
      keepaliveSec: m.keepaliveSec,
      sessionExpirySec: m.sessionExpirySec,
      username: m.username,
      password: m.password,
      tls: m.tls,
      reconnectMinMs: m.reconnectMinMs,
      reconnectMaxMs: m.reconnectMaxMs,
      maxMessageBytes: m.maxMessageBytes,
    },
    keys: { servicePublicKeyFile: config.keys.servicePublicKeyFile, scheme: config.keys.scheme },
    printers: config.printers.map((p) => ({
      id: p.id,
      url: p.url,
      profile: p.profile,
      roles: p.roles ?? [p.id],
      confirm: p.confirm,
      statusIntervalMs: p.statusIntervalMs,
      confirmTimeoutMs: p.confirmTimeoutSec * 1000,
    })),
    routing: config.routing,
    receipt: {
      header: config.receipt.header,
      footer: config.receipt.footer,
      money: config.receipt.money,
      qr: config.receipt.qr,
      rasterLines: config.receipt.rasterLines,
    },
    logo: config.receipt.logo ?? null,
    drawer: { openOn: config.drawer.openOn, pin: config.drawer.pin },
    lateAfterMinutes: config.receipt.markings.lateAfterMinutes,
    interruptedPolicy: config.receipt.markings.possibleDuplicatePolicy,
    stateDir: config.stateDir,
    statusIntervalMs: 30_000,
    retentionDays: config.retention.printedDays,
    catchUp: catchUpSettings(config),
    console: config.console.enabled
      ? {
          host: config.console.host,
          port: config.console.port,
          hostnames: config.console.hostnames,
          certFile: config.console.certFile,
          keyFile: config.console.keyFile,
          token: config.console.token,
          metricsToken: config.console.metricsToken,
          metrics: config.console.metrics,
        }
      : null,
    freshness: {
      maxAgeMs: config.freshness.maxAgeDays * 24 * 60 * 60_000,
      clock: config.freshness.clock,
      ...(config.catchUp.timeZone !== undefined ? { timeZone: config.catchUp.timeZone } : {}),
    },
  };
}

/** Off unless enabled; the config rules already require baseUrl and the key while enabled. */
function catchUpSettings(config: AgentConfig): AgentSettings['catchUp'] {
  const c = config.catchUp;
  if (!c.enabled || c.baseUrl === undefined || config.keys.storePrivateKeyFile === undefined)
    return null;
  return {
    baseUrl: c.baseUrl,
    storePrivateKeyFile: config.keys.storePrivateKeyFile,
    intervalMs: c.intervalSec * 1000,
    minIntervalMs: c.minIntervalSec * 1000,
    pageSize: c.pageSize,
    maxAgeMs: c.maxAgeMinutes * 60_000,
    windowMs: c.windowMinutes * 60_000,
    ...(c.timeZone !== undefined ? { timeZone: c.timeZone } : {}),
    ...(c.caFile !== undefined ? { caFile: c.caFile } : {}),
    responseSignature: c.responseSignature,
    allowInsecureHttp: c.allowInsecureHttp,
    allowV1Signatures: c.allowV1Signatures,
    ...(c.restaurantNo !== undefined ? { restaurantNo: c.restaurantNo } : {}),
    ...(c.branchIdentifier !== undefined ? { branchIdentifier: c.branchIdentifier } : {}),
  };
}
