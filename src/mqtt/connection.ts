/**
 * The agent's broker connection: the daemon's only user of `mqtt` (architecture: one room per I/O
 * library; the CLI's probe and watch and the order service's publisher have their own).
 *
 * - Fixed client id per store and a persistent session (`clean: false`; on MQTT 5 also a session
 *   expiry interval, without which the session ends at disconnect), QoS 1 subscriptions: the
 *   broker keeps instructions while the agent is away (reliability guarantee 2).
 * - Ack after commit (guarantee 1): `handleMessage` is overridden, and the PUBACK mqtt.js makes
 *   for a message is held here until the message is settled `ack`, which the inbox does after the
 *   commit that stored it. mqtt.js is let go on to the next message at once, so the messages of
 *   one read reach the inbox together and share one commit (decision 211); their PUBACKs leave in
 *   the order the messages came (MQTT 3.1.1 §4.6). This one path works on MQTT 5 and 3.1.1 alike
 *   (mqtt.js calls handleMessage before the PUBACK on both; on 3.1.1 `customHandleAcks` is
 *   ignored). A message the store cannot take is never acked: the connection is dropped and
 *   re-established, and the broker redelivers it and every later one not acked yet.
 * - Handlers are registered before connecting: a resumed session delivers right after CONNACK.
 * - Reconnect with capped exponential backoff; the retained last will marks the agent offline.
 * - Sizes (print-protocol v1.1 §9): on MQTT 5 the CONNECT asks for `maximumPacketSize`, so the
 *   broker never sends the agent a packet larger than that (it drops it instead): a 200 MiB
 *   publish never reaches the process. The bound is well above the message limit, so an
 *   oversized instruction still arrives and is answered `rejected` (TOO_LARGE). MQTT 3.1.1 has no
 *   such field: the broker's own limit (Mosquitto `message_size_limit`) is the only bound there.
 * - What the broker cannot promise is said in the journal (issue 19, docs/brokers.md): on MQTT
 *   3.1.1, once at the first CONNACK, that the session's lifetime and the packet bound are the
 *   broker's settings; at every CONNACK without a session, that instructions published meanwhile
 *   were not kept (the composition root asks catch-up for them); a broker that refuses MQTT 5
 *   (aedes, NATS 2.9 answer "unacceptable protocol version", RabbitMQ 3.x closes the connection)
 *   gets the fix named. A refused CONNECT is retried with the backoff like any other failure: a
 *   refusal can be passing (a broker still booting, an account being provisioned).
 */
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isIP, connect as netConnect } from 'node:net';
import type { Duplex } from 'node:stream';
import type { IClientOptions, IPublishPacket, MqttClient } from 'mqtt';
import mqttClient from 'mqtt/lib/client';
import { AgentError, errorMessage } from '../errors.js';
import { tlsFailure } from '../host/tls-failure.js';
import { faultPoint } from '../jobs/fault-points.js';
import type { Logger } from '../logging.js';

export interface MqttConnectionOptions {
  url: string;
  protocolVersion: 4 | 5;
  clientId: string;
  keepaliveSec: number;
  sessionExpirySec: number;
  username?: string;
  password?: string;
  tls?: { caFile?: string; certFile?: string; keyFile?: string; rejectUnauthorized?: boolean };
  reconnectMinMs: number;
  reconnectMaxMs: number;
  subscriptions: string[];
  will: { topic: string; payload: string };
  /** MQTT 5 `maximumPacketSize` asked of the broker (bytes); absent: none asked. */
  maxPacketBytes?: number;
  /**
   * Whether catch-up fills what a lost session missed; only the journal's words depend on it.
   * Absent: not known here.
   */
  catchUp?: boolean;
}

/** mqtt.js's debug log, switched off (the agent's own log says what happens on the link). */
function noLog(): void {}

/**
 * Messages the broker may have in flight to the agent (MQTT 5 Receive Maximum), and so the most
 * one commit of the inbox holds: Mosquitto's own `max_inflight_messages` default, which MQTT
 * 3.1.1 links get from the broker's side.
 */
export const RECEIVE_MAXIMUM = 20;

/** mqtt.js's refusal codes for an MQTT version the broker does not speak (3.1.1: 1; MQTT 5: 0x84). */
const VERSION_REFUSED = new Set([1, 0x84]);
/** Connections in a row closed by the broker before any CONNACK, before the MQTT 3.1.1 hint. */
const SILENT_CLOSES_HINT = 3;

