/**
 * `npm run package`: `printer-agent_<version>_<arch>.deb`, built with Debian's own `dpkg-deb`, so a
 * store installs with `apt install ./printer-agent_*.deb` and nothing is compiled on the Pi.
 *
 * The package holds the compiled JavaScript (a fresh bundle, as `npm run build` makes it),
 * the production dependencies with their native modules as built here, the printer profiles, the
 * systemd unit, the udev rules, the config template (a conffile) and the docs; the maintainer
 * scripts are in `packaging/debian/`. Layout:
 *
 *   /usr/lib/printer-agent/{package.json,dist/,node_modules/,config/printers/}
 *   /usr/bin/printer-agent -> ../lib/printer-agent/dist/cli.js
 *   /usr/lib/systemd/system/printer-agent.service, /usr/lib/udev/rules.d/99-printer-agent.rules
 *   /usr/share/printer-agent/config.example.json (postinst copies it to /etc/printer-agent/config.json
 *   on the first install: no conffile), /usr/share/doc/printer-agent/
 *
 * Options: `--out DIR` (default `build/`), `--arch amd64|arm64` (default: this machine's, from
 * `dpkg --print-architecture`). SQLite: better-sqlite3 12 compiled for Node 20's module ABI and the
 * target's CPU (cross-compiled with Debian's `g++-aarch64-linux-gnu` for arm64 on an amd64
 * machine, against the headers of `node-linux-<cpu>@20` from the npm registry), and
 * better-sqlite3 13's prebuilt driver for Node 22 and later (`src/host/sqlite.ts` picks); the
 * postinst checks the Node it finds against both. serialport's and usb's prebuilt drivers: the
 * target's glibc ones only (usb's comes from its per-platform npm package).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { bundle, NATIVE_PACKAGES, RUNTIME_REQUIRED } from './bundle.js';
import { debianChangelog, parseChangelog } from './debian-changelog.js';
import { installedDocs } from './doc-files.js';
import { cacheDir, NODE_CPU, nodeDist } from './node-dist.js';

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
if (!(arch in NODE_CPU)) {
  // armhf: Debian's nodejs 20 exists, but no Node 22 or newer in the npm registry and no
  // better-sqlite3 13 driver for it (decision 152); a 32-bit Pi OS installs from source.
  console.error(
    `--arch ${arch}: packages are built for ${Object.keys(NODE_CPU).join(' and ')}; on other architectures install from source (docs/install.md "From source")`,
  );
  process.exit(2);
}
const cpu = NODE_CPU[arch as keyof typeof NODE_CPU];

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  optionalDependencies: Record<string, string>;
};
// better-sqlite3 12 is built for Node 20, whatever Node runs this build (Node 22 and later use
// 13's prebuilt driver): its module ABI, read from the headers it is compiled against.
const node20 = nodeDist(cpu, 20);
const abi20 = /#define NODE_MODULE_VERSION (\d+)/.exec(
  readFileSync(join(node20, 'include', 'node', 'node_version.h'), 'utf8'),
)![1]!;

const stage = mkdtempSync(join(tmpdir(), 'printer-agent-deb-'));
// The package's root entry: mkdtemp made it 0700.
chmodSync(stage, 0o755);
try {
  const lib = join(stage, 'usr', 'lib', 'printer-agent');
  mkdirSync(lib, { recursive: true });

  // A fresh build straight into the package, as `npm run build` makes it (packaging/bundle.ts).
  await bundle(join(lib, 'dist'));
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
    'better-sqlite3/build/Release/sqlite3.a',
    // better-sqlite3 13 loads its prebuilt driver (prebuilds/); its sources and a failed local
    // build's leftovers are never read.
    'better-sqlite3-napi/deps',
    'better-sqlite3-napi/src',
    'better-sqlite3-napi/build',
    '.package-lock.json',
    // Tools' caches (the tests' C tools are compiled here for the build machine's CPU).
    '.cache',
  ])
    rmSync(join(lib, 'node_modules', leftover), { recursive: true, force: true });
  rmSync(join(lib, 'package-lock.json'));
  nativeModulesFor(join(lib, 'node_modules'));
  const before = run('du', ['-sk', join(lib, 'node_modules')]).split('\t')[0]!;
  onlyWhatRuns(join(lib, 'node_modules'));
  const after = run('du', ['-sk', join(lib, 'node_modules')]).split('\t')[0]!;
  console.error(`node_modules: ${before} KiB -> ${after} KiB (only what the bundle loads)`);

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
  // The template, not a conffile: postinst puts it at /etc/printer-agent/config.json on the first
  // install only. A store's config is written by `setup` and `config set` and migrated by
  // postinst on upgrades (`config migrate`); as a conffile, every template change between
  // versions would stop an unattended `apt upgrade` at dpkg's "keep your version?" prompt.
  copy('config/config.example.json', 'usr/share/printer-agent/config.example.json');
  // The README and every topic page of docs/, side by side: what the Pi shows names them there
  // (`/usr/share/doc/printer-agent/install.md "Upgrades"`; packaging/doc-files.ts).
  for (const { from, to } of installedDocs(ROOT)) copy(from, to);
  copy('config/config.schema.json', 'usr/share/doc/printer-agent/config.schema.json');
  copy('CHANGELOG.md', 'usr/share/doc/printer-agent/CHANGELOG.md');
  // Debian's changelog from CHANGELOG.md; its newest entry must be this version (apt and
  // dpkg-parsechangelog read the version there).
  const released = parseChangelog(readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8'));
  if (released[0]?.version !== pkg.version)
    throw new Error(
      `CHANGELOG.md's newest version is ${released[0]?.version ?? 'none'}, package.json's ${pkg.version}: add "## [${pkg.version}] - YYYY-MM-DD" with what changed`,
    );
  const maintainer = /^Maintainer: (.+)$/m.exec(
    readFileSync(join(ROOT, 'packaging', 'debian', 'control'), 'utf8'),
  )![1]!;
  const changelog = join(stage, 'usr/share/doc/printer-agent/changelog');
  writeFileSync(changelog, debianChangelog(released, maintainer));
  // -n: no name or time stamp in the gzip header, so the same sources give the same package.
  run('gzip', ['-9n', changelog]);

  const debian = join(stage, 'DEBIAN');
  mkdirSync(debian);
  const installedKb = run('du', ['-sk', '--exclude=DEBIAN', stage]).split('\t')[0]!;
  const fill = (text: string) =>
    text
      .replaceAll('@VERSION@', pkg.version)
      .replaceAll('@ARCH@', arch)
      .replaceAll('@INSTALLED_SIZE@', installedKb)
      .replaceAll('@NODE_RANGE@', '20.x')
      .replaceAll('@NODE_ABIS@', abi20);
  for (const [name, mode] of [
    ['control', 0o644],
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

/**
 * What the bundle loads from node_modules at run time (issue 43: the package shipped 1,217 `.ts`
 * files, zod's sources and fastify's type tests among them): the native packages esbuild leaves
 * outside (bundle.ts), ajv's runtime helpers that fastify's compiled validators require by name,
 * and what those depend on. Every other package is in the bundle already and goes; of the ones
 * kept, what no program reads (TypeScript sources and declarations, source maps, docs) goes too,
 * licences stay. The install test runs every command a technician runs from the result.
 */
