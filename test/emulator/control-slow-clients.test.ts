/**
 * Issue 40 item 7: the emulator's control server had no timeouts at all (headers held 87 s, a body
 * at a byte per 5 s held over 130 s) and no connection cap. The cases of
 * test/helpers/slow-clients.ts over real sockets against the real control server.
 */
import { after, describe } from 'node:test';
import {
  type ControlServer,
  EmulatorControl,
  LinkSlot,
  PrintSpeedLimiter,
  startControlServer,
  VirtualPrinter,
} from '../../src/emulator/index.js';
import { destroyAllRawClients, SHORT_LIMITS, slowClientCases } from '../helpers/slow-clients.js';

const servers: ControlServer[] = [];
after(async () => {
  // A client the server failed to cut off would otherwise hold its close open.
  destroyAllRawClients();
  for (const s of servers) await s.close();
});

describe('emulator control server: slow and idle clients (issue 40 item 7)', () => {
  slowClientCases({
    async start(limits) {
      const printer = new VirtualPrinter();
      const slot = new LinkSlot(printer);
      const printSpeed = new PrintSpeedLimiter(printer);
      const control = new EmulatorControl({ printer, slot, printSpeed });
      const server = await startControlServer(control, {
        port: 0,
        limits: { ...SHORT_LIMITS, ...limits },
      });
      servers.push(server);
      return server.port;
    },
    get: (port, connection) =>
      `GET /status HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: ${connection}\r\n\r\n`,
    slowBody: (port) =>
      `POST /faults HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
      'Content-Length: 1000\r\n\r\n{"fault":"',
  });
});
