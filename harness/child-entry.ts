/**
 * What a test's child process runs. Starting `node --import tsx src/cli.ts` costs about 2 s of
 * CPU (tsx resolves and transpiles every module) against about 0.6 s for the bundle, and the suite
 * starts some eighty such children on a 2-core machine: `cliEntry()` gives the argv of a child
 * `printer-agent` that runs a bundle of the CURRENT sources instead, built with the production
 * build's own options (packaging/bundle.ts), so the children run what `npm run build` ships.
 *
 * One bundle per content: its directory is named by a hash of everything that can change it (every
 * file under src/, the script's own directory for a test script, the package and lock files, the
 * tsconfigs, the bundler and this file), so an edited source gets a new bundle and a stale one can
 * never be used; after each build, esbuild's list of the files it read is checked against what was
 * hashed. The first test process that needs a bundle builds it (the others wait on its lock), into
 * a temporary directory renamed into place when complete: parallel test files never see half a
 * bundle, and a builder killed midway leaves nothing they would use.
 *
 * Where: `node_modules/.cache/printer-agent-test-NAME-HASH/`, four levels below the repository, so
 * that src/package-root.ts, walking up from a chunk, still finds our package.json (profiles in
 * config/printers/, the version) and Node finds the native drivers in node_modules. A package.json
 * of its own says `"type": "module"`: Node's lookup of a package scope stops at node_modules.
 *
 * `SOURCE_CLI` is the entry a person runs from a checkout (`tsx src/cli.ts`, `npm start`), for the
 * tests that prove that entry works. `TEST_CHILD_ENTRY=source` in the test's environment makes
 * every child run the sources through tsx again: to compare, or to run the tests whose own
 * modules load while an unrelated source file does not compile (one such file fails the bundle).
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Esbuild from 'esbuild';
import { bundleOptions } from '../packaging/bundle.js';

/** The repository's root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = join(ROOT, 'node_modules', '.cache');
const PREFIX = 'printer-agent-test-';

/** `printer-agent` from the sources through tsx: the entry of a checkout (`npm start`). */
export const SOURCE_CLI: readonly string[] = ['--import', 'tsx', join(ROOT, 'src', 'cli.ts')];

/** Files outside src/ that change what a bundle holds or how it is built. */
const BUILD_FILES = [
  'package.json',
  'package-lock.json',
  // What npm installed (the lock says what it should install).
  'node_modules/.package-lock.json',
  'tsconfig.json',
  'packaging/bundle.ts',
  'harness/child-entry.ts',
];

/** How long a build may hold the lock before waiters stop trusting it. */
const LOCK_STALE_MS = 120_000;
/** How long a waiter waits for another process's build (a busy 2-core machine). */
const WAIT_MS = 240_000;
/**
 * Bundles nobody used for this long are removed: each state of the sources a test run saw left
 * one (5 MB), and a morning of edits with tests in between leaves dozens. A run touches its own.
 */
const PRUNE_AFTER_MS = 2 * 3600_000;

/** Per entry, this process's answer: every child of a test file runs the same bundle. */
const resolved = new Map<string, { path: string } | { error: Error }>();

/** argv (before the command's own arguments) of a child `printer-agent` on the current sources. */
export function cliEntry(): string[] {
  if (fromSource()) return [...SOURCE_CLI];
  return [bundled(join(ROOT, 'src', 'cli.ts'))];
}

/**
 * argv of a child running the test script `script` (a .ts file), bundled like the CLI. The
 * script may import src/ and files of its own directory; anything else fails the build, naming it.
 */
export function scriptEntry(script: string): string[] {
  if (fromSource()) return ['--import', 'tsx', resolve(script)];
  return [bundled(resolve(script), [dirname(resolve(script))])];
}

function fromSource(): boolean {
  const choice = process.env.TEST_CHILD_ENTRY;
  if (choice === undefined || choice === '' || choice === 'bundle') return false;
  if (choice === 'source') return true;
  throw new Error(`TEST_CHILD_ENTRY must be bundle or source, not ${JSON.stringify(choice)}`);
}

