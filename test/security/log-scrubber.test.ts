/**
 * Issue 13, item 9: the log scrubber skipped secrets shorter than 4 characters, and the spec's own
 * sample store key is `K1`. A real pino logger from `createLogger` writes to a stream; every line
 * is read back: no form of a secret is left, and every line is still one JSON object a log reader
 * can parse, with pino's `level` and `time` intact.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { createLogger, type LogLevel } from '../../src/logging.js';

/** A logger writing into `lines` (one entry per log line). */
function capture(secrets: string[], level: LogLevel = 'debug') {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const log = createLogger({ level, secrets, destination });
  return { log, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('log scrubber', () => {
  it('scrubs the 2-character store key K1 wherever a line would carry it', () => {
    const { log, lines, records } = capture(['K1']);
    log.info('store key K1 in the message');
    log.info({ storeKey: 'K1', nested: { list: ['a', 'xK1y'] } }, 'a field');
    log.info({ K1: 'as a field name' }, 'a key');
    log.child({ room: 'mqtt', who: 'K1' }).info('child binding');
    log.info('interpolated %s and %j', 'K1', { k: 'K1' });
    log.warn({ err: new Error('refused for K1') }, 'an error');
    log.info(`quoted body ${JSON.stringify({ storeKey: 'K1' })}`);
    log.info({ url: `https://h/x?k=${encodeURIComponent('K1')}` }, 'url');
    assert.equal(lines.length, 8);
    for (const line of lines) assert.ok(!line.includes('K1'), `K1 left in ${line}`);
    const all = records();
    assert.equal(all[0]!.msg, 'store key *** in the message');
    assert.deepEqual(all[1]!.storeKey, '***');
    assert.deepEqual(all[1]!.nested, { list: ['a', 'x***y'] });
    assert.equal(all[2]!['***'], 'as a field name');
    assert.equal(all[3]!.who, '***');
    assert.equal(all[3]!.room, 'mqtt', 'other bindings kept');
    assert.equal(all[4]!.msg, 'interpolated *** and {"k":"***"}');
    assert.equal((all[5]!.err as { message: string }).message, 'refused for ***');
    assert.equal(all[6]!.msg, 'quoted body {"storeKey":"***"}');
    for (const r of all) {
      assert.equal(typeof r.level, 'number');
      assert.equal(typeof r.time, 'string');
      assert.equal(r.service, 'printer-agent');
    }
  });

  it('a secret that is also JSON syntax or a number does not break the line', () => {
    const { log, lines, records } = capture(['30', '":']);
    log.info({ orderNo: 1304, count: 7 }, 'job 30 of "x": done');
    assert.equal(lines.length, 1);
    const [r] = records();
    assert.equal(r!.level, 30, 'pino level kept as a number');
    assert.equal(r!.orderNo, '1***4', 'a number holding the secret becomes scrubbed text');
    assert.equal(r!.count, 7);
    assert.equal(r!.msg, 'job *** of "x*** done');
    // The level and the time (kept intact; 12:30:30.300Z holds "30") are the only "30"s left.
    assert.ok(
      !lines[0]!
        .replace(/"level":30,/, '')
        .replace(/"time":"[^"]*",/, '')
        .includes('30'),
    );
  });

  it('scrubs JSON-escaped and percent-encoded forms of a secret with quotes and backslashes', () => {
    const secret = 'p"w\\1 é';
    const { log, lines } = capture([secret]);
    log.info({ password: secret }, 'raw value');
    log.info(`request body ${JSON.stringify({ password: secret })}`);
    log.info(`double ${JSON.stringify(JSON.stringify({ password: secret }))}`);
    log.info(`mqtts://u:${encodeURIComponent(secret)}@broker:8883`);
    const escaped = JSON.stringify(secret).slice(1, -1);
    for (const line of lines) {
      const record = JSON.parse(line) as Record<string, unknown>;
      const text = JSON.stringify(record);
      for (const form of [secret, escaped, encodeURIComponent(secret)]) {
        assert.ok(!line.includes(form), `${form} left in ${line}`);
        assert.ok(!String(record.msg).includes(form), `${form} left in ${record.msg}`);
        assert.ok(!text.includes(form));
      }
    }
    assert.match(lines[3]!, /mqtts:\/\/u:\*\*\*@broker:8883/);
  });

  it('overlapping secrets leave no tail of either', () => {
    const { log, records } = capture(['abc', 'cde', 'K1']);
    log.info('x abcde y K1K1 z');
    assert.equal(records()[0]!.msg, 'x *** y *** z');
  });

  it('without secrets lines are written as pino writes them', () => {
    const { log, lines } = capture([]);
    log.info({ a: 1 }, 'plain K1');
    assert.match(lines[0]!, /"a":1,"msg":"plain K1"\}$/);
  });
});
