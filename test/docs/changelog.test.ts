/**
 * CHANGELOG.md is the one record of what each version changed; the Debian package's changelog is
 * made from it (packaging/debian-changelog.ts). These fail when the newest entry is not the
 * package's version (the package build refuses it too) or when dpkg cannot read what we make.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { debianChangelog, parseChangelog } from '../../packaging/debian-changelog.js';
import { ROOT } from '../helpers/cli.js';

const markdown = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');
const version = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
).version;

describe('CHANGELOG.md and the Debian changelog', () => {
  it("the newest entry is package.json's version, every entry dated and not empty", () => {
    const versions = parseChangelog(markdown);
    assert.equal(versions[0]?.version, version);
    assert.ok(
      versions.some((v) => v.version === '0.1.0'),
      'the first release stays listed',
    );
    for (const v of versions) {
      assert.match(v.date, /^\d{4}-\d{2}-\d{2}$/);
      assert.ok(v.items.length > 0, `${v.version} lists nothing`);
      for (const item of v.items)
        assert.match(item, /^(Added|Changed|Deprecated|Removed|Fixed|Security): \S/);
    }
  });

  it('an item wrapped over lines is one item; Unreleased is not shipped', () => {
    const versions = parseChangelog(
      [
        '# Changelog',
        '## [Unreleased]',
        '### Added',
        '- not yet',
        '## [1.1.0] - 2027-01-02',
        '### Fixed',
        '- one thing that takes',
        '  two lines',
        '- another',
        '## [1.0.0] - 2026-12-31',
        '### Added',
        '- the first',
        '',
      ].join('\n'),
    );
    assert.deepEqual(versions, [
      {
        version: '1.1.0',
        date: '2027-01-02',
        items: ['Fixed: one thing that takes two lines', 'Fixed: another'],
      },
      { version: '1.0.0', date: '2026-12-31', items: ['Added: the first'] },
    ]);
  });

  it("dpkg-parsechangelog reads the package's changelog: its version, date and every entry", (t) => {
    if (spawnSync('dpkg-parsechangelog', ['--help']).error)
      return t.skip('needs dpkg-parsechangelog (Debian package dpkg-dev)');
    const versions = parseChangelog(markdown);
    const file = join(mkdtempSync(join(tmpdir(), 'pa-changelog-')), 'changelog');
    writeFileSync(file, debianChangelog(versions, 'printer-agent team <printer-agent@localhost>'));
    const parsed = spawnSync('dpkg-parsechangelog', ['-l', file, '--all'], { encoding: 'utf8' });
    assert.equal(parsed.status, 0, parsed.stderr);
    assert.match(parsed.stdout, new RegExp(`^Version: ${version.replaceAll('.', '\\.')}$`, 'm'));
    assert.match(parsed.stdout, /^Distribution: stable$/m);
    // Every version's entry is there, and each item of the newest one.
    for (const v of versions)
      assert.match(parsed.stdout, new RegExp(`printer-agent \\(${v.version}\\)`));
    const newest = spawnSync('dpkg-parsechangelog', ['-l', file, '-S', 'Timestamp'], {
      encoding: 'utf8',
    });
    assert.equal(
      new Date(Number(newest.stdout.trim()) * 1000).toISOString().slice(0, 10),
      versions[0]!.date,
    );
    const changes = parsed.stdout.replace(/\s+/g, ' ');
    for (const item of versions[0]!.items)
      assert.ok(changes.includes(item.slice(0, 40).replace(/\s+/g, ' ')), item);
  });
});
