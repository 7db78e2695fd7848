/**
 * The agent's broker connection leaves mqtt-packet's number cache empty (issue 16): by default
 * mqtt-packet builds a 2-byte Buffer for each of the 65,536 packet ids at its first write and
 * keeps them for the life of the process, 6.8 MB of a 70 MB agent (measured with --heap-prof).
 * The connection asks mqtt.js for `writeCache: false`; this file's process holds no other MQTT
 * client, so the cache is the connection's doing alone.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import numbers from 'mqtt-packet/numbers.js';
import { Mosquitto, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { createLogger } from '../../src/logging.js';
import { MqttConnection } from '../../src/mqtt/connection.js';

describe('the broker connection and mqtt-packet', { skip: skipWithoutMosquitto() }, () => {
  let broker: Mosquitto;
  before(async () => {
    broker = await Mosquitto.start();
  });
  after(async () => {
    await broker?.stop();
  });

  it('connects, subscribes and publishes at QoS 1 without building the packet-id cache', async () => {
    const connection = new MqttConnection(
      {
        url: broker.url,
        protocolVersion: 5,
        clientId: 'packet-cache-test',
        keepaliveSec: 30,
        sessionExpirySec: 60,
        reconnectMinMs: 100,
        reconnectMaxMs: 1000,
        subscriptions: ['packet-cache/in'],
        will: { topic: 'packet-cache/status', payload: '{"online":false}' },
      },
      createLogger({ level: 'error' }),
    );
    try {
      const connected = once(connection, 'connect', { signal: AbortSignal.timeout(20_000) });
      connection.connect();
      await connected;
      // A QoS 1 publish writes its packet id: with the cache, this is the write that builds it.
      await connection.client.publishAsync('packet-cache/out', 'x', { qos: 1 });
      const cache = numbers.cache;
      assert.equal(Object.keys(cache).length, 0, 'no Buffer kept per packet id');
    } finally {
      await connection.end();
    }
  });
});
