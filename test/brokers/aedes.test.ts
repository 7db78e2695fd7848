/**
 * The broker conformance suite (test/brokers/conformance.ts) against aedes, the broker the demo
 * embeds (MQTT 3.1.1 only), in this process. Its storage is aedes-persistence in memory: handed to
 * the restarted broker (test/helpers/brokers.ts), it stands for a persistent backend
 * (aedes-persistence-level, -redis, -mongodb); the demo's broker has none, and a restart loses
 * everything. It has no setting that bounds the size of a publish: 2 MiB reaches the agent, which
 * rejects it.
 */
import { type BrokerProfile, conformanceSuite } from './conformance.js';

const aedes: BrokerProfile = {
  kind: 'aedes',
  protocolVersion: 4,
  options: { persistence: true },
  mqtt5: 'refused',
  brokerRestart: 'keeps',
  redeliveryAfterMs: null,
  oversized: { publisher: 'puback', agent: 'rejected' },
};

conformanceSuite(aedes);
// As the demo embeds it: nothing survives a restart.
conformanceSuite({
  ...aedes,
  options: { persistence: false },
  brokerRestart: 'loses',
  cases: ['restart'],
});
