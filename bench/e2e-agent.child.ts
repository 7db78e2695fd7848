/**
 * The agent alone in a child process for bench/e2e.bench.ts, so its RSS is its own, started with
 * the unit's environment and V8 setting as `printer-agent run` starts it. Driven over
 * the IPC channel: `{ type: 'start', settings }` -> `{ type: 'started' }`; `{ type: 'rss' }` ->
 * `{ type: 'rss', rss }` (after a full GC when --expose-gc is given); `{ type: 'stop' }` stops the
 * agent and exits.
 */
import { setFlagsFromString } from 'node:v8';
import { Agent, type AgentSettings } from '../src/agent.js';
import { createLogger } from '../src/logging.js';

type Command = { type: 'start'; settings: AgentSettings } | { type: 'rss' } | { type: 'stop' };

let agent: Agent | null = null;
const send = (message: object) => process.send?.(message);

process.on('message', (command: Command) => {
  void (async () => {
    switch (command.type) {
      case 'start':
        // What `printer-agent run` sets before it starts the agent (decision 212).
        setFlagsFromString('--heap-growing-percent=50');
        agent = await Agent.start(command.settings, createLogger({ level: 'silent' }));
        send({ type: 'started' });
        break;
      case 'rss':
        globalThis.gc?.();
        await new Promise((r) => setTimeout(r, 50));
        send({ type: 'rss', rss: process.memoryUsage().rss });
        break;
      case 'stop':
        await agent?.stop();
        process.exit(0);
    }
  })().catch((error: unknown) => {
    send({ type: 'error', message: error instanceof Error ? error.stack : String(error) });
    process.exit(1);
  });
});
// The parent going away ends the child too.
process.on('disconnect', () => process.exit(0));
