import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The directory holding our package.json, found by walking up from this file, so that data files
 * (`config/printers/`, `package.json`) resolve the same under tsx (`src/`) and compiled (`dist/`).
 */
function findRoot(): { dir: string; version: string } {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'printer-agent') return { dir, version: pkg.version ?? '0.0.0-unknown' };
    } catch {
      // not here; look one level up
    }
    dir = dirname(dir);
  }
  return { dir: dirname(fileURLToPath(import.meta.url)), version: '0.0.0-unknown' };
}

const root = findRoot();
export const PACKAGE_ROOT = root.dir;
export const VERSION = root.version;
