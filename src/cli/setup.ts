/**
 * `printer-agent setup` (issue 41 item 3): the store's first config, from flags or, on a
 * terminal, by asking. In order: the flags are checked by the config schema and the key and
 * secret rules, each problem named by its flag (exit 2, nothing written); what is missing is asked
 * for when standard input is a TTY, else named (exit 2); each printer without `--profile` is
 * identified (`identifyPrinter`, as `printers scan`) and its proposal taken when `certain` or
 * `likely`, else asked for or required; then the files are written with the package's owners and
 * modes (src/config/new-config.ts), the config checked by `config check`'s loader, a test page
 * printed on each printer (the agent's test page, `renderTestPage`) and `doctor` run
 * (`runDoctor`).
 *
 * An existing config is replaced only with `--force` (exit 1 without), except the package's
 * template, recognised by its example.com broker (decision 247). The config stays written when a
 * test page or a doctor check fails: those are the printer's or the network's state, fixed
 * without typing everything again; the exit code is then 1 and the last line says what failed
 * (decision 248). The store key and the broker password are never printed: only the paths of
 * their files.
 */
import { readFileSync } from 'node:fs';
import { type Command, InvalidArgumentError } from 'commander';
import { resolveConfigPath } from '../config/config-file.js';
import { CONFIG_PATH_ENV, DEFAULT_CONFIG_PATH } from '../config/env.js';
import { type LoadedConfig, validateConfig } from '../config/load.js';
import { writeNewFiles } from '../config/new-config.js';
import type { PrinterConfig } from '../config/schema.js';
import { checkReadableFile, readSecretFile } from '../config/secret-files.js';
import { assertServiceCanRead } from '../config/service-access.js';
import { AgentError, isAgentError } from '../errors.js';
import {
  findServiceAccount,
  runningAsRoot,
  SERVICE_USER,
  SERVICE_USER_ENV,
  type ServiceAccount,
} from '../host/service-account.js';
import { openPrinter } from '../printer/open-printer.js';
import { STORE_KEY_MAX } from '../protocol/envelope.js';
import type { ReceiptOptions } from '../receipt/options.js';
import { getProfile, loadProfiles } from '../receipt/profile.js';
import { renderTestPage } from '../receipt/render.js';
import { VERSION } from '../version.js';
import { settingsFrom } from './agent-settings.js';
import { checkedConfig } from './config.js';
import { formatChecklist, runDoctor } from './doctor.js';
import { describeIdentification, identifyPrinter } from './identify-printer.js';
import { type CliContext, type CliIo, pathIn } from './io.js';
import { parseIntOption } from './options.js';
import {
  draftConfig,
  draftProblems,
  type FlagProblem,
  PASSWORD_MAX,
  type PrinterAnswer,
  printerLabel,
  publicKeyProblem,
  type SetupAnswers,
  type SetupPaths,
  secretProblem,
  setupFiles,
  setupPaths,
} from './setup-draft.js';
import { interview, missingFlags, splitRoles, takenRoles } from './setup-interview.js';
import { exampleHostOf } from './shipped-template.js';
import { type Prompter, terminalPrompter } from './terminal-prompt.js';

/** Proposals taken without asking: the printer named its model, or its maker and paper width. */
const SURE = new Set(['certain', 'likely']);

type Pair = { roles: string[]; value: string; text: string };

function collectPair(example: string) {
  // No default value: commander would print `(default: [])` in the help.
  return (text: string, previous: Pair[] | undefined): Pair[] => {
    const split = splitRoles(text);
    if (!split) throw new InvalidArgumentError(`must be ROLE=${example}`);
    return [...(previous ?? []), { ...split, text }];
  };
}

interface SetupOptions {
  config?: string;
  appId?: string;
  storeKeyFile?: string;
  broker?: string;
  brokerUser?: string;
  brokerPasswordFile?: string;
  brokerCa?: string;
  serviceKey?: string;
  printer?: Pair[];
  profile?: Pair[];
  stateDir?: string;
  timeout: number;
  force: boolean;
}