function onlyWhatRuns(modules: string): void {
  // Dependencies the native packages need to be installed or built, never to run: the prebuilt
  // binary downloader and its own dependencies, C++ headers, type declarations.
  const INSTALL_ONLY = new Set([
    'prebuild-install',
    'node-addon-api',
    'napi-build-utils',
    '@types/w3c-web-usb',
  ]);
  const roots: string[] = [
    ...NATIVE_PACKAGES.filter((name) => !name.endsWith('/*')),
    ...RUNTIME_REQUIRED,
  ];
  // @serialport/* and other scopes given as `@scope/*`: every installed package of the scope.
  for (const pattern of NATIVE_PACKAGES.filter((name) => name.endsWith('/*'))) {
    const scope = pattern.slice(0, -2);
    if (existsSync(join(modules, scope)))
      for (const name of readdirSync(join(modules, scope))) roots.push(`${scope}/${name}`);
  }
  const kept = new Set<string>();
  const visit = (name: string) => {
    if (kept.has(name) || INSTALL_ONLY.has(name)) return;
    if (!existsSync(join(modules, name, 'package.json'))) return;
    kept.add(name);
    const manifest = JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    for (const dep of Object.keys({
      ...manifest.dependencies,
      ...manifest.optionalDependencies,
    }))
      visit(dep);
  };
  for (const name of roots) visit(name);
  for (const entry of readdirSync(modules)) {
    if (entry === '.bin') {
      rmSync(join(modules, entry), { recursive: true, force: true });
      continue;
    }
    const names = entry.startsWith('@')
      ? readdirSync(join(modules, entry)).map((name) => `${entry}/${name}`)
      : [entry];
    for (const name of names) if (!kept.has(name)) rmSync(join(modules, name), { recursive: true });
    if (entry.startsWith('@') && readdirSync(join(modules, entry)).length === 0)
      rmSync(join(modules, entry), { recursive: true });
  }
  const unread = /(\.d\.[cm]?ts|\.[cm]?ts|\.map|\.md|\.markdown)$/i;
  const prune = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) prune(path);
      else if (unread.test(entry.name) && !/^licen[cs]e/i.test(entry.name)) rmSync(path);
    }
  };
  prune(modules);
}

/**
 * The native modules for the target: better-sqlite3 12 compiled for Node 20 (cached), and of the
 * prebuilt ones (better-sqlite3 13, serialport, usb, resvg) only the target's glibc builds.
 */
