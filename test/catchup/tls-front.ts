/**
 * A TLS front that terminates https and passes the bytes to a plain-HTTP service on loopback, the
 * way a deployment puts nginx in front of the reference order service. Its certificate comes from
 * a test CA (test/helpers/test-ca.ts): the service's genuine one, or an impostor's.
 */
import { readFileSync } from 'node:fs';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import type { IssuedCertificate } from '../helpers/test-ca.js';

/** A server certificate for the names the tests use to reach a local service. */
export const LOCAL_NAMES = { dns: ['localhost'], ips: ['127.0.0.1', '::1'] };

export class TlsFront {
  private constructor(
    private readonly server: TlsServer,
    private readonly sockets: Set<Socket>,
    readonly port: number,
  ) {}

  /** https on `host` (random port) with `cert`, in front of http://127.0.0.1:`targetPort`. */
  static async start(
    cert: IssuedCertificate,
    targetPort: number,
    host = '127.0.0.1',
  ): Promise<TlsFront> {
    const sockets = new Set<Socket>();
    const options = { cert: readFileSync(cert.certFile), key: readFileSync(cert.keyFile) };
    const server = createTlsServer(options, (client) => {
      const upstream = connect(targetPort, '127.0.0.1');
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    // A refused handshake (a client that does not trust us) is a test's point, not a failure.
    server.on('tlsClientError', () => {});
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    return new TlsFront(server, sockets, (server.address() as AddressInfo).port);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
