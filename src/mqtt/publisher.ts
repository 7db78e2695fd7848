/**
 * The order service's side of the broker: publishes signed print instructions to
 * `{prefix}/{storeId}/print` with QoS 1 (print-protocol §2). Lives here because only `src/mqtt/`
 * imports mqtt; the service sees it as an `InstructionPublisher`.
 *
 * `publish` resolves on the broker's PUBACK and rejects at once while disconnected. It never lets
 * mqtt.js queue a message offline: the service's outbox is the one durable queue, and a second,
 * in-memory one would publish the same instruction again after the outbox retried it.
 *
 * For an mqtts:// URL, `tls` names the CA file that verifies the broker certificate and the
 * client certificate a broker may require, with the same option names as the agent's
 * `mqtt.tls`. A broker certificate that does not verify is refused (mqtt.js reports it as an
 * `error`, logged) and retried like a broker that is down: nothing is published to it.
 */
import { readFileSync } from 'node:fs';
import mqtt, { type MqttClient } from 'mqtt';
import { AgentError } from '../errors.js';
import type { Logger } from '../logging.js';
import { topics } from '../protocol/print-protocol.js';

export interface PublisherOptions {
  url: string;
  topicPrefix: string;
  protocolVersion?: 4 | 5;
  clientId?: string;
  username?: string;
  password?: string;
  /** TLS for mqtts:// URLs; file paths as given (the caller resolves them). */
  tls?: PublisherTls;
  /** Called on every (re)connect, so the owner can drain its outbox at once. */
  onConnect?: () => void;
}

export interface PublisherTls {
  /** PEM CA certificate(s) that verify the broker; default the system CAs. */
  caFile?: string;
  /** PEM client certificate, with `keyFile`, for brokers that require one. */
  certFile?: string;
  keyFile?: string;
  /** Verify the broker certificate (default true); off only for a test broker. */
  rejectUnauthorized?: boolean;
}

/** Reads a TLS file once at start; a missing file is a config error naming the option. */
function readTlsFile(option: string, file: string | undefined): Buffer | undefined {
  if (file === undefined) return undefined;
  try {
    return readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new AgentError('CONFIG_INVALID', `mqtt.tls.${option}: cannot read ${file} (${code})`);
  }
}

export class MqttPublisher {
  private readonly client: MqttClient;

  constructor(
    private readonly options: PublisherOptions,
    private readonly log?: Logger,
  ) {
    const tls = options.tls;
    this.client = mqtt.connect(options.url, {
      ca: readTlsFile('caFile', tls?.caFile),
      cert: readTlsFile('certFile', tls?.certFile),
      key: readTlsFile('keyFile', tls?.keyFile),
      rejectUnauthorized: tls?.rejectUnauthorized ?? true,
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
