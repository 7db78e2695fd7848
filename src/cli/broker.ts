/**
 * `printer-agent broker provision` and `printer-agent broker acl`: per-store broker credentials
 * (issue 19). A store's broker user is its storeId, derived exactly as the agent derives it
 * (print-protocol §1), with a generated password shown once or written to a new 0600 file; the
 * output is the Mosquitto `password_file` line and the ACL rules for Mosquitto or EMQX
 * (docs/store-credentials.md). The storeKey is read only to derive the storeId: it never appears
 * in the output or in an error.
 */
import { writeFileSync } from 'node:fs';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { exposedSecretWarning, readSecretFile } from '../config/secret-files.js';
import { AgentError } from '../errors.js';
import {
  emqxAclFile,
  emqxServiceRules,
  emqxStoreRules,
  mosquittoAclFile,
  mosquittoServiceRules,
  mosquittoStoreRules,
  prefixProblem,
  serviceUserProblem,
} from '../mqtt/broker-acl.js';
import {
  generateBrokerPassword,
  MAX_SUPPLIED_PASSWORD,
  MIN_SUPPLIED_PASSWORD,
  mosquittoPasswordLine,
} from '../mqtt/mosquitto-password.js';
import { STORE_KEY_MAX } from '../protocol/envelope.js';
import { DEFAULT_TOPIC_PREFIX, storeIdSchema, topics } from '../protocol/print-protocol.js';
import { appIdSchema, deriveStoreId } from '../protocol/store-id.js';
import { type CliContext, type CliIo, pathIn } from './io.js';

const FORMATS = ['mosquitto', 'emqx', 'json'] as const;
type Format = (typeof FORMATS)[number];

function parseFormat(value: string): Format {
  if (!(FORMATS as readonly string[]).includes(value))
    throw new InvalidArgumentError(`must be one of ${FORMATS.join(', ')}`);
  return value as Format;
}

/** `--format`, its choices shown by --help and checked against the README's command table (test/docs/command-table.test.ts). */
function formatOption(): Option {
  return new Option('--format <format>', 'the output: a file for the broker, or JSON')
    .choices(FORMATS)
    .argParser(parseFormat)
    .default('mosquitto');
}

function parsePrefix(value: string): string {
  const problem = prefixProblem(value);
  if (problem) throw new InvalidArgumentError(problem);
  return value;
}

function parseServiceUser(value: string): string {
  const problem = serviceUserProblem(value);
  if (problem) throw new InvalidArgumentError(problem);
  return value;
}

interface ProvisionOptions {
  storeId?: string;
  appId?: string;
  storeKeyFile?: string;
  serviceUser?: string;
  passwordFile?: string;
  writePassword?: string;
  prefix: string;
  format: Format;
}

/** What `broker provision` made: printed as text or JSON. */
export interface Provisioned {
  role: 'store' | 'service';
  username: string;
  storeId?: string;
  /** SECRET, shown once: only when generated and not written to a file. */
  password?: string;
  /** Where the password is: the file it was read from or written to. */
  passwordFile?: string;
  passwordSource: 'generated' | 'written' | 'supplied';
  /** The store's own topics (print-protocol §2), for checking the rules by eye. */
  topics?: ReturnType<typeof topics>;
  mosquitto: { passwordLine: string; aclLines: string[] };
  emqx: { user: { user_id: string; is_superuser: false }; aclRules: string[] };
}

/** The user: a storeId given or derived as the agent does (print-protocol §1), or the service. */
function identity(io: CliIo, opts: ProvisionOptions): { role: 'store' | 'service'; name: string } {
  const given = [opts.storeId, opts.storeKeyFile, opts.serviceUser].filter((v) => v !== undefined);
  if (given.length !== 1)
    throw new AgentError(
      'INPUT_INVALID',
      '--store-id, --store-key-file (with --app-id) or --service-user: give exactly one',
    );
  if (opts.appId !== undefined && opts.storeKeyFile === undefined)
    throw new AgentError('INPUT_INVALID', '--app-id: only with --store-key-file');
  if (opts.serviceUser !== undefined) return { role: 'service', name: opts.serviceUser };
  if (opts.storeId !== undefined) {
    const parsed = storeIdSchema.safeParse(opts.storeId);
    if (!parsed.success)
      throw new AgentError('INPUT_INVALID', `--store-id: ${parsed.error.issues[0]?.message}`);
    return { role: 'store', name: opts.storeId };
  }
  const appId = opts.appId;
  if (appId === undefined)
    throw new AgentError('INPUT_INVALID', '--app-id: is required with --store-key-file');
  // The config's rule for appId (1 to 64 characters, no ':'): the same input, the same storeId.
  const appIdRule = appIdSchema.safeParse(appId);
  if (!appIdRule.success)
    throw new AgentError('INPUT_INVALID', `--app-id: ${appIdRule.error.issues[0]?.message}`);
  // readSecretFile's messages name the file and the rule, never the content.
  const read = readSecretFile(pathIn(io, opts.storeKeyFile as string), STORE_KEY_MAX);
  if (!read.ok) throw new AgentError('INPUT_INVALID', `--store-key-file: ${read.message}`);
  return { role: 'store', name: deriveStoreId(appId, read.value) };
}

