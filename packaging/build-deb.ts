/**
 * `npm run package`: `printer-agent_<version>_<arch>.deb`, built with Debian's own `dpkg-deb`, so a
 * store installs with `apt install ./printer-agent_*.deb` and nothing is compiled on the Pi.
 *
 * The package holds the compiled JavaScript (a fresh `tsc` build: no stale files of older builds),
 * the production dependencies with their native modules as built here, the printer profiles, the
 * systemd unit, the udev rules, the config template (a conffile) and the docs; the maintainer
 * scripts are in `packaging/debian/`. Layout:
 *
 *   /usr/lib/printer-agent/{package.json,dist/,node_modules/,config/printers/}
 *   /usr/bin/printer-agent -> ../lib/printer-agent/dist/cli.js
 *   /usr/lib/systemd/system/printer-agent.service, /usr/lib/udev/rules.d/99-printer-agent.rules
 *   /etc/printer-agent/config.json (conffile), /usr/share/doc/printer-agent/
 *
 * Options: `--out DIR` (default `build/`), `--arch ARCH` (default: this machine's, from
 * `dpkg --print-architecture`). SQLite: better-sqlite3 12 as `npm ci` built it here, for this
 * Node's module ABI (Node 20), and better-sqlite3 13's prebuilt driver for Node 22 and later
 * (`src/host/sqlite.ts` picks); the postinst checks the Node it finds against both.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (command: string, args: string[], cwd = ROOT) =>
  execFileSync(command, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });

const { values: args } = parseArgs({
  options: {
    out: { type: 'string', default: join(ROOT, 'build') },
    arch: { type: 'string' },
  },
});

const hostArch = run('dpkg', ['--print-architecture']).trim();
const arch = args.arch ?? hostArch;
if (arch !== hostArch) {
  // Native modules (better-sqlite3) must be built for the target's architecture and each
  // supported Node ABI; cross-building them is the next step of issue 15.
  console.error(
    `--arch ${arch}: this machine builds ${hostArch} packages only (native modules are taken as npm ci built them here)`,
  );
  process.exit(2);
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const nodeMajor = process.versions.node.split('.')[0]!;
const abi = process.versions.modules;

const stage = mkdtempSync(join(tmpdir(), 'printer-agent-deb-'));
// The package's root entry: mkdtemp made it 0700.
chmodSync(stage, 0o755);
try {
  const lib = join(stage, 'usr', 'lib', 'printer-agent');
  mkdirSync(lib, { recursive: true });

  // A fresh build straight into the package: dist/ of the working tree may hold stale files.
  run(process.execPath, [
    join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
    '-p',
    join(ROOT, 'src'),
    '--outDir',
    join(lib, 'dist'),
    '--tsBuildInfoFile',
    join(stage, 'tsbuildinfo'),
  ]);
  rmSync(join(stage, 'tsbuildinfo'));
  chmodSync(join(lib, 'dist', 'cli.js'), 0o755);

  for (const file of ['package.json', 'package-lock.json'])
    cpSync(join(ROOT, file), join(lib, file));
  cpSync(join(ROOT, 'config', 'printers'), join(lib, 'config', 'printers'), { recursive: true });
  // The installed dependencies, then only the production ones: no download, no compiler.
  cpSync(realpathSync(join(ROOT, 'node_modules')), join(lib, 'node_modules'), {
    recursive: true,
    verbatimSymlinks: true,
  });
  run(
    'npm',
    ['prune', '--omit=dev', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'],
    lib,
  );
  // Build leftovers of native modules: sources, object files, the test extension.
  for (const leftover of [
    'better-sqlite3/deps',
    'better-sqlite3/src',
    'better-sqlite3/build/Release/obj',
    'better-sqlite3/build/Release/obj.target',
    'better-sqlite3/build/Release/.deps',
    'better-sqlite3/build/Release/test_extension.node',
    'better-sqlite3/build/deps',
    '.package-lock.json',
  ])
    rmSync(join(lib, 'node_modules', leftover), { recursive: true, force: true });
  rmSync(join(lib, 'package-lock.json'));
  // better-sqlite3 13's prebuilt drivers (Node 22 and later): this architecture's glibc one only.
  const prebuilds = join(lib, 'node_modules', 'better-sqlite3-napi', 'prebuilds');
  const keep = `linux-${arch === 'amd64' ? 'x64' : arch}.node`;
  for (const file of readdirSync(prebuilds)) if (file !== keep) rmSync(join(prebuilds, file));
  if (!existsSync(join(prebuilds, keep))) throw new Error(`better-sqlite3 13 has no ${keep}`);

  const bin = join(stage, 'usr', 'bin');
  mkdirSync(bin, { recursive: true });
  symlinkSync('../lib/printer-agent/dist/cli.js', join(bin, 'printer-agent'));

  const copy = (from: string, to: string, mode = 0o644) => {
    mkdirSync(dirname(join(stage, to)), { recursive: true });
    cpSync(join(ROOT, from), join(stage, to));
    chmodSync(join(stage, to), mode);
  };
  copy('systemd/printer-agent.service', 'usr/lib/systemd/system/printer-agent.service');
  copy('systemd/99-printer-agent.rules', 'usr/lib/udev/rules.d/99-printer-agent.rules');
  copy('config/config.example.json', 'etc/printer-agent/config.json', 0o640);
  for (const doc of [
    'README.md',
    'docs/decisions.md',
    'docs/config-reference.md',
    'docs/fault-matrix.md',
  ])
    copy(doc, `usr/share/doc/printer-agent/${doc.split('/').pop()}`);
  copy('config/config.schema.json', 'usr/share/doc/printer-agent/config.schema.json');

  const debian = join(stage, 'DEBIAN');
  mkdirSync(debian);
  const installedKb = run('du', ['-sk', '--exclude=DEBIAN', stage]).split('\t')[0]!;
  const fill = (text: string) =>
    text
      .replaceAll('@VERSION@', pkg.version)
      .replaceAll('@ARCH@', arch)
      .replaceAll('@INSTALLED_SIZE@', installedKb)
      .replaceAll('@NODE_RANGE@', `${nodeMajor}.x`)
      .replaceAll('@NODE_ABIS@', abi);
  for (const [name, mode] of [
    ['control', 0o644],
    ['conffiles', 0o644],
    ['postinst', 0o755],
    ['prerm', 0o755],
    ['postrm', 0o755],
  ] as const) {
    writeFileSync(
      join(debian, name),
      fill(readFileSync(join(ROOT, 'packaging', 'debian', name), 'utf8')),
    );
    chmodSync(join(debian, name), mode);
  }

  mkdirSync(args.out!, { recursive: true });
  const deb = join(args.out!, `printer-agent_${pkg.version}_${arch}.deb`);
  run('dpkg-deb', ['--root-owner-group', '-Zgzip', '--build', stage, deb]);
  console.log(deb);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
