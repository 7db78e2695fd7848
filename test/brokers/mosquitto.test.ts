/**
 * The broker conformance suite (test/brokers/conformance.ts) against Mosquitto 2, once with the
 * agent on MQTT 5 and once on MQTT 3.1.1, with the settings docs/brokers.md gives: persistence on
 * (sessions, queued messages and retained messages survive a restart), a raised
 * `max_queued_messages` (harness/mosquitto.ts) and `message_size_limit` 1 MiB (docs/protocol.md's
 * bound for MQTT 3.1.1): a larger publish is forwarded to no one; its publisher gets a PUBACK on
 * MQTT 3.1.1 and no answer at all on MQTT 5.
 */
import { type BrokerProfile, conformanceSuite } from './conformance.js';

const mosquitto = (protocolVersion: 4 | 5): BrokerProfile => ({
  kind: 'mosquitto',
  protocolVersion,
  options: { persistence: true, extraConfig: ['message_size_limit 1048576'] },
  mqtt5: 'accepted',
  brokerRestart: 'keeps',
  redeliveryAfterMs: null,
  oversized: { publisher: protocolVersion === 5 ? 'no-puback' : 'puback', agent: 'nothing' },
});

conformanceSuite(mosquitto(5));
conformanceSuite(mosquitto(4));
