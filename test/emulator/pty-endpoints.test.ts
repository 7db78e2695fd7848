/**
 * The serial and device-file endpoints (socat pty pairs), opened exactly as the agent will: the
 * serial side with `serialport`, the device file with `fs`. On a pty DTR/RTS ioctls fail and the
 * baud rate is not enforced (dependencies.md): the 115200 below is accepted and means nothing,
 * which is why the emulator paces a slow link itself.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { SerialPort } from 'serialport';
import { next, skipWithoutSocat, waitFor } from '../../harness/waiting.js';
import {
  openDeviceEndpoint,
  openSerialEndpoint,
  type PtyEndpoint,
  renderText,
  type Ticket,
  VirtualPrinter,
} from '../../src/emulator/index.js';
import { bytes } from './bytes.js';

const ESC_AT = [0x1b, 0x40];
const CUT = [0x1d, 0x56, 0x42, 0x00];
const DLE_EOT = (n: number) => [0x10, 0x04, n];
const skip = skipWithoutSocat();

/** Ports still open: closed after each test, so one failure does not lock the pty for the next. */
const openPorts = new Set<SerialPort>();

async function closeOpenPorts(): Promise<void> {
  for (const port of openPorts) {
    if (port.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
  }
  openPorts.clear();
}

async function openPort(path: string) {
  const port = new SerialPort({ path, baudRate: 115200, autoOpen: false });
  const received: number[] = [];
  port.on('data', (d: Buffer) => received.push(...d));
  port.on('error', () => {});
  await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  openPorts.add(port);
  const write = (data: Uint8Array) =>
    new Promise<void>((resolve, reject) => {
      port.write(Buffer.from(data), (err) => (err ? reject(err) : port.drain(() => resolve())));
    });
  const close = () =>
    new Promise<void>((resolve) => (port.isOpen ? port.close(() => resolve()) : resolve()));
  return { port, received, write, close };
}

describe('serial endpoint (socat pty pair, serialport on the host side)', { skip }, () => {
  let dir: string;
  let printer: VirtualPrinter;
  let endpoint: PtyEndpoint;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'emu-serial-'));
    printer = new VirtualPrinter();
    endpoint = await openSerialEndpoint(printer, { dir });
  });

  afterEach(async () => {
    // A test that failed midway must not leave its faults to the next one.
    for (const fault of ['offline', 'paper-out', 'cover-open'] as const)
      printer.setFault(fault, false);
    await closeOpenPorts();
  });

  after(async () => {
    await endpoint?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives a host path the agent can open', () => {
    assert.equal(endpoint.hostPath, join(dir, 'host'));
    assert.equal(endpoint.address, `serial:${join(dir, 'host')}`);
    assert.ok(existsSync(endpoint.hostPath));
  });

  it('prints a job and answers DLE EOT through serialport', async () => {
    const host = await openPort(endpoint.hostPath);
    const ticket = next<[Ticket]>(printer, 'ticket');
    await host.write(bytes(ESC_AT, 'over the serial line\n', CUT, DLE_EOT(1)));
    await waitFor('the status reply', () => host.received.length >= 1);
    assert.deepEqual(host.received, [0x12]);
    const [t] = await ticket;
    assert.equal(renderText(t), 'over the serial line\n');
    await host.close();

    // Closing the port is not a disconnect: the agent can open it again.
    const again = await openPort(endpoint.hostPath);
    printer.setFault('paper-out', true);
    await again.write(bytes(DLE_EOT(4)));
    await waitFor('the second reply', () => again.received.length >= 1);
    assert.deepEqual(again.received, [0x7e]);
    printer.setFault('paper-out', false);
    await again.close();
  });

  it('back-pressure reaches the host: a busy printer stops reading the pty', async () => {
    printer.setFault('offline', true);
    const host = await openPort(endpoint.hostPath);
    const job = Buffer.from(bytes(`${'.'.repeat(47)}\n`.repeat(1365), CUT)); // 64 KB
    const printed = next<[Ticket]>(printer, 'ticket');
    const link = endpoint.slot.link!;
    const before = link.deliveredBytes;
    let written = false;
    host.port.write(job, () => {
      written = true;
    });
    await waitFor('the printer to turn busy', () => printer.busy);
    // The printer took exactly its receive buffer, however large the pty's reads came; the rest
    // of the job waits on the host's side of the link.
    assert.equal(printer.bufferedBytes, printer.bufferSize);
    assert.ok(link.deliveredBytes - before < job.length, 'the link stopped delivering');
    printer.setFault('offline', false);
    await waitFor('the whole job', () => link.deliveredBytes - before >= job.length);
    await waitFor('the host write to complete', () => written);
    assert.equal(link.deliveredBytes - before, job.length, 'nothing lost or added');
    const [t] = await printed;
    assert.equal(t.lines.at(-1)!.text, '.'.repeat(47), 'the job ends the ticket');
    assert.equal(t.lines.length, 1365);
    await host.close();
  });

  it('disconnect unplugs the pty pair and plugs a new one in under the same path', async () => {
    const oldPid = endpoint.pid;
    printer.setFault('cover-open', true);
    const host = await openPort(endpoint.hostPath);
    await host.write(bytes('held while the cover is open\n', CUT));
    await waitFor('the held job', () => printer.bufferedBytes > 0);

    const replugged = next<[number]>(endpoint, 'replug');
    assert.equal(endpoint.slot.disconnect(), true);
    const [pid] = await replugged;
    assert.notEqual(pid, oldPid, 'a new socat');
    await host.close();

    const fresh = await openPort(endpoint.hostPath);
    await fresh.write(bytes(DLE_EOT(2)));
    await waitFor('a reply on the new pty', () => fresh.received.length >= 1);
    assert.deepEqual(fresh.received, [0x16], 'cover still open: the printer state lived on');
    const printed = next<[Ticket]>(printer, 'ticket');
    printer.setFault('cover-open', false);
    assert.equal(renderText((await printed)[0]), 'held while the cover is open\n');
    await fresh.close();
  });
});

