/**
 * TCP peers that are no good printer, for the bad-input tests of identification (issue 41): one
 * that accepts and never answers, one that answers every write with bytes of no reply's shape
 * (optionally answering `DLE EOT` properly, so only `GS I` gets garbage).
 */
import { createServer, type Server, type Socket } from 'node:net';

/** Bytes that are neither a status (`(b & 0x93) == 0x12`), an ID byte (bit 7 clear) nor `5F`. */
export const JUNK = Uint8Array.of(0xff, 0xfe, 0xfd, 0xfc, 0x93, 0x80, 0xa5, 0xc3);

export interface OddDevice {
  url: string;
  /** Bytes the device received. */
  received: number[];
  close(): Promise<void>;
}

/** `at`: where to listen, default 127.0.0.1 on a free port (`printers scan` wants 9100 on a host). */
export async function startOddDevice(
  kind: 'silent' | 'garbage' | 'garbage-to-gs-i',
  at: { host?: string; port?: number } = {},
): Promise<OddDevice> {
  const sockets = new Set<Socket>();
  const received: number[] = [];
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.on('data', (data: Buffer) => {
      received.push(...data);
      if (kind === 'silent') return;
      if (kind === 'garbage-to-gs-i' && data[0] === 0x10 && data[1] === 0x04) {
        socket.write(Uint8Array.of(0x12));
        return;
      }
      socket.write(JUNK);
    });
  });
  const host = at.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port ?? 0, host, resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return {
    url: `tcp://${host}:${address.port}`,
    received,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
