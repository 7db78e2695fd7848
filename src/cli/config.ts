/**
 * `printer-agent config check | show | set | unset | migrate | schema | reference`. Every
 * validation problem is printed as its own `path: message` line; secrets are never printed (show
 * redacts them, and no message of the config room contains a value). A config of a newer agent is
 * CONFIG_TOO_NEW, which main() exits 78 with, like `run`.
 */
import { statSync } from 'node:fs';
import type { Command } from 'commander';
import { openConfigFile, resolveConfigPath } from '../config/config-file.js';
import { catchUpWarnings } from '../config/cross-field-rules.js';
import {
  type EditResult,
  migrateConfigFile,
  setConfigValue,
  unsetConfigValue,
} from '../config/edit.js';
import { CONFIG_PATH_ENV, DEFAULT_CONFIG_PATH } from '../config/env.js';
import {
  fileMigration,
  type LoadedConfig,
  type LoadOptions,
  loadConfig,
  resolveConfig,
  validateConfig,
} from '../config/load.js';
import { redactConfig } from '../config/redact.js';
import { configJsonSchema, configReference } from '../config/reference.js';
import { assertServiceCanRead } from '../config/service-access.js';
import { AgentError, isAgentError } from '../errors.js';
import { findServiceAccount, runningAsRoot } from '../host/service-account.js';
import { describeIssues } from '../protocol/validation.js';
import { logoIssues } from '../receipt/logo.js';
import { getProfile } from '../receipt/profile.js';
import type { CliContext } from './io.js';

const CONFIG_OPTION = [
  '--config <file>',
  `config file (default: $${CONFIG_PATH_ENV}, else ${DEFAULT_CONFIG_PATH})`,
] as const;

/**
 * Runs `work`; a CONFIG_INVALID with field issues is printed one `path: message` per line and
 * exits 1 (decision 15), everything else goes to main()'s `CODE: message`.
 */
async function reportingIssues<T>(
  context: CliContext,
  work: () => T | Promise<T>,
): Promise<T | undefined> {
  try {
    return await work();
  } catch (error) {
    if (!isAgentError(error) || error.code !== 'CONFIG_INVALID' || error.issues.length === 0)
      throw error;
    const { stderr } = context.io;
    for (const issue of error.issues) stderr.write(`${issue.path}: ${issue.message}\n`);
    const file = String(error.details.file);
    const count = error.issues.length;
    stderr.write(`CONFIG_INVALID: ${file}: ${count} problem${count === 1 ? '' : 's'}\n`);
    context.exitCode = 1;
    return undefined;
  }
}

/**
 * `loadConfig`, and the logo decoded for every printer's profile: a logo that cannot be used is a
 * config error here (a technician must fix it), reported with the file's other problems, while
 * the running agent prints without it and shows it in its status. `setup` checks what it wrote
 * with this too.
 */
export async function checkedConfig(options: LoadOptions): Promise<LoadedConfig> {
  const env = options.env ?? process.env;
  const path = resolveConfigPath(options.configPath, env, options.cwd);
  const handle = openConfigFile(path);
  const modifiedAt = statSync(path).mtime;
  const { config: file, migrated } = validateConfig(handle.read(), {
    file: path,
    env,
    cwd: options.cwd,
  });
  const logo = await logoIssues(
    file.receipt.logo,
    file.printers.map((p) => getProfile(p.profile)),
  );
  let resolved: Pick<LoadedConfig, 'config' | 'warnings'>;
  try {
    resolved = resolveConfig(file, { file: path });
  } catch (error) {
    if (logo.length === 0 || !isAgentError(error) || error.code !== 'CONFIG_INVALID') throw error;
    throw new AgentError('CONFIG_INVALID', error.message, {
      issues: [...error.issues, ...logo],
      details: error.details,
    });
  }
  if (logo.length > 0)
    throw new AgentError('CONFIG_INVALID', `${path}: ${describeIssues(logo)}`, {
      issues: logo,
      details: { file: path },
    });
  return {
    path,
    file,
    ...resolved,
    migration: fileMigration(handle, migrated, false),
    modifiedAt,
  };
}

function printWarnings(context: CliContext, loaded: LoadedConfig): void {
  const { stderr } = context.io;
  // Read-only commands migrate in memory: the file stays as it is until someone rewrites it.
  const m = loaded.migration;
  if (m)
    stderr.write(
      `warning: ${loaded.path} is config version ${m.from}, read as version ${m.to}; ` +
        `printer-agent config migrate --config ${loaded.path} rewrites it\n`,
    );
  for (const warning of loaded.warnings) stderr.write(`warning: ${warning}\n`);
}

/** The line saying a file was migrated on its way, with where the original is. */
function printMigrated(context: CliContext, result: EditResult): void {
  const m = result.migrated;
  if (m)
    context.io.stdout.write(
      `${result.path}: migrated from config version ${m.from} to ${m.to}; the original is kept as ${m.backup}\n`,
    );
}

