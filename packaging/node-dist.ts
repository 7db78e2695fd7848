/**
 * Official Node.js builds from the npm registry (`node-linux-<cpu>@<major>`: the binary under
 * `bin/`, its headers under `include/`), fetched once and kept outside the repository. The package
 * build compiles better-sqlite3 12 against Node 20's headers for the target architecture; CI and
 * the install tests run the agent on Node 22, 24 and 26 (and, for arm64, on all four under qemu).
 * Nothing else is downloaded: the npm registry is what a closed build network reaches.
 *
 * Cache: `PRINTER_AGENT_CACHE` (default /var/cache/printer-agent as root, else
 * ~/.cache/printer-agent), `nodes/<cpu>-<major>/`.
 * As a command: `tsx packaging/node-dist.ts CPU MAJOR` prints the dist's directory.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where fetched Nodes and native builds are kept. As root: /var/cache, not /root, whose mode
 * would keep tests that run a Node as another account (`nobody`) from executing it.
 */
export const cacheDir = () =>
  process.env.PRINTER_AGENT_CACHE ||
  (process.getuid?.() === 0
    ? '/var/cache/printer-agent'
    : join(homedir(), '.cache', 'printer-agent'));

/** Node's CPU names for Debian's architectures; the ones the package is built for. */
export const NODE_CPU = { amd64: 'x64', arm64: 'arm64' } as const;

/** The unpacked `node-linux-<cpu>@<major>` (newest of that major), fetched when missing. */
export function nodeDist(cpu: string, major: number): string {
  const dir = join(cacheDir(), 'nodes', `${cpu}-${major}`);
  if (existsSync(join(dir, 'bin', 'node'))) return dir;
  const work = `${dir}.partial`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  execFileSync('npm', ['pack', '--silent', `node-linux-${cpu}@${major}`], {
    cwd: work,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const tarball = readdirSync(work).find((file) => file.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack node-linux-${cpu}@${major} gave no tarball`);
  execFileSync('tar', ['-xzf', tarball], { cwd: work });
  // Renamed into place last: an interrupted fetch leaves no half dist behind.
  rmSync(dir, { recursive: true, force: true });
  renameSync(join(work, 'package'), dir);
  rmSync(work, { recursive: true, force: true });
  return dir;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [cpu, major] = process.argv.slice(2);
  if (!cpu || !/^\d+$/.test(major ?? '')) {
    console.error('usage: tsx packaging/node-dist.ts CPU MAJOR   (e.g. x64 24, arm64 20)');
    process.exit(2);
  }
  console.log(nodeDist(cpu, Number(major)));
}