/** The bundle of `entry` for the current sources: its path, built first if nobody has. */
function bundled(entry: string, extraDirs: string[] = []): string {
  let known = resolved.get(entry);
  if (!known) {
    try {
      known = { path: bundleOf(entry, extraDirs) };
    } catch (error) {
      // A failed build fails the same way for every later child of this process: no rebuilds.
      known = { error: error as Error };
    }
    resolved.set(entry, known);
  }
  if ('error' in known) throw known.error;
  return known.path;
}

/** Thrown when a hashed file changed while esbuild read the files: its bundle is of neither. */
class SourcesChanged extends Error {}

function bundleOf(entry: string, extraDirs: string[]): string {
  const name = basename(entry, extname(entry));
  for (let attempt = 1; ; attempt++) {
    const { digest, files } = contentHash(entry, extraDirs);
    const dir = join(CACHE, `${PREFIX}${name}-${digest}`);
    try {
      if (!existsSync(dir))
        buildOnce(entry, name, dir, new Set(files), () => contentHash(entry, extraDirs).digest);
    } catch (error) {
      // Someone is editing the sources: take them again once they hold still.
      if (error instanceof SourcesChanged && attempt < 5) continue;
      throw error;
    }
    // Marks it used, so that pruning by another run leaves it alone.
    try {
      const now = new Date(fileClockNow());
      utimesSync(dir, now, now);
    } catch {
      // Another user's cache: pruning is best effort, running is what matters.
    }
    return join(dir, `${name}.js`);
  }
}

/** The hash naming the bundle: every file that can change it, by path and content. */
function contentHash(entry: string, extraDirs: string[]): { digest: string; files: string[] } {
  const files = hashedFiles(entry, extraDirs);
  const hash = createHash('sha256');
  hash.update(`${relative(ROOT, entry)}\0`);
  for (const file of files) {
    hash.update(`${relative(ROOT, file)}\0`);
    hash.update(contentOf(file));
    hash.update('\0');
  }
  return { digest: hash.digest('hex').slice(0, 20), files };
}

/** A file's bytes, or a mark for one that is not there (an optional file, one just deleted). */
function contentOf(file: string): Buffer | string {
  try {
    return readFileSync(file);
  } catch {
    return '<none>';
  }
}

function hashedFiles(entry: string, extraDirs: string[]): string[] {
  const files = new Set<string>([
    ...listFiles(join(ROOT, 'src'), true),
    ...BUILD_FILES.map((file) => join(ROOT, file)),
    entry,
  ]);
  for (const dir of extraDirs) for (const file of listFiles(dir, false)) files.add(file);
  return [...files].sort();
}

function listFiles(dir: string, recursive: boolean): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (recursive) files.push(...listFiles(path, true));
    } else if (entry.isFile()) files.push(path);
  }
  return files;
}

/**
 * Builds `dir` unless another process is doing it: the lock file (created exclusively) names the
 * builder; the others wait for `dir` to appear. A builder that died, or holds the lock too long,
 * is taken over (the rename keeps two builders from mixing their files).
 */