export function registerConfig(program: Command, context: CliContext): void {
  const { io } = context;
  /** The service's account when root runs the command, else null (the caller's access counts). */
  const serviceAccount = () => (runningAsRoot() ? findServiceAccount(io.env) : null);
  // The file from --config, else the environment's; relative paths from the caller's directory.
  const where = (configPath: string | undefined) => ({ configPath, env: io.env, cwd: io.cwd });
  const config = program
    .command('config')
    .description('check, show and change the agent configuration');

  config
    .command('check')
    .description('validate the config file and the files it names; print every problem')
    .option(...CONFIG_OPTION)
    .action(async (opts: { config?: string }) => {
      const loaded = await reportingIssues(context, async () => {
        const loaded = await checkedConfig(where(opts.config));
        // Root reads every file: as root, what counts is what the service's account can read.
        const account = serviceAccount();
        if (account) assertServiceCanRead(account, loaded.file, loaded.path);
        return loaded;
      });
      if (!loaded) return;
      printWarnings(context, loaded);
      // Allowed but unsafe (print-protocol §8): said loudly, though the config is valid.
      for (const warning of catchUpWarnings(loaded.config))
        io.stderr.write(`WARNING: ${warning}\n`);
      io.stdout.write(`config OK: ${loaded.path}\n`);
    });

  config
    .command('show')
    .description(
      'print the effective configuration (file, environment, defaults) as JSON, secrets as ***',
    )
    .option(...CONFIG_OPTION)
    .action(async (opts: { config?: string }) => {
      const loaded = await reportingIssues(context, () => loadConfig(where(opts.config)));
      if (!loaded) return;
      printWarnings(context, loaded);
      io.stdout.write(`${JSON.stringify(redactConfig(loaded.config), null, 2)}\n`);
    });

  config
    .command('set')
    .description(
      'set one value (KEY as mqtt.url or printers[0].url; VALUE as JSON, else text); the whole ' +
        'result is validated before the file is written (its owner, group and mode are kept; run ' +
        'as root, a change the service user could not read is refused)',
    )
    .argument('<key>', 'dot path of the setting')
    .argument('<value>', 'new value: JSON when it parses (4, true, ["a"]), else a string')
    .option(...CONFIG_OPTION)
    .action(async (key: string, value: string, opts: { config?: string }) => {
      const result = await reportingIssues(context, () =>
        setConfigValue(key, value, { ...where(opts.config), serviceAccount: serviceAccount() }),
      );
      if (!result) return;
      printMigrated(context, result);
      // The value is not echoed: it may be a secret.
      io.stdout.write(`${result.path}: ${key} updated\n`);
    });

  config
    .command('unset')
    .description(
      'remove one setting (KEY as mqtt.tls or printers[1]; a list item goes, the items after it ' +
        'move up), so its default applies; validated and written like set. A setting the file ' +
        'does not have changes nothing (exit 0); a key that names no setting is exit 1',
    )
    .argument('<key>', 'dot path of the setting')
    .option(...CONFIG_OPTION)
    .action(async (key: string, opts: { config?: string }) => {
      const result = await reportingIssues(context, () =>
        unsetConfigValue(key, { ...where(opts.config), serviceAccount: serviceAccount() }),
      );
      if (!result) return;
      if (!result.changed) {
        io.stdout.write(`${result.path}: ${key} is not set; nothing changed\n`);
        return;
      }
      printMigrated(context, result);
      io.stdout.write(`${result.path}: ${key} removed\n`);
    });

  config
    .command('migrate')
    .description(
      'bring a config file of an older version (printer-agent 0.1.0 wrote version 1) to this ' +
        "agent's, keeping the original beside it as FILE.vN.bak (same owner, group and mode); " +
        'validated like set; a current file is left alone',
    )
    .option(...CONFIG_OPTION)
    .option('--dry-run', 'validate and say what would be done, writing nothing')
    .action(async (opts: { config?: string; dryRun?: boolean }) => {
      const result = await reportingIssues(context, () =>
        migrateConfigFile({
          ...where(opts.config),
          serviceAccount: serviceAccount(),
          dryRun: opts.dryRun === true,
        }),
      );
      if (!result) return;
      if (result.backup === null) {
        io.stdout.write(`${result.path}: config version ${result.to}, current; nothing to do\n`);
        return;
      }
      const steps = result.steps.map((step) => `  ${step}\n`).join('');
      io.stdout.write(
        opts.dryRun
          ? `${result.path}: would migrate from config version ${result.from} to ${result.to} (nothing written); the original would be kept as ${result.backup}\n${steps}`
          : `${result.path}: migrated from config version ${result.from} to ${result.to}; the original is kept as ${result.backup}\n${steps}`,
      );
    });

  config
    .command('schema')
    .description('print the JSON schema of the config file (for editors)')
    .action(() => {
      io.stdout.write(`${JSON.stringify(configJsonSchema(), null, 2)}\n`);
    });

  config
    .command('reference')
    .description(
      'print the Markdown reference of every setting (installed as /usr/share/doc/printer-agent/config-reference.md)',
    )
    .action(() => {
      io.stdout.write(configReference());
    });
}
