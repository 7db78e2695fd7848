/**
 * The broker conformance suite (test/brokers/conformance.ts) against RabbitMQ 3.10 with the
 * rabbitmq_mqtt plugin (MQTT 3.1.1 only), a node of its own on free ports
 * (test/helpers/brokers.ts). Settings from docs/brokers.md: the MQTT listener, and
 * `max_message_size` 1 MiB, under which a larger publish is refused without an answer (its
 * publisher never gets a PUBACK). Sessions are durable queues and the retained store is on disk
 * (the plugin's defaults), so both survive a restart.
 */
import { conformanceSuite } from './conformance.js';

conformanceSuite({
  kind: 'rabbitmq',
  protocolVersion: 4,
  options: { extraConfig: ['max_message_size = 1048576'] },
  mqtt5: 'closed',
  brokerRestart: 'keeps',
  redeliveryAfterMs: null,
  oversized: { publisher: 'no-puback', agent: 'nothing' },
});
