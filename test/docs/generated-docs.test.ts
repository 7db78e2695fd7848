/**
 * Documents `npm run docs` makes (packaging/docs.ts), never kept by hand (issue 44): each committed
 * file must equal what the generator makes now from its source, so a change to the error catalogue,
 * or a full `npm run bench` whose results.json was committed without `npm run docs`, fails here.
 * docs/config-reference.md has its own test (test/config/reference.test.ts).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { GOALS } from '../../bench/goals.js';
import {
  type BenchResults,
  benchResults,
  errorCodesPage,
  formatted,
  performancePage,
} from '../../packaging/docs.js';
import { ERROR_CODES } from '../../src/errors.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe('docs/error-codes.md', () => {
  const page = read('docs/error-codes.md');

  it('equals the page generated from the error catalogue (src/errors.ts)', () => {
    assert.equal(
      page,
      formatted(errorCodesPage(), 'docs/error-codes.md'),
      'stale: run npm run docs',
    );
  });

  it('lists every code of the catalogue, with whether retrying can help', () => {
    const wrong = Object.entries(ERROR_CODES)
      .filter(
        ([code, { retryable }]) =>
          !new RegExp(`^\\|\\s*\`${code}\`\\s*\\|\\s*${retryable ? 'yes' : 'no'}\\s*\\|`, 'm').test(
            page,
          ),
      )
      .map(([code]) => code);
    assert.deepEqual(wrong, []);
  });
});

describe('docs/performance.md', () => {
  const page = read('docs/performance.md');
  const run = benchResults();

  it('equals the page generated from bench/results.json', () => {
    assert.equal(
      page,
      formatted(performancePage(run), 'docs/performance.md'),
      'stale: run npm run docs (after a full npm run bench)',
    );
  });

  it('says the machine, the date and the method once, then every figure of the run', () => {
    for (const once of ['- Machine: ', '- Date: ', '## How the figures are measured'])
      assert.equal(page.split(once).length, 2, `${once} once`);
    assert.ok(page.includes(`Node ${run.node}`));
    assert.ok(page.includes(run.at.slice(0, 10)), 'the date of the run');
    for (const c of run.results) assert.ok(page.includes(`| ${c.group} `), c.group);
  });

  it('shows each goal of bench/goals.ts beside its figure, met or not, or as measured by none', () => {
    for (const goal of GOALS) {
      const row = page.split('\n').find((line) => line.includes(`| ${goal.says} (ratio at least`));
      if (row) assert.match(row, /\| (met|\*\*not met\*\*) +\|$/);
      else
        assert.ok(page.includes(`\n- ${goal.says} (`), `${goal.says}: a row, or listed unmeasured`);
    }
  });

  it('a goal missed, or measured by no figure, shows as not met', () => {
    const first = GOALS[0]!;
    const results = run.results
      .filter((c) => !GOALS[1]!.group.test(c.group))
      .map((c) => (first.group.test(c.group) ? { ...c, ratio: 0.01 } : c));
    const changed = performancePage({ ...run, results } satisfies BenchResults);
    assert.match(changed, /\*\*not met\*\*/);
    assert.ok(changed.includes(`Goals no figure of this run measured (not met):`));
    assert.ok(changed.includes(`- ${GOALS[1]!.says}`));
    assert.match(changed, new RegExp(`- Goals: \\d+ of ${GOALS.length} met`));
  });

  it('names the CPUs when the run recorded them', () => {
    const changed = performancePage({ ...run, cpus: 2, cpuModel: 'Test CPU @ 2.0GHz ' });
    assert.ok(changed.includes(`- Machine: ${run.platform}, 2 CPUs (Test CPU @ 2.0GHz), Node`));
  });
});