/** What the inbox decides for a message: `ack` once it is stored (or rejected and recorded). */
export type Disposition = 'ack' | 'hold';

/**
 * What the connection announces, the way the MQTT.js client does. A `message` listener settles
 * each message: `ack` once it is stored (the PUBACK goes out then, guarantee 1), `hold` when it
 * could not be (no PUBACK: the broker redelivers it). A message nobody listens to is held.
 */
export interface MqttConnectionEvents {
  connect: [sessionPresent: boolean];
  offline: [];
  message: [topic: string, payload: Buffer, settle: (disposition: Disposition) => void];
}

/** A received message's PUBACK, held until the message is settled (`ack` after its commit). */
interface AckSlot {
  topic: string;
  messageId: number | undefined;
  disposition: Disposition | null;
  /** Sends the PUBACK mqtt.js made; null until mqtt.js made it (a no-op for QoS 0). */
  send: (() => void) | null;
}

/** mqtt.js's packet writer, which the connection wraps to hold PUBACKs (private in its types). */
type SendPacket = (packet: { cmd: string; messageId?: number }, ...rest: unknown[]) => void;

export class MqttConnection extends EventEmitter<MqttConnectionEvents> {
  readonly client: MqttClient;
  /**
   * The PUBACKs of this connection's messages not sent yet, in the order the messages came: each
   * leaves when its message and every earlier one are settled. Emptied when the connection
   * closes: the broker redelivers what was not acknowledged.
   */
  private acks: AckSlot[] = [];
  /** mqtt.js's callback for a message past RECEIVE_MAXIMUM unsent PUBACKs, until they are fewer. */
  private parked: (() => void) | null = null;
  private flushing = false;
  private attempts = 0;
  /** This attempt's TLS failure is logged already. */
  private tlsLogged = false;
  /** This process had a CONNACK before: a later one without a session means it was lost. */
  private connectedBefore = false;
  /** This connection attempt got a CONNACK, or failed with an error of its own. */
  private answered = false;
  /** Attempts in a row the broker closed before answering CONNECT (RabbitMQ 3.x and MQTT 5). */
  private silentCloses = 0;
  /** The MQTT 5 refusal (or the hint) is logged already, until the next CONNACK. */
  private versionLogged = false;
  /** end() was called: nothing may schedule a reconnect any more. */
  private stopped = false;
  /** The broker ended this attempt's connection (its FIN, not our own close). */
  private remoteEnded = false;

