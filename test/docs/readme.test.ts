/** The README's error-code table is the list integrators read (print-protocol §6): it must not drift. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ERROR_CODES } from '../../src/errors.js';
import { ROOT } from '../helpers/cli.js';

describe('README', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

  it('lists every error code of the catalogue in its table', () => {
    const missing = Object.keys(ERROR_CODES).filter(
      (code) => !new RegExp(`^\\|\\s*\`${code}\``, 'm').test(readme),
    );
    assert.deepEqual(missing, []);
  });

  it('shows the two setup commands and the test command CI runs', () => {
    assert.match(readme, /npm ci && npm test/);
    assert.match(readme, /npm ci && npm start/);
  });
});