/** What is at the config path: nothing, the package's template, or a store's config. */
function existingConfig(path: string): 'none' | 'template' | 'config' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'unreadable';
    if (code === 'ENOENT') return 'none';
    throw new AgentError(
      'INPUT_INVALID',
      `${path}: cannot read (${code}); run setup as root (sudo), or pass --config FILE`,
      { cause },
    );
  }
  try {
    // The template's broker is mqtts://broker.example.com:8883: example.com is reserved (RFC
    // 2606), so no store's config can name it. The same rule as doctor's (shipped-template.ts).
    if (exampleHostOf(JSON.parse(text).mqtt.url) !== undefined) return 'template';
  } catch {
    // not JSON, or no broker URL: somebody's config all the same
  }
  return 'config';
}

/** A secret from a `--...-file` flag (`-`: the first line of standard input). */
function secretFromFlag(
  io: CliIo,
  flag: string,
  file: string,
  max: number,
  problems: FlagProblem[],
): string | undefined {
  if (file === '-') {
    const value = io.readStdin().toString('utf8').split(/\r?\n/, 1)[0]?.trim() ?? '';
    const problem = secretProblem(value, max);
    if (problem === null) return value;
    problems.push({ flag, message: `the first line of standard input ${problem}` });
    return undefined;
  }
  const read = readSecretFile(pathIn(io, file), max);
  if (read.ok) return read.value;
  problems.push({ flag, message: read.message });
  return undefined;
}

/** The answers the flags give, and every problem with them. */
function answersFromFlags(
  io: CliIo,
  opts: SetupOptions,
): {
  answers: SetupAnswers;
  problems: FlagProblem[];
} {
  const problems: FlagProblem[] = [];
  const a: SetupAnswers = { printers: [] };
  if (opts.appId !== undefined) a.appId = opts.appId;
  if (opts.storeKeyFile === '-' && opts.brokerPasswordFile === '-')
    problems.push({
      flag: '--broker-password-file',
      message: 'standard input already gives the store key (--store-key-file -)',
    });
  else if (opts.brokerPasswordFile !== undefined)
    a.brokerPassword = secretFromFlag(
      io,
      '--broker-password-file',
      opts.brokerPasswordFile,
      PASSWORD_MAX,
      problems,
    );
  if (opts.storeKeyFile !== undefined)
    a.storeKey = secretFromFlag(io, '--store-key-file', opts.storeKeyFile, STORE_KEY_MAX, problems);
  if (opts.broker !== undefined) a.broker = opts.broker;
  if (opts.brokerUser !== undefined) a.brokerUser = opts.brokerUser;
  if (opts.brokerCa !== undefined) {
    const path = pathIn(io, opts.brokerCa);
    const check = checkReadableFile(path);
    if (check.ok) a.brokerCa = path;
    else problems.push({ flag: '--broker-ca', message: check.message });
  }
  if (opts.serviceKey !== undefined) {
    const path = pathIn(io, opts.serviceKey);
    const problem = publicKeyProblem(path);
    if (problem === null) a.serviceKey = path;
    else problems.push({ flag: '--service-key', message: problem });
  }
  if (opts.stateDir !== undefined) a.stateDir = pathIn(io, opts.stateDir);
  for (const pair of opts.printer ?? []) {
    const p: PrinterAnswer = { roles: pair.roles, url: pair.value };
    const taken = takenRoles(p, a.printers);
    if (taken.length > 0)
      problems.push({
        flag: `--printer ${printerLabel(p)}`,
        message: `role ${taken.join(', ')} is given twice: a role has one printer`,
      });
    else a.printers.push(p);
  }
  for (const pair of opts.profile ?? []) {
    const [role] = pair.roles;
    const flag = `--profile ${pair.roles.join(',')}`;
    const p = a.printers.find((printer) => printer.roles.includes(role ?? ''));
    if (pair.roles.length !== 1) problems.push({ flag, message: 'must be ROLE=PROFILE, one role' });
    else if (!p) problems.push({ flag, message: `no --printer serves role ${role}` });
    else if (p.profile !== undefined)
      problems.push({ flag, message: 'names a printer that has a profile already' });
    else {
      p.profile = pair.value;
      p.profileFrom = 'flag';
    }
  }
  return { answers: a, problems };
}