/** The password: read from a file, or generated and written to a new file, or generated. */
function password(
  io: CliIo,
  opts: ProvisionOptions,
): { value: string; source: Provisioned['passwordSource']; file?: string } {
  if (opts.passwordFile !== undefined && opts.writePassword !== undefined)
    throw new AgentError(
      'INPUT_INVALID',
      '--password-file and --write-password: give one, not both',
    );
  if (opts.passwordFile !== undefined) {
    const file = pathIn(io, opts.passwordFile);
    const read = readSecretFile(file, MAX_SUPPLIED_PASSWORD);
    if (!read.ok) throw new AgentError('INPUT_INVALID', `--password-file: ${read.message}`);
    if ([...read.value].length < MIN_SUPPLIED_PASSWORD)
      throw new AgentError(
        'INPUT_INVALID',
        `--password-file: the password must be at least ${MIN_SUPPLIED_PASSWORD} characters (Mosquitto hashes it with few iterations; leave the option out to generate one)`,
      );
    const warning = exposedSecretWarning('--password-file', file);
    if (warning) io.stderr.write(`warning: ${warning}\n`);
    return { value: read.value, source: 'supplied', file: opts.passwordFile };
  }
  const value = generateBrokerPassword();
  if (opts.writePassword === undefined) return { value, source: 'generated' };
  try {
    // `wx`: a new file only. Overwriting would silently break the store still using the old one.
    writeFileSync(pathIn(io, opts.writePassword), `${value}\n`, { mode: 0o600, flag: 'wx' });
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'unwritable';
    const detail =
      code === 'EEXIST'
        ? 'already exists; a password file is never overwritten'
        : `cannot write (${code})`;
    throw new AgentError('INPUT_INVALID', `--write-password ${opts.writePassword}: ${detail}`, {
      cause,
    });
  }
  return { value, source: 'written', file: opts.writePassword };
}

export function provision(io: CliIo, opts: ProvisionOptions): Provisioned {
  const who = identity(io, opts);
  const secret = password(io, opts);
  const store = who.role === 'store';
  return {
    role: who.role,
    username: who.name,
    ...(store ? { storeId: who.name } : {}),
    ...(secret.source === 'generated' ? { password: secret.value } : {}),
    ...(secret.file !== undefined ? { passwordFile: secret.file } : {}),
    passwordSource: secret.source,
    ...(store ? { topics: topics(opts.prefix, who.name) } : {}),
    mosquitto: {
      passwordLine: mosquittoPasswordLine(who.name, secret.value),
      aclLines: store
        ? mosquittoStoreRules(opts.prefix)
        : mosquittoServiceRules(opts.prefix, who.name),
    },
    emqx: {
      user: { user_id: who.name, is_superuser: false },
      aclRules: store ? emqxStoreRules(opts.prefix) : emqxServiceRules(opts.prefix, who.name),
    },
  };
}

function passwordLines(p: Provisioned): string[] {
  if (p.passwordSource === 'generated')
    return [
      `password:     ${p.password}`,
      '              shown once: put it in a file only the agent reads (mode 0600)',
    ];
  if (p.passwordSource === 'written')
    return [`password:     written to ${p.passwordFile} (mode 0600)`];
  return [`password:     from ${p.passwordFile}`];
}

function header(p: Provisioned): string[] {
  return p.role === 'store'
    ? [`store id:     ${p.storeId}`, `broker user:  ${p.username} (the store id)`]
    : [`service user: ${p.username}`];
}