  /** Nothing happens before `connect()`: listeners registered until then see every message. */
  constructor(
    private readonly options: MqttConnectionOptions,
    private readonly log: Logger,
  ) {
    super();
    const tls = options.tls;
    const read = (file: string | undefined) => (file ? readFileSync(file) : undefined);
    const clientOptions: IClientOptions = {
      protocolVersion: options.protocolVersion,
      clientId: options.clientId,
      clean: false,
      keepalive: options.keepaliveSec,
      reconnectPeriod: options.reconnectMinMs,
      connectTimeout: 10_000,
      username: options.username,
      password: options.password,
      ca: read(tls?.caFile),
      cert: read(tls?.certFile),
      key: read(tls?.keyFile),
      rejectUnauthorized: tls?.rejectUnauthorized ?? true,
      will: {
        topic: options.will.topic,
        payload: Buffer.from(options.will.payload),
        qos: 1,
        retain: true,
      },
      ...(options.protocolVersion === 5
        ? {
            properties: {
              sessionExpiryInterval: options.sessionExpirySec,
              // Flow control (MQTT 5 §3.1.2.11.3): without it Mosquitto pushed a whole burst in
              // at once (batches of 2,500). The connection enforces it itself too (mqtt.js parked
              // on the 21st): MQTT 3.1.1 has no such field (decision 211).
              receiveMaximum: RECEIVE_MAXIMUM,
              ...(options.maxPacketBytes !== undefined
                ? { maximumPacketSize: options.maxPacketBytes }
                : {}),
            },
          }
        : {}),
      manualConnect: true,
      // mqtt.js gives up for good after a refused CONNECT unless told otherwise: a daemon retries.
      reconnectOnConnackError: true,
      // mqtt-packet otherwise builds a 2-byte Buffer for each of the 65,536 packet ids at the first
      // write and keeps them: 6.8 MB of the agent's heap for its whole life (issue 16, measured
      // with --heap-prof). Without the cache it makes the two bytes of each id it writes.
      writeCache: false,
      // mqtt.js logs through `debug` dozens of times per packet; its disabled logger still
      // gathers each call's arguments into an array: ~10 KB of garbage per printed job (issue 16).
      log: noLog,
    };
    // `mqtt/lib/client` is CommonJS: its class is the module's `default` export.
    this.client = new mqttClient.default(
      streamBuilder(options.url, clientOptions, () => {
        this.remoteEnded = true;
      }),
      clientOptions,
    );
    // As mqtt.connect does: an error nobody listens to must not throw (ours is registered below).
    this.client.on('error', () => undefined);
    // The PUBACK mqtt.js sends when handleMessage calls back is taken into the message's slot and
    // sent once the message is settled (`flushAcks`), not at once. `_sendPacket` is mqtt.js's
    // private writer (pinned version; test/agent/broker-acks.test.ts shows the PUBACKs held).
    const client = this.client as unknown as { _sendPacket?: SendPacket };
    if (typeof client._sendPacket !== 'function')
      throw new Error('mqtt.js has no _sendPacket: the PUBACKs cannot be held until the commit');
    const sendPacket = client._sendPacket.bind(this.client);
    client._sendPacket = (packet, ...rest) => {
      const slot = packet.cmd === 'puback' ? this.unsentAck(packet.messageId) : undefined;
      if (!slot) return sendPacket(packet, ...rest);
      slot.send = () => sendPacket(packet);
      // mqtt.js's callback: it goes on to the next message now.
      (rest[0] as (() => void) | undefined)?.();
      if (!this.flushing) this.flushAcks();
    };
    // Before connect(): a resumed session delivers its queue right after CONNACK.
    this.client.handleMessage = (packet: IPublishPacket, callback: (error?: Error) => void) => {
      const slot: AckSlot = {
        topic: packet.topic,
        messageId: packet.messageId,
        disposition: null,
        send: packet.qos > 0 ? null : () => undefined,
      };
      this.acks.push(slot);
      // mqtt.js makes the PUBACK (taken into the slot) and parses the next message, unless
      // RECEIVE_MAXIMUM messages wait for theirs already: then it waits too, and with it the
      // socket, so no broker can push more into the process than that (`flushAcks` lets it go).
      if (this.acks.length <= RECEIVE_MAXIMUM) callback();
      else this.parked = callback;
      // handle() catches what the inbox throws; this catch is for a bug in handle itself, which
      // must not become an unhandled rejection (reliability guarantee 11: the daemon stays up).
      this.handle(packet, slot).catch((error: unknown) =>
        this.log.error({ err: errorMessage(error) }, 'message handling failed'),
      );
    };
    this.client.on('connect', (connack) => {
      this.attempts = 0;
      this.answered = true;
      this.silentCloses = 0;
      this.versionLogged = false;
      this.client.options.reconnectPeriod = options.reconnectMinMs;
      this.log.info({ sessionPresent: connack.sessionPresent }, 'connected to the broker');
      if (!this.connectedBefore && options.protocolVersion === 4) this.warnMqtt311();
      if (connack.sessionPresent !== true) this.warnNoSession();
      this.connectedBefore = true;
      this.client.subscribe(options.subscriptions, { qos: 1 }, (error) => {
        if (error) this.log.error({ err: errorMessage(error) }, 'subscribe failed');
      });
      this.emit('connect', connack.sessionPresent === true);
    });
    this.client.on('reconnect', () => {
      if (this.stopped) return;
      // Capped exponential backoff: mqtt.js reads reconnectPeriod each time it schedules.
      this.attempts++;
      const next = Math.min(
        options.reconnectMaxMs,
        options.reconnectMinMs * 2 ** Math.min(this.attempts, 10),
      );
      this.client.options.reconnectPeriod = Math.round(next / 2 + Math.random() * (next / 2));
    });
    this.client.on('offline', () => this.emit('offline'));
    this.client.on('error', (error) => {
      this.answered = true;
      const code = (error as { code?: unknown }).code;
      if (options.protocolVersion === 5 && typeof code === 'number' && VERSION_REFUSED.has(code))
        return this.versionRefused({ refused: error.message });
      // A failed TLS check is logged once per attempt as an error naming the check and the fix
      // (tls-failure.ts); mqtt.js reports it twice and then retries like any other failure.
      const failure = tlsFailure(error, { clientCertificate: tls?.certFile !== undefined });
      if (!failure) return this.log.warn({ err: errorMessage(error) }, 'broker connection error');
      if (this.tlsLogged) return;
      this.tlsLogged = true;
      this.log.error(
        { err: errorMessage(error), tlsCheck: failure.check, fix: failure.fix },
        `broker TLS check failed (${failure.check}): ${failure.reason}; not connected, will retry`,
      );
    });
    this.client.on('close', () => {
      // Not acknowledged on that connection: the broker redelivers them on the next one, under
      // new packet ids (a late settle of these slots sends nothing).
      this.acks = [];
      this.parked = null;
      this.tlsLogged = false;
      // Closed by the broker without a CONNACK or an error of its own: how RabbitMQ 3.x answers
      // MQTT 5 (not a CONNACK that never came: mqtt.js closes that one itself).
      if (!this.answered && this.remoteEnded && options.protocolVersion === 5) {
        this.silentCloses++;
        if (this.silentCloses === SILENT_CLOSES_HINT)
          this.versionRefused({ silentCloses: SILENT_CLOSES_HINT });
      }
      this.answered = false;
      this.remoteEnded = false;
    });
  }