/** How a printer's profile was chosen, for the line a person reads. */
function profileLine(p: PrinterAnswer): string {
  const head = `printer ${printerLabel(p)}: ${p.url}: profile ${p.profile}`;
  if (p.profileFrom === 'flag') return `${head} (from --profile)`;
  if (p.profileFrom === 'asked') return `${head} (chosen at the prompt)`;
  const proposal = p.identification!.proposal;
  return `${head} (identified, ${proposal.confidence}): ${proposal.reason}`;
}

/** Why an identification is not enough to choose a profile without asking. */
function notSure(p: PrinterAnswer): string {
  const r = p.identification!;
  if (!r.learnt) {
    const why = r.answers.problems[0] ?? (r.answers.reachable ? 'no reply' : 'unreachable');
    return `${p.url}: nothing could be learnt from the printer (${why})`;
  }
  return `${p.url}: identified only as ${r.proposal.profile} (${r.proposal.confidence}): ${r.proposal.reason}`;
}

/**
 * Identifies each printer without a profile (all at once: each is its own link) and takes sure
 * proposals; asks for the others when it can, else reports each as a problem of its --profile.
 */
async function chooseProfiles(
  a: SetupAnswers,
  timeoutMs: number,
  prompter: () => Prompter | null,
): Promise<FlagProblem[]> {
  const open = a.printers.filter((p) => p.profile === undefined);
  const found = await Promise.all(open.map((p) => identifyPrinter(p.url, { timeoutMs })));
  const problems: FlagProblem[] = [];
  const ids = [...loadProfiles().keys()];
  for (const [i, p] of open.entries()) {
    const r = found[i]!;
    p.identification = r;
    if (SURE.has(r.proposal.confidence)) {
      p.profile = r.proposal.profile;
      p.profileFrom = 'identified';
      continue;
    }
    const ask = prompter();
    if (ask) {
      ask.say(describeIdentification(r).trimEnd());
      for (;;) {
        const answer = await ask.ask(`profile for printer ${printerLabel(p)} (${ids.join(', ')})`, {
          fallback: r.proposal.profile,
        });
        if (ids.includes(answer)) {
          p.profile = answer;
          p.profileFrom = 'asked';
          break;
        }
        ask.say(`  must be one of ${ids.join(', ')}`);
      }
    } else {
      problems.push({
        flag: `--profile ${p.roles[0]}`,
        message: `${notSure(p)}; name its profile: --profile ${p.roles[0]}=ID (${ids.join(', ')})`,
      });
    }
  }
  return problems;
}

/** `error: --flag: rule` lines, as commander words its own usage errors. */
function usageText(
  problems: readonly FlagProblem[],
  missing: readonly string[],
  stdinRead: boolean,
): string {
  const lines = problems.map((p) => `error: ${p.flag}: ${p.message}`);
  if (missing.length > 0) {
    const why = stdinRead
      ? 'standard input is a file (-), not a terminal'
      : 'standard input is not a terminal';
    lines.push(
      `error: missing ${missing.join(', ')} (${why}, so setup cannot ask for ${missing.length === 1 ? 'it' : 'them'})`,
    );
  }
  return lines.join('\n');
}

/** The agent's test page (print-protocol §5) on one printer, straight to it: no agent runs yet. */
async function printTestPage(
  p: PrinterConfig,
  receipt: ReceiptOptions,
): Promise<{ ok: boolean; detail: string }> {
  const profile = getProfile(p.profile);
  const page = renderTestPage(profile, receipt, VERSION);
  const printer = openPrinter(
    p.url,
    { realtimeStatus: profile.realtimeStatus, confirm: p.confirm ?? profile.confirm },
    { confirmTimeoutMs: p.confirmTimeoutSec * 1000 },
  );
  try {
    const result = await printer.print(page.bytes);
    if (result.outcome === 'printed')
      return { ok: true, detail: `printed (confirmed by ${result.confirmedBy})` };
    if (result.cause === 'no-confirmation')
      return {
        ok: true,
        detail: `sent (profile ${profile.id} has no confirmation: look at the paper)`,
      };
    return { ok: false, detail: `sent but not confirmed: ${result.reason}` };
  } catch (error) {
    if (!isAgentError(error)) throw error;
    return { ok: false, detail: `not printed: ${error.code}: ${error.message}` };
  } finally {
    await printer.close().catch(() => undefined);
  }
}

