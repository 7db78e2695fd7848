/**
 * The broker settings the in-process end-to-end tests give `Agent.start`: a fast reconnect and a
 * keepalive short enough for a test, the rest as `printer-agent run` would set it.
 */
import type { AgentSettings } from '../../src/agent.js';
import { DEFAULT_TOPIC_PREFIX } from '../../src/protocol/print-protocol.js';

export function testMqtt(
  url: string,
  storeId: string,
  protocolVersion: 4 | 5 = 5,
): AgentSettings['mqtt'] {
  return {
    url,
    protocolVersion,
    prefix: DEFAULT_TOPIC_PREFIX,
    clientId: `printer-agent-${storeId}`,
    keepaliveSec: 10,
    sessionExpirySec: 3600,
    reconnectMinMs: 100,
    reconnectMaxMs: 1000,
    maxMessageBytes: 64 * 1024,
  };
}

/**
 * The store-side settings the in-process end-to-end tests share: no LATE mark, interrupted jobs
 * reprinted marked, a 5 s status, 14 days of retention, and instruction ages judged against a
 * clock taken as synchronized (the suites must not depend on the machine's NTP state).
 */
export function testAgentBasics(
  stateDir: string,
): Pick<
  AgentSettings,
  | 'lateAfterMinutes'
  | 'interruptedPolicy'
  | 'stateDir'
  | 'statusIntervalMs'
  | 'retentionDays'
  | 'freshness'
> {
  return {
    lateAfterMinutes: null,
    interruptedPolicy: 'reprint-marked',
    stateDir,
    statusIntervalMs: 5000,
    retentionDays: 14,
    freshness: { maxAgeMs: 7 * 86_400_000, clock: 'synchronized' },
  };
}
