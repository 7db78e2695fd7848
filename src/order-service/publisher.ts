/**
 * Where print instructions go. The service does not import MQTT: the composition root plugs in
 * `src/mqtt/`'s publisher, which sends `body` (the signed envelope of print-protocol §3) to
 * `{prefix}/{storeId}/print` with QoS 1. `publish` resolves once the broker acknowledged it and
 * rejects when it could not be handed over (broker down); the outbox then keeps it.
 */
export interface InstructionPublisher {
  publish(storeId: string, body: string): Promise<void>;
}

/** For a service run without a broker: instructions stay in the outbox. */
export const offlinePublisher: InstructionPublisher = {
  publish: () => Promise.reject(new Error('no broker configured')),
};
