/**
 * The broker conformance suite (test/brokers/conformance.ts) against nats-server 2.9 with
 * JetStream and its MQTT listener (MQTT 3.1.1 only), with the settings docs/brokers.md gives:
 * server_name, a JetStream store dir, the mqtt block. Two things differ from the other brokers:
 * a message the agent did not acknowledge comes back only after `mqtt.ack_wait` (30 s by default;
 * 3 s here to keep the suite short), not when the agent reconnects; and no setting bounds the size
 * of an MQTT publish (`max_payload` is not applied to it), so 2 MiB reaches the agent.
 */
import { type BrokerProfile, conformanceSuite } from './conformance.js';

const ACK_WAIT_MS = 3000;

const nats: BrokerProfile = {
  kind: 'nats',
  protocolVersion: 4,
  options: { natsMqtt: [`ack_wait: "${ACK_WAIT_MS / 1000}s"`] },
  mqtt5: 'refused',
  brokerRestart: 'keeps',
  redeliveryAfterMs: ACK_WAIT_MS,
  oversized: { publisher: 'puback', agent: 'rejected' },
};

conformanceSuite(nats);
