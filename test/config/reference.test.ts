import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ENV_OVERRIDES } from '../../src/config/env.js';
import { configJsonSchema, configReference } from '../../src/config/reference.js';
import { ROOT } from '../helpers/cli.js';

/**
 * The committed docs are the generator's output formatted by biome (npm run config:docs), so
 * `biome check` stays clean on them; the comparison formats the fresh output the same way.
 */
function formatted(text: string, path: string): string {
  const biome = join(ROOT, 'node_modules', '@biomejs', 'biome', 'bin', 'biome');
  const result = spawnSync(process.execPath, [biome, 'format', `--stdin-file-path=${path}`], {
    cwd: ROOT,
    input: text,
    encoding: 'utf8',
  });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout;
}

describe('generated config docs', () => {
  it('docs/config-reference.md equals the generated reference', () => {
    assert.equal(
      readFileSync(join(ROOT, 'docs', 'config-reference.md'), 'utf8'),
      formatted(configReference(), 'docs/config-reference.md'),
      'stale: run npm run config:docs',
    );
  });

  it('config/config.schema.json equals the generated JSON schema', () => {
    assert.equal(
      readFileSync(join(ROOT, 'config', 'config.schema.json'), 'utf8'),
      formatted(`${JSON.stringify(configJsonSchema(), null, 2)}\n`, 'config/config.schema.json'),
      'stale: run npm run config:docs',
    );
  });

  it('lists every field and every environment override', () => {
    const reference = configReference();
    for (const key of [
      'appId',
      'mqtt.tls.caFile',
      'printers[].roles',
      'receipt.markings.lateAfterMinutes',
      'catchUp.windowMinutes',
    ])
      assert.ok(reference.includes(`| \`${key}\` |`), key);
    for (const override of ENV_OVERRIDES)
      assert.ok(
        reference.includes(`| \`${override.name}\` | \`${override.path}\` |`),
        override.name,
      );
  });
});
