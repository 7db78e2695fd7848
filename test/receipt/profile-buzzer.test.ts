/**
 * The buzzer in printer profiles (issue 18): `ESC B` or `ESC ( A`, 1 to 9 beeps of 50 to 1000 ms,
 * or null; a profile that gets it wrong is refused naming the field, like every profile error.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AgentError } from '../../src/errors.js';
import { loadProfiles, PROFILES_DIR, parseProfile } from '../../src/receipt/profile.js';

const base = JSON.parse(readFileSync(join(PROFILES_DIR, 'generic-80mm.json'), 'utf8')) as Record<
  string,
  unknown
>;

function refused(buzzer: unknown, field: RegExp): void {
  assert.throws(
    () => parseProfile({ ...base, buzzer }, 'test.json'),
    (e: unknown) =>
      e instanceof AgentError && e.code === 'PROFILE_INVALID' && field.test(e.message),
    JSON.stringify(buzzer),
  );
}

describe('profile buzzer', () => {
  it('is null when absent; count and duration default to 2 beeps of 200 ms', () => {
    assert.equal(parseProfile(base, 'test.json').buzzer, null);
    assert.deepEqual(
      parseProfile({ ...base, buzzer: { command: 'ESC ( A' } }, 'test.json').buzzer,
      {
        command: 'ESC ( A',
        count: 2,
        durationMs: 200,
      },
    );
  });

  it('refuses a count or a length out of range, or an unknown command, naming the field', () => {
    refused({ command: 'ESC B', count: 0 }, /^test\.json: buzzer\.count: /);
    refused({ command: 'ESC B', count: 10 }, /buzzer\.count: /);
    refused({ command: 'ESC B', count: 1.5 }, /buzzer\.count: /);
    refused({ command: 'BEL' }, /^test\.json: buzzer\.command: /);
    refused({ count: 2 }, /buzzer\.command: /);
    refused({ command: 'ESC B', durationMs: 20 }, /buzzer\.durationMs: /);
    refused({ command: 'ESC B', durationMs: 1001 }, /buzzer\.durationMs: /);
    refused('ESC B', /buzzer: /);
  });

  it('ships generic-80mm-buzzer: generic-80mm with two 200 ms beeps of ESC B; no other beeps', () => {
    const profiles = loadProfiles();
    const buzzer = profiles.get('generic-80mm-buzzer');
    assert.ok(buzzer);
    assert.deepEqual(buzzer.buzzer, { command: 'ESC B', count: 2, durationMs: 200 });
    const { id, name, buzzer: _, ...rest } = buzzer;
    const { id: _id, name: _name, buzzer: __, ...plain } = profiles.get('generic-80mm')!;
    assert.deepEqual(rest, plain, 'otherwise generic-80mm');
    assert.match(name, /buzzer/);
    assert.equal(id, 'generic-80mm-buzzer');
    for (const p of profiles.values())
      if (p.id !== 'generic-80mm-buzzer') assert.equal(p.buzzer, null, p.id);
  });
});