/** `path: message` per issue of a CONFIG_INVALID, then its summary line, like `config check`. */
function writeIssues(io: CliIo, error: AgentError): void {
  for (const issue of error.issues) io.stderr.write(`${issue.path}: ${issue.message}\n`);
  io.stderr.write(`${error.code}: ${error.message}\n`);
}

function describeMode(mode: number, owner: string | null): string {
  return `mode 0${mode.toString(8)}${owner ? `, ${owner}` : ''}`;
}

/** Writes the files; returns the loaded config, or null when a check refused (exit code set). */
async function writeConfig(
  context: CliContext,
  a: SetupAnswers,
  paths: SetupPaths,
  account: ServiceAccount | null,
): Promise<LoadedConfig | null> {
  const { io } = context;
  try {
    if (account) {
      // Before anything is written: a directory on the way the service cannot enter.
      const { config } = validateConfig(draftConfig(a, paths), { file: paths.config, env: {} });
      assertServiceCanRead(account, config, paths.config);
    }
    for (const file of writeNewFiles(setupFiles(a, paths), account))
      io.stdout.write(`wrote ${file.path} (${describeMode(file.mode, file.owner)})\n`);
    const loaded = await checkedConfig({ configPath: paths.config, env: io.env, cwd: io.cwd });
    if (account) assertServiceCanRead(account, loaded.file, loaded.path);
    for (const warning of loaded.warnings) io.stderr.write(`warning: ${warning}\n`);
    io.stdout.write(`config OK: ${loaded.path}\n`);
    return loaded;
  } catch (error) {
    if (!isAgentError(error) || error.code !== 'CONFIG_INVALID' || error.issues.length === 0)
      throw error;
    writeIssues(io, error);
    context.exitCode = 1;
    return null;
  }
}

/**
 * What proves the written config: a test page on each printer, then doctor. Failures leave the
 * config as it is (decision 249): exit 1 and a last line naming each.
 */
async function checkOnPaper(context: CliContext, loaded: LoadedConfig): Promise<void> {
  const { io } = context;
  const failed: string[] = [];
  const receipt = settingsFrom(loaded.config).receipt;
  for (const p of loaded.config.printers) {
    const result = await printTestPage(p, receipt);
    io.stdout.write(`test page on printer ${p.id} (${p.url}): ${result.detail}\n`);
    if (!result.ok) failed.push(`test page on printer ${p.id}`);
  }
  const checks = await runDoctor({ configPath: loaded.path, env: io.env, cwd: io.cwd });
  io.stdout.write(`doctor:\n${formatChecklist(checks)}`);
  for (const c of checks) if (c.status === 'FAIL') failed.push(`doctor ${c.name}`);
  if (failed.length === 0) {
    io.stdout.write(
      `setup done: ${loaded.path}; start the agent with it: sudo systemctl restart printer-agent\n`,
    );
    return;
  }
  io.stderr.write(
    `setup: ${loaded.path} is written, but ${failed.length} check${failed.length === 1 ? '' : 's'} failed (${failed.join(', ')}): fix ${failed.length === 1 ? 'it' : 'them'} as shown above, then run printer-agent doctor\n`,
  );
  context.exitCode = 1;
}

