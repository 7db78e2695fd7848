/**
 * `printer-agent config check | show | set | schema | reference`. Every validation problem is
 * printed as its own `path: message` line; secrets are never printed (show redacts them, and no
 * message of the config room contains a value).
 */
import type { Command } from 'commander';
import { openConfigFile, resolveConfigPath } from '../config/config-file.js';
import { catchUpWarnings } from '../config/cross-field-rules.js';
import { setConfigValue } from '../config/edit.js';
import { CONFIG_PATH_ENV, DEFAULT_CONFIG_PATH } from '../config/env.js';
import {
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
 * the running agent prints without it and shows it in its status.
 */
async function checkedConfig(options: LoadOptions): Promise<LoadedConfig> {
  const env = options.env ?? process.env;
  const path = resolveConfigPath(options.configPath, env, options.cwd);
  const { config: file } = validateConfig(openConfigFile(path).read(), {
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
  return { path, file, ...resolved };
}

function printWarnings(context: CliContext, loaded: LoadedConfig): void {
  for (const warning of loaded.warnings) context.io.stderr.write(`warning: ${warning}\n`);
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
      const path = await reportingIssues(context, () =>
        setConfigValue(key, value, { ...where(opts.config), serviceAccount: serviceAccount() }),
      );
      // The value is not echoed: it may be a secret.
      if (path) io.stdout.write(`${path}: ${key} updated\n`);
    });

  config
    .command('schema')
    .description('print the JSON schema of the config file (for editors)')
    .action(() => {
      io.stdout.write(`${JSON.stringify(configJsonSchema(), null, 2)}\n`);
    });

  config
    .command('reference')
    .description('print the Markdown reference of every setting (docs/config-reference.md)')
    .action(() => {
      io.stdout.write(configReference());
    });
}
