/**
 * The bundles the tests' child processes run (harness/child-entry.ts): current sources, never
 * a stale bundle, never half a bundle, whichever of the parallel test processes builds it.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { cliEntry, scriptEntry } from '../../harness/child-entry.js';
import { ROOT } from './cli.js';

// These tests are about the bundles: the switch back to the sources is not for them (nor for the
// processes they start, which inherit this environment).
delete process.env.TEST_CHILD_ENTRY;

const CACHE = join(ROOT, 'node_modules', '.cache');
/** The test scripts' bundles are named after them: distinct from any other test's. */
const NAME = `ce-probe-${process.pid}`;

const ours = () => readdirSync(CACHE).filter((e) => e.startsWith(`printer-agent-test-${NAME}-`));

after(() => {
  for (const entry of ours()) rmSync(join(CACHE, entry), { recursive: true, force: true });
});

/** Runs `node ARGV` and returns its stdout, failing with its stderr. */
function node(argv: readonly string[]): string {
  const r = spawnSync(process.execPath, argv, { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

/** A test process of its own asking for the script's bundle; resolves with the bundle's argv. */
function askInAnotherProcess(probe: string, script: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', probe, script], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(JSON.parse(out) as string[])
        : reject(new Error(`probe ${code}: ${err}`)),
    );
  });
}

describe('child-entry', () => {
  it('runs the CLI from a bundle that finds the package root (version, printer profiles)', () => {
    const entry = cliEntry();
    assert.match(entry[0]!, /node_modules\/\.cache\/printer-agent-test-cli-[0-9a-f]{20}\/cli\.js$/);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    assert.equal(node([...entry, '--version']).trim(), pkg.version);
    // The profile is read from config/printers/ at run time, found from the bundle's location.
    const hex = node([
      ...entry,
      'render',
      join(ROOT, 'test', 'fixtures', 'orders', 'table-cjk.json'),
      '--profile',
      'pos-5890-gb18030',
      '--format',
      'hex',
    ]);
    assert.match(hex, / 1c 26 /, 'FS & (CJK mode on): the GB18030 profile was loaded');
  });

  it('gives parallel processes one complete bundle, and a new one after an edit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pa-child-entry-'));
    const script = join(dir, `${NAME}.ts`);
    writeFileSync(script, "import { message } from './message.ts';\nconsole.log(message);\n");
    writeFileSync(join(dir, 'message.ts'), "export const message: string = 'first';\n");
    const probe = join(dir, 'probe.mts');
    const helper = pathToFileURL(join(ROOT, 'harness', 'child-entry.ts')).href;
    writeFileSync(
      probe,
      `import { scriptEntry } from ${JSON.stringify(helper)};\nconsole.log(JSON.stringify(scriptEntry(process.argv[2])));\n`,
    );

    const answers = await Promise.all([1, 2, 3].map(() => askInAnotherProcess(probe, script)));
    assert.deepEqual(new Set(answers.map((a) => a.join(' '))).size, 1, 'one bundle for all');
    const first = answers[0]!;
    assert.equal(node(first).trim(), 'first');
    // Nothing half-made or locked left behind: only the bundle itself.
    assert.deepEqual(ours(), [dirname(first[0]!).slice(CACHE.length + 1)]);

    // An edit of a file the script imports (not of the script itself) is a new bundle.
    writeFileSync(join(dir, 'message.ts'), "export const message: string = 'second';\n");
    const second = await askInAnotherProcess(probe, script);
    assert.notEqual(second[0], first[0]);
    assert.equal(node(second).trim(), 'second');
    assert.equal(node(first).trim(), 'first', 'a bundle never changes once made');
  });

  it('refuses a script importing a file its hash does not cover, naming the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pa-child-entry-'));
    mkdirSync(join(dir, 'script'));
    mkdirSync(join(dir, 'elsewhere'));
    writeFileSync(join(dir, 'elsewhere', 'far.ts'), "export const far: string = 'far';\n");
    const script = join(dir, 'script', `${NAME}.ts`);
    writeFileSync(script, "import { far } from '../elsewhere/far.ts';\nconsole.log(far);\n");
    assert.throws(
      () => scriptEntry(script),
      /imports .*elsewhere\/far\.ts, which the bundle's hash does not cover/,
    );
  });
});
