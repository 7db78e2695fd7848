/** `printer-agent run`: the daemon a store runs (systemd starts it; see systemd/). */

import { setFlagsFromString } from 'node:v8';
import type { Command } from 'commander';
import { Agent } from '../agent.js';
import { type LoadedConfig, loadConfig } from '../config/load.js';
import { secretValues } from '../config/redact.js';
import { errorMessage, isAgentError } from '../errors.js';
import { createLogger, type Logger } from '../logging.js';
import { sdNotify } from '../systemd-notify.js';
import { settingsFrom } from './agent-settings.js';
import { type CliContext, EXIT_CONFIG } from './io.js';

const CONFIG_ERRORS = new Set<string>([
  'CONFIG_MISSING',
  'CONFIG_INVALID',
  'CONFIG_TOO_NEW',
  'KEY_FILE_MISSING',
]);

/**
 * One line for a config of an older version: migrated and rewritten (info: nothing to do), or run
 * migrated in memory because the file could not be written (warning, at every start until someone
 * runs the command it names: under the unit, /etc is read-only to the agent).
 */
function logMigration(log: Logger, loaded: LoadedConfig): void {
  const m = loaded.migration;
  if (!m) return;
  const clog = log.child({ room: 'config' });
  const facts = { file: loaded.path, from: m.from, to: m.to };
  if (m.backup !== null) {
    clog.info(
      { ...facts, backup: m.backup },
      `config migrated from version ${m.from} to ${m.to}; the original is kept as ${m.backup}`,
    );
    return;
  }
  const fix = `sudo printer-agent config migrate --config ${loaded.path}`;
  clog.warn(
    facts,
    `config is version ${m.from}: running it migrated to version ${m.to} in memory; the file could not be rewritten (${m.notWritten}): ${fix} makes it current`,
  );
}

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
        // A file of an older version is migrated and written back, its original kept beside it.
        loaded = loadConfig({
          configPath: opts.config,
          env: io.env,
          cwd: io.cwd,
          rewriteOlder: true,
        });
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
      logMigration(log, loaded);
      for (const warning of loaded.warnings) log.warn({ room: 'config' }, warning);
      // The process's own lines (signals, a bug's rejection) are the agent room's: every line
      // names its room (issue 42 item 10).
      const alog = log.child({ room: 'agent' });
      // The last safety net of reliability guarantee 11: every room catches what it starts, so a
      // rejection nobody handled is a bug. Logged loudly, and the daemon stays up (printing goes
      // on; systemd's watchdog covers a process that stopped working), instead of Node's default
      // of exiting and dropping the job in hand.
      process.on('unhandledRejection', (reason) => {
        alog.error(
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
      // Listened for before the start: a stop asked while the agent starts (systemd stops an
      // `activating` unit with SIGTERM too) is taken once it has started, so it ends with the
      // offline status and a closed store, not Node's default of dying mid-start.
      let asked: ((signal: string) => void) | null = null;
      let early: string | null = null;
      const onSignal = (signal: string) => {
        if (asked) asked(signal);
        else early ??= signal;
      };
      const onTerm = () => onSignal('SIGTERM');
      const onInt = () => onSignal('SIGINT');
      process.on('SIGTERM', onTerm);
      process.on('SIGINT', onInt);
      const agent = await Agent.start(
        { ...settingsFrom(loaded.config), configModifiedAt: loaded.modifiedAt.toISOString() },
        log,
      );
      sdNotify.ready();
      const stopWatchdog = sdNotify.startWatchdog();
      await new Promise<void>((resolve) => {
        let stopping = false;
        asked = (signal: string) => {
          if (stopping) return;
          stopping = true;
          alog.info({ signal }, 'signal received');
          sdNotify.stopping();
          stopWatchdog();
          agent.stop().then(resolve, (error: unknown) => {
            alog.error({ err: errorMessage(error) }, 'stop failed');
            resolve();
          });
        };
        if (early) {
          alog.info({ signal: early }, 'asked to stop while starting: stopping now it has started');
          asked(early);
        }
      });
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      log.flush();
    });
}
