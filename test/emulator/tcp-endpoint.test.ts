/**
 * The TCP endpoint opened as the agent will (node:net to a port-9100-style server), plus the HTTP
 * control interface switching faults and dropping the link. Bytes are written by hand from the
 * command reference.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { next, tcpClient, waitFor } from '../../harness/waiting.js';
import {
  type ControlServer,
  EmulatorControl,
  LinkSlot,
  listenTcp,
  PrintSpeedLimiter,
  renderText,
  startControlServer,
  type TcpEndpoint,
  type Ticket,
  VirtualPrinter,
} from '../../src/emulator/index.js';
import { bytes } from './bytes.js';

const ESC_AT = [0x1b, 0x40]; // ESC @ initialize
const CUT = [0x1d, 0x56, 0x42, 0x00]; // GS V 66 0: feed to the cutter and partial cut
const DLE_EOT = (n: number) => [0x10, 0x04, n];

describe('TCP endpoint', () => {
  let printer: VirtualPrinter;
  let slot: LinkSlot;
  let printSpeed: PrintSpeedLimiter;
  let tcp: TcpEndpoint;
  let control: ControlServer;

  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${control.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const get = async (path: string) => {
    const res = await fetch(`${control.url}${path}`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  before(async () => {
    printer = new VirtualPrinter();
    slot = new LinkSlot(printer);
    printSpeed = new PrintSpeedLimiter(printer);
    tcp = await listenTcp(slot, { host: '127.0.0.1', port: 0 });
    const emulator = new EmulatorControl({ printer, slot, printSpeed, address: tcp.address });
    control = await startControlServer(emulator, { port: 0 });
  });

  after(async () => {
    await control.close();
    await tcp.close();
    printSpeed.close();
  });

  it('binds port 0 to a real port and names it', () => {
    assert.ok(tcp.port > 0);
    assert.equal(tcp.address, `tcp://127.0.0.1:${tcp.port}`);
  });

  it('prints a job and answers DLE EOT 1 with 12', async () => {
    const client = await tcpClient(tcp.port);
    const ticket = next<[Ticket]>(printer, 'ticket');
    client.socket.write(bytes(ESC_AT, 'Hello from the agent\n', 'second line\n', CUT, DLE_EOT(1)));
    assert.deepEqual(await client.bytes(1), [0x12]);
    const [t] = await ticket;
    assert.equal(renderText(t), 'Hello from the agent\nsecond line\n');
    assert.equal(t.cut, true);
    client.socket.end();
    await next(slot, 'unlink');
  });

  it('answers a host that sends the job and closes its sending side at once', async () => {
    const client = await tcpClient(tcp.port);
    const ticket = next<[Ticket]>(printer, 'ticket');
    client.socket.end(bytes(ESC_AT, 'sent and half-closed\n', CUT, [0x1d, 0x72, 0x01])); // GS r 1
    await waitFor('the connection to close', () => client.closed);
    assert.deepEqual(client.received, [0x00], 'GS r 1 answered before the close');
    assert.equal(renderText((await ticket)[0]), 'sent and half-closed\n');
    await waitFor('the link to be free', () => !slot.connected);
  });

  it('takes one connection at a time: a second one is closed at once, and served later', async () => {
    const first = await tcpClient(tcp.port);
    await waitFor('the first link', () => slot.connected);
    const refusedBefore = tcp.refused;

    const second = await tcpClient(tcp.port);
    await waitFor('the second connection to be closed', () => second.closed);
    assert.deepEqual(second.received, [], 'nothing read or sent on the refused connection');
    assert.equal(tcp.refused, refusedBefore + 1);

    first.socket.write(bytes(DLE_EOT(1)));
    assert.deepEqual(await first.bytes(1), [0x12], 'the first connection still works');

    const unlinked = next(slot, 'unlink');
    first.socket.end();
    await unlinked;
    const third = await tcpClient(tcp.port);
    third.socket.write(bytes(DLE_EOT(1)));
    assert.deepEqual(await third.bytes(1), [0x12], 'served once the first has closed');
    assert.equal(third.closed, false);
    third.socket.end();
    await next(slot, 'unlink');
  });

  it('control API: paper-out answers 7E, disconnect drops the client, the buffer survives', async () => {
    const faults = await post('/faults', { fault: 'paper-out', on: true });
    assert.equal(faults.status, 200);
    assert.deepEqual(faults.body.faults, ['paper-out']);

    const client = await tcpClient(tcp.port);
    const job = bytes(ESC_AT, 'kept across the disconnect\n', CUT);
    client.socket.write(bytes(job, DLE_EOT(4)));
    assert.deepEqual(await client.bytes(1), [0x7e], 'DLE EOT 4 with paper out');
    await waitFor('the job in the receive buffer', () => printer.bufferedBytes >= job.length);
    const ticketsBefore = printer.paper.tickets.length;

    const dropped = await post('/link', { disconnect: true });
    assert.equal(dropped.status, 200);
    assert.equal(dropped.body.disconnected, true);
    await waitFor('the client to see the connection closed', () => client.closed);

    const again = await tcpClient(tcp.port);
    again.socket.write(bytes(DLE_EOT(4)));
    assert.deepEqual(await again.bytes(1), [0x7e], 'still out of paper after the reconnect');
    const status = await get('/status');
    assert.equal(status.body.online, false);
    assert.ok((status.body.bufferedBytes as number) >= job.length, 'the held job is still there');
    assert.equal(printer.paper.tickets.length, ticketsBefore, 'nothing printed while out');

    const printed = next<[Ticket]>(printer, 'ticket');
    assert.equal((await post('/faults', { fault: 'paper-out', on: false })).status, 200);
    const [t] = await printed;
    assert.equal(renderText(t), 'kept across the disconnect\n', 'printed once paper is back');
    again.socket.write(bytes(DLE_EOT(4)));
    assert.deepEqual(await again.bytes(2), [0x7e, 0x12]);

    const list = await get('/tickets');
    const tickets = list.body.tickets as Array<{ number: number; summary: string }>;
    assert.equal(tickets.at(-1)!.number, t.index + 1);
    assert.match(tickets.at(-1)!.summary, /^ticket \d+: 1 lines/);
    const one = await get(`/tickets/${t.index + 1}`);
    assert.equal(one.status, 200);
    assert.equal(
      (one.body.lines as Array<{ text: string }>)[0]!.text,
      'kept across the disconnect',
    );
    again.socket.end();
    await next(slot, 'unlink');
  });

  it('control API rejects bad requests with a message naming the field', async () => {
    const cases: Array<[string, unknown, number, RegExp]> = [
      [
        '/faults',
        { fault: 'paper-gone', on: true },
        400,
        /^fault: unknown fault "paper-gone"; one of paper-near-end/,
      ],
      ['/faults', { on: true }, 400, /^fault: required/],
      ['/faults', { fault: 'paper-out', on: 'yes' }, 400, /^on: must be true or false/],
      ['/faults', { fault: 'paper-out' }, 400, /^on: must be true or false/],
      ['/faults', { fault: 'paper-out', on: true, extra: 1 }, 400, /^extra: unknown field/],
      ['/faults', '{"fault":', 400, /^body: not valid JSON/],
      ['/faults', '[1]', 400, /^body: must be a JSON object/],
      ['/link', { slowLinkBps: -5 }, 400, /^slowLinkBps: must be a number of bytes per second/],
      ['/link', { slowLinkBps: '960' }, 400, /^slowLinkBps: /],
      ['/link', { slowPrintMmPerSec: 'fast' }, 400, /^slowPrintMmPerSec: must be a number of mm/],
      ['/link', { disconnect: 'now' }, 400, /^disconnect: must be true or false/],
      ['/link', { cable: 'out' }, 400, /^cable: unknown field; expected slowLinkBps/],
      ['/link', {}, 400, /^body: give at least one of/],
    ];
    for (const [path, body, status, message] of cases) {
      const r = await post(path, body);
      assert.equal(r.status, status, `${path} ${JSON.stringify(body)}`);
      assert.match(String(r.body.error), message, `${path} ${JSON.stringify(body)}`);
    }
    assert.deepEqual((await get('/status')).body.faults, [], 'nothing changed');
    assert.equal((await get('/tickets/999')).status, 404);
    assert.equal((await get('/tickets/zero')).status, 400);
    assert.equal((await get('/nowhere')).status, 404);
    const wrongMethod = await fetch(`${control.url}/faults`);
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get('allow'), 'POST');
    await wrongMethod.body?.cancel();
  });

  it('control API switches link and print speed at run time', async () => {
    const r = await post('/link', { slowLinkBps: 960, slowPrintMmPerSec: 60 });
    assert.equal(r.status, 200);
    const link = (r.body.status as Record<string, Record<string, unknown>>).link!;
    assert.equal(link.slowLinkBps, 960);
    assert.equal(link.slowPrintMmPerSec, 60);
    assert.equal(slot.slowLinkBps, 960);
    assert.equal(printSpeed.mmPerSec, 60);
    const off = await post('/link', { slowLinkBps: null, slowPrintMmPerSec: 0 });
    assert.equal(off.status, 200);
    assert.equal(slot.slowLinkBps, null);
    assert.equal(printSpeed.mmPerSec, null);
    const none = await post('/link', { disconnect: true });
    assert.equal(none.body.disconnected, false, 'no link to drop');
  });
});
