/**
 * Test tools written in C (the usbfs supervisor, forgetfs): compiled with the machine's C compiler
 * once per content of their sources, into node_modules/.cache/printer-agent-NAME-HASH/. A build
 * goes to a temporary directory renamed into place, so parallel test files never run half of one.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli.js';

export function compiler(): string {
  return process.env.CC || 'cc';
}

/** Why no C tool can be built here, or false. */
export function compilerSkip(): string | false {
  return spawnSync(compiler(), ['--version'], { stdio: 'ignore' }).error
    ? 'needs a C compiler: install gcc (Debian package gcc)'
    : false;
}

export interface CToolBuild {
  /** Names the cache directory. */
  name: string;
  /** Source files whose content names the build (every file the outputs read). */
  sources: string[];
  /** Each output file name and the compiler arguments that make it (`{out}` is its path). */
  outputs: Record<string, string[]>;
}

const built = new Map<string, Record<string, string>>();

/** The outputs' paths, compiled first if this content was never built. */
export function buildCTool(build: CToolBuild): Record<string, string> {
  const known = built.get(build.name);
  if (known) return known;
  const hash = createHash('sha256');
  for (const file of build.sources) hash.update(readFileSync(file));
  hash.update(compiler());
  hash.update(JSON.stringify(build.outputs));
  const dir = join(
    ROOT,
    'node_modules',
    '.cache',
    `printer-agent-${build.name}-${hash.digest('hex').slice(0, 16)}`,
  );
  const paths = Object.fromEntries(Object.keys(build.outputs).map((out) => [out, join(dir, out)]));
  if (!existsSync(dir)) {
    mkdirSync(join(ROOT, 'node_modules', '.cache'), { recursive: true });
    const temp = `${dir}.tmp-${process.pid}`;
    rmSync(temp, { recursive: true, force: true });
    mkdirSync(temp);
    try {
      for (const [out, args] of Object.entries(build.outputs)) {
        const argv = args.map((a) => (a === '{out}' ? join(temp, out) : a));
        execFileSync(compiler(), argv, { stdio: ['ignore', 'ignore', 'pipe'] });
      }
      renameSync(temp, dir);
    } catch (error) {
      rmSync(temp, { recursive: true, force: true });
      // Another process built the same content first: use it.
      if (!existsSync(dir)) throw error;
    }
  }
  built.set(build.name, paths);
  return paths;
}
