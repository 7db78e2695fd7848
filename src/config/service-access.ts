/**
 * What the service account must be able to read of a configuration: the config file and every
 * file it names (decision 147: root's own access proves nothing, so `doctor`, `config check` and
 * `config set` ask as the account when run as root).
 */
import { AgentError } from '../errors.js';
import { type AccessProblem, readProblem, type ServiceAccount } from '../host/service-account.js';
import { getAt } from './load.js';
import { type ConfigFile, PATH_FIELDS, SECRET_FILE_FIELDS } from './schema.js';

/** The files the service opens for reading: the config itself, then each named file. */
export function serviceReadFiles(
  file: ConfigFile,
  configPath: string,
): { field: string; path: string; secret: boolean }[] {
  const inlineSecret = file.storeKey !== undefined || file.mqtt.password !== undefined;
  const files = [{ field: 'config file', path: configPath, secret: inlineSecret }];
  for (const field of PATH_FIELDS) {
    if (field === 'stateDir') continue; // written, and systemd's StateDirectory= owns it
    const value = getAt(file, field.split('.'));
    if (typeof value === 'string')
      files.push({
        field,
        path: value,
        secret: (SECRET_FILE_FIELDS as readonly string[]).includes(field),
      });
  }
  return files;
}

/** Each file of `file` the account cannot read, with the field that names it. */
export function serviceAccessProblems(
  account: ServiceAccount,
  file: ConfigFile,
  configPath: string,
): (AccessProblem & { field: string })[] {
  const problems: (AccessProblem & { field: string })[] = [];
  for (const { field, path, secret } of serviceReadFiles(file, configPath)) {
    const problem = readProblem(account, path, { secret });
    if (problem) problems.push({ field, ...problem });
  }
  return problems;
}

/**
 * Throws CONFIG_INVALID, one issue per file the account cannot read (`field: detail; fix: ...`),
 * when there is any. `fields` limits the check to some of them (`config set` checks the file it
 * writes and what the changed setting names, not every other file).
 */
export function assertServiceCanRead(
  account: ServiceAccount,
  file: ConfigFile,
  configPath: string,
  fields?: readonly string[],
): void {
  const problems = serviceAccessProblems(account, file, configPath).filter(
    (problem) => fields === undefined || fields.includes(problem.field),
  );
  if (problems.length === 0) return;
  throw new AgentError(
    'CONFIG_INVALID',
    `${configPath}: the service user ${account.name} cannot read ${problems.length} file(s)`,
    {
      details: { file: configPath },
      issues: problems.map((problem) => ({
        path: problem.field,
        message: `${problem.detail}; fix: ${problem.fix}`,
      })),
    },
  );
}
