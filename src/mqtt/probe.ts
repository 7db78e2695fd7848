/**
 * One connection attempt to the broker for `printer-agent doctor`: clean session, its own client
 * id (`<clientId>-doctor`, so it never takes over the agent's persistent session), no reconnect,
 * no last will, disconnect right after CONNACK. Lives here because only `src/mqtt/` imports mqtt.
 */
import { readFileSync } from 'node:fs';
import mqtt, { type IClientOptions } from 'mqtt';
import { type TlsFailure, tlsFailure } from '../host/tls-failure.js';

export interface ProbeOptions {
  url: string;
  protocolVersion: 4 | 5;
  /** The agent's client id; the probe connects as `<clientId>-doctor`. */
  clientId: string;
  username?: string;
  /** SECRET: sent to the broker only, never part of a reason. */
  password?: string;
  tls?: { caFile?: string; certFile?: string; keyFile?: string; rejectUnauthorized?: boolean };
}

/**
 * `tls`: the TLS check that failed (unknown CA, expired, host name, client certificate...).
 * `maximumPacketSize`: the largest packet the broker accepts, when its MQTT 5 CONNACK says.
 * `fix`: the setting to change, when the failure names one (a broker that speaks MQTT 3.1.1 only).
 */
export type ProbeResult =
  | { ok: true; maximumPacketSize?: number }
  | { ok: false; reason: string; tls?: TlsFailure; fix?: string };

/** mqtt.js's refusal codes for an MQTT version the broker does not speak (3.1.1: 1; MQTT 5: 0x84). */
const VERSION_REFUSED = new Set([1, 0x84]);
const CLOSED = 'connection closed by the broker';
// The command, not docs/brokers.md: that file is in the sources only, not on a store's Pi.
const MQTT_311_FIX =
  'set mqtt.protocolVersion to 4 (MQTT 3.1.1): sudo printer-agent config set mqtt.protocolVersion 4';

/**
 * Connects once and disconnects; the reason names what failed, never a credential. A broker that
 * refuses MQTT 5 (aedes, NATS 2.9: a CONNACK saying so; RabbitMQ 3.x: it closes the connection,
 * and then a second attempt on MQTT 3.1.1 tells) is reported with the fix.
 */
export async function probeBroker(options: ProbeOptions, timeoutMs = 5000): Promise<ProbeResult> {
  const { refusedVersion, ...result } = await probeOnce(options, timeoutMs);
  if (result.ok || options.protocolVersion !== 5) return result;
  if (refusedVersion)
    return {
      ok: false,
      reason: `the broker refused MQTT 5 (${result.reason}): it speaks MQTT 3.1.1 only`,
      fix: MQTT_311_FIX,
    };
  if (
    result.reason === CLOSED &&
    (await probeOnce({ ...options, protocolVersion: 4 }, timeoutMs)).ok
  )
    return {
      ok: false,
      reason: `${CLOSED} on MQTT 5, and accepted on MQTT 3.1.1: it speaks MQTT 3.1.1 only`,
      fix: MQTT_311_FIX,
    };
  return result;
}

/** One attempt; `refusedVersion` when the broker's CONNACK refused the protocol version. */
type Attempt = ProbeResult & { refusedVersion?: true };

function probeOnce(options: ProbeOptions, timeoutMs: number): Promise<Attempt> {
  let clientOptions: IClientOptions;
  try {
    const tls = options.tls;
    const read = (file: string | undefined) => (file ? readFileSync(file) : undefined);
    clientOptions = {
      protocolVersion: options.protocolVersion,
      clientId: `${options.clientId}-doctor`,
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: timeoutMs,
      username: options.username,
      password: options.password,
      ca: read(tls?.caFile),
      cert: read(tls?.certFile),
      key: read(tls?.keyFile),
      rejectUnauthorized: tls?.rejectUnauthorized ?? true,
    };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    return Promise.resolve({ ok: false, reason: `cannot read a TLS file (${code})` });
  }
  return new Promise((resolve) => {
    const client = mqtt.connect(options.url, clientOptions);
    let settled = false;
    const finish = (result: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.end(true, {}, () => resolve(result));
    };
    const timer = setTimeout(
      () => finish({ ok: false, reason: `no answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
    client.once('connect', (connack) => {
      const max = connack.properties?.maximumPacketSize;
      finish(typeof max === 'number' ? { ok: true, maximumPacketSize: max } : { ok: true });
    });
    client.on('error', (error) => {
      const reasonCode = (error as { code?: unknown }).code;
      if (typeof reasonCode === 'number' && VERSION_REFUSED.has(reasonCode))
        return finish({ ok: false, reason: error.message, refusedVersion: true });
      const tls = tlsFailure(error, { clientCertificate: options.tls?.certFile !== undefined });
      if (tls)
        return finish({ ok: false, reason: `TLS check failed (${tls.check}): ${tls.reason}`, tls });
      const code = (error as NodeJS.ErrnoException).code;
      const known = !code || error.message.includes(code);
      finish({ ok: false, reason: known ? error.message : `${error.message} (${code})` });
    });
    client.once('close', () => finish({ ok: false, reason: CLOSED }));
  });
}