  /** MQTT 3.1.1 has no fields for two of the promises: the broker's settings keep them. */
  private warnMqtt311(): void {
    this.log.warn(
      { protocolVersion: 4, missing: ['sessionExpiryInterval', 'maximumPacketSize'] },
      'MQTT 3.1.1: the agent cannot ask the broker to keep its session for mqtt.sessionExpirySec ' +
        "nor to hold back packets over its size bound; the broker's own settings keep those " +
        "promises (its session expiry and message size limit: Mosquitto's " +
        'persistent_client_expiration and message_size_limit)',
    );
  }

  /**
   * The broker has no session for the agent: what it queued meanwhile is gone (reliability
   * guarantee 2 not kept), and only catch-up (guarantee 7) can fill the gap.
   */
  private warnNoSession(): void {
    const why = this.connectedBefore
      ? 'the broker lost this agent session (it expired, or the broker restarted without persistence)'
      : 'the broker has no session for this agent (a first start, or it expired or was lost while the agent was away)';
    const fill =
      this.options.catchUp === true
        ? 'catch-up asks the order service for them now'
        : this.options.catchUp === false
          ? 'catch-up is off, so they print only if published again'
          : 'catch-up, when on, asks the order service for them';
    this.log.warn(
      { sessionPresent: false, promise: 'persistent session', catchUp: this.options.catchUp },
      `${why}: instructions published while it was not connected are not delivered; ${fill}`,
    );
  }

  /**
   * Once per streak of failed attempts: the broker refused MQTT 5 (a CONNACK saying so), or may
   * have (it closed the connection before answering, as RabbitMQ 3.x does), and the fix.
   */
  private versionRefused(seen: { refused: string } | { silentCloses: number }): void {
    if (this.versionLogged) return;
    this.versionLogged = true;
    const fix = 'mqtt.protocolVersion: 4';
    if ('refused' in seen)
      this.log.error(
        { protocolVersion: 5, err: seen.refused, fix },
        'the broker refused MQTT 5 (aedes and NATS 2.9 speak MQTT 3.1.1 only): set ' +
          'mqtt.protocolVersion to 4; not connected, will retry',
      );
    else
      this.log.error(
        { protocolVersion: 5, silentCloses: seen.silentCloses, fix },
        `the broker closed the connection ${seen.silentCloses} times without answering CONNECT, ` +
          'as a broker that speaks MQTT 3.1.1 only (RabbitMQ 3.x) does to MQTT 5: if it is one, ' +
          'set mqtt.protocolVersion to 4; not connected, will retry',
      );
  }

  connect(): void {
    this.client.connect();
  }

  private async handle(packet: IPublishPacket, slot: AckSlot): Promise<void> {
    const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
    let disposition: Disposition;
    try {
      disposition = await new Promise<Disposition>((settle) => {
        if (!this.emit('message', packet.topic, payload, settle)) settle('hold');
      });
    } catch (error) {
      this.log.error({ err: errorMessage(error) }, 'message handler failed');
      disposition = 'hold';
    }
    slot.disposition = disposition;
    this.flushAcks();
  }

  /** The slot of a message whose PUBACK mqtt.js is sending now (the newest with that id). */
  private unsentAck(messageId: number | undefined): AckSlot | undefined {
    for (let i = this.acks.length - 1; i >= 0; i--) {
      const slot = this.acks[i]!;
      if (slot.messageId === messageId && slot.send === null) return slot;
    }
    return undefined;
  }

