/**
 * The environment the systemd unit gives the agent (its `Environment=` lines: NODE_ENV,
 * NODE_OPTIONS, MALLOC_ARENA_MAX...), read from systemd/printer-agent.service: tests and benches
 * that start the agent the way a store does pass it on.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './child-entry.js';

export function unitEnvironment(): Record<string, string> {
  const unit = readFileSync(join(ROOT, 'systemd', 'printer-agent.service'), 'utf8');
  return Object.fromEntries(
    [...unit.matchAll(/^Environment="?([A-Z_]+)=([^"\n]*)"?$/gm)].map((m) => [m[1]!, m[2]!]),
  );
}