export function registerSetup(program: Command, context: CliContext): void {
  const { io } = context;
  program
    .command('setup')
    .description(
      "write the store's config from flags (or, on a terminal, by asking), then print a test page on each printer and run doctor",
    )
    .option(
      '--config <file>',
      `config file to write (default: $${CONFIG_PATH_ENV}, else ${DEFAULT_CONFIG_PATH}); the secrets and keys go beside it`,
    )
    .option('--app-id <id>', 'application id issued by the order service')
    .option(
      '--store-key-file <file>',
      "file whose first line is the store key (- : standard input); copied to store-key beside the config (0600, the service user's)",
    )
    .option('--broker <url>', 'broker URL, mqtts://HOST:8883 (or mqtt:// on a trusted network)')
    .option('--broker-user <name>', 'broker user name (printer-agent broker provision)')
    .option(
      '--broker-password-file <file>',
      'file whose first line is the broker password (- : standard input); copied to mqtt-password (0600)',
    )
    .option('--broker-ca <file>', 'CA of the broker certificate (mqtts); copied to broker-ca.pem')
    .option(
      '--service-key <file>',
      "the order service's public key (PEM); copied to service-public.pem",
    )
    .option(
      '--printer <role=url>',
      'a printer and the role it serves, e.g. receipt=tcp://192.168.1.50:9100 or kitchen=usb:04b8:0202?serial=X (ROLE,ROLE=URL for two roles); repeat for each printer',
      collectPair('URL, e.g. receipt=tcp://192.168.1.50:9100'),
    )
    .option(
      '--profile <role=id>',
      "a printer's profile from config/printers/, e.g. kitchen=generic-80mm (default: identify the printer and take its proposal when certain or likely)",
      collectPair('PROFILE, e.g. receipt=epson-tm-t20iii'),
    )
    .option('--state-dir <dir>', 'folder of the job database (default /var/lib/printer-agent)')
    .option(
      '--timeout <ms>',
      'how long identifying a printer may wait for one reply',
      parseIntOption('--timeout', 10, 60_000),
      1000,
    )
    .option('--force', 'replace an existing config', false)
    .action(async (opts: SetupOptions, command: Command) => {
      const usage = (problems: readonly FlagProblem[], missing: readonly string[] = []) =>
        command.error(
          usageText(
            problems,
            missing,
            opts.storeKeyFile === '-' || opts.brokerPasswordFile === '-',
          ),
          { exitCode: 2, code: 'setup.usage' },
        );
      const paths = setupPaths(resolveConfigPath(opts.config, io.env, io.cwd));
      const existing = existingConfig(paths.config);
      if (existing === 'config' && !opts.force) {
        throw new AgentError(
          'INPUT_INVALID',
          `${paths.config}: a config is there already; setup --force replaces it (one setting: printer-agent config set)`,
        );
      }
      const { answers: a, problems } = answersFromFlags(io, opts);
      // Values absent: not given, or given and refused above (that problem is reported already,
      // so the schema's `is required` for it is not).
      const absent = missingFlags(a);
      const isAbsent = (flag: string) => absent.some((m) => flag === m || flag.startsWith(`${m} `));
      problems.push(...draftProblems(a, paths).filter((p) => !isAbsent(p.flag)));
      const missing = absent.filter((flag) => !problems.some((p) => p.flag === flag));
      // Standard input is asked only when it is a terminal and no flag reads it (looked at only
      // when needed: creating the stdin stream for nothing would switch a piped fd 0 to non-blocking).
      const canAsk = () =>
        opts.storeKeyFile !== '-' && opts.brokerPasswordFile !== '-' && io.stdin.isTTY === true;
      if (problems.length > 0) usage(problems, missing.length > 0 && !canAsk() ? missing : []);
      if (missing.length > 0 && !canAsk()) usage([], missing);
      let prompter: Prompter | null = null;
      const ask = () => {
        prompter ??= terminalPrompter(io.stdin, io.stderr);
        return prompter;
      };
      try {
        if (missing.length > 0)
          await interview(
            a,
            missing,
            { brokerUser: opts.brokerUser !== undefined },
            { prompter: ask(), paths, resolvePath: (path) => pathIn(io, path) },
          );
        const unsure = await chooseProfiles(a, opts.timeout, () => (canAsk() ? ask() : null));
        if (unsure.length > 0) usage(unsure);
      } finally {
        (prompter as Prompter | null)?.close();
      }
      for (const p of a.printers) io.stdout.write(`${profileLine(p)}\n`);
      const last = draftProblems(a, paths);
      if (last.length > 0) usage(last);
      if (existing !== 'none')
        io.stdout.write(
          `replacing ${paths.config} (${existing === 'template' ? "the package's template" : '--force'})\n`,
        );

      const account = runningAsRoot() ? findServiceAccount(io.env) : null;
      if (runningAsRoot() && !account)
        io.stderr.write(
          `warning: no account ${io.env[SERVICE_USER_ENV] || SERVICE_USER} here: the files stay root's; give them to the unit's User= (the package creates ${SERVICE_USER}), or set ${SERVICE_USER_ENV}\n`,
        );
      const loaded = await writeConfig(context, a, paths, account);
      if (!loaded) return;

      await checkOnPaper(context, loaded);
    });
}
