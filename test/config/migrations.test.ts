/**
 * Config versions (issue 43 item 7): the migration list, the version rules, and every released
 * version's fixture (test/fixtures/config/) migrated to the current version, where it must
 * validate and mean what the released agent read in it (its own reading is in the fixtures).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { validateConfig } from '../../src/config/load.js';
import {
  CONFIG_MIGRATIONS,
  CONFIG_VERSION,
  configVersionOf,
  migrateConfig,
} from '../../src/config/migrations.js';
import { agentConfigSchema, configErrorMessage } from '../../src/config/schema.js';
import { AgentError } from '../../src/errors.js';
import { ROOT } from '../helpers/cli.js';

const FIXTURES = join(ROOT, 'test', 'fixtures', 'config');
/** Where the released agent's reading of the fixtures resolved their relative paths. */
const INSTALLED = '/etc/printer-agent/config.json';

type Raw = Record<string, unknown>;

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Raw;

/** `vN-NAME.json` files: one config of a released version each. */
const fixtures = readdirSync(FIXTURES)
  .map((name) => ({ name, match: /^v(\d+)-[a-z0-9-]+\.json$/.exec(name) }))
  .filter((f) => f.match !== null)
  .map((f) => ({
    name: f.name,
    version: Number(f.match![1]),
    raw: readJson(join(FIXTURES, f.name)),
  }));

function thrown(work: () => unknown): AgentError {
  try {
    work();
  } catch (error) {
    assert.ok(error instanceof AgentError, String(error));
    return error;
  }
  assert.fail('expected an AgentError');
}

describe('config migrations: the list', () => {
  it('is ordered, one step per version, and ends at CONFIG_VERSION', () => {
    // A gap or a reordering would skip a step for some files; the job store's list has the same rule.
    assert.deepEqual(
      CONFIG_MIGRATIONS.map((m) => m.from),
      Array.from({ length: CONFIG_VERSION - 1 }, (_, i) => i + 1),
    );
    assert.equal(CONFIG_VERSION, 2, 'this agent writes version 2 (0.1.0 wrote version 1)');
  });

  it('has a fixture of every version before the current one', () => {
    const covered = new Set(fixtures.map((f) => f.version));
    for (let version = 1; version < CONFIG_VERSION; version++)
      assert.ok(covered.has(version), `no test/fixtures/config/v${version}-*.json`);
    // The 0.1.0 template, as shipped: the file every installed store started from.
    assert.ok(fixtures.some((f) => f.name === 'v1-template.json'));
  });
});

describe('config migrations: the version a file declares', () => {
  it('reads no version as 1, accepts 1 and 2', () => {
    assert.equal(configVersionOf({ appId: 'A1' }, INSTALLED), 1);
    assert.equal(configVersionOf({ version: 1 }, INSTALLED), 1);
    assert.equal(configVersionOf({ version: 2 }, INSTALLED), 2);
  });

  it('refuses what is no version with CONFIG_INVALID on `version`', () => {
    for (const version of [0, -1, 1.5, '2', null, true, [2], { v: 2 }]) {
      const error = thrown(() => configVersionOf({ version }, INSTALLED));
      assert.equal(error.code, 'CONFIG_INVALID', JSON.stringify(version));
      assert.deepEqual(
        error.issues.map((i) => i.path),
        ['version'],
      );
    }
  });

  it('refuses a newer version with CONFIG_TOO_NEW, naming both versions and the kept original', () => {
    const error = thrown(() => migrateConfig({ version: 3, appId: 'A1' }, INSTALLED));
    assert.equal(error.code, 'CONFIG_TOO_NEW');
    assert.equal(
      error.message,
      `${INSTALLED}: config version 3 is newer than this agent's 2: upgrade printer-agent, or go back to the version 2 file a migration kept beside it (config.json.v2.bak)`,
    );
    assert.deepEqual(error.details, { file: INSTALLED, version: 3, supported: 2 });
    // Through validateConfig too: every command reads the file through it.
    const viaValidate = thrown(() => validateConfig({ version: 99 }, { file: INSTALLED, env: {} }));
    assert.equal(viaValidate.code, 'CONFIG_TOO_NEW');
  });
});

