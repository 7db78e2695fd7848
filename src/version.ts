/** The package version, read from package.json whether running from `src/` or `dist/`. */
export { VERSION } from './package-root.js';
