/**
 * Golden receipts: each fixture order rendered as the text twin on 58 mm and 80 mm profiles and
 * compared with a reviewed file in test/fixtures/receipts/. After a deliberate layout change run
 * `UPDATE_GOLDEN=1 npm test`, then read every changed file before committing it.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { getProfile } from '../../src/receipt/profile.js';
import { renderReceipt } from '../../src/receipt/render.js';
import { GOLDEN_CASES, GOLDEN_DIR, loadFixture, STORE_OPTIONS } from '../helpers/receipts.js';

const update = process.env.UPDATE_GOLDEN === '1';

describe('golden receipts', () => {
  it('covers at least 12 fixture orders on both paper widths', () => {
    const fixtures = new Set(
      GOLDEN_CASES.filter(
        (c) => c.profiles.includes('generic-58mm') && c.profiles.includes('generic-80mm'),
      ).map((c) => c.fixture),
    );
    assert.ok(fixtures.size >= 12, `only ${fixtures.size} fixtures on both widths`);
  });

  for (const c of GOLDEN_CASES) {
    for (const profileId of c.profiles) {
      it(`${c.name} on ${profileId}`, () => {
        const rendered = renderReceipt({
          source: loadFixture(c.fixture),
          profile: getProfile(profileId),
          options: c.options ?? STORE_OPTIONS,
          markings: c.markings,
        });
        const file = join(GOLDEN_DIR, `${c.name}.${profileId}.txt`);
        if (update || !existsSync(file)) {
          writeFileSync(file, rendered.text);
          if (!update)
            assert.fail(`${file} was missing and has been written: review it, then run again`);
          return;
        }
        assert.equal(rendered.text, readFileSync(file, 'utf8'));
      });
    }
  }
});