describe('config migrations: migrateConfig', () => {
  it('leaves a current file as it is (the same object, no steps)', () => {
    const raw = { version: 2, appId: 'A1' };
    const migrated = migrateConfig(raw, INSTALLED);
    assert.equal(migrated.value, raw);
    assert.deepEqual([migrated.from, migrated.to, migrated.steps], [2, 2, []]);
  });

  it('does not change the object it is given', () => {
    const raw = readJson(join(FIXTURES, 'v1-store.json'));
    const before = structuredClone(raw);
    migrateConfig(raw, INSTALLED);
    assert.deepEqual(raw, before);
  });

  it('puts the version right after $schema, else first, where a person sees it', () => {
    const withSchema = migrateConfig({ $schema: './s.json', appId: 'A1' }, INSTALLED).value;
    assert.deepEqual(Object.keys(withSchema), ['$schema', 'version', 'appId']);
    const without = migrateConfig({ appId: 'A1', logLevel: 'info' }, INSTALLED).value;
    assert.deepEqual(Object.keys(without), ['version', 'appId', 'logLevel']);
  });

  it('migrates before the environment: an override applies to a version 1 file', () => {
    const raw = readJson(join(FIXTURES, 'v1-template.json'));
    const { config, migrated } = validateConfig(raw, {
      file: INSTALLED,
      env: { PRINTER_AGENT_LOG_LEVEL: 'debug' },
    });
    assert.equal(config.logLevel, 'debug');
    assert.deepEqual([migrated.from, migrated.to], [1, 2]);
  });

  it('the schema itself takes only the current version (its other readers: editors, tests)', () => {
    const raw = { ...readJson(join(FIXTURES, 'v1-template.json')), version: 1 };
    const result = agentConfigSchema.safeParse(raw, { error: configErrorMessage });
    assert.equal(result.success, false);
    assert.deepEqual(
      result.error?.issues.map((i) => i.path.join('.')),
      ['version'],
    );
  });
});

describe('config migrations: every released version, migrated', () => {
  for (const fixture of fixtures) {
    it(`${fixture.name}: reaches version ${CONFIG_VERSION}, keeps every setting and validates`, () => {
      const migrated = migrateConfig(fixture.raw, INSTALLED);
      assert.deepEqual([migrated.from, migrated.to], [fixture.version, CONFIG_VERSION]);
      assert.equal(migrated.steps.length, CONFIG_VERSION - fixture.version);
      assert.equal(migrated.value.version, CONFIG_VERSION);
      // 1 -> 2 moves nothing: the file is the released one plus its version.
      const { version: _v, ...rest } = migrated.value;
      assert.deepEqual(rest, fixture.raw);
      // Validates as it stands (a current file goes through no migration).
      const { config, migrated: again } = validateConfig(migrated.value, {
        file: INSTALLED,
        env: {},
      });
      assert.deepEqual([again.from, again.to], [CONFIG_VERSION, CONFIG_VERSION]);
      assert.equal(config.version, CONFIG_VERSION);
    });

    const readingFile = join(FIXTURES, fixture.name.replace(/\.json$/, '.as-read-by-0.1.0.json'));
    if (fixture.version !== 1) continue;
    it(`${fixture.name}: means what printer-agent 0.1.0 read in it`, () => {
      // What 0.1.0's own validateConfig made of the file (test/fixtures/config/README.md).
      const released = readJson(readingFile);
      const migrated = migrateConfig(fixture.raw, INSTALLED).value;
      const today = JSON.parse(
        JSON.stringify(validateConfig(migrated, { file: INSTALLED, env: {} }).config),
      ) as Raw;
      // Settings added since 0.1.0, each at the default that behaves as 0.1.0 did: no drawer
      // kick, no metrics token. allowV1Signatures is the one difference kept on purpose
      // (decision 235; src/config/migrations.ts says why no step turns it on).
      const added = {
        version: 2,
        drawer: { openOn: [], pin: 2 },
        catchUp: { ...(released.catchUp as Raw), allowV1Signatures: false },
      };
      assert.deepEqual(today, { ...released, ...added });
    });
  }
});
