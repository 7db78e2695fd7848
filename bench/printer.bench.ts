/**
 * Printer links: bytes per second into the emulator over TCP and over a serial pty, each beside a
 * baseline measured in the same run. TCP: a bare socket writing the same bytes to a sink that
 * discards them. Serial: the nominal capacity of a 115200 baud line (8N1: 11,520 bytes/s); a pty
 * does not enforce the baud rate, so the ratio shows the software's ceiling, not a wire's.
 */
import { mkdtempSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasSocat, listenTcp, openSerialEndpoint, VirtualPrinter } from '../src/emulator/index.js';
import { SerialTransport } from '../src/printer/serial-transport.js';
import { TcpTransport } from '../src/printer/tcp-transport.js';
import type { Transport } from '../src/printer/transport.js';
import { type Comparison, compare, type Measurement } from './harness.js';

/** Text lines with a cut every 40 lines: realistic receipt bytes for the emulator to decode. */
function payload(size: number): Uint8Array {
  const line = Buffer.from('Item name that is long enough      1 x 123.45\n');
  const out = new Uint8Array(size);
  let i = 0;
  let lines = 0;
  while (i + line.length + 4 < size) {
    out.set(line, i);
    i += line.length;
    if (++lines % 40 === 0) {
      out.set([0x1d, 0x56, 0x42, 0x00], i);
      i += 4;
    }
  }
  return out.subarray(0, i);
}

async function pump(transport: Transport, data: Uint8Array, chunk = 4096): Promise<void> {
  for (let o = 0; o < data.length; o += chunk)
    await transport.write(data.subarray(o, o + chunk), 30_000);
}

async function rate(name: string, bytes: number, run: () => Promise<void>): Promise<Measurement> {
  const start = performance.now();
  await run();
  const seconds = (performance.now() - start) / 1000;
  return { name, opsPerSec: bytes / seconds, samples: 1 };
}

async function waitDecoded(printer: VirtualPrinter, bytes: number): Promise<void> {
  while (printer.decoder.received < bytes) await new Promise((r) => setImmediate(r));
}

export async function benchPrinterLinks(quick: boolean): Promise<Comparison[]> {
  const size = quick ? 256 * 1024 : 4 * 1024 * 1024;
  const data = payload(size);
  const results: Comparison[] = [];

  // TCP: our transport into the emulator (decoding everything) vs a bare socket into a sink.
  const emulator = new VirtualPrinter({ columns: 48 });
  const endpoint = await listenTcp(emulator, { port: 0 });
  const transport = new TcpTransport({ host: '127.0.0.1', port: endpoint.port });
  await transport.open();
  const tcp = await rate('TcpTransport -> emulator (B/s)', data.length, async () => {
    await pump(transport, data);
    await waitDecoded(emulator, data.length);
  });
  await transport.close();
  await endpoint.close();

  let sunk = 0;
  const sink = createServer((s) => s.on('data', (d: Buffer) => (sunk += d.length)));
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const port = (sink.address() as { port: number }).port;
  const socket = new Socket();
  await new Promise<void>((r) => socket.connect(port, '127.0.0.1', r));
  const bare = await rate('bare socket -> sink (B/s)', data.length, async () => {
    for (let o = 0; o < data.length; o += 4096) {
      if (!socket.write(data.subarray(o, o + 4096)))
        await new Promise((r) => socket.once('drain', r));
    }
    while (sunk < data.length) await new Promise((r) => setImmediate(r));
  });
  socket.destroy();
  await new Promise<void>((r) => sink.close(() => r()));
  results.push(compare('TCP throughput to the emulator', tcp, bare));

  if (hasSocat()) {
    const serialSize = quick ? 64 * 1024 : 512 * 1024;
    const serialData = payload(serialSize);
    const printer = new VirtualPrinter({ columns: 48 });
    const pty = await openSerialEndpoint(printer, {
      dir: mkdtempSync(join(tmpdir(), 'pa-bench-')),
    });
    const serial = new SerialTransport({
      path: pty.hostPath,
      baudRate: 115200,
      flowControl: 'none',
    });
    await serial.open();
    const measured = await rate('SerialTransport over a pty (B/s)', serialData.length, async () => {
      await pump(serial, serialData);
      await waitDecoded(printer, serialData.length);
    });
    await serial.close();
    await pty.close();
    results.push(
      compare('serial throughput (pty) vs 115200 baud', measured, {
        name: 'nominal 115200 baud 8N1 (B/s)',
        opsPerSec: 11_520,
        samples: 1,
      }),
    );
  } else {
    console.error('serial benchmark skipped: needs socat (Debian package socat)');
  }
  return results;
}
