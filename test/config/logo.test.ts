/**
 * `receipt.logo` in the config (issue 18): the schema's rules, and `config check` decoding the
 * file for every printer's profile. A logo that cannot be used fails the check (exit 1) with a
 * `receipt.logo.file: PATH: why` line, alongside the file's other problems; a good one passes.
 * (The running agent prints without a broken logo: test/agent/logo.test.ts.)
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { pngBytes, writeLogoPng } from '../../harness/logo.js';
import { validateConfig } from '../../src/config/load.js';
import { isAgentError } from '../../src/errors.js';
import { type CliResult, runCliInProcess } from '../helpers/cli.js';
import { fileConfig, findLeaks, type Workspace, workspace } from './fixtures.js';

let ws: Workspace;
beforeEach(() => {
  ws = workspace();
});
afterEach(() => ws.cleanup());

async function check(): Promise<CliResult> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('PRINTER_AGENT_')),
  );
  const result = await runCliInProcess(['config', 'check', '--config', ws.configPath], {
    env: clean,
  });
  assert.deepEqual(findLeaks([result.stdout, result.stderr]), [], 'a secret leaked');
  return result;
}

function withLogo(logo: Record<string, unknown>): Record<string, unknown> {
  const raw = fileConfig();
  raw.receipt = { logo };
  return raw;
}

describe('receipt.logo in the schema', () => {
  const options = () => ({ file: join(ws.dir, 'config.json'), env: {} });
  const valid = (logo: Record<string, unknown>) => validateConfig(withLogo(logo), options()).config;
  const issues = (logo: Record<string, unknown>) => {
    try {
      validateConfig(withLogo(logo), options());
    } catch (error) {
      if (isAgentError(error)) return error.issues;
      throw error;
    }
    assert.fail('expected CONFIG_INVALID');
  };

  it('takes a file (relative to the config folder), centred and full width by default', () => {
    assert.deepEqual(valid({ file: 'logo.png' }).receipt.logo, {
      file: join(ws.dir, 'logo.png'),
      align: 'center',
    });
  });

  it('refuses a width out of 10..80 mm, an unknown alignment, an unknown key, no file', () => {
    assert.deepEqual(issues({ file: 'logo.png', widthMm: 5, align: 'middle', size: 3 }), [
      { path: 'receipt.logo.widthMm', message: 'must be between 10 and 80' },
      { path: 'receipt.logo.align', message: 'must be one of center, left, right' },
      {
        path: 'receipt.logo',
        message: 'unknown setting "size" (see printer-agent config reference)',
      },
    ]);
    assert.deepEqual(issues({ widthMm: 40 }), [
      { path: 'receipt.logo.file', message: 'is required' },
    ]);
  });
});

describe('config check with a logo', () => {
  it('a good PNG passes', async () => {
    writeLogoPng(join(ws.dir, 'logo.png'));
    ws.writeConfig(withLogo({ file: 'logo.png', widthMm: 40 }));
    const r = await check();
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `config OK: ${ws.configPath}\n`);
  });

  it('a missing file fails, naming receipt.logo.file and the path', async () => {
    ws.writeConfig(withLogo({ file: 'logo.png' }));
    const r = await check();
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.deepEqual(r.stderr.trimEnd().split('\n'), [
      `receipt.logo.file: ${join(ws.dir, 'logo.png')}: missing (ENOENT)`,
      `CONFIG_INVALID: ${ws.configPath}: 1 problem`,
    ]);
  });

  it('a file that is not an image fails, naming receipt.logo.file and the path', async () => {
    const path = ws.file('logo.png', 'this is not an image\n', 0o644);
    ws.writeConfig(withLogo({ file: path }));
    const r = await check();
    assert.equal(r.status, 1);
    assert.deepEqual(r.stderr.trimEnd().split('\n'), [
      `receipt.logo.file: ${path}: not a PNG or SVG image`,
      `CONFIG_INVALID: ${ws.configPath}: 1 problem`,
    ]);
  });

  it('a PNG over the pixel limit fails without being inflated', async () => {
    const bytes = pngBytes(1, 1, () => [0, 0, 0, 255]);
    bytes.writeUInt32BE(40_000, 16);
    bytes.writeUInt32BE(40_000, 20);
    const path = join(ws.dir, 'huge.png');
    writeFileSync(path, bytes);
    ws.writeConfig(withLogo({ file: 'huge.png' }));
    const r = await check();
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      new RegExp(`^receipt\\.logo\\.file: ${path}: too large: 40000 x 40000 pixels`, 'm'),
    );
  });

  it("is reported with the file's other problems", async () => {
    const raw = withLogo({ file: 'nowhere.png' });
    (raw.keys as Record<string, unknown>).servicePublicKeyFile = 'missing.pem';
    ws.writeConfig(raw);
    const r = await check();
    assert.equal(r.status, 1);
    assert.deepEqual(r.stderr.trimEnd().split('\n'), [
      `keys.servicePublicKeyFile: cannot read ${join(ws.dir, 'missing.pem')} (ENOENT)`,
      `receipt.logo.file: ${join(ws.dir, 'nowhere.png')}: missing (ENOENT)`,
      `CONFIG_INVALID: ${ws.configPath}: 2 problems`,
    ]);
  });
});
