/**
 * The config file's versions, as an ordered list of migrations (issue 43 item 7), the way
 * src/jobs/migrations.ts keeps the job database's. A file records its version in `version`; a file
 * without one is version 1, what printer-agent 0.1.0 (the only release before versions) wrote and
 * shipped. Reading an older file migrates it in memory, step by step, before the environment and
 * the schema see it, so every command reads the current shape; `run`, `config migrate`, `config
 * set` and `config unset` also write the result back (file-migration.ts). A file from a newer agent
 * is refused (CONFIG_TOO_NEW): this agent cannot know what its settings mean, and guessing could
 * print where nobody expects it.
 *
 * Never edit a released migration: files in the field were written for it. A change to the shape
 * of the file (a rename, a move, a meaning that changes) is a new version with its own step, and
 * test/config/migrations.test.ts needs a fixture of every released version
 * (test/fixtures/config/vN-*.json) to migrate.
 *
 * Pure: no file system, no clock. Messages never hold a value (a wrong value may be a secret).
 */
import { basename } from 'node:path';
import { AgentError } from '../errors.js';

export interface ConfigMigrationStep {
  /** The version this step reads; it writes `from + 1`. */
  from: number;
  /** What the step changes, for the person reading `config migrate` and the log. */
  description: string;
  /** The next version's object from this version's (given a copy it may change). */
  migrate(raw: Record<string, unknown>): Record<string, unknown>;
}

export const CONFIG_MIGRATIONS: readonly ConfigMigrationStep[] = [
  {
    from: 1,
    description: 'records the version; no setting changes',
    // Every setting of 0.1.0 means the same today: versions since only added settings (drawer,
    // catchUp.allowV1Signatures, console.metricsTokenFile), each defaulting to what 0.1.0 did,
    // or tightened a rule no step could repair (an appId with ':', print-protocol v1.2 §10: the
    // service issues it). One difference is left alone on purpose: 0.1.0 accepted catch-up
    // answers signed version 1, and this agent refuses them unless allowV1Signatures is set
    // (decision 235); writing that switch on a person's behalf would undo the protection.
    migrate: (raw) => raw,
  },
];

/** The version this agent reads and writes. */
export const CONFIG_VERSION = CONFIG_MIGRATIONS.length + 1;

/** The version of a file that has no `version`: printer-agent 0.1.0's. */
export const UNVERSIONED = 1;

const VERSION_RULE = 'must be a whole number, 1 or more (the config version)';

/**
 * The version a parsed file declares: CONFIG_INVALID for a value that is no version, CONFIG_TOO_NEW
 * for one this agent does not know yet. Both carry the issue on `version`.
 */
export function configVersionOf(raw: Record<string, unknown>, file: string): number {
  const version = raw.version;
  if (version === undefined) return UNVERSIONED;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) {
    const issues = [{ path: 'version', message: VERSION_RULE }];
    throw new AgentError('CONFIG_INVALID', `${file}: version: ${VERSION_RULE}`, {
      issues,
      details: { file },
    });
  }
  if (version > CONFIG_VERSION) {
    // A downgrade finds the file the upgrade's migration kept (file-migration.ts names it so).
    const kept = `${basename(file)}.v${CONFIG_VERSION}.bak`;
    const message = `config version ${version} is newer than this agent's ${CONFIG_VERSION}: upgrade printer-agent, or go back to the version ${CONFIG_VERSION} file a migration kept beside it (${kept})`;
    throw new AgentError('CONFIG_TOO_NEW', `${file}: ${message}`, {
      issues: [{ path: 'version', message }],
      details: { file, version, supported: CONFIG_VERSION },
    });
  }
  return version;
}

export interface MigratedConfig {
  /** The file's object at CONFIG_VERSION (the input itself when it was current). */
  value: Record<string, unknown>;
  from: number;
  to: number;
  /** What each step applied did, oldest first; empty when the file was current. */
  steps: string[];
}

/**
 * `value` with `version` set: right after `$schema` when there is one, else first, where a person
 * opening the file sees it.
 */
function withVersion(value: Record<string, unknown>, version: number): Record<string, unknown> {
  const { $schema, version: _old, ...rest } = value;
  return $schema === undefined ? { version, ...rest } : { $schema, version, ...rest };
}

/** The file's object brought to CONFIG_VERSION; throws as `configVersionOf` does. */
export function migrateConfig(raw: Record<string, unknown>, file: string): MigratedConfig {
  // Not an object (validateConfig's callers may pass anything): nothing to migrate, and the
  // schema says what the file must be.
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { value: raw, from: CONFIG_VERSION, to: CONFIG_VERSION, steps: [] };
  const from = configVersionOf(raw, file);
  if (from === CONFIG_VERSION) return { value: raw, from, to: from, steps: [] };
  let value = structuredClone(raw);
  const steps: string[] = [];
  for (const step of CONFIG_MIGRATIONS) {
    if (step.from < from) continue;
    value = withVersion(step.migrate(value), step.from + 1);
    steps.push(`${step.from} -> ${step.from + 1}: ${step.description}`);
  }
  return { value, from, to: CONFIG_VERSION, steps };
}
