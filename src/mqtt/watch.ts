/**
 * A read-only observer of topics, for the demo: it sees the agent's retained status (so the demo
 * creates orders only once the agent has subscribed) and its job events. Clean session, QoS 1,
 * never publishes. Lives here because only `src/mqtt/` imports mqtt.
 */
import mqtt, { type MqttClient } from 'mqtt';

export interface TopicWatch {
  close(): Promise<void>;
}

/**
 * Subscribes to `topics` and calls `onMessage` for each message, retained ones included.
 * Resolves after the broker acknowledged the subscription; rejects when it cannot connect within
 * `timeoutMs`.
 */
export function watchTopics(
  options: { url: string; protocolVersion: 4 | 5; topics: string[]; timeoutMs?: number },
  onMessage: (topic: string, payload: Buffer, retained: boolean) => void,
): Promise<TopicWatch> {
  const client: MqttClient = mqtt.connect(options.url, {
    protocolVersion: options.protocolVersion,
    clientId: `printer-agent-watch-${process.pid}-${Math.random().toString(16).slice(2, 8)}`,
    clean: true,
    reconnectPeriod: 500,
    connectTimeout: options.timeoutMs ?? 10_000,
  });
  client.on('message', (topic, payload, packet) => onMessage(topic, payload, packet.retain));
  const close = () => new Promise<void>((resolve) => client.end(true, {}, () => resolve()));
  return new Promise<TopicWatch>((resolve, reject) => {
    const timer = setTimeout(() => {
      void close();
      reject(new Error(`cannot watch ${options.url}: no connection`));
    }, options.timeoutMs ?? 10_000);
    // mqtt.js reports connection errors here; without a listener they would crash the process.
    client.on('error', () => {});
    client.once('connect', () => {
      client.subscribe(options.topics, { qos: 1 }, (error) => {
        clearTimeout(timer);
        if (error) {
          void close();
          reject(error);
        } else resolve({ close });
      });
    });
  });
}
