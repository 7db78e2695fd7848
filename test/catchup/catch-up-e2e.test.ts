/**
 * Catch-up end to end (print-protocol §8, reliability guarantee 7, fault matrix rows 6 and 13):
 * a real Mosquitto started here (no persistence, so a restart loses every session), the reference
 * order service over HTTP publishing through `MqttPublisher`, the agent in this process, and the
 * emulator on TCP. Time for the poller and the service runs on a virtual clock, so the 10-second
 * spacing of queries is checked on that clock without waiting for it.
 *
 * Observed from outside the agent: tickets on the emulator's paper, job events on `/job`, and the
 * queries as the service received them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Mosquitto, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import type { RoundSummary } from '../../src/catchup/poller.js';
import { renderText } from '../../src/emulator/index.js';
import { MqttPublisher } from '../../src/mqtt/publisher.js';
import { type AgentRig, startAgentRig } from '../helpers/agent-rig.js';
import {
  APP_ID,
  GatedPublisher,
  type ObservedQuery,
  SERVICE_PUBLIC_KEY_FILE,
  STORE_KEY,
  startService,
  type TestService,
  testCatchUp,
} from './harness.js';
import { VirtualClock } from './virtual-clock.js';

const MINUTE = 60_000;
const PREFIX = 'printer-agent/v1';
const ORDER_NO = /O\d{14}/g;

describe('catch-up end to end', { skip: skipWithoutMosquitto() }, () => {
  const clock = new VirtualClock();
  let broker: Mosquitto;
  let publisher: MqttPublisher;
  let gate: GatedPublisher;
  let service: TestService;
  let rig: AgentRig;
  const rounds: RoundSummary[] = [];

  // Rendering a ticket is not free: each is read once.
  const orderNosOf = new WeakMap<object, string[]>();
  /** Per order number, how many tickets carry it; and all of them in print order. */
  const printed = () => {
    const counts = new Map<string, number>();
    const sequence: string[] = [];
    for (const ticket of rig.emulator.paper.tickets) {
      let found = orderNosOf.get(ticket);
      if (!found) {
        found = [...new Set(renderText(ticket).match(ORDER_NO) ?? [])];
        orderNosOf.set(ticket, found);
      }
      for (const orderNo of found) {
        counts.set(orderNo, (counts.get(orderNo) ?? 0) + 1);
        sequence.push(orderNo);
      }
    }
    return { counts, sequence };
  };
  const tickets = (orderNo: string) => printed().counts.get(orderNo) ?? 0;
  const eventsOf = (orderNo: string) => rig.events.filter((e) => e.orderNo === orderNo);

  /** A scheduled round: the interval passes on the virtual clock; resolves with its summary. */
  async function scheduledRound(advanceMs = 10 * MINUTE): Promise<RoundSummary> {
    const from = rounds.length;
    clock.advance(advanceMs);
    await waitFor(
      'a catch-up round',
      () => rounds.length > from && !rig.agent.catchUp!.busy,
      20_000,
    );
    return rounds[from]!;
  }

  before(async () => {
    broker = await Mosquitto.start({ persistence: false });
    publisher = new MqttPublisher({
      url: broker.url,
      topicPrefix: PREFIX,
      clientId: 'order-service-catchup',
      onConnect: () => void service?.app.outbox.drain(),
    });
    gate = new GatedPublisher(publisher);
    service = await startService({ clock, publisher: gate });
    await waitFor('the service on the broker', () => publisher.connected, 10_000);

    rig = await startAgentRig({
      appId: APP_ID,
      storeKey: STORE_KEY,
      header: 'Catch-up Cafe',
      broker,
      servicePublicKeyFile: SERVICE_PUBLIC_KEY_FILE,
      printers: [{ id: 'receipt', statusIntervalMs: 500 }],
      settings: () => ({ catchUp: testCatchUp(service.url, clock) }),
      logLevel: 'info',
      onStart: (agent) => agent.catchUp!.on('round', (s) => rounds.push(s)),
    });
    // First start: no cursor (a round at once) and a new session (another one); let both finish.
    await waitFor(
      'the start-up rounds',
      () => rounds.length >= 1 && !rig.agent.catchUp!.busy,
      20_000,
    );
  });

  after(async () => {
    await rig?.stop();
    await publisher?.close();
    await service?.close();
    await broker?.stop();
  });

  it('started with no cursor: read the last maxAge by time range (nothing yet)', () => {
    assert.equal(rounds[0]?.reason, 'first-start');
    assert.equal(rounds[0]?.mode, 'time-range');
    assert.ok(rounds.every((r) => r.error === null && r.queued === 0));
    assert.ok(!rig.logLines.join('\n').includes(STORE_KEY));
  });

  it('an order that came over MQTT is not printed again by catch-up', async () => {
    const orderNo = await service.create('Adobo');
    await waitFor('the receipt over MQTT', () => tickets(orderNo) === 1, 20_000);
    const round = await scheduledRound();
    assert.equal(round.error, null);
    assert.equal(round.queued, 0);
    assert.ok(round.duplicates >= 1);
    await waitFor(
      'printed event',
      () => eventsOf(orderNo).some((e) => e.state === 'printed'),
      10_000,
    );
    assert.equal(tickets(orderNo), 1);
    assert.ok(
      eventsOf(orderNo).every((e) => !e.jobId?.startsWith('catch-up:')),
      'no catch-up job, no event from catch-up',
    );
  });

  it('an order catch-up printed first is a duplicate when MQTT brings it late', async () => {
    gate.open = false;
    const orderNo = await service.create('Sinigang');
    const round = await scheduledRound();
    assert.equal(round.queued, 1);
    await waitFor('the receipt from catch-up', () => tickets(orderNo) === 1, 20_000);

    gate.open = true;
    await service.app.outbox.drain();
    await waitFor(
      'the MQTT copy answered duplicate',
      () => eventsOf(orderNo).some((e) => e.state === 'duplicate'),
      20_000,
    );
    const duplicate = eventsOf(orderNo).find((e) => e.state === 'duplicate')!;
    assert.equal(duplicate.reason?.code, 'DUPLICATE');
    assert.match(duplicate.jobId ?? '', /^P/, 'the instruction, not the catch-up job');
    assert.equal(tickets(orderNo), 1);
    assert.ok(
      eventsOf(orderNo).some((e) => e.jobId === `catch-up:${orderNo}` && e.state === 'printed'),
    );
  });

  it('a stale order is reported failed with STALE_ORDER and not printed by catch-up; its MQTT copy prints', async () => {
    gate.open = false;
    const cold = await service.create('Cold soup');
    // The store was closed for an hour: catch-up finds the order 61 minutes old.
    const round = await scheduledRound(61 * MINUTE);
    assert.equal(round.stale, 1);
    await waitFor(
      'the failed event',
      () => eventsOf(cold).some((e) => e.state === 'failed'),
      10_000,
    );
    const failed = eventsOf(cold).find((e) => e.state === 'failed')!;
    assert.equal(failed.jobId, `catch-up:${cold}`);
    assert.equal(failed.reason?.code, 'STALE_ORDER');

    const hot = await service.create('Hot soup');
    assert.equal((await scheduledRound()).queued, 1);
    await waitFor('the fresh order printed', () => tickets(hot) === 1, 20_000);

    // The late MQTT copy of the stale order is the service's own word, judged by the instruction's
    // own rule (days, not catchUp.maxAgeMinutes): it takes the stale record over and prints, once
    // (decision 131). Catch-up judged it by the agent's clock only.
    gate.open = true;
    await service.app.outbox.drain();
    const mqttEvents = () => eventsOf(cold).filter((e) => e.jobId !== `catch-up:${cold}`);
    await waitFor(
      'the MQTT copy printed',
      () => mqttEvents().some((e) => e.state === 'printed'),
      20_000,
    );
    assert.equal(tickets(cold), 1);
    const mqtt = mqttEvents();
    assert.deepEqual(
      mqtt.map((e) => e.state).filter((st) => st === 'queued' || st === 'printed'),
      ['queued', 'printed'],
    );
    assert.ok(!eventsOf(cold).some((e) => e.state === 'duplicate'), 'not answered duplicate');
  });

  it('offline while 300 orders are created and the broker loses the session: every order prints once, oldest first', async () => {
    // The agent goes away; its session stays on the broker (clean: false, expiry 1 h), which
    // queues the instructions published meanwhile.
    await rig.stopAgent();
    const seen = service.queries.length;
    const offline: string[] = [];
    for (let i = 1; i <= 300; i++) {
      offline.push(await service.create(`Offline ${i}`));
      clock.advance(1000);
    }
    await waitFor(
      'every instruction handed to the broker',
      async () => (await service.app.outbox.size()) === 0,
      20_000,
    );

    // The broker restarts without persistence: the session and its 300 instructions are gone.
    await broker.restart();
    await waitFor('the observer back on the broker', () => rig.observer.connected, 20_000);
    await rig.observer.subscribeAsync([rig.t.job, rig.t.status], { qos: 1 });
    clock.advance(MINUTE);

    const from = rounds.length;
    await rig.startAgent();
    await waitFor(
      '300 receipts',
      () => {
        const { counts } = printed();
        return offline.every((orderNo) => counts.has(orderNo));
      },
      60_000,
    );
    await waitFor('the round done', () => rounds.length > from && !rig.agent.catchUp!.busy, 20_000);

    const { counts, sequence } = printed();
    assert.deepEqual(
      offline.filter((orderNo) => counts.get(orderNo) !== 1),
      [],
      'each order on exactly one ticket',
    );
    assert.deepEqual(
      sequence.filter((orderNo) => offline.includes(orderNo)),
      offline,
      'printed oldest first',
    );

    const round = rounds[from]!;
    assert.equal(round.reason, 'session-lost', 'the lost session triggered it');
    assert.equal(round.mode, 'after-order');
    assert.equal(round.queued, 300);
    assert.equal(round.error, null);
    await waitFor(
      'printed events',
      () => offline.every((o) => eventsOf(o).some((e) => e.state === 'printed')),
      20_000,
    );
    assert.ok(
      offline.every((o) =>
        eventsOf(o).every((e) => e.jobId === `catch-up:${o}` && e.state !== 'duplicate'),
      ),
      'all came through catch-up: MQTT delivered none of them',
    );

    // The queries as the service saw them.
    const queries: ObservedQuery[] = service.queries.slice(seen);
    const incremental = queries.filter((q) => q.param.orderInnerNo !== undefined);
    const windows = queries.filter((q) => q.param.startTime !== undefined);
    assert.deepEqual(
      incremental.map((q) => q.param.pageNum),
      [1, 2, 3],
      'every page of the incremental query',
    );
    assert.ok(windows.length >= 1, 'then the trailing window');
    assert.deepEqual(
      windows.map((q) => q.param.pageNum),
      windows.map((_, i) => i + 1),
      'every page of the window',
    );
    assert.ok(queries.every((q) => q.param.pageSize === 100 && q.code === 10000));
    const all = service.queries;
    const gaps = all.slice(1).map((q, i) => q.at - all[i]!.at);
    assert.ok(
      gaps.every((g) => g >= 10_000),
      `every two queries at least 10 s apart on the clock: ${gaps.join(', ')}`,
    );
    assert.ok(!rig.logLines.join('\n').includes(STORE_KEY), 'the storeKey is never logged');
  });
});
