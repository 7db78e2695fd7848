/**
 * A TCP port of 127.0.0.1 nothing listens on, for a server about to start: the one preferred when
 * it is free (a port people know, the status page's 8631), else one the system hands out. The demo
 * needs the number before the agent starts (it goes in the agent's config, where
 * `printer-agent status --config` reads it), so it cannot listen on port 0 itself; the port is
 * free when this returns, and taken again only by a process that binds it in the moment between.
 */
import { createServer } from 'node:net';

function listenOnce(port: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE' || error.code === 'EACCES') resolve(null);
      else reject(error);
    });
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      const bound = (server.address() as { port: number }).port;
      server.close(() => resolve(bound));
    });
  });
}

export async function freeLoopbackPort(preferred: number): Promise<number> {
  const port = (await listenOnce(preferred)) ?? (await listenOnce(0));
  if (port === null) throw new Error('no free TCP port on 127.0.0.1');
  return port;
}
