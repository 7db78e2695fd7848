/**
 * Issue 13, item 9: the local surfaces a neighbour can reach.
 *
 * - The emulator's control server over real HTTP, with requests shaped as a browser on the same
 *   machine sends them: a cross-site form POST (`enctype="text/plain"`, which needs no CORS
 *   preflight), a `no-cors` fetch, and a DNS-rebinding page (its own host name, same-origin
 *   JSON). None may switch a fault or read a ticket; scripts sending JSON to 127.0.0.1 still can.
 * - `GS r 1` confirmation through a real TCP link to the emulator, with a link that adds stray
 *   bytes (a drawer answer, automatic status bytes) right after the agent asks: only the answers
 *   `GS r 1` can give (00, 03, 0C, 0F) confirm a job.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  type ControlServer,
  EmulatorControl,
  LinkSlot,
  listenTcp,
  PrintSpeedLimiter,
  renderText,
  startControlServer,
  type TcpEndpoint,
  VirtualPrinter,
} from '../../src/emulator/index.js';
import { openPrinter } from '../../src/printer/open-printer.js';
import type { Printer } from '../../src/printer/printer.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request to 127.0.0.1:`port` with exactly these headers (Host included). */
function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method, path, headers, setHost: false, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('emulator control server against a browser on the same machine', () => {
  let printer: VirtualPrinter;
  let control: ControlServer;
  let port: number;

  before(async () => {
    printer = new VirtualPrinter();
    const slot = new LinkSlot(printer);
    const printSpeed = new PrintSpeedLimiter(printer);
    control = await startControlServer(new EmulatorControl({ printer, slot, printSpeed }), {
      port: 0,
    });
    port = control.port;
    // A customer's receipt on the paper: what a page must not be able to read.
    printer.write(Buffer.from('Juan Dela Cruz 0917 555 0101\n\x1dV\x00', 'latin1'));
  });

  after(async () => {
    await control?.close();
  });

  it('a cross-site form POST (enctype text/plain) does not switch a fault', async () => {
    // <form method=post action="http://127.0.0.1:PORT/faults" enctype="text/plain">
    //   <input name='{"fault":"x' value='","on":true,"fault":"paper-out"}'>
    // The browser sends `name=value`: the `=` hides in a string that a later key overrides.
    const body = '{"fault":"x=","on":true,"fault":"paper-out"}\r\n';
    assert.deepEqual(JSON.parse(body), { fault: 'paper-out', on: true }, 'a valid request body');
    const answer = await send(
      port,
      'POST',
      '/faults',
      {
        host: `127.0.0.1:${port}`,
        origin: 'http://evil.example',
        referer: 'http://evil.example/cat-pictures.html',
        'content-type': 'text/plain',
        'sec-fetch-site': 'cross-site',
        'sec-fetch-mode': 'navigate',
        'content-length': String(Buffer.byteLength(body)),
      },
      body,
    );
    assert.ok([403, 415].includes(answer.status), `refused, got ${answer.status} ${answer.body}`);
    assert.equal(printer.state.paperOut, false, 'the fault was not switched');
    assert.equal(answer.headers['access-control-allow-origin'], undefined);
  });

  it('a simple POST without JSON content type is 415 and changes nothing', async () => {
    for (const type of [
      'text/plain;charset=UTF-8', // fetch(url, {mode: 'no-cors', body: '{...}'})
      'application/x-www-form-urlencoded', // curl -d, a plain HTML form
      'multipart/form-data; boundary=x',
      undefined,
    ]) {
      const body = JSON.stringify({ fault: 'cover-open', on: true });
      const answer = await send(
        port,
        'POST',
        '/faults',
        { host: `127.0.0.1:${port}`, ...(type ? { 'content-type': type } : {}) },
        body,
      );
      assert.equal(answer.status, 415, `${type}: ${answer.body}`);
      assert.match(answer.body, /content-type: .*send Content-Type: application\/json/);
      const link = await send(
        port,
        'POST',
        '/link',
        { host: `127.0.0.1:${port}`, ...(type ? { 'content-type': type } : {}) },
        JSON.stringify({ slowLinkBps: 10 }),
      );
      assert.equal(link.status, 415, `${type} /link: ${link.body}`);
    }
    assert.equal(printer.state.coverOpen, false);
  });

  it('a DNS-rebinding page (its own Host) can neither switch faults nor read tickets', async () => {
    const rebound = { host: `evil.example:${port}`, origin: `http://evil.example:${port}` };
    const post = await send(
      port,
      'POST',
      '/faults',
      { ...rebound, 'content-type': 'application/json' },
      JSON.stringify({ fault: 'offline', on: true }),
    );
    assert.equal(post.status, 403, post.body);
    assert.match(
      (JSON.parse(post.body) as { error: string }).error,
      /^host: "evil\.example:\d+"; the control server answers only to 127\.0\.0\.1:\d+, localhost/,
    );
    assert.equal(printer.state.offline, false);
    for (const path of ['/tickets', '/tickets/1', '/status']) {
      const get = await send(port, 'GET', path, { host: `evil.example:${port}` });
      assert.equal(get.status, 403, `${path}: ${get.body}`);
      assert.ok(!get.body.includes('Juan'), 'no ticket text in the answer');
    }
    // No Host at all: Node refuses an HTTP/1.1 request without one (400) before we see it.
    const none = await send(port, 'GET', '/tickets', {});
    assert.ok([400, 403].includes(none.status), `${none.status}`);
    assert.ok(!none.body.includes('Juan'));
  });

  it('another loopback page is refused by its Origin; scripts on 127.0.0.1 still work', async () => {
    const json = { 'content-type': 'application/json; charset=utf-8' };
    const fromPage = await send(
      port,
      'POST',
      '/faults',
      { host: `127.0.0.1:${port}`, origin: 'http://localhost:8080', ...json },
      JSON.stringify({ fault: 'paper-out', on: true }),
    );
    assert.equal(fromPage.status, 403, fromPage.body);
    assert.equal(printer.state.paperOut, false);

    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      const on = await send(
        port,
        'POST',
        '/faults',
        { host, ...json },
        JSON.stringify({ fault: 'paper-out', on: true }),
      );
      assert.equal(on.status, 200, `${host}: ${on.body}`);
      assert.equal(printer.state.paperOut, true);
      const off = await fetch(`${control.url}/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ fault: 'paper-out', on: false }),
      });
      assert.equal(off.status, 200);
      await off.body?.cancel();
    }
    const tickets = await send(port, 'GET', '/tickets/1', { host: `localhost:${port}` });
    assert.equal(tickets.status, 200);
    assert.match(tickets.body, /Juan/);
  });
});

/**
 * A TCP link between the agent and the emulator that writes `noise` to the agent as soon as the
 * agent's `GS r 1` has passed, before the emulator's own answer (which comes once the ticket has
 * printed). With `swallowAnswer`, the emulator's answer never reaches the agent.
 */
class NoisyLink {
  private constructor(
    readonly server: Server,
    readonly port: number,
    private readonly sockets: Set<Socket>,
  ) {}

  noise: number[] = [];
  swallowAnswer = false;
  requests = 0;

  static async start(targetPort: number): Promise<NoisyLink> {
    const sockets = new Set<Socket>();
    const holder: { link?: NoisyLink } = {};
    const server = createServer((agent) => {
      const printer = tcpConnect({ host: '127.0.0.1', port: targetPort });
      sockets.add(agent);
      sockets.add(printer);
      let asked = false;
      let tail = Buffer.alloc(0);
      agent.on('data', (chunk: Buffer) => {
        printer.write(chunk);
        const seen = Buffer.concat([tail, chunk]);
        if (seen.includes(Buffer.from([0x1d, 0x72, 0x01]))) {
          const link = holder.link!;
          link.requests++;
          asked = true;
          agent.write(Uint8Array.from(link.noise));
        }
        tail = seen.subarray(-2);
      });
      printer.on('data', (chunk: Buffer) => {
        if (asked && holder.link!.swallowAnswer) return;
        agent.write(chunk);
      });
      const close = () => {
        agent.destroy();
        printer.destroy();
      };
      agent.on('close', close);
      printer.on('close', close);
      agent.on('error', close);
      printer.on('error', close);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const link = new NoisyLink(server, (server.address() as { port: number }).port, sockets);
    holder.link = link;
    return link;
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((r) => this.server.close(() => r()));
  }
}

describe('GS r 1 confirmation with stray bytes on the link', () => {
  let emulator: VirtualPrinter;
  let endpoint: TcpEndpoint;
  let speed: PrintSpeedLimiter;
  let link: NoisyLink;
  let printer: Printer;

  /** Bytes a printer sends that are not GS r 1 answers: a GS r 2 drawer answer (01), ASB byte 2
   * with the feed button (02) or an autocutter error (08), ASB byte 3 with one sensor pair half
   * set (01, 04), and line noise. */
  const STRAY = [0x01, 0x02, 0x08, 0x04, 0x06, 0x0a, 0x0e];

  const job = (name: string, lines: number) =>
    Uint8Array.from([
      0x1b,
      0x40,
      ...Buffer.from(Array.from({ length: lines }, (_, i) => `${name} line ${i + 1}\n`).join('')),
      0x1d,
      0x56,
      0x42,
      0x00,
    ]);

  before(async () => {
    emulator = new VirtualPrinter({ columns: 48 });
    endpoint = await listenTcp(emulator, { port: 0 });
    // About 3.75 mm a line: 30 lines take about 1.1 s at 100 mm/s.
    speed = new PrintSpeedLimiter(emulator, 100);
    link = await NoisyLink.start(endpoint.port);
    printer = openPrinter(
      `tcp://127.0.0.1:${link.port}`,
      { realtimeStatus: true, confirm: 'status' },
      { confirmTimeoutMs: 8000, statusTimeoutMs: 1000 },
    );
  });

  after(async () => {
    await printer?.close();
    await link?.close();
    speed?.close();
    await endpoint?.close();
  });

  it('stray bytes before the answer do not confirm: the job is confirmed once on paper', async () => {
    link.noise = STRAY;
    link.swallowAnswer = false;
    let onPaperWhenConfirmed: boolean | null = null;
    const outcome = await printer.print(job('NOISE', 30)).then((result) => {
      onPaperWhenConfirmed = emulator.paper.tickets.some(
        (t) => t.cut && renderText(t).includes('NOISE line 30'),
      );
      return result;
    });
    assert.equal(link.requests, 1, 'the agent asked once');
    assert.deepEqual(outcome, { outcome: 'printed', confirmedBy: 'status' });
    assert.equal(onPaperWhenConfirmed, true, 'confirmed by the real answer, after the cut');
  });

  it('stray bytes alone, the answer lost: unconfirmed, not printed', async () => {
    link.noise = STRAY;
    link.swallowAnswer = true;
    // The emulator serves one connection at a time, like a printer: the first link goes.
    await printer.close();
    printer = openPrinter(
      `tcp://127.0.0.1:${link.port}`,
      { realtimeStatus: true, confirm: 'status' },
      { confirmTimeoutMs: 2500, statusTimeoutMs: 1000 },
    );
    const result = await printer.print(job('LOST', 2));
    assert.equal(link.requests, 2);
    assert.equal(result.outcome, 'unconfirmed', JSON.stringify(result));
    assert.equal(result.outcome === 'unconfirmed' && result.cause, 'silent');
  });
});