function nativeModulesFor(modules: string): void {
  const release = join(modules, 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
  if (!existsSync(release))
    throw new Error('node_modules/better-sqlite3 is not built: run npm ci on Node 20 to 24 first');
  // npm ci's own build serves when it is for the target's CPU and Node 20's ABI.
  if (!(arch === hostArch && process.versions.modules === abi20)) cpSync(betterSqlite12(), release);

  const napi = join(modules, 'better-sqlite3-napi', 'prebuilds');
  const keep = `linux-${cpu}.node`;
  if (!existsSync(join(napi, keep))) throw new Error(`better-sqlite3 13 has no ${keep}`);
  for (const file of readdirSync(napi)) if (file !== keep) rmSync(join(napi, file));

  const serial = join(modules, '@serialport', 'bindings-cpp', 'prebuilds');
  for (const dir of readdirSync(serial))
    if (dir !== `linux-${cpu}`) rmSync(join(serial, dir), { recursive: true });
  for (const file of readdirSync(join(serial, `linux-${cpu}`)))
    if (!file.endsWith('.glibc.node')) rmSync(join(serial, `linux-${cpu}`, file));

  // usb's driver and resvg's rasterizer are per-platform packages that npm installs for this
  // machine only: the target's is fetched when it is another.
  platformPackage(modules, 'usb', '@node-usb', `usb-linux-${cpu}-gnu`);
  platformPackage(modules, '@resvg/resvg-js', '@resvg', `resvg-js-linux-${cpu}-gnu`, ['resvg-js']);
}

/**
 * Keeps, of the packages in `scope` that `owner` lists as optional per-platform builds, only
 * `platform` (and the names in `keep`), fetching it from the registry when npm installed another.
 */
function platformPackage(
  modules: string,
  owner: string,
  scope: string,
  platform: string,
  keep: readonly string[] = [],
): void {
  const version = (
    JSON.parse(readFileSync(join(modules, owner, 'package.json'), 'utf8')) as {
      optionalDependencies: Record<string, string>;
    }
  ).optionalDependencies[`${scope}/${platform}`];
  if (!version) throw new Error(`${owner} has no ${scope}/${platform}`);
  const dir = join(modules, scope);
  for (const name of existsSync(dir) ? readdirSync(dir) : [])
    if (name !== platform && !keep.includes(name)) rmSync(join(dir, name), { recursive: true });
  if (existsSync(join(dir, platform))) return;
  const work = mkdtempSync(join(tmpdir(), 'printer-agent-platform-'));
  try {
    run('npm', ['pack', '--silent', `${scope}/${platform}@${version}`], work);
    run('tar', ['-xzf', readdirSync(work).find((f) => f.endsWith('.tgz'))!], work);
    mkdirSync(dir, { recursive: true });
    cpSync(join(work, 'package'), join(dir, platform), { recursive: true });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * better-sqlite3 12 compiled for the target's CPU and Node 20, from the sources npm ci installed,
 * with Debian's cross compiler where the target is another architecture; cached by version,
 * CPU and ABI (a build takes ~2 minutes here).
 */
function betterSqlite12(): string {
  const version = pkg.optionalDependencies['better-sqlite3']!;
  const cached = join(
    cacheDir(),
    'native',
    `better-sqlite3-${version}-linux-${cpu}-abi${abi20}.node`,
  );
  if (existsSync(cached)) return cached;
  const triplet = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' }[cpu];
  const cross = arch !== hostArch;
  const tool = (name: string) => (cross ? `${triplet}-${name}` : name);
  const compiler = tool('g++');
  try {
    run('sh', ['-c', `command -v ${compiler}`]);
  } catch {
    throw new Error(
      `${compiler} not found: install Debian's g++${cross ? `-${triplet}` : ''} to build better-sqlite3 for ${arch}`,
    );
  }
  const work = mkdtempSync(join(tmpdir(), 'printer-agent-sqlite-'));
  try {
    const source = join(work, 'better-sqlite3');
    cpSync(realpathSync(join(ROOT, 'node_modules', 'better-sqlite3')), source, {
      recursive: true,
    });
    rmSync(join(source, 'build'), { recursive: true, force: true });
    // npm tells its scripts where its own node-gyp is; outside npm, it sits beside npm.
    const nodeGyp =
      process.env.npm_config_node_gyp ||
      join(
        run('npm', ['root', '-g']).trim(),
        'npm',
        'node_modules',
        'node-gyp',
        'bin',
        'node-gyp.js',
      );
    console.error(`building better-sqlite3 ${version} for ${arch}, Node 20 (ABI ${abi20})...`);
    // The compiler's warnings stay quiet unless the build fails.
    const gyp = spawnSync(
      process.execPath,
      [nodeGyp, 'rebuild', '--release', `--arch=${cpu}`, `--nodedir=${node20}`, '--jobs=max'],
      {
        cwd: source,
        encoding: 'utf8',
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, CC: tool('gcc'), CXX: compiler, LINK: compiler, AR: tool('ar') },
      },
    );
    if (gyp.status !== 0)
      throw new Error(`node-gyp failed (${gyp.status ?? gyp.signal}):\n${gyp.stderr.slice(-4000)}`);
    mkdirSync(dirname(cached), { recursive: true });
    cpSync(join(source, 'build', 'Release', 'better_sqlite3.node'), `${cached}.partial`);
    renameSync(`${cached}.partial`, cached);
    return cached;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
