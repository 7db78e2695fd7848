/**
 * The layer itself before anything runs on it (issue 39, item 1): forgetfs forgets exactly what a
 * power cut takes. Unsynced writes and size changes are gone after a cut and synced ones stay; a
 * new name lasts only once its directory (or, as on ext4, the new file itself) is fsync'd; a
 * rename or an unlink without a directory fsync is undone; a torn cut keeps a prefix of the last
 * page written; an armed cut kills its caller at the exact operation; and SQLite in WAL mode
 * (the `-shm` file mapped into memory) keeps what it committed with synchronous=FULL and loses
 * what it did not sync with synchronous=OFF.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { scriptEntry } from '../../harness/child-entry.js';
import Database from '../../src/host/sqlite.js';
import { ForgetFs, forgetfsSkip } from './forgetfs.js';

const HERE = dirname(fileURLToPath(import.meta.url));

/** Writes `text` to `path` (created or replaced), fsync'd when `sync`. */
function write(path: string, text: string, options: { sync?: boolean; flag?: string } = {}): void {
  const fd = openSync(path, options.flag ?? 'w');
  try {
    writeSync(fd, text);
    if (options.sync) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function fsyncDir(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

describe('forgetfs: a directory that forgets like a power cut', { skip: forgetfsSkip() }, () => {
  let fs: ForgetFs;
  before(async () => {
    fs = await ForgetFs.mount();
  });
  after(async () => {
    await fs?.destroy();
  });

  it('unsynced writes are gone after a cut, synced ones stay', () => {
    const file = fs.path('data');
    write(file, 'synced.', { sync: true });
    write(file, 'unsynced.', { flag: 'a' });
    assert.equal(readFileSync(file, 'utf8'), 'synced.unsynced.', 'the processes see every write');
    fs.cut();
    assert.equal(readFileSync(file, 'utf8'), 'synced.');
    assert.equal(readFileSync(join(fs.backing, 'data'), 'utf8'), 'synced.', 'on the card');
  });

  it('a size change waits for fsync like data', () => {
    const file = fs.path('sized');
    write(file, '0123456789', { sync: true });
    truncateSync(file, 4);
    assert.equal(statSync(file).size, 4);
    fs.cut();
    assert.equal(readFileSync(file, 'utf8'), '0123456789');
  });

  it('a new name lasts once the file itself is fsync’d (as on ext4) or its directory is', () => {
    write(fs.path('never-synced'), 'x');
    write(fs.path('file-synced'), 'y', { sync: true });
    fs.cut();
    assert.equal(existsSync(fs.path('never-synced')), false);
    assert.equal(readFileSync(fs.path('file-synced'), 'utf8'), 'y');
    write(fs.path('dir-synced'), 'data never synced');
    fsyncDir(fs.mountpoint);
    fs.cut();
    assert.equal(readFileSync(fs.path('dir-synced'), 'utf8'), '', 'its name lasts, its data not');
  });

  it('a rename without a directory fsync is undone; with one it stays', () => {
    const target = fs.path('config.json');
    write(target, 'old', { sync: true });
    fsyncDir(fs.mountpoint);
    write(fs.path('config.json.tmp'), 'new', { sync: true });
    renameSync(fs.path('config.json.tmp'), target);
    assert.equal(readFileSync(target, 'utf8'), 'new');
    fs.cut();
    assert.equal(readFileSync(target, 'utf8'), 'old', 'the replaced file is back');
    assert.equal(
      readFileSync(fs.path('config.json.tmp'), 'utf8'),
      'new',
      'and the new one under its old name',
    );

    renameSync(fs.path('config.json.tmp'), target);
    fsyncDir(fs.mountpoint);
    fs.cut();
    assert.equal(readFileSync(target, 'utf8'), 'new');
    assert.equal(existsSync(fs.path('config.json.tmp')), false);
  });

  it('an unlink without a directory fsync is undone', () => {
    write(fs.path('kept'), 'k', { sync: true });
    fsyncDir(fs.mountpoint);
    unlinkSync(fs.path('kept'));
    assert.equal(existsSync(fs.path('kept')), false);
    fs.cut();
    assert.equal(readFileSync(fs.path('kept'), 'utf8'), 'k');
  });

  it('a torn cut keeps a prefix of the last unsynced page: more than nothing, less than all', () => {
    const file = fs.path('torn');
    write(file, '', { sync: true });
    fs.seed(39);
    write(file, 'z'.repeat(4096), { flag: 'r+' });
    fs.cut({ torn: true });
    const kept = readFileSync(file, 'utf8');
    assert.ok(kept.length >= 1 && kept.length < 4096, `${kept.length} bytes kept`);
    assert.equal(kept, 'z'.repeat(kept.length));
    assert.equal(fs.stats().torn >= 1, true);
  });

  it('an armed cut kills the caller at that operation, before it is done', async () => {
    const file = fs.path('armed');
    write(file, '', { sync: true });
    fs.arm('write', '/armed', 3);
    // A process writing one line at a time, fsync'ing after each: the third write never happens.
    const child = spawn(process.execPath, [
      '-e',
      `const fs = require('fs'); const fd = fs.openSync(${JSON.stringify(file)}, 'a');
       for (let i = 1; i <= 5; i++) { fs.writeSync(fd, 'line ' + i + '\\n'); fs.fsyncSync(fd); }`,
    ]);
    const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, s) => resolve(s)),
    );
    assert.equal(signal, 'SIGKILL');
    assert.equal(fs.stats().fired, 1);
    assert.equal(readFileSync(file, 'utf8'), 'line 1\nline 2\n');
  });

  it('SQLite in WAL mode: what synchronous=FULL committed survives; synchronous=OFF loses it', async () => {
    const path = fs.path('jobs.db');
    // A writer that is killed with its connection open, then the power goes.
    const writer = spawn(
      process.execPath,
      [...scriptEntry(join(HERE, 'sqlite-writer.child.ts')), path, '50', '50'],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    await new Promise<void>((resolve, reject) => {
      writer.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
      writer.on('exit', (code) => reject(new Error(`the writer exited ${code}`)));
    });
    writer.kill('SIGKILL');
    await new Promise((resolve) => writer.once('exit', resolve));
    fs.cut({ torn: true });
    const db = new Database(path);
    try {
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
      const bodies = (db.prepare('SELECT body FROM jobs').all() as Array<{ body: string }>).map(
        (r) => r.body,
      );
      assert.equal(bodies.filter((b) => b.startsWith('committed')).length, 50);
      assert.equal(bodies.filter((b) => b.startsWith('unsynced')).length, 0, 'never synced: lost');
    } finally {
      db.close();
    }
  });
});
