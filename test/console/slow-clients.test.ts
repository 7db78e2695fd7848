/**
 * Issue 40 item 7: the agent's local console held slow headers 35 s and a slow body 68 s against
 * its 10 s settings (node checks those timeouts every 30 s by default), kept an idle keep-alive
 * connection 72 s (fastify's default) and let in any number of connections. The cases of
 * test/helpers/slow-clients.ts over real sockets against the real console; its 408 comes in the
 * API's error format.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe } from 'node:test';
import { freePort } from '../../harness/mosquitto.js';
import { type RunningConsole, startConsole } from '../../src/console/server.js';
import { JobStore } from '../../src/jobs/store.js';
import { createLogger } from '../../src/logging.js';
import { destroyAllRawClients, SHORT_LIMITS, slowClientCases } from '../helpers/slow-clients.js';

const dir = mkdtempSync(join(tmpdir(), 'console-slow-'));
const store = JobStore.open({ stateDir: dir });
const consoles: RunningConsole[] = [];
after(async () => {
  // A client the console failed to cut off would otherwise hold its close open.
  destroyAllRawClients();
  for (const c of consoles) await c.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('local console: slow and idle clients (issue 40 item 7)', () => {
  slowClientCases({
    async start(limits) {
      const port = await freePort();
      const running = await startConsole(
        {
          host: '127.0.0.1',
          port,
          hostnames: [],
          localToken: 'local-token-of-this-test-run-0123456789abcdef',
          metrics: false,
          httpLimits: { ...SHORT_LIMITS, ...limits },
        },
        {
          status: () => ({}),
          renderJob: () => Promise.reject(new Error('not in this test')),
          store,
          roles: ['receipt'],
          metrics: null,
        },
        createLogger({ level: 'silent' }),
      );
      consoles.push(running);
      return port;
    },
    get: (port, connection) =>
      `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: ${connection}\r\n\r\n`,
    // The sign-in is open, so the console waits for the body.
    slowBody: (port) =>
      `POST /api/login HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
      'Content-Length: 1000\r\n\r\n{"token":"',
    timeoutBody: (body) =>
      assert.deepEqual(JSON.parse(body), {
        error: { code: 'REQUEST_TIMEOUT', message: 'the request did not arrive in time' },
      }),
  });
});
