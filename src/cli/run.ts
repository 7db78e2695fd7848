/** `printer-agent run`: the daemon a store runs (systemd starts it; see systemd/). */

import { setFlagsFromString } from 'node:v8';
import type { Command } from 'commander';
import { Agent } from '../agent.js';
import { settingsFrom } from '../config/agent-settings.js';
import { type LoadedConfig, loadConfig } from '../config/load.js';
import { secretValues } from '../config/redact.js';
import { errorMessage, isAgentError } from '../errors.js';
import { createLogger } from '../logging.js';
import { sdNotify } from '../systemd-notify.js';
import type { CliContext } from './io.js';

/** sysexits.h EX_CONFIG: what `run` exits with when the config keeps it from starting. */
export const EXIT_CONFIG = 78;
const CONFIG_ERRORS = new Set<string>(['CONFIG_MISSING', 'CONFIG_INVALID', 'KEY_FILE_MISSING']);

export function registerRun(program: Command, context: CliContext): void {
  const { io } = context;
  program
    .command('run')
    .description('run the agent: MQTT in, printers out (the systemd service runs this)')
    .option(
      '--config <file>',
      'config file (default $PRINTER_AGENT_CONFIG or /etc/printer-agent/config.json)',
    )
    .action(async (opts: { config?: string }) => {
      let loaded: LoadedConfig;
      try {
        loaded = loadConfig({ configPath: opts.config, env: io.env, cwd: io.cwd });
      } catch (error) {
        if (!isAgentError(error) || !CONFIG_ERRORS.has(error.code)) throw error;
        // Exit 78 (EX_CONFIG): the unit's RestartPreventExitStatus= keeps systemd from
        // restarting an agent that cannot start until a person fixes its config.
        // The message names the file and every problem in it.
        io.stderr.write(`${error.code}: ${error.message}\n`);
        context.exitCode = EXIT_CONFIG;
        return;
      }
      const log = createLogger({
        level: loaded.config.logLevel,
        format: loaded.config.logFormat,
        env: io.env,
        secrets: secretValues(loaded.config),
        destination: io.logs,
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
      // V8 sets the old generation's next collection point from the allocation rate: after a
      // burst (the inbox storing up to 20 messages per commit, decision 211) it left it at ~4x
      // the live heap, and a 10,000-job burst ended with 50 MB of garbage kept (RSS 114-124 MB,
      // live heap 14 MB). Growing by half the live heap at most keeps it near 86 MB for the
      // same CPU (decision 212). Read at each collection, so setting it here is in time.
      setFlagsFromString('--heap-growing-percent=50');
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
            log.error({ err: errorMessage(error) }, 'stop failed');
            resolve();
          });
        };
        process.once('SIGTERM', () => stop('SIGTERM'));
        process.once('SIGINT', () => stop('SIGINT'));
      });
      log.flush();
    });
}
