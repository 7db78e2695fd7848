/**
 * A process that writes a SQLite database in WAL mode and then waits to be killed (the layer test
 * of forgetfs.test.ts): `COMMITTED` rows with synchronous=FULL, then `UNSYNCED` rows with
 * synchronous=OFF; prints `ready` and sleeps with its connection open, as a process has at a cut.
 *
 *   sqlite-writer.child.ts DB_PATH COMMITTED UNSYNCED
 */
import Database from '../../src/host/sqlite.js';

const [path, committed, unsynced] = process.argv.slice(2);
const db = new Database(path!);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec('CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
const insert = db.prepare('INSERT INTO jobs (body) VALUES (?)');
for (let i = 0; i < Number(committed); i++) insert.run(`committed ${i} ${'x'.repeat(200)}`);
db.pragma('synchronous = OFF');
for (let i = 0; i < Number(unsynced); i++) insert.run(`unsynced ${i}`);
process.stdout.write('ready\n');
setInterval(() => {}, 60_000);
