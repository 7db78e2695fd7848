/**
 * The package of an earlier release, built from the commit it was released from
 * (packaging/releases.json), for the upgrade test: what a store has installed today. Built once
 * per version and architecture in a git worktree (`npm ci`, then that commit's own build-deb.ts)
 * and cached beside the other package-test downloads (`PRINTER_AGENT_CACHE`, node-dist.ts).
 * Needs the repository's history (a clone, not a shallow copy).
 *
 * As a command: `tsx packaging/old-release.ts VERSION [ARCH]` prints the package's path.
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDir } from './node-dist.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export const RELEASES = JSON.parse(
  readFileSync(join(ROOT, 'packaging', 'releases.json'), 'utf8'),
) as Record<string, { commit: string; date: string }>;

export function oldRelease(version: string, arch: string): string {
  const release = RELEASES[version];
  if (!release) throw new Error(`packaging/releases.json has no release ${version}`);
  const dir = join(cacheDir(), 'releases');
  const deb = join(dir, `printer-agent_${version}_${arch}.deb`);
  if (existsSync(deb)) return deb;
  const run = (command: string, args: string[], cwd: string) =>
    execFileSync(command, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  try {
    run('git', ['cat-file', '-e', `${release.commit}^{commit}`], ROOT);
  } catch {
    throw new Error(
      `release ${version}'s commit ${release.commit} is not in this repository: a full clone is needed (git fetch --unshallow)`,
    );
  }
  const work = mkdtempSync(join(tmpdir(), `printer-agent-${version}-`));
  try {
    console.error(
      `old-release: building printer-agent ${version} (${arch}) from ${release.commit.slice(0, 12)}...`,
    );
    run('git', ['worktree', 'add', '--detach', work, release.commit], ROOT);
    run('npm', ['ci', '--no-audit', '--no-fund'], work);
    const out = join(work, 'build');
    run('npx', ['tsx', 'packaging/build-deb.ts', '--arch', arch, '--out', out], work);
    const built = readdirSync(out).find((f) => f === `printer-agent_${version}_${arch}.deb`);
    if (!built) throw new Error(`${release.commit} built no printer-agent_${version}_${arch}.deb`);
    mkdirSync(dir, { recursive: true });
    // Copied under a temporary name, then renamed: an interrupted build leaves no half package.
    copyFileSync(join(out, built), `${deb}.partial`);
    renameSync(`${deb}.partial`, deb);
    return deb;
  } finally {
    run('git', ['worktree', 'remove', '--force', work], ROOT);
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [version, arch] = process.argv.slice(2);
  if (!version) {
    console.error('usage: tsx packaging/old-release.ts VERSION [ARCH]');
    process.exit(2);
  }
  const hostArch = execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
  console.log(oldRelease(version, arch ?? hostArch));
}
