/**
 * Issue 18, routing at the store, end to end: a real Mosquitto, the reference order service over
 * HTTP (it leaves `printer` out of its instructions, print-protocol v1.1 §4), the agent in this
 * process with two emulators on TCP: the counter (receipt role) and the kitchen (kitchen role, a
 * profile with a buzzer). Routing: the payment receipt for every order, a kitchen ticket for table
 * and queue orders. Observed from outside: tickets on each emulator's paper and job events.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Mosquitto, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import type { RoundSummary } from '../../src/catchup/poller.js';
import { renderText, type Ticket, VirtualPrinter } from '../../src/emulator/index.js';
import { MqttPublisher } from '../../src/mqtt/publisher.js';
import { buildEnvelope } from '../../src/protocol/envelope.js';
import type { JobEvent } from '../../src/protocol/print-protocol.js';
import {
  APP_ID,
  GatedPublisher,
  SERVICE_PUBLIC_KEY_FILE,
  STORE_KEY,
  serviceSigningKey,
  startService,
  type TestService,
  testCatchUp,
} from '../catchup/harness.js';
import { VirtualClock } from '../catchup/virtual-clock.js';
import { type AgentRig, startAgentRig } from '../helpers/agent-rig.js';

const MINUTE = 60_000;
const PREFIX = 'printer-agent/v1';

describe('routing: a receipt at the counter, a ticket in the kitchen', {
  skip: skipWithoutMosquitto(),
}, () => {
  const clock = new VirtualClock();
  let broker: Mosquitto;
  const counter = new VirtualPrinter({ columns: 48 });
  const kitchen = new VirtualPrinter({ columns: 48 });
  let publisher: MqttPublisher;
  let gate: GatedPublisher;
  let service: TestService;
  let rig: AgentRig;
  /** Every instruction body the service published, by the orderNo inside its param. */
  const published = new Map<string, string>();
  const rounds: RoundSummary[] = [];

  const ticketsOf = (printer: VirtualPrinter, orderNo: string): Ticket[] =>
    printer.paper.tickets.filter((ticket) => renderText(ticket).includes(orderNo));
  /** An order's events, each once (QoS 1 may deliver one twice: the rig keeps one by eventId). */
  const eventsOf = (orderNo: string): JobEvent[] => rig.events.filter((e) => e.orderNo === orderNo);
  /** The roles that answered `duplicate` for an order, sorted, each once. */
  const duplicateRoles = (orderNo: string): string[] =>
    [
      ...new Set(
        eventsOf(orderNo)
          .filter((e) => e.state === 'duplicate')
          .map((e) => e.printer ?? ''),
      ),
    ].sort();
  const printedJob = (orderNo: string, jobId: string | null | undefined) =>
    eventsOf(orderNo).some((e) => e.jobId === jobId && e.state === 'printed');
  const printedOn = (orderNo: string, role: string) =>
    eventsOf(orderNo).some((e) => e.printer === role && e.state === 'printed');

  /** What no kitchen ticket may show: the currency, and the amounts of the orders made here. */
  function assertNoAmounts(ticket: Ticket): void {
    const text = renderText(ticket);
    assert.doesNotMatch(text, /PHP|₱|\d+\.\d\d/, `an amount on the kitchen ticket:\n${text}`);
  }

  before(async () => {
    broker = await Mosquitto.start();
    publisher = new MqttPublisher({
      url: broker.url,
      topicPrefix: PREFIX,
      clientId: 'order-service-routing',
      onConnect: () => void service?.app.outbox.drain(),
    });
    gate = new GatedPublisher(publisher);
    service = await startService({ clock, publisher: gate });
    await waitFor('the service on the broker', () => publisher.connected, 10_000);

    rig = await startAgentRig({
      appId: APP_ID,
      storeKey: STORE_KEY,
      header: 'Routing Grill',
      broker,
      servicePublicKeyFile: SERVICE_PUBLIC_KEY_FILE,
      printers: [
        { id: 'counter', emulator: counter, roles: ['receipt'] },
        { id: 'kitchen', emulator: kitchen, profile: 'generic-80mm-buzzer', roles: ['kitchen'] },
      ],
      settings: () => ({
        routing: [
          { role: 'receipt', layout: 'receipt', orderTypes: null, items: null, skus: null },
          {
            role: 'kitchen',
            layout: 'kitchen',
            orderTypes: ['table', 'queue'],
            items: null,
            skus: null,
          },
        ],
        catchUp: testCatchUp(service.url, clock),
      }),
      logLevel: 'warn',
      onStart: (agent) => agent.catchUp!.on('round', (s) => rounds.push(s)),
    });
    rig.observer.on('message', (topic, payload) => {
      if (topic === rig.t.print) {
        const param = JSON.parse(JSON.parse(payload.toString()).param) as { orderNo: string };
        published.set(param.orderNo, payload.toString());
      }
    });
    await rig.observer.subscribeAsync(rig.t.print, { qos: 1 });
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

  it('one order prints the receipt at the counter and a ticket without amounts in the kitchen', async () => {
    const orderNo = await service.create('Adobo', {
      productInfo: [
        { productName: 'Chicken adobo', price: 18_500, quantity: 2 },
        { productName: 'Iced tea', price: 6_000, quantity: 3 },
      ],
    });
    await waitFor(
      'both printed',
      () => printedOn(orderNo, 'receipt') && printedOn(orderNo, 'kitchen'),
      20_000,
    );
    const receipt = ticketsOf(counter, orderNo);
    const ticket = ticketsOf(kitchen, orderNo);
    assert.equal(receipt.length, 1);
    assert.equal(ticket.length, 1);
    assert.match(renderText(receipt[0]!), /TOTAL/);
    assertNoAmounts(ticket[0]!);
    assert.match(renderText(ticket[0]!), /Chicken adobo/);
    assert.match(renderText(ticket[0]!), /KITCHEN/);
    // The quantities in double size, read off the decoded paper (not our own text twin).
    const quantity = ticket[0]!.lines.flatMap((l) => l.runs).find((r) => /^\s*2\s*x/.test(r.text));
    assert.ok(quantity, 'a run with the quantity 2x');
    assert.equal(quantity.width, 2);
    assert.equal(quantity.height, 2);
    // The profile's buzzer sounded once for the ticket, on the kitchen printer only.
    const beeps = kitchen.paper.tickets.flatMap((k) => k.events).filter((e) => e.type === 'buzzer');
    assert.ok(beeps.length >= 1, 'the kitchen buzzer');
    assert.ok(counter.paper.tickets.every((k) => k.events.every((e) => e.type !== 'buzzer')));
    // Each role's job reports on its own: the receipt keeps the instruction's jobId.
    const printed = eventsOf(orderNo).filter((e) => e.state === 'printed');
    const receiptJob = printed.find((e) => e.printer === 'receipt')!.jobId!;
    assert.equal(printed.find((e) => e.printer === 'kitchen')!.jobId, `${receiptJob}#kitchen`);
  });

  it('a takeout order is not routed to the kitchen (its rule takes table and queue orders)', async () => {
    const orderNo = await service.create('Pancit', {
      orderType: 3,
      deliveryFee: 5_000,
      packingFee: 1_000,
    });
    await waitFor('the receipt', () => printedOn(orderNo, 'receipt'), 20_000);
    assert.equal(ticketsOf(counter, orderNo).length, 1);
    assert.ok(eventsOf(orderNo).every((e) => e.printer === 'receipt'));
    assert.equal(ticketsOf(kitchen, orderNo).length, 0);
  });

  it('a redelivered instruction prints nothing twice: one duplicate per role', async () => {
    const orderNo = await service.create('Sisig');
    await waitFor(
      'both printed',
      () => printedOn(orderNo, 'receipt') && printedOn(orderNo, 'kitchen'),
      20_000,
    );
    const body = published.get(orderNo);
    assert.ok(body, 'the instruction seen on the broker');
    await rig.observer.publishAsync(rig.t.print, body, { qos: 1 });
    // At least once: a redelivery of the copy may answer twice; each role answers.
    await waitFor('a duplicate for each role', () => duplicateRoles(orderNo).length === 2, 20_000);
    assert.deepEqual(duplicateRoles(orderNo), ['kitchen', 'receipt']);
    assert.equal(ticketsOf(counter, orderNo).length, 1);
    assert.equal(ticketsOf(kitchen, orderNo).length, 1);
  });

  it('kitchen paper out holds only the kitchen ticket; it prints after the refill', async () => {
    kitchen.setFault('paper-out', true);
    try {
      const orderNo = await service.create('Lechon');
      await waitFor('the receipt', () => printedOn(orderNo, 'receipt'), 20_000);
      await waitFor(
        'the kitchen ticket waiting for paper',
        () =>
          eventsOf(orderNo).some(
            (e) =>
              e.printer === 'kitchen' && e.state === 'waiting' && e.reason?.code === 'PAPER_OUT',
          ),
        20_000,
      );
      assert.equal(ticketsOf(counter, orderNo).length, 1);
      assert.equal(ticketsOf(kitchen, orderNo).length, 0);
      kitchen.setFault('paper-out', false);
      await waitFor(
        'the kitchen ticket after the refill',
        () => printedOn(orderNo, 'kitchen'),
        20_000,
      );
      assert.equal(ticketsOf(kitchen, orderNo).length, 1);
    } finally {
      kitchen.setFault('paper-out', false);
    }
  });

  it('an order only catch-up finds produces both, each once', async () => {
    gate.open = false;
    let orderNo: string;
    try {
      orderNo = await service.create('Kare-kare');
      const from = rounds.length;
      clock.advance(10 * MINUTE);
      await waitFor('a round', () => rounds.length > from && !rig.agent.catchUp!.busy, 20_000);
      await waitFor(
        'both printed',
        () => printedOn(orderNo, 'receipt') && printedOn(orderNo, 'kitchen'),
        20_000,
      );
    } finally {
      gate.open = true;
    }
    const printed = eventsOf(orderNo).filter((e) => e.state === 'printed');
    assert.deepEqual(printed.map((e) => e.jobId).sort(), [
      `catch-up:${orderNo}`,
      `catch-up:${orderNo}#kitchen`,
    ]);
    // MQTT brings it late: a duplicate for each role, nothing printed again.
    await service.app.outbox.drain();
    await waitFor(
      'the late instruction answered for each role',
      () => duplicateRoles(orderNo).length === 2,
      20_000,
    );
    assert.deepEqual(duplicateRoles(orderNo), ['kitchen', 'receipt']);
    assert.equal(ticketsOf(counter, orderNo).length, 1);
    assert.equal(ticketsOf(kitchen, orderNo).length, 1);
    assertNoAmounts(ticketsOf(kitchen, orderNo)[0]!);
  });

  /** A round of catch-up now, over the last minutes (its trailing window). */
  async function catchUpRound(): Promise<void> {
    const from = rounds.length;
    clock.advance(10 * MINUTE);
    await waitFor('a round', () => rounds.length > from && !rig.agent.catchUp!.busy, 20_000);
  }

  it('issue 40 item 1: catch-up adds no kitchen ticket the instruction’s routing left out', async () => {
    const orderNo = await service.create('Lomi', {
      orderType: 3,
      deliveryFee: 5_000,
      packingFee: 1_000,
    });
    await waitFor('the receipt over MQTT', () => printedOn(orderNo, 'receipt'), 20_000);
    await catchUpRound();
    assert.ok(rounds.at(-1)!.duplicates >= 1, 'the round saw the order');
    assert.ok(
      eventsOf(orderNo).every((e) => e.printer === 'receipt'),
      'no kitchen job',
    );
    assert.equal(ticketsOf(kitchen, orderNo).length, 0);
    assert.equal(ticketsOf(counter, orderNo).length, 1);
  });

  it('issue 40 item 1: the same orders print the same through MQTT and through catch-up alone', async () => {
    const kinds = [
      { name: 'table', param: { orderType: 1 } },
      { name: 'queue', param: { orderType: 2 } },
      { name: 'takeout', param: { orderType: 3, deliveryFee: 5_000, packingFee: 1_000 } },
    ];
    /** Per order type: [receipts at the counter, tickets in the kitchen]. */
    const printedBy = async (path: 'mqtt' | 'catch-up') => {
      const made: Array<[string, string]> = [];
      gate.open = path === 'mqtt';
      try {
        for (const kind of kinds)
          made.push([kind.name, await service.create(`${path} ${kind.name}`, kind.param)]);
        if (path === 'catch-up') await catchUpRound();
        await waitFor(
          `${path}: every receipt printed`,
          () => made.every(([, o]) => printedOn(o, 'receipt')),
          20_000,
        );
        // Every job of these orders is queued with its receipt's (one commit): once each job
        // that was queued has printed, nothing more comes for them.
        const settled = (o: string) => {
          const queued = eventsOf(o).filter((e) => e.state === 'queued');
          return queued.every((q) => printedJob(o, q.jobId));
        };
        await waitFor(
          `${path}: every job printed`,
          () => made.every(([, o]) => settled(o)),
          20_000,
        );
      } finally {
        gate.open = true;
      }
      return Object.fromEntries(
        made.map(([kind, o]) => [
          kind,
          [ticketsOf(counter, o).length, ticketsOf(kitchen, o).length],
        ]),
      );
    };
    const viaMqtt = await printedBy('mqtt');
    const viaCatchUp = await printedBy('catch-up');
    assert.deepEqual(viaMqtt, { table: [1, 1], queue: [1, 1], takeout: [1, 0] });
    assert.deepEqual(viaCatchUp, viaMqtt);
  });

  it('a kitchen reprint prints the kitchen ticket again, marked REPRINT', async () => {
    const orderNo = await service.create('Bulalo');
    await waitFor('the kitchen ticket', () => printedOn(orderNo, 'kitchen'), 20_000);
    const command = buildEnvelope({
      appId: APP_ID,
      storeKey: STORE_KEY,
      key: serviceSigningKey,
      param: {
        storeId: rig.storeId,
        commandId: `C-reprint-${orderNo}`,
        type: 'reprint',
        orderNo,
        printer: 'kitchen',
      },
    });
    await rig.observer.publishAsync(rig.t.command, JSON.stringify(command), { qos: 1 });
    await waitFor('two kitchen tickets', () => ticketsOf(kitchen, orderNo).length === 2, 20_000);
    const reprint = renderText(ticketsOf(kitchen, orderNo)[1]!);
    assert.match(reprint, /REPRINT #1/);
    assert.match(reprint, /KITCHEN/);
    assertNoAmounts(ticketsOf(kitchen, orderNo)[1]!);
    assert.equal(ticketsOf(counter, orderNo).length, 1, 'the counter printed nothing more');
  });
});
