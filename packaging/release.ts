/**
 * `npm run release`: what a chain's IT serves its stores from (issue 43). Builds the Debian
 * package for each architecture (build-deb.ts, with its changelog from CHANGELOG.md), and lays
 * out a signed apt repository:
 *
 *   OUT/pool/main/p/printer-agent/printer-agent_<version>_<arch>.deb   (every version kept)
 *   OUT/dists/stable/main/binary-<arch>/Packages{,.gz}
 *   OUT/dists/stable/{Release,InRelease,Release.gpg}
 *   OUT/printer-agent-archive-keyring.gpg   (the public key, for `signed-by`)
 *   OUT/SHA256SUMS                          (of every package in the pool)
 *
 * Indexes are made with Debian's apt-ftparchive (apt-utils) and signed with gpg, so apt on the Pi
 * checks them as it checks Debian's own. A store then has, in
 * /etc/apt/sources.list.d/printer-agent.sources:
 *
 *   Types: deb
 *   URIs: https://apt.example.net/printer-agent
 *   Suites: stable
 *   Components: main
 *   Signed-By: /usr/share/keyrings/printer-agent-archive-keyring.gpg
 *
 * and `apt upgrade` carries it from one version to the next (packaging/upgrade-test.ts proves it).
 *
 * Options: `--out DIR` (default build/release; a pool already there keeps its older versions),
 * `--arch amd64,arm64` (the default; `--arch none` builds nothing), `--deb FILE` (repeatable: a
 * package built elsewhere, e.g. an earlier release, put in the pool), `--key ID` (the signing key
 * in gpg's keyring, `GNUPGHOME` to choose the keyring; required).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SUITE = 'stable';
const COMPONENT = 'main';

export interface ReleaseOptions {
  out: string;
  /** Architectures to build now; none: only the packages given. */
  arches: readonly string[];
  /** Packages built elsewhere, put in the pool as they are. */
  debs: readonly string[];
  /** The gpg key that signs the indexes (in GNUPGHOME's keyring). */
  key: string;
  env?: NodeJS.ProcessEnv;
}

const run = (
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
) =>
  execFileSync(command, args, {
    cwd: options.cwd ?? ROOT,
    env: options.env ?? process.env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
  });

/** Builds, pools, indexes and signs; returns the packages in the pool. */
export function release(options: ReleaseOptions): string[] {
  const pool = join(options.out, 'pool', COMPONENT, 'p', 'printer-agent');
  mkdirSync(pool, { recursive: true });
  for (const arch of options.arches)
    run('npx', ['tsx', join(ROOT, 'packaging', 'build-deb.ts'), '--arch', arch, '--out', pool]);
  for (const deb of options.debs) copyFileSync(deb, join(pool, basename(deb)));
  const debs = readdirSync(pool)
    .filter((f) => f.endsWith('.deb'))
    .sort();
  if (debs.length === 0) throw new Error('nothing to release: no package built or given');

  const arches = [...new Set(debs.map((f) => /_([a-z0-9]+)\.deb$/.exec(f)![1]!))].sort();
  for (const arch of arches) {
    const dir = join(options.out, 'dists', SUITE, COMPONENT, `binary-${arch}`);
    mkdirSync(dir, { recursive: true });
    // Paths in Packages are relative to the repository's root, as apt asks for them.
    const packages = run('apt-ftparchive', ['--arch', arch, 'packages', `pool/${COMPONENT}`], {
      cwd: options.out,
    });
    writeFileSync(join(dir, 'Packages'), packages);
    writeFileSync(join(dir, 'Packages.gz'), gzipSync(packages, { level: 9 }));
  }
  const dist = join(options.out, 'dists', SUITE);
  const releaseText = run(
    'apt-ftparchive',
    [
      '-o',
      `APT::FTPArchive::Release::Origin=printer-agent`,
      '-o',
      `APT::FTPArchive::Release::Label=printer-agent`,
      '-o',
      `APT::FTPArchive::Release::Suite=${SUITE}`,
      '-o',
      `APT::FTPArchive::Release::Codename=${SUITE}`,
      '-o',
      `APT::FTPArchive::Release::Architectures=${arches.join(' ')}`,
      '-o',
      `APT::FTPArchive::Release::Components=${COMPONENT}`,
      'release',
      '.',
    ],
    { cwd: dist },
  );
  writeFileSync(join(dist, 'Release'), releaseText);
  const gpg = (args: string[]) =>
    run(
      'gpg',
      [
        '--batch',
        '--yes',
        '--quiet',
        '--local-user',
        options.key,
        '--digest-algo',
        'SHA512',
        ...args,
      ],
      {
        env: options.env,
      },
    );
  gpg(['--clearsign', '--output', join(dist, 'InRelease'), join(dist, 'Release')]);
  gpg(['--detach-sign', '--armor', '--output', join(dist, 'Release.gpg'), join(dist, 'Release')]);
  // A binary keyring: what apt's `signed-by` reads (with gpgv or sqv alike).
  execFileSync(
    'gpg',
    [
      '--batch',
      '--yes',
      '--export',
      '--output',
      join(options.out, 'printer-agent-archive-keyring.gpg'),
      options.key,
    ],
    {
      env: options.env,
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  writeFileSync(
    join(options.out, 'SHA256SUMS'),
    debs
      .map(
        (f) =>
          `${createHash('sha256')
            .update(readFileSync(join(pool, f)))
            .digest('hex')}  pool/${COMPONENT}/p/printer-agent/${f}\n`,
      )
      .join(''),
  );
  return debs.map((f) => join(pool, f));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      out: { type: 'string', default: join(ROOT, 'build', 'release') },
      arch: { type: 'string', default: 'amd64,arm64' },
      deb: { type: 'string', multiple: true, default: [] },
      key: { type: 'string' },
    },
  });
  if (!values.key) {
    console.error(
      'usage: npm run release -- --key KEYID [--out DIR] [--arch amd64,arm64|none] [--deb FILE ...]\n' +
        '  --key: the gpg key that signs the repository (GNUPGHOME selects the keyring)',
    );
    process.exit(2);
  }
  for (const deb of values.deb)
    if (!existsSync(deb)) {
      console.error(`--deb ${deb}: no such file`);
      process.exit(2);
    }
  const debs = release({
    out: values.out,
    arches: values.arch === 'none' ? [] : values.arch.split(',').filter(Boolean),
    debs: values.deb,
    key: values.key,
  });
  for (const deb of debs) console.log(deb);
  console.log(
    `${values.out}: signed apt repository (suite ${SUITE}), SHA256SUMS, printer-agent-archive-keyring.gpg`,
  );
}