describe('device-file endpoint (a pty standing in for /dev/usb/lp0, opened with fs)', {
  skip,
}, () => {
  let dir: string;
  let printer: VirtualPrinter;
  let endpoint: PtyEndpoint;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'emu-device-'));
    printer = new VirtualPrinter();
    endpoint = await openDeviceEndpoint(printer, { dir });
  });

  after(async () => {
    const hostPath = endpoint?.hostPath;
    await endpoint?.close();
    assert.equal(existsSync(hostPath), false, 'the link is gone once stopped');
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes a job written with fs and answers the status query on read', async () => {
    assert.equal(endpoint.address, `file:${join(dir, 'lp0')}`);
    const ticket = next<[Ticket]>(printer, 'ticket');
    const file = await open(endpoint.hostPath, 'r+');
    try {
      await file.write(bytes(ESC_AT, 'through the device file\n', CUT, DLE_EOT(1)));
      const buf = Buffer.alloc(16);
      // A read on a printer device blocks until the printer says something; the reply is due.
      const { bytesRead } = await file.read(buf, 0, buf.length);
      assert.deepEqual([...buf.subarray(0, bytesRead)], [0x12]);
    } finally {
      await file.close();
    }
    const [t] = await ticket;
    assert.equal(renderText(t), 'through the device file\n');
  });
});

describe('pty endpoints without socat', () => {
  it('say which Debian package to install', async () => {
    const path = process.env.PATH;
    const dir = mkdtempSync(join(tmpdir(), 'emu-nosocat-'));
    process.env.PATH = dir; // an empty directory: no socat to be found
    try {
      await assert.rejects(
        openSerialEndpoint(new VirtualPrinter(), { dir }),
        (err: Error) =>
          err.name === 'SocatMissingError' && /Debian package socat/.test(err.message),
      );
      assert.equal(existsSync(join(dir, 'host')), false);
    } finally {
      process.env.PATH = path;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
