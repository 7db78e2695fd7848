/**
 * The order service's side of the broker: publishes signed print instructions to
 * `{prefix}/{storeId}/print` with QoS 1 (print-protocol §2). Lives here because only `src/mqtt/`
 * imports mqtt; the service sees it as an `InstructionPublisher`.
 *
 * `publish` resolves on the broker's PUBACK and rejects at once while disconnected. It never lets
 * mqtt.js queue a message offline: the service's outbox is the one durable queue, and a second,
 * in-memory one would publish the same instruction again after the outbox retried it.
 */
import mqtt, { type MqttClient } from 'mqtt';
import type { Logger } from '../logging.js';
import { topics } from '../protocol/print-protocol.js';

export interface PublisherOptions {
  url: string;
  topicPrefix: string;
  protocolVersion?: 4 | 5;
  clientId?: string;
  username?: string;
  password?: string;
  /** Called on every (re)connect, so the owner can drain its outbox at once. */
  onConnect?: () => void;
}

export class MqttPublisher {
  private readonly client: MqttClient;

  constructor(
    private readonly options: PublisherOptions,
    private readonly log?: Logger,
  ) {
    this.client = mqtt.connect(options.url, {
      protocolVersion: options.protocolVersion ?? 5,
      clientId: options.clientId ?? `order-service-${process.pid}`,
      clean: true,
      username: options.username,
      password: options.password,
      reconnectPeriod: 1000,
      connectTimeout: 10_000,
      queueQoSZero: false,
    });
    this.client.on('connect', () => {
      this.log?.info('order service connected to the broker');
      options.onConnect?.();
    });
    this.client.on('offline', () => this.log?.warn('order service lost the broker'));
    // mqtt.js emits connection errors here; without a listener they would crash the process.
    this.client.on('error', (error) => this.log?.warn({ err: error.message }, 'broker error'));
  }

  get connected(): boolean {
    return this.client.connected;
  }

  publish(storeId: string, body: string): Promise<void> {
    if (!this.client.connected) return Promise.reject(new Error('broker not connected'));
    const topic = topics(this.options.topicPrefix, storeId).print;
    return new Promise((resolve, reject) => {
      this.client.publish(topic, body, { qos: 1, retain: false }, (error) =>
        error ? reject(error) : resolve(),
      );
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.client.end(false, {}, () => resolve()));
  }
}
