/**
 * Issue 13 item 5, the agent's side: unbounded sizes (print-protocol v1.1 §9).
 *
 * - A 200 MiB publish took the agent from ~120 to ~500 MiB before it was rejected. Now the agent
 *   asks the broker (MQTT 5 CONNECT `maximumPacketSize`, 1 MiB) never to send it more, so the
 *   broker drops it: the agent's peak RSS (VmHWM, no sampling gap) does not move.
 * - A 100 KiB signed instruction (over the 64 KiB limit, under the packet bound) still reaches the
 *   agent and is answered `rejected` TOO_LARGE naming its jobId and orderNo: its signature held.
 * - JSON nested 20,000 deep, as the body or inside a signed param: refused before it is walked,
 *   with the rule named; a deep payload in a database written by an older agent crashes neither
 *   `jobs show` nor the daemon.
 * - Free text longer than a receipt allows is cut (src/receipt) and the cut reported: CONTENT_CUT
 *   in the `printing` and `printed` events' warnings and in the log.
 * - `doctor` warns when the broker's CONNACK says it accepts less than the message limit, and on
 *   MQTT 3.1.1, where only the broker's own `message_size_limit` bounds what reaches the agent.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Mosquitto, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import Database from '../../src/host/sqlite.js';
import { DATABASE_FILE } from '../../src/jobs/store.js';
import { faultSuite, type Json, peakRssMb } from '../faults/harness.js';
import { runCliInProcess } from '../helpers/cli.js';

const MiB = 1024 * 1024;

describe('sizes reaching the agent (child process)', { skip: skipWithoutMosquitto() }, () => {
  const env = faultSuite();

  it('a 200 MiB publish never reaches the agent; a 100 KiB signed instruction is rejected TOO_LARGE with its ids', async () => {
    const s = await env.stores.create({ name: 'size', broker: env.broker });
    const agent = await s.startOnline();
    await s.publish(1);
    await s.waitForState(1, 'printed');
    const before = peakRssMb(agent.pid)!;
    assert.ok(before > 0);

    // 200 MiB at QoS 1: the broker takes it (PUBACK) and must not pass it on.
    await s.service.publishAsync(s.t.print, Buffer.alloc(200 * MiB, 0x78), { qos: 1 });
    // A signed instruction of 100 KiB: over the message limit, under the packet bound.
    const big = s.envelope(s.instruction(2, { customPrintContext: 'y'.repeat(100 * 1024) }));
    assert.ok(Buffer.byteLength(big) > 100 * 1024);
    await s.publishRaw(big);
    // Delivery to the agent is in order: once 3 printed, the two before were dropped or seen.
    await s.publish(3);
    await s.waitForState(3, 'printed', 60_000);

    const rejected = s.events.filter((e) => e.state === 'rejected');
    assert.deepEqual(
      rejected.map((e) => [e.reason?.code, e.jobId, e.orderNo]),
      [['TOO_LARGE', s.jobId(2), s.orderNo(2)]],
      'only the 100 KiB instruction reached the agent, and its rejection names it',
    );
    assert.match(rejected[0]!.reason!.message, /^body: is \d+ bytes; the limit is 65536/);
    const after = peakRssMb(agent.pid)!;
    assert.ok(
      after - before < 64,
      `the agent's peak RSS went from ${before.toFixed(0)} to ${after.toFixed(0)} MB`,
    );
    assert.ok(agent.alive);
    s.assertInvariants({ expected: [s.orderNo(1), s.orderNo(3)], notPrinted: [s.orderNo(2)] });
  });

  it('JSON nested 20,000 deep (body or signed param) is refused naming the rule; the daemon prints on', async () => {
    const s = await env.stores.create({ name: 'deep', broker: env.broker });
    const agent = await s.startOnline();
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    await s.publishRaw(`{"appId":${deep}}`);
    await s.publishRaw(s.envelope(`{"storeId":"${s.storeId}","jobId":"P-deep","x":${deep}}`));
    await waitFor(
      'two rejections',
      () => s.events.filter((e) => e.state === 'rejected').length >= 2,
      20_000,
    );
    const rejected = s.events.filter((e) => e.state === 'rejected');
    assert.deepEqual(
      rejected.map((e) => [e.reason?.code, e.reason?.message.slice(0, 40)]),
      [
        ['ENVELOPE_INVALID', 'body: nested deeper than 32 levels of ar'],
        ['PARAM_INVALID', 'param: nested deeper than 32 levels of a'],
      ],
    );
    await s.publish(1);
    await s.waitForState(1, 'printed');
    assert.ok(agent.alive);
  });

  it('a deep payload stored by an older agent: `jobs show` prints it, the daemon fails the job and goes on', async () => {
    const s = await env.stores.create({ name: 'olddb', broker: env.broker });
    await s.startOnline();
    await s.publish(1);
    await s.waitForState(1, 'printed');
    await s.stopAgent('SIGTERM');
    // What an agent without the nesting limit could have queued.
    const db = new Database(join(s.stateDir, DATABASE_FILE));
    const deep = `{"jobId":"P-old","x":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    const { lastInsertRowid } = db
      .prepare(
        `INSERT INTO jobs (source, kind, job_id, order_no, printer, payload_type, payload, state, created_at, updated_at, queued_at)
         VALUES ('mqtt', 'receipt', 'P-old', 'O-old', 'receipt', 'instruction', ?, 'queued', ?, ?, ?)`,
      )
      .run(deep, Date.now(), Date.now(), Date.now());
    db.close();
    const shown = await runCliInProcess([
      'jobs',
      'show',
      String(lastInsertRowid),
      '--state-dir',
      s.stateDir,
    ]);
    assert.equal(shown.status, 0, shown.stderr);
    assert.match(
      (JSON.parse(shown.stdout) as { payloadProblem: string }).payloadProblem,
      /nested deeper than 32 levels/,
    );
    const agent = await s.startOnline();
    const failed = await s.waitForState('P-old', 'failed');
    assert.equal(failed.reason?.code, 'PARAM_INVALID');
    await s.publish(2);
    await s.waitForState(2, 'printed');
    assert.ok(agent.alive);
  });

  it('free text longer than the receipt allows is cut and reported: CONTENT_CUT in the events and the log', async () => {
    const s = await env.stores.create({ name: 'cut', broker: env.broker });
    await s.startOnline();
    // 150 lines, within the 2000-character bound on free text, far over the 40 lines printed.
    const lines = Array.from({ length: 150 }, (_, i) => `note ${i + 1}`).join('\n');
    await s.publish(1, { customPrintContext: lines });
    const printed = await s.waitForState(1, 'printed');
    const printing = s.eventsOf(1).find((e) => e.state === 'printing');
    for (const e of [printing, printed]) {
      assert.deepEqual(
        e?.warnings?.map((w) => w.code),
        ['CONTENT_CUT'],
        JSON.stringify(e),
      );
      assert.match(e!.warnings![0]!.message, /customPrintContext/);
    }
    assert.equal(s.eventsOf(1).find((e) => e.state === 'queued')?.warnings, undefined);
    // The log comes through the child's stdout, which may trail its MQTT events.
    await waitFor('the CONTENT_CUT log line', () => /"code":"CONTENT_CUT"/.test(s.output));
    assert.ok(s.ticketTexts().join('\n').includes('note 1'));
    assert.ok(!s.ticketTexts().join('\n').includes('note 150'), 'the rest was not printed');
  });

  it('doctor: a broker that accepts less than the message limit, and MQTT 3.1.1, are warned about', async () => {
    const small = await Mosquitto.start({ extraConfig: ['max_packet_size 16384'] });
    try {
      const s = await env.stores.create({ name: 'doc', broker: env.broker });
      const config = JSON.parse(readFileSync(s.configPath, 'utf8')) as Json;
      const doctor = async (name: string, mqtt: Json) => {
        const path = join(s.dir, name);
        writeFileSync(
          path,
          JSON.stringify({ ...config, mqtt: { ...(config.mqtt as Json), ...mqtt } }),
          { mode: 0o600 },
        );
        const run = await runCliInProcess(['doctor', '--config', path, '--json']);
        return (
          JSON.parse(run.stdout) as {
            checks: Array<{ status: string; name: string; detail: string; fix?: string }>;
          }
        ).checks.filter((c) => c.name === 'broker');
      };
      const limited = await doctor('small.json', { url: small.url });
      assert.deepEqual(
        limited.map((c) => c.status),
        ['ok', 'warn'],
      );
      assert.match(
        limited[1]!.detail,
        /accepts packets up to 16384 bytes.*mqtt\.maxMessageBytes \(65536\)/,
      );
      assert.match(limited[1]!.fix ?? '', /max_packet_size/);
      const fine = await doctor('fine.json', {});
      assert.deepEqual(
        fine.map((c) => c.status),
        ['ok'],
      );
      const old = await doctor('v311.json', { protocolVersion: 4 });
      assert.deepEqual(
        old.map((c) => c.status),
        ['ok', 'warn'],
      );
      assert.match(old[1]!.fix ?? '', /message_size_limit 1048576/);
    } finally {
      await small.stop();
    }
  });
});
