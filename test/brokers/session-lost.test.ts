/**
 * Where the broker does not keep the session (issue 19: "the agent says so at start and catch-up
 * covers the gap"): a Mosquitto without persistence, restarted once while the agent is stopped and
 * once while it is connected, so both times the agent's CONNACK says `sessionPresent: false`. The
 * instructions the broker had queued are gone with it. The agent says so in its journal, as a
 * warning naming the promise, and asks catch-up for the gap; the reference order service over HTTP
 * answers, and each lost order prints once, from catch-up.
 *
 * The agent runs in this process with the emulator on TCP; catch-up's query spacing runs on a
 * virtual clock (test/catchup/virtual-clock.ts) so that no test waits the 10 s between queries.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../../harness/waiting.js';
import type { RoundSummary } from '../../src/catchup/poller.js';
import { renderText } from '../../src/emulator/index.js';
import { MqttPublisher } from '../../src/mqtt/publisher.js';
import {
  APP_ID,
  GatedPublisher,
  SERVICE_PUBLIC_KEY_FILE,
  STORE_KEY,
  startService,
  type TestService,
  testCatchUp,
} from '../catchup/harness.js';
import { VirtualClock } from '../catchup/virtual-clock.js';
import { type AgentRig, startAgentRig } from '../helpers/agent-rig.js';
import { skipWithoutBroker, startBroker, type TestBroker } from '../helpers/brokers.js';

const MINUTE = 60_000;
const PREFIX = 'printer-agent/v1';

type Json = Record<string, unknown>;

describe('a lost session: said in the journal, filled by catch-up', {
  skip: skipWithoutBroker('mosquitto'),
}, () => {
  const clock = new VirtualClock();
  let broker: TestBroker;
  let publisher: MqttPublisher;
  let gate: GatedPublisher;
  let service: TestService;
  let rig: AgentRig;
  const rounds: RoundSummary[] = [];
  /** The agent's log lines, parsed (each once). */
  const parsed: Json[] = [];
  const records = (): Json[] => {
    for (const line of rig.logLines.slice(parsed.length)) parsed.push(JSON.parse(line) as Json);
    return parsed;
  };

  /** The agent's warnings that a session was not there (src/mqtt/connection.ts). */
  const noSession = () =>
    records().filter((r) => r.level === 40 && r.promise === 'persistent session');
  /**
   * The agent's own word that a job printed: the observer has a clean session, so what the agent
   * publishes right after a broker restart may come before the observer subscribed again.
   */
  const printedBy = (jobId: string) =>
    records().some((r) => r.msg === 'printed' && r.jobId === jobId);
  /** Cut tickets on the emulator's paper carrying `orderNo`. */
  const tickets = (orderNo: string) =>
    rig.emulator.tickets().filter((k) => k.cut && renderText(k).includes(orderNo)).length;

  before(async () => {
    // No persistence: a restart loses every session and what it queued.
    broker = await startBroker('mosquitto', { persistence: false });
    publisher = new MqttPublisher({
      url: broker.url,
      topicPrefix: PREFIX,
      clientId: 'order-service-session-lost',
      onConnect: () => void service?.app.outbox.drain(),
    });
    gate = new GatedPublisher(publisher);
    service = await startService({ clock, publisher: gate });
    await waitFor('the service on the broker', () => publisher.connected);

    rig = await startAgentRig({
      appId: APP_ID,
      storeKey: STORE_KEY,
      header: 'Session Lost Cafe',
      broker,
      servicePublicKeyFile: SERVICE_PUBLIC_KEY_FILE,
      printers: [{ id: 'receipt', statusIntervalMs: 1000 }],
      settings: () => ({ catchUp: testCatchUp(service.url, clock) }),
      logLevel: 'info',
      onStart: (agent) => agent.catchUp!.on('round', (s) => rounds.push(s)),
    });
    // A clean session: after each broker restart it subscribes again before the agent is back.
    rig.observer.on(
      'connect',
      () => void rig.observer.subscribeAsync([rig.t.job, rig.t.status], { qos: 1 }),
    );
  });

  after(async () => {
    await rig?.stop();
    await publisher?.close();
    await service?.close();
    await broker?.stop();
  });

  it('first start: no session yet, said as a warning naming the promise', async () => {
    await waitFor('the first-start round', () => rounds.length >= 1 && !rig.agent.catchUp!.busy);
    const warnings = noSession();
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.match(
      String(warnings[0]!.msg),
      /^the broker has no session for this agent \(a first start, or it expired or was lost while the agent was away\): instructions published while it was not connected are not delivered; catch-up/,
    );
    assert.equal(warnings[0]!.sessionPresent, false);
  });

  it('session lost while the agent was stopped: the warning at start, and catch-up prints the lost order once', async () => {
    await rig.stopAgent();
    // Published to the broker, queued in the agent's session...
    const orderNo = await service.create('Lost while stopped');
    await waitFor(
      'the instruction handed to the broker',
      async () => (await service.app.outbox.size()) === 0,
    );
    // ...which the broker loses.
    await broker.restart();
    await waitFor('the observer back', () => rig.observer.connected);
    clock.advance(MINUTE);
    const fromRounds = rounds.length;
    const fromWarnings = noSession().length;

    await rig.startAgent();
    await waitFor('printed from catch-up', () => printedBy(`catch-up:${orderNo}`));
    assert.equal(noSession().length, fromWarnings + 1, 'said once, at the CONNACK');
    // Asked for by the lost session; the store had no cursor yet (nothing found at the first
    // start), so a first-start round may run too and find the order first.
    await waitFor('the rounds done', () => !rig.agent.catchUp!.busy);
    const since = rounds.slice(fromRounds);
    assert.ok(
      since.some((r) => r.reason === 'session-lost'),
      JSON.stringify(since.map((r) => r.reason)),
    );
    assert.equal(
      since.reduce((n, r) => n + r.queued, 0),
      1,
      'queued once',
    );
    assert.equal(tickets(orderNo), 1, 'printed once: MQTT never delivered it');
    assert.ok(
      rig.events
        .filter((e) => e.orderNo === orderNo)
        .every((e) => e.jobId === `catch-up:${orderNo}`),
      'no event of an MQTT job for it',
    );
  });

  it('session lost while connected (broker restarted): "lost" said at the reconnect, the gap printed from catch-up', async () => {
    // The service cannot reach the broker for this order: only catch-up can bring it.
    gate.open = false;
    const orderNo = await service.create('Lost in the outage');
    clock.advance(MINUTE);
    const fromWarnings = noSession().length;
    const from = rig.statuses.length;
    await broker.restart();
    await waitFor('the agent back online', () =>
      rig.statuses.slice(from).some((s) => s.online === true),
    );
    await waitFor('printed from catch-up', () => printedBy(`catch-up:${orderNo}`));
    assert.equal(tickets(orderNo), 1, 'on paper once');
    await waitFor('the round done', () => !rig.agent.catchUp!.busy);
    const round = rounds.at(-1)!;
    assert.equal(round.reason, 'session-lost', 'the lost session asked for it');
    assert.equal(round.queued, 1);
    const warnings = noSession().slice(fromWarnings);
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.match(
      String(warnings[0]!.msg),
      /^the broker lost this agent session \(it expired, or the broker restarted without persistence\)/,
    );
    assert.ok(
      !records().some((r) => JSON.stringify(r).includes(STORE_KEY)),
      'storeKey never logged',
    );
  });
});