function buildOnce(
  entry: string,
  name: string,
  dir: string,
  hashed: Set<string>,
  digestNow: () => string,
): void {
  mkdirSync(CACHE, { recursive: true });
  const lock = `${dir}.lock`;
  const failure = `${dir}.failed`;
  const started = fileClockNow();
  for (;;) {
    if (existsSync(dir)) return;
    // The same files fail the same way: a build that failed while we waited is our answer too
    // (its builder wrote this before it let go of the lock).
    const failed = mtimeMs(failure);
    if (failed !== null && failed >= started) throw new Error(readFileSync(failure, 'utf8'));
    const fd = tryLock(lock);
    if (fd !== null) {
      try {
        // Another process may have finished between our check and our lock.
        if (!existsSync(dir)) build(entry, name, dir, hashed, failure, digestNow);
      } finally {
        closeSync(fd);
        rmSync(lock, { force: true });
      }
      prune();
      return;
    }
    if (fileClockNow() - started > WAIT_MS)
      throw new Error(`child-entry: no bundle at ${dir} after ${WAIT_MS} ms (lock ${lock})`);
    if (lockAbandoned(lock)) rmSync(lock, { force: true });
    // Synchronous, like the spawns that need the bundle: a short block, then look again.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  }
}

function tryLock(lock: string): number | null {
  try {
    const fd = openSync(lock, 'wx');
    writeSync(fd, String(process.pid));
    return fd;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw error;
  }
}

function lockAbandoned(lock: string): boolean {
  const since = mtimeMs(lock);
  if (since === null) return false;
  if (fileClockNow() - since > LOCK_STALE_MS) return true;
  let pid: number;
  try {
    pid = Number(readFileSync(lock, 'utf8'));
  } catch {
    return false;
  }
  // Written right after the create: an empty file is a builder just starting.
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function build(
  entry: string,
  name: string,
  dir: string,
  hashed: Set<string>,
  failure: string,
  digestNow: () => string,
) {
  rmSync(failure, { force: true });
  const temp = `${dir}.tmp-${process.pid}`;
  rmSync(temp, { recursive: true, force: true });
  try {
    // Required here, synchronously like the spawns waiting for it: most test processes that load
    // this file never build, and loading esbuild costs each of them tens of milliseconds.
    const { buildSync } = createRequire(import.meta.url)('esbuild') as typeof Esbuild;
    // Without the build's plugins: esbuild runs none in a synchronous build. Its one plugin
    // leaves zod's other locales out (decision 210), which changes nothing a test can see; the
    // production build itself, plugin and all, is tested by test/cli/cli.test.ts.
    const { plugins: _async, ...options } = bundleOptions(temp, {
      readable: true,
      entryPoints: { [name]: entry },
    });
    const result = buildSync({ ...options, absWorkingDir: ROOT, metafile: true });
    // Every file the bundle holds must be one the hash covered, or an edit of it would go unseen.
    const unhashed = Object.keys(result.metafile?.inputs ?? {})
      .filter((input) => !input.startsWith('node_modules/'))
      .filter((input) => !hashed.has(resolve(ROOT, input)));
    if (unhashed.length > 0)
      throw new Error(
        `child-entry: ${relative(ROOT, entry)} imports ${unhashed.join(', ')}, which the bundle's hash does not cover: add them to the hashed files in harness/child-entry.ts`,
      );
    // The files esbuild read must be the ones hashed, or this bundle would sit under a name that
    // is not its own (and be used when the files come back to that content).
    if (!dir.endsWith(`-${digestNow()}`))
      throw new SourcesChanged('sources changed while bundling');
    writeFileSync(join(temp, 'package.json'), '{ "type": "module" }\n');
    try {
      renameSync(temp, dir);
    } catch (error) {
      // A builder that took over a lock we held too long finished first: same files, same bundle.
      if (!existsSync(dir)) throw error;
      rmSync(temp, { recursive: true, force: true });
    }
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    if (error instanceof SourcesChanged) throw error;
    const message = `child-entry: bundling ${relative(ROOT, entry)} failed: ${(error as Error).message}`;
    writeFileSync(failure, message);
    throw new Error(message, { cause: error });
  }
}

/**
 * Now, on the clock that stamps the files compared with it: the kernel's. A process's own clock
 * may be moved (CI runs the suite again under libfaketime, issue 37, which moves `Date.now()` but
 * not the mtimes the kernel writes): compared with it, every bundle looked long unused and was
 * pruned under the children about to run it.
 */
export function fileClockNow(): number {
  const probe = join(CACHE, `printer-agent-clock-${process.pid}`);
  writeFileSync(probe, '');
  try {
    return statSync(probe).mtimeMs;
  } finally {
    rmSync(probe, { force: true });
  }
}

function mtimeMs(path: string): number | null {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

/** Removes bundles, and what killed builders left (locks, half-built copies), long unused. */
function prune(): void {
  const now = fileClockNow();
  for (const entry of readdirSync(CACHE)) {
    if (!entry.startsWith(PREFIX)) continue;
    const path = join(CACHE, entry);
    const used = mtimeMs(path);
    if (used !== null && now - used > PRUNE_AFTER_MS)
      rmSync(path, { recursive: true, force: true });
  }
}