function configHint(p: Provisioned): string[] {
  return p.role === 'store'
    ? [
        '',
        '# The agent: mqtt.username and mqtt.passwordFile (a file holding the password, mode 0600)',
        `"mqtt": { "username": "${p.username}", "passwordFile": "/etc/printer-agent/mqtt-password" }`,
      ]
    : ['', `# The order service: mqtt.username "${p.username}" and mqtt.password`];
}

function mosquittoText(p: Provisioned): string {
  const aclTitle =
    p.role === 'store'
      ? '# Mosquitto acl_file: the lines every store shares (the whole file: printer-agent broker acl)'
      : "# Mosquitto acl_file: the service's lines (the whole file: printer-agent broker acl)";
  return [
    ...header(p),
    ...passwordLines(p),
    '',
    '# Mosquitto password_file: add this line, then reload Mosquitto (SIGHUP)',
    p.mosquitto.passwordLine,
    '',
    aclTitle,
    ...p.mosquitto.aclLines,
    ...configHint(p),
    '',
  ].join('\n');
}

function emqxText(p: Provisioned): string {
  const body =
    p.password !== undefined
      ? JSON.stringify({ ...p.emqx.user, password: p.password })
      : `${JSON.stringify(p.emqx.user)}  plus "password": the first line of ${p.passwordFile}`;
  return [
    ...header(p),
    ...passwordLines(p),
    '',
    '# EMQX built-in database (password_based, user_id_type = username): POST this body to',
    '# /api/v5/authentication/password_based:built_in_database/users',
    body,
    '',
    p.role === 'store'
      ? '# EMQX acl.conf: the rules every store shares (the whole file: printer-agent broker acl --format emqx)'
      : "# EMQX acl.conf: the service's rules (the whole file: printer-agent broker acl --format emqx)",
    ...p.emqx.aclRules,
    ...configHint(p),
    '',
  ].join('\n');
}

export function registerBroker(program: Command, { io }: CliContext): void {
  const broker = program
    .command('broker')
    .description('per-store broker credentials and access rules (Mosquitto, EMQX)');
  broker
    .command('provision')
    .description(
      'a broker user for one store (user = its storeId) or for the order service: password, the Mosquitto password_file line, the ACL rules',
    )
    .option('--store-id <id>', "the store's id, when its config sets storeId")
    .option(
      '--store-key-file <file>',
      'derive the storeId from the store key in this file, as the agent does',
    )
    .option('--app-id <appId>', 'the application id, with --store-key-file')
    .option(
      '--service-user <name>',
      'provision the order service user instead (needs a dot or @)',
      parseServiceUser,
    )
    .option(
      '--password-file <file>',
      `use the password in this file (first line, at least ${MIN_SUPPLIED_PASSWORD} characters)`,
    )
    .option(
      '--write-password <file>',
      'write the generated password to this new file (mode 0600) instead of showing it',
    )
    .option('--prefix <prefix>', 'topic prefix (mqtt.prefix)', parsePrefix, DEFAULT_TOPIC_PREFIX)
    .addOption(formatOption())
    .action((opts: ProvisionOptions) => {
      const p = provision(io, opts);
      if (opts.format === 'json') io.stdout.write(`${JSON.stringify(p, null, 2)}\n`);
      else io.stdout.write(opts.format === 'emqx' ? emqxText(p) : mosquittoText(p));
    });
  broker
    .command('acl')
    .description("the broker's whole ACL file: every store's rules and the order service's")
    .requiredOption(
      '--service-user <name>',
      'the order service user (needs a dot or @)',
      parseServiceUser,
    )
    .option('--prefix <prefix>', 'topic prefix (mqtt.prefix)', parsePrefix, DEFAULT_TOPIC_PREFIX)
    .addOption(formatOption())
    .action((opts: { serviceUser: string; prefix: string; format: Format }) => {
      if (opts.format === 'json') {
        const store = {
          mosquitto: mosquittoStoreRules(opts.prefix),
          emqx: emqxStoreRules(opts.prefix),
        };
        const service = {
          mosquitto: mosquittoServiceRules(opts.prefix, opts.serviceUser),
          emqx: emqxServiceRules(opts.prefix, opts.serviceUser),
        };
        io.stdout.write(`${JSON.stringify({ store, service }, null, 2)}\n`);
        return;
      }
      io.stdout.write(
        opts.format === 'emqx'
          ? emqxAclFile(opts.prefix, opts.serviceUser)
          : mosquittoAclFile(opts.prefix, opts.serviceUser),
      );
    });
}
