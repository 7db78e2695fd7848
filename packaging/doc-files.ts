/**
 * The documents the Debian package installs side by side in /usr/share/doc/printer-agent/: the
 * README and every topic page of docs/. What a Pi shows (messages, the unit, the maintainer
 * scripts) names a page by that path, e.g. `/usr/share/doc/printer-agent/install.md "Upgrades"`,
 * so every page a reference may name must be there. packaging/build-deb.ts installs them,
 * packaging/verify-deb.ts checks a package holds them, and test/docs/installed-paths.test.ts checks
 * every such reference against the page's headings.
 */
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';

/** Where the package puts them, without the leading slash (a path in the package's tree). */
export const DOC_DIR = 'usr/share/doc/printer-agent';

/** Each document: its path in the repository and its path in the package. */
export function installedDocs(root: string): { from: string; to: string }[] {
  const pages = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...pages].map((from) => ({ from, to: `${DOC_DIR}/${basename(from)}` }));
}
