/**
 * Issue 17 item 3, end to end: the agent as a child process whose stdout is a file, as systemd's
 * journal stream is a socket: with JOURNAL_STREAM naming that file's device and inode (what
 * systemd sets), every line is a readable one with a syslog priority that matches its level
 * (`<6>` a printed job with its order number, `<4>` a printer fault and the job waiting for it,
 * `<3>` a job the printer never confirmed); with the variable naming anything else (inherited by
 * a process whose stdout goes elsewhere), the lines are JSON as configured, each naming its room
 * (issue 42 item 10). Mosquitto and the emulator are real.
 */
import assert from 'node:assert/strict';
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import type { Ticket } from '../../src/emulator/index.js';
import { faultSuite, type Json } from '../faults/harness.js';

describe('journal lines under systemd (child process)', { skip: skipWithoutMosquitto() }, () => {
  const env = faultSuite();
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'journal-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A file for the agent's stdout and the JOURNAL_STREAM value that names it. */
  const stdoutFile = (name: string) => {
    const path = join(dir, name);
    const fd = openSync(path, 'a');
    const stat = fstatSync(fd);
    return { path, fd, stream: `${stat.dev}:${stat.ino}`, text: () => readFileSync(path, 'utf8') };
  };

  it('JOURNAL_STREAM naming stdout: <6> printed with the order, <4> paper out, <3> unconfirmed', async () => {
    const s = await env.stores.create({
      name: 'jrn',
      broker: env.broker,
      configure: (c) => {
        (c.printers as Json[])[0]!.confirmTimeoutSec = 3;
      },
    });
    const out = stdoutFile('journal.log');
    const lines = () => out.text().split('\n').filter(Boolean);
    const has = (what: string, re: RegExp) => waitFor(what, () => lines().some((l) => re.test(l)));
    await s.startOnline({ JOURNAL_STREAM: out.stream }, 20_000, { stdoutFd: out.fd });
    closeSync(out.fd);

    await s.publish(1);
    await s.waitForState(1, 'printed');
    await has(
      'the printed line',
      new RegExp(
        `^<6>jobs: printed orderNo=${s.orderNo(1)} jobId=${s.jobId(1)} printer=receipt attempt=1 ms=\\d+$`,
      ),
    );

    s.emulator.setFault('paper-out', true);
    await waitFor('status paper-out', () => s.printerState() === 'paper-out', 15_000);
    await has(
      'the printer fault at warning',
      /^<4>printer: printer state printer=receipt state=paper-out/,
    );
    await s.publish(2);
    const waiting = await s.waitForState(2, 'waiting');
    assert.equal(waiting.reason?.code, 'PAPER_OUT');
    await has(
      'the waiting job at warning',
      new RegExp(`^<4>jobs: waiting for the printer orderNo=${s.orderNo(2)} .*code=PAPER_OUT`),
    );
    s.emulator.setFault('paper-out', false);
    await s.waitForState(2, 'printed');
    await has(
      'the printer ready at info',
      /^<6>printer: printer state printer=receipt state=ready/,
    );

    // The answer to the confirmation request is lost: unconfirmed after the configured 3 s.
    const onTicket = (_ticket: Ticket) => {
      s.emulator.off('ticket', onTicket);
      s.emulator.setFault('mute', true);
    };
    s.emulator.on('ticket', onTicket);
    await s.publish(3);
    await s.waitForState(3, 'unconfirmed', 30_000);
    await has(
      'the unconfirmed job at error',
      new RegExp(`^<3>jobs: sent but not confirmed .* orderNo=${s.orderNo(3)} .*code=UNCONFIRMED`),
    );
    s.emulator.setFault('mute', false);

    // Every line is a journal line: a priority, never JSON; none carries the store key.
    for (const line of lines()) {
      assert.match(line, /^<[0-7]>[^{]/, line);
      assert.ok(!line.includes(s.storeKey), 'the store key never appears');
    }
    await s.stopAgent('SIGTERM');
  });

  it('JOURNAL_STREAM naming another file (inherited, stdout elsewhere): JSON lines', async () => {
    const s = await env.stores.create({ name: 'jrn2', broker: env.broker });
    const journal = stdoutFile('other.log');
    const out = stdoutFile('json.log');
    await s.startOnline({ JOURNAL_STREAM: journal.stream }, 20_000, { stdoutFd: out.fd });
    closeSync(out.fd);
    closeSync(journal.fd);
    await s.publish(1);
    await s.waitForState(1, 'printed');
    const printed = () =>
      out
        .text()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Json)
        .find((r) => r.msg === 'printed');
    await waitFor('the printed line as JSON', () => printed() !== undefined);
    assert.equal(printed()!.level, 30);
    assert.equal(printed()!.orderNo, s.orderNo(1));
    assert.equal(printed()!.printer, 'receipt');
    assert.equal(journal.text(), '', 'nothing written to the file the variable names');
    await s.stopAgent('SIGTERM');

    // Issue 42 item 10: every line names its room, the agent's own lines (start, the signal, the
    // stop) included.
    const records = out
      .text()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Json);
    for (const msg of ['agent started', 'signal received', 'stopping', 'stopped'])
      assert.ok(
        records.some((r) => r.msg === msg),
        `"${msg}" logged`,
      );
    const roomless = records.filter((r) => typeof r.room !== 'string' || r.room === '');
    assert.deepEqual(
      roomless.map((r) => r.msg),
      [],
      'lines without a room',
    );
  });
});
