/**
 * src/clock-sync.ts: how the agent decides whether the system clock is known to be synchronized
 * (print-protocol v1.1 §4 freshness). The flag file and the command are injected, so every branch
 * runs on any machine, whatever its own NTP state.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ClockSync } from '../../src/host/clock-sync.js';
import { tempDir } from '../jobs/fixtures.js';

const missing = () => join(tempDir('clock'), 'no-such-flag');
const answer = (text: string): [string, ...string[]] => ['sh', '-c', `echo ${text}`];

describe('ClockSync', () => {
  it('config overrides: synchronized trusts without asking, unsynchronized never applies the rule', async () => {
    const trusted = new ClockSync({ mode: 'synchronized', command: ['false'] });
    assert.equal(trusted.current().synchronized, true);
    assert.equal((await trusted.refresh()).source, 'config');
    const off = new ClockSync({ mode: 'unsynchronized', command: answer('yes') });
    assert.equal(off.current().synchronized, false);
    assert.match((await off.refresh()).detail, /freshness\.clock: unsynchronized/);
  });

  it("detect: systemd-timesyncd's flag file means synchronized", async () => {
    const flag = join(tempDir('clock'), 'synchronized');
    writeFileSync(flag, '');
    const clock = new ClockSync({ flagFile: flag, command: ['false'] });
    const reading = await clock.refresh();
    assert.equal(reading.synchronized, true);
    assert.equal(reading.source, 'systemd-timesyncd');
  });

  it('detect: else the command (timedatectl NTPSynchronized) answers yes or no', async () => {
    const yes = await new ClockSync({ flagFile: missing(), command: answer('yes') }).refresh();
    assert.deepEqual([yes.synchronized, yes.source], [true, 'timedatectl']);
    const no = await new ClockSync({ flagFile: missing(), command: answer('no') }).refresh();
    assert.deepEqual([no.synchronized, no.source], [false, 'timedatectl']);
    assert.match(no.detail, /not synchronized/);
  });

  it('detect: no flag, and a command that fails, is missing, answers nonsense or hangs: not known synchronized', async () => {
    for (const command of [
      ['false'],
      ['/nonexistent/timedatectl'],
      answer('maybe'),
      ['sleep', '10'],
    ] as Array<[string, ...string[]]>) {
      const started = Date.now();
      const reading = await new ClockSync({
        flagFile: missing(),
        command,
        timeoutMs: 300,
      }).refresh();
      assert.equal(reading.synchronized, false, command.join(' '));
      assert.equal(reading.source, 'none');
      assert.ok(Date.now() - started < 5000, 'bounded by the timeout');
    }
  });

  it('current() answers at once from the cache and refreshes a stale reading in the background', async () => {
    let now = 1_000_000;
    const flag = join(tempDir('clock'), 'synchronized');
    const clock = new ClockSync({
      flagFile: flag,
      command: null,
      maxAgeMs: 60_000,
      now: () => now,
    });
    assert.equal(clock.current().synchronized, false, 'not read yet: not known synchronized');
    await clock.refresh();
    assert.equal(clock.current().synchronized, false);
    writeFileSync(flag, '');
    now += 30_000;
    assert.equal(clock.current().synchronized, false, 'still fresh: the cached reading');
    now += 31_000;
    assert.equal(clock.current().synchronized, false, 'stale: answered from the cache...');
    await clock.refresh(); // ...while the refresh it started runs (this joins it)
    assert.equal(clock.current().synchronized, true);
  });
});