  /** Sends the PUBACKs of the settled messages at the head, in order; a held one drops the link. */
  private flushAcks(): void {
    this.flushing = true;
    try {
      this.sendSettled();
    } finally {
      this.flushing = false;
    }
  }

  private sendSettled(): void {
    while (this.acks.length > 0) {
      if (this.parked && this.acks.length <= RECEIVE_MAXIMUM) {
        // Room again: mqtt.js makes the parked message's PUBACK (into its slot) and goes on.
        const parked = this.parked;
        this.parked = null;
        parked();
      }
      const head = this.acks[0]!;
      if (head.disposition === null || head.send === null) return;
      this.acks.shift();
      if (head.disposition === 'ack') {
        head.send();
        faultPoint('after-ack');
        continue;
      }
      // Not stored: no PUBACK. Drop the connection so the broker keeps the message in the session
      // and redelivers it when we are back (holding the ack would stall every message behind it).
      this.acks = [];
      this.parked = null;
      if (this.client.stream?.destroyed) return;
      this.log.warn(
        { topic: head.topic },
        'message not stored: not acknowledged; reconnecting for redelivery',
      );
      this.client.stream?.destroy();
      return;
    }
  }

  publish(topic: string, payload: string, options: { retain: boolean }): Promise<void> {
    return new Promise((resolve, reject) => {
      this.client.publish(topic, payload, { qos: 1, retain: options.retain }, (error) => {
        if (error)
          reject(
            new AgentError('BROKER_UNAVAILABLE', `publish to ${topic} failed: ${error.message}`, {
              cause: error,
            }),
          );
        else resolve();
      });
    });
  }

  get connected(): boolean {
    return this.client.connected;
  }

  /** Graceful stop: the status is already published; `end` sends DISCONNECT (no last will). */
  end(): Promise<void> {
    // No reconnect from here on. With manualConnect, mqtt.js forgets that it is ending once the
    // stores are closed, and the late `close` of an attempt still under way (a refused CONNECT)
    // would schedule a reconnect timer that keeps the process alive after the agent stopped.
    this.stopped = true;
    this.client.options.reconnectPeriod = 0;
    return new Promise((resolve) => this.client.end(false, {}, () => resolve()));
  }
}

/**
 * The socket of each (re)connect for `mqtt://` and `mqtts://` (the only schemes the config
 * allows), made as mqtt.js's own tcp and tls builders make it. `mqtt.connect` would load its
 * table of every transport first (WebSocket, SOCKS proxy, mini-program sockets): 4 MB of RSS and
 * ~35 ms of start for nothing a store uses (issue 16, measured on the bundle).
 */
function streamBuilder(
  url: string,
  options: IClientOptions,
  remoteEnded: () => void,
): (client: MqttClient) => Duplex {
  const parsed = new URL(url);
  // `new URL` keeps IPv6 literals in brackets; sockets want the bare address.
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  const secure = parsed.protocol === 'mqtts:';
  const port = Number(parsed.port) || (secure ? 8883 : 1883);
  return (client) => {
    if (!secure) return netConnect({ host, port }).once('end', remoteEnded);
    const rejectUnauthorized = options.rejectUnauthorized !== false;
    // node:tls loads with the first mqtts:// connection, not with the agent: on a plain broker
    // link it is never needed, and loading it cost the start ~5 ms (issue 16: exec -> online).
    const tls = createRequire(import.meta.url)('node:tls') as typeof import('node:tls');
    const socket = tls.connect({
      host,
      port,
      ...(isIP(host) === 0 ? { servername: host } : {}),
      ca: options.ca,
      cert: options.cert,
      key: options.key,
      rejectUnauthorized,
    });
    // A failed handshake is the client's error (logged once per attempt, with the check that
    // failed: tls-failure.ts), and the socket ends so that the client reconnects later.
    const handshakeFailed = (error: Error) => {
      if (rejectUnauthorized) client.emit('error', error);
      socket.end();
    };
    socket.on('error', handshakeFailed);
    socket.once('end', remoteEnded);
    socket.on('secureConnect', () => {
      if (rejectUnauthorized && !socket.authorized)
        socket.emit('error', new Error('TLS not authorized'));
      else socket.removeListener('error', handshakeFailed);
    });
    return socket;
  };
}
