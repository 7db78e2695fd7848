/**
 * The README is for users (issue 44): what the agent is, the quick start, installing on a Pi,
 * configuring and operating it, and where to read more in docs/. It keeps the commands CI and
 * people run exactly as they are, and points to the generated error-code page (kept complete by
 * test/docs/generated-docs.test.ts).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers/cli.js';

describe('README', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

  it('shows the two setup commands and the test command CI runs', () => {
    assert.match(readme, /npm ci && npm test/);
    assert.match(readme, /npm ci && npm start/);
  });

  it('points to the error-code page generated from the catalogue', () => {
    assert.match(readme, /\]\(docs\/error-codes\.md\)/);
  });

  it('stays a README for users: about 300 lines, the rest in docs/', () => {
    const lines = readme.split('\n').length;
    assert.ok(lines <= 320, `${lines} lines: move the detail to a page of docs/`);
  });
});
