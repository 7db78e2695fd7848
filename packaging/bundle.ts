/**
 * `npm run build`: the production build, `dist/cli.js` and the chunks it loads, bundled with
 * esbuild from `src/cli.ts` (issue 16, decision 156). Node's ESM loader resolves, reads and links
 * every file on its own: the `run` command spread over ~400 files of ours and of mqtt.js, zod and
 * pino started in 0.35-0.43 s and 80 MB here; bundled, the same code loads in 0.26-0.30 s and 66 MB.
 * Each command group stays its own chunk (`splitting`), so `run` still loads neither the order
 * service nor the demo. Native drivers stay outside, loaded from `node_modules` at run time:
 * they are per-CPU and per-Node binaries (src/host/sqlite.ts chooses one).
 * Types are not checked here: `npm run typecheck` does that (CI runs it before the build).
 * `npm run build -- --readable` keeps the whitespace and the source file names as comments, to
 * read a CPU profile of the compiled agent line by line.
 */
import { rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Packages with native code (or that load it by path): required from node_modules at run time. */
const NATIVE_PACKAGES = [
  'better-sqlite3',
  'better-sqlite3-napi',
  'usb',
  'serialport',
  '@serialport/*',
  '@resvg/resvg-js',
] as const;

/**
 * esbuild's options for a bundle into `outDir`: the command line by default, or other entry
 * points built the same way (the tests' child processes, test/helpers/child-entry.ts, run a
 * bundle of the current sources made with these options, so they run what `npm run build` ships).
 */
export function bundleOptions(
  outDir: string,
  options: { readable?: boolean; entryPoints?: Record<string, string> } = {},
): BuildOptions {
  return {
    entryPoints: options.entryPoints ?? { cli: join(ROOT, 'src', 'cli.ts') },
    outdir: outDir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: [...NATIVE_PACKAGES],
    chunkNames: 'chunks/[name]-[hash]',
    // CommonJS dependencies (pino, mqtt.js's) call require() for Node's modules; an ES module has
    // none, so each output file gets one. The name is esbuild's own, never one of ours.
    banner: {
      js: "import { createRequire as __bundleCreateRequire } from 'node:module'; const require = __bundleCreateRequire(import.meta.url);",
    },
    // Readable stack traces in the journal: names and lines stay, only whitespace goes.
    minifyWhitespace: options.readable !== true,
    legalComments: 'none',
    logLevel: 'warning',
  };
}

/** Bundles the command line into `outDir` (emptied first: no stale file survives a rebuild). */
export async function bundle(
  outDir: string = join(ROOT, 'dist'),
  options: { readable?: boolean } = {},
): Promise<void> {
  rmSync(outDir, { recursive: true, force: true });
  // Loaded here, not with this module: the test helpers import bundleOptions in every test
  // process, most of which never build.
  const { build } = await import('esbuild');
  await build(bundleOptions(outDir, options));
}

// Run as a script (`npm run build`) only as this file itself: bundled into a script that imports
// it (through test/helpers/child-entry.ts), its import.meta.url is that bundle's, the entry file.
const self = fileURLToPath(import.meta.url);
if (process.argv[1] === self && basename(self) === 'bundle.ts')
  await bundle(undefined, { readable: process.argv.includes('--readable') });
