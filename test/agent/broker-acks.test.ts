/**
 * The broker connection's PUBACKs (guarantee 1, decision 211) against a real Mosquitto: mqtt.js
 * hands over the next message before the previous one is settled (so the inbox can store a
 * burst in one commit), and a message's PUBACK leaves only once it and every earlier message are
 * settled `ack`. What the broker redelivers after the link drops shows which PUBACKs it got: a
 * persistent session keeps every message it has no PUBACK for.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import mqtt from 'mqtt';
import { Mosquitto, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { createLogger } from '../../src/logging.js';
import { type Disposition, MqttConnection, RECEIVE_MAXIMUM } from '../../src/mqtt/connection.js';

interface Received {
  payload: string;
  settle: (disposition: Disposition) => void;
}

describe('the broker connection: PUBACKs after settling, in order', {
  skip: skipWithoutMosquitto(),
}, () => {
  let broker: Mosquitto;
  before(async () => {
    // More in flight than the agent's window: on MQTT 3.1.1 (no Receive Maximum to ask for),
    // only the connection itself keeps the broker from pushing them all at once.
    broker = await Mosquitto.start({ extraConfig: ['max_inflight_messages 100'] });
  });
  after(async () => {
    await broker?.stop();
  });

  /** A connection with a persistent session on `topic`, and what it received, in order. */
  async function connect(name: string, protocolVersion: 4 | 5 = 5) {
    const connection = new MqttConnection(
      {
        url: broker.url,
        protocolVersion,
        clientId: `acks-${name}`,
        keepaliveSec: 30,
        sessionExpirySec: 300,
        reconnectMinMs: 50,
        reconnectMaxMs: 200,
        subscriptions: [`acks/${name}`],
        will: { topic: `acks/${name}/status`, payload: '{"online":false}' },
      },
      createLogger({ level: 'silent' }),
    );
    const received: Received[] = [];
    connection.on('message', (_topic, payload, settle) =>
      received.push({ payload: payload.toString(), settle }),
    );
    let connects = 0;
    connection.on('connect', () => connects++);
    const connected = once(connection, 'connect', { signal: AbortSignal.timeout(20_000) });
    connection.connect();
    await connected;
    /** A QoS 1 publish and its PUBACK: the broker has read what this link sent before it. */
    const roundTrip = () => connection.client.publishAsync(`acks/${name}/probe`, 'x', { qos: 1 });
    // The subscription is made on CONNACK, before this round trip's answer.
    await roundTrip();
    return {
      roundTrip,
      connection,
      received,
      connects: () => connects,
      /** Drops the link as a network fault would; mqtt.js reconnects to the same session. */
      async drop() {
        const before = connects;
        connection.client.stream.destroy();
        await waitFor('the reconnect', () => connects > before);
      },
    };
  }

  async function publish(topic: string, payloads: string[]): Promise<void> {
    const publisher = await mqtt.connectAsync(broker.url, { protocolVersion: 5 });
    try {
      for (const p of payloads) await publisher.publishAsync(topic, p, { qos: 1 });
    } finally {
      await publisher.endAsync();
    }
  }

  it('hands over the next message before the first is settled; its PUBACK waits for the first', async () => {
    const c = await connect('order');
    try {
      await publish('acks/order', ['m1', 'm2']);
      // Both arrive while m1 is unsettled: mqtt.js did not wait for it.
      await waitFor('m1 and m2', () => c.received.length === 2);
      assert.deepEqual(
        c.received.map((r) => r.payload),
        ['m1', 'm2'],
      );
      c.received[1]!.settle('ack');
      // m1 is still unsettled, so neither PUBACK may have left: after the link drops, the
      // broker delivers both again.
      const first = c.received.splice(0);
      await c.roundTrip();
      await c.drop();
      await waitFor('m1 and m2 again', () => c.received.length === 2);
      assert.deepEqual(
        c.received.map((r) => r.payload),
        ['m1', 'm2'],
      );
      // A late settle from the old link sends nothing on the new one (other packet ids).
      first[0]!.settle('ack');
      // Settled out of order on the new link: both PUBACKs leave once m1 is settled.
      c.received[1]!.settle('ack');
      c.received[0]!.settle('ack');
      c.received.splice(0);
      // A round trip after them on the same link: the broker has read the PUBACKs before it.
      await c.roundTrip();
      await c.drop();
      // Nothing unacknowledged is left: the first message after this drop is a new one.
      await publish('acks/order', ['m3']);
      await waitFor('m3', () => c.received.length >= 1);
      assert.deepEqual(
        c.received.map((r) => r.payload),
        ['m3'],
      );
      c.received[0]!.settle('ack');
    } finally {
      await c.connection.end();
    }
  });

  it('a held message gets no PUBACK, nor does any later one: the link drops and both come again', async () => {
    const c = await connect('hold');
    try {
      await publish('acks/hold', ['h1', 'h2']);
      await waitFor('h1 and h2', () => c.received.length === 2);
      const connectsBefore = c.connects();
      c.received[1]!.settle('ack');
      c.received.splice(0)[0]!.settle('hold');
      await waitFor('the reconnect', () => c.connects() > connectsBefore);
      await waitFor('h1 and h2 again', () => c.received.length === 2);
      assert.deepEqual(
        c.received.map((r) => r.payload),
        ['h1', 'h2'],
      );
      for (const r of c.received) r.settle('ack');
    } finally {
      await c.connection.end();
    }
  });

  it('MQTT 3.1.1 to a broker with a wider window: at most RECEIVE_MAXIMUM unsettled and one parked, then one more per settle', async () => {
    const c = await connect('bound', 4);
    try {
      // All of them with the broker before the first reaches the agent's handler.
      await publish(
        'acks/bound',
        Array.from({ length: RECEIVE_MAXIMUM + 5 }, (_, i) => `b${i + 1}`),
      );
      await waitFor('the first batch', () => c.received.length >= RECEIVE_MAXIMUM + 1);
      // The window's twenty, and the one whose PUBACK mqtt.js could not make yet (parked).
      assert.equal(c.received.length, RECEIVE_MAXIMUM + 1);
      c.received[0]!.settle('ack');
      await waitFor('one more', () => c.received.length >= RECEIVE_MAXIMUM + 2);
      assert.equal(c.received.length, RECEIVE_MAXIMUM + 2);
      for (const r of c.received) r.settle('ack');
      await waitFor('all', () => c.received.length === RECEIVE_MAXIMUM + 5);
      for (const r of c.received.slice(RECEIVE_MAXIMUM + 2)) r.settle('ack');
      assert.deepEqual(
        c.received.map((r) => r.payload),
        Array.from({ length: RECEIVE_MAXIMUM + 5 }, (_, i) => `b${i + 1}`),
      );
    } finally {
      await c.connection.end();
    }
  });
});
