/** `printer-agent run`: the daemon a store runs (systemd starts it; see systemd/). */
import type { Command } from 'commander';
import { Agent, type AgentSettings } from '../agent.js';
import { type AgentConfig, loadConfig } from '../config/load.js';
import { secretValues } from '../config/redact.js';
import { createLogger } from '../logging.js';
import { sdNotify } from '../systemd-notify.js';

/** The composition root's settings from the loaded configuration. */
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
    receipt: {
      header: config.receipt.header,
      footer: config.receipt.footer,
      money: config.receipt.money,
      qr: config.receipt.qr,
    },
    lateAfterMinutes: config.receipt.markings.lateAfterMinutes,
    interruptedPolicy: config.receipt.markings.possibleDuplicatePolicy,
    stateDir: config.stateDir,
    statusIntervalMs: 30_000,
    retentionDays: config.retention.printedDays,
    catchUp: catchUpSettings(config),
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
    ...(c.restaurantNo !== undefined ? { restaurantNo: c.restaurantNo } : {}),
    ...(c.branchIdentifier !== undefined ? { branchIdentifier: c.branchIdentifier } : {}),
  };
}

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('run the agent: MQTT in, printers out (the systemd service runs this)')
    .option(
      '--config <file>',
      'config file (default $PRINTER_AGENT_CONFIG or /etc/printer-agent/config.json)',
    )
    .action(async (opts: { config?: string }) => {
      const loaded = loadConfig({ configPath: opts.config });
      const log = createLogger({
        level: loaded.config.logLevel,
        secrets: secretValues(loaded.config),
      });
      for (const warning of loaded.warnings) log.warn({ room: 'config' }, warning);
      // The last safety net of reliability guarantee 11: every room catches what it starts, so a
      // rejection nobody handled is a bug. Logged loudly, and the daemon stays up (printing goes
      // on; systemd's watchdog covers a process that stopped working), instead of Node's default
      // of exiting and dropping the job in hand.
      process.on('unhandledRejection', (reason) => {
        log.error(
          { code: 'INTERNAL_ERROR', err: reason instanceof Error ? reason : String(reason) },
          'unhandled rejection (a bug): the agent keeps running',
        );
      });
      const agent = await Agent.start(settingsFrom(loaded.config), log);
      sdNotify.ready();
      const stopWatchdog = sdNotify.startWatchdog();
      await new Promise<void>((resolve) => {
        let stopping = false;
        const stop = (signal: string) => {
          if (stopping) return;
          stopping = true;
          log.info({ signal }, 'signal received');
          sdNotify.stopping();
          stopWatchdog();
          agent.stop().then(resolve, (error: unknown) => {
            log.error({ err: (error as Error).message }, 'stop failed');
            resolve();
          });
        };
        process.once('SIGTERM', () => stop('SIGTERM'));
        process.once('SIGINT', () => stop('SIGINT'));
      });
      log.flush();
    });
}
