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
import type { BuildOptions, Plugin } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Packages with native code (or that load it by path): required from node_modules at run time. */
export const NATIVE_PACKAGES = [
  'better-sqlite3',
  'better-sqlite3-napi',
  'usb',
  'serialport',
  '@serialport/*',
  '@resvg/resvg-js',
] as const;

/**
 * Packages the bundle's code requires by name at run time although esbuild bundled their users:
 * fastify's validators, compiled by ajv, `require("ajv/dist/runtime/...")` from generated code.
 * The Debian package keeps these beside the native ones (build-deb.ts).
 */
export const RUNTIME_REQUIRED = ['ajv', 'ajv-formats'] as const;

/**
 * zod's namespaces export every one of its 64 locales (`z.locales`): 40% of zod's bundled code,
 * which every process parses at start, and esbuild cannot drop what a namespace object exports.
 * Our messages are zod's English (zod itself sets it from `locales/en.js`), so its locales index
 * becomes one that exports `en` alone. If a zod release moves the index, the build fails here
 * instead of quietly keeping them all.
 */
const zodEnglishOnly: Plugin = {
  name: 'zod-english-only',
  setup(build) {
    let zod = false;
    let replaced = false;
    build.onStart(() => {
      zod = false;
      replaced = false;
    });
    build.onResolve({ filter: /^zod($|\/)/ }, () => {
      zod = true;
      return undefined;
    });
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => {
      if (!/[\\/]node_modules[\\/]zod[\\/]v4[\\/](classic|core|mini)[\\/]/.test(args.importer))
        return undefined;
      replaced = true;
      return {
        path: join(dirname(args.importer), '..', 'locales', 'index.js'),
        namespace: 'zod-en',
      };
    });
    build.onLoad({ filter: /.*/, namespace: 'zod-en' }, (args) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
    build.onEnd((result) => {
      if (zod && !replaced && result.errors.length === 0)
        throw new Error("zod-english-only: zod's locales index was not found where zod 4.6 had it");
    });
  },
};

/**
 * esbuild's options for a bundle into `outDir`: the command line by default, or other entry
 * points built the same way (the tests' child processes, harness/child-entry.ts, run a
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
    plugins: [zodEnglishOnly],
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
// it (through harness/child-entry.ts), its import.meta.url is that bundle's, the entry file.
const self = fileURLToPath(import.meta.url);
if (process.argv[1] === self && basename(self) === 'bundle.ts')
  await bundle(undefined, { readable: process.argv.includes('--readable') });
