/**
 * `npm run api:docs` (issue 19): writes the contract documents, generated from the schemas the
 * code validates with, formatted by biome so `biome check` stays clean on them:
 * - docs/api/openapi.json: the order API (OpenAPI 3.1), as the reference service serves it;
 * - docs/api/asyncapi.json: the print protocol (AsyncAPI 3.0).
 * test/docs/contract-documents.test.ts fails when the committed files differ from this output.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { orderServiceOpenApi } from '../src/order-service/openapi-route.js';
import { printProtocolDocument } from '../src/protocol/asyncapi.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The documents by their path in the repository. */
export function apiDocuments(): Record<string, Record<string, unknown>> {
  return {
    'docs/api/openapi.json': orderServiceOpenApi(),
    'docs/api/asyncapi.json': printProtocolDocument(),
  };
}

/** The file's text: the JSON formatted as biome formats `path`. */
export function formatted(document: unknown, path: string): string {
  const biome = join(ROOT, 'node_modules', '@biomejs', 'biome', 'bin', 'biome');
  const result = spawnSync(process.execPath, [biome, 'format', `--stdin-file-path=${path}`], {
    cwd: ROOT,
    input: `${JSON.stringify(document, null, 2)}\n`,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`biome format ${path}: ${result.stderr}`);
  return result.stdout;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const [path, document] of Object.entries(apiDocuments())) {
    writeFileSync(join(ROOT, path), formatted(document, path));
    console.log(`wrote ${path}`);
  }
}
