/**
 * Checks a built package (`npm run package`) the way an installer would meet it, without installing
 * it on this machine: its control fields, conffiles and maintainer scripts; its contents (what the
 * issue asks for, and no development dependency); then, unpacked, the packaged command itself:
 * its version, a receipt rendered from a fixture, and the job database opened (so the native
 * SQLite module loads from the package, with nothing built). `.ci/run` runs it after
 * `npm run package`. Usage: `tsx packaging/verify-deb.ts FILE.deb [NODE ...]`: each further Node
 * binary (`.ci/run` passes 22, 24 and 26) runs the packaged command and its SQLite driver too.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const [deb, ...otherNodes] = process.argv.slice(2);
if (!deb) {
  console.error('usage: tsx packaging/verify-deb.ts FILE.deb');
  process.exit(2);
}
const sh = (command: string, args: string[]) =>
  execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  devDependencies: Record<string, string>;
};
const field = (name: string) => sh('dpkg-deb', ['--field', deb, name]).trim();
assert.equal(field('Package'), 'printer-agent');
assert.equal(field('Version'), pkg.version);
assert.equal(field('Architecture'), sh('dpkg', ['--print-architecture']).trim());
assert.match(field('Depends'), /(^|, )nodejs \(>= 20\)(,|$)/);

const work = mkdtempSync(join(tmpdir(), 'printer-agent-verify-'));
try {
  const control = join(work, 'control');
  sh('dpkg-deb', ['--control', deb, control]);
  assert.equal(
    readFileSync(join(control, 'conffiles'), 'utf8').trim(),
    '/etc/printer-agent/config.json',
  );
  for (const script of ['postinst', 'prerm', 'postrm']) sh('sh', ['-n', join(control, script)]);
  const postinst = readFileSync(join(control, 'postinst'), 'utf8');
  assert.match(postinst, /NODE_ABIS="\d+( \d+)*"/, 'postinst knows the module ABIs it carries');

  const contents = sh('dpkg-deb', ['--contents', deb])
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(/\s+/).slice(5).join(' '));
  const has = (path: string) =>
    contents.some((entry) => entry === path || entry.startsWith(`${path} `));
  for (const path of [
    './usr/bin/printer-agent -> ../lib/printer-agent/dist/cli.js',
    './usr/lib/printer-agent/dist/cli.js',
    './usr/lib/printer-agent/package.json',
    './usr/lib/printer-agent/config/printers/generic-80mm.json',
    './usr/lib/printer-agent/node_modules/better-sqlite3/build/Release/better_sqlite3.node',
    `./usr/lib/printer-agent/node_modules/better-sqlite3-napi/prebuilds/linux-${process.arch}.node`,
    './usr/lib/systemd/system/printer-agent.service',
    './usr/lib/udev/rules.d/99-printer-agent.rules',
    './etc/printer-agent/config.json',
    './usr/share/doc/printer-agent/README.md',
  ])
    assert.ok(has(path), `${path} is in the package`);
  // Development tools must not ship; a dev dependency that a production one also needs (mqtt's
  // `@types/node`) stays, as npm keeps it.
  const production = new Set(
    sh('npm', ['ls', '--omit=dev', '--all', '--parseable'])
      .split('\n')
      .map((path) => path.split('/node_modules/').pop()!),
  );
  for (const dev of Object.keys(pkg.devDependencies).filter((name) => !production.has(name)))
    assert.ok(
      !has(`./usr/lib/printer-agent/node_modules/${dev}/`),
      `development dependency ${dev} is not in the package`,
    );
  assert.ok(
    !contents.some((e) => e.startsWith('./usr/lib/printer-agent/src/')),
    'compiled JavaScript only, not our TypeScript sources',
  );

  const root = join(work, 'root');
  sh('dpkg-deb', ['--extract', deb, root]);
  for (const node of [process.execPath, ...otherNodes]) check(root, node);
  console.log(
    `${deb}: OK (${contents.length} entries; Node ${[process.execPath, ...otherNodes].map((n) => sh(n, ['--version']).trim()).join(', ')})`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}

/** The unpacked package's command and SQLite driver, run by `node`. */
function check(root: string, node: string): void {
  const cli = (...args: string[]) =>
    sh(node, [join(root, 'usr/lib/printer-agent/dist/cli.js'), ...args]);
  assert.equal(cli('--version').trim(), pkg.version);
  const receipt = cli(
    'render',
    join(ROOT, 'test/fixtures/orders/record-options-remark.json'),
    '--format',
    'text',
  );
  assert.match(receipt, /TOTAL|Total/i, 'a receipt rendered by the packaged command');
  // The SQLite driver this Node picks loads from the package as installed, with nothing built.
  const sqlite = sh(node, [
    '--input-type=module',
    '-e',
    `const { default: Database, SQLITE_DRIVER } = await import(${JSON.stringify(join(root, 'usr/lib/printer-agent/dist/host/sqlite.js'))});
     console.log(SQLITE_DRIVER, new Database(':memory:').prepare('select sqlite_version() as v').get().v);`,
  ]);
  assert.match(sqlite, /^better-sqlite3(-napi)? 3\.\d+\.\d+$/m, `${node}: ${sqlite}`);
}
