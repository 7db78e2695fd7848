/**
 * The query client's side of print-protocol v1.1 §8, against real sockets: the reference order
 * service (which signs every answer) over http on loopback and over https behind a TLS front with
 * test certificates made by openssl, and a small server of this file's own that answers whatever a
 * test wants (unsigned, badly signed, huge, deep).
 *
 * What is asserted: the signature is checked before a byte of the body is parsed, the body cap
 * and the page-size cap hold (and a huge answer's connection is dropped, not read), and only the
 * transports §8 allows can be used.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../../harness/waiting.js';
import { QueryClient, type QueryClientOptions } from '../../src/catchup/query-client.js';
import {
  catchUpTransportIssues,
  catchUpTransportKind,
  loadCaFile,
} from '../../src/catchup/transport.js';
import { AgentError } from '../../src/errors.js';
import { isLoopbackHost } from '../../src/host/loopback.js';
import { QUERY_RESPONSE_MAX_BYTES } from '../../src/protocol/limits.js';
import {
  boundResponseBytes,
  REQUEST_NONCE_HEADER,
  RESPONSE_SIGNATURE_VERSION_HEADER,
} from '../../src/protocol/response-binding.js';
import { RESPONSE_SIGNATURE_HEADER, type RsaKey, signBytes } from '../../src/protocol/signing.js';
import { deriveStoreId } from '../../src/protocol/store-id.js';
import { skipWithoutOpenssl, TestCa } from '../helpers/test-ca.js';
import {
  APP_ID,
  STORE_KEY,
  servicePublicKey,
  serviceSigningKey,
  startService,
  storeKey,
  strangerKey,
  type TestService,
} from './harness.js';
import { LOCAL_NAMES, TlsFront } from './tls-front.js';

const range = { startTime: '2000-01-01 00:00:00', endTime: '2000-01-30 00:00:00' };
const page = { ...range, pageNum: 1, pageSize: 10 };

function aroundNow() {
  const now = Date.now();
  const f = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
  return { startTime: f(now - 3_600_000), endTime: f(now + 3_600_000) };
}

function client(baseUrl: string, options: Partial<QueryClientOptions> = {}): QueryClient {
  return new QueryClient({
    baseUrl,
    appId: APP_ID,
    storeKey: STORE_KEY,
    key: storeKey,
    serviceKey: servicePublicKey,
    ...options,
  });
}

async function rejection(promise: Promise<unknown>): Promise<AgentError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AgentError, `an AgentError, got ${String(error)}`);
    assert.ok(!error.message.includes(STORE_KEY), `storeKey in: ${error.message}`);
    return error;
  }
  throw new Error('expected a rejection');
}

function thrown(work: () => unknown): AgentError {
  try {
    work();
  } catch (error) {
    assert.ok(error instanceof AgentError, `an AgentError, got ${String(error)}`);
    return error;
  }
  throw new Error('expected an error');
}

/** A valid page of one record, as the service would send it. */
function pageBody(records = 1): string {
  const record = {
    orderInnerNo: 'O20990101000001',
    restaurantNo: 'R100',
    branchIdentifier: 'B-1',
    orderSerialNumber: 1,
    realAmount: 100,
    orderStatus: 2,
    paymentStatus: 2,
    createTime: '2099-01-01 10:00:00',
    paymentTime: '2099-01-01 10:00:00',
    skuList: [],
  };
  const list = Array.from({ length: records }, (_, i) => ({
    ...record,
    orderInnerNo: `O2099010100000${i}`,
  }));
  return JSON.stringify({
    code: 10000,
    message: 'ok',
    data: { total: records, pageNum: 1, pageSize: 10, list },
  });
}

/** The service's version 2 signature of `body` as the answer to `req` (v1.2 §10), for our store. */
function signedFor(
  req: IncomingMessage,
  body: string,
  key: RsaKey = serviceSigningKey,
  storeId = deriveStoreId(APP_ID, STORE_KEY),
): string {
  const binding = {
    method: req.method ?? '',
    path: req.url ?? '',
    nonce: String(req.headers[REQUEST_NONCE_HEADER]),
    storeId,
  };
  return signBytes(boundResponseBytes(binding, Buffer.from(body)), key);
}

/** The headers of `body` correctly signed as the answer to each request. */
const signed = (body: string) => (req: IncomingMessage) => ({
  [RESPONSE_SIGNATURE_HEADER]: signedFor(req, body),
  [RESPONSE_SIGNATURE_VERSION_HEADER]: '2',
});

/** What the own server does with one request; it records how each connection ended. */
type Handler = (req: IncomingMessage, res: ServerResponse) => void;
type Headers = Record<string, string | string[]>;

class AnswerServer {
  handler: Handler = (_req, res) => res.end();
  /** Bytes of body written per request, and whether the client hung up before the end. */
  readonly answers: Array<{ written: number; clientClosed: boolean }> = [];
  private constructor(readonly server: Server) {}

  static async start(): Promise<AnswerServer> {
    const box: { s?: AnswerServer } = {};
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => box.s!.handler(req, res));
    });
    box.s = new AnswerServer(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return box.s;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Answers `body` with `headers` (a signature, or none), made for each request if a function. */
  answer(body: string, headers: Headers | ((req: IncomingMessage) => Headers) = {}): void {
    this.handler = (req, res) => {
      const extra = typeof headers === 'function' ? headers(req) : headers;
      res.writeHead(200, { 'content-type': 'application/json', ...extra });
      res.end(body);
    };
  }

  /**
   * Streams `total` bytes of a JSON-looking body in 1 MiB chunks, with flow control, stopping as
   * soon as the client goes away; `declare` sends Content-Length, else the body is chunked.
   */
  stream(total: number, declare: boolean): void {
    this.handler = (_req, res) => {
      const record = { written: 0, clientClosed: false };
      this.answers.push(record);
      res.writeHead(200, {
        'content-type': 'application/json',
        ...(declare ? { 'content-length': String(total) } : {}),
      });
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      let done = false;
      res.on('close', () => {
        if (record.written < total) record.clientClosed = true;
        done = true;
      });
      const pump = () => {
        while (!done && record.written < total) {
          record.written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!done) res.end();
      };
      pump();
    };
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('catch-up transport rules (print-protocol §8)', () => {
  it('loopback is 127.0.0.0/8, ::1 and localhost, as written: no other name', () => {
    for (const host of [
      '127.0.0.1',
      '127.8.9.10',
      '[::1]',
      'localhost',
      'LOCALHOST.',
      'a.localhost',
    ])
      assert.ok(isLoopbackHost(new URL(`http://${host}/`).hostname), host);
    for (const host of ['192.0.2.10', '10.0.0.1', '[::2]', 'orders.example.com', 'localhost.evil'])
      assert.ok(!isLoopbackHost(new URL(`http://${host}/`).hostname), host);
    assert.ok(isLoopbackHost(new URL('http://[::ffff:127.0.0.1]/').hostname), 'IPv4-mapped');
    assert.equal(catchUpTransportKind('https://orders.example.com'), 'https');
    assert.equal(catchUpTransportKind('http://127.0.0.1:8080/api'), 'http-loopback');
    assert.equal(catchUpTransportKind('http://192.0.2.10'), 'http-insecure');
  });

  it('refuses http to a host other than loopback, unless the lab switch is on (then warns)', () => {
    const refused = thrown(() => client('http://192.0.2.10:8080'));
    assert.equal(refused.code, 'CONFIG_INVALID');
    assert.match(refused.message, /catchUp\.baseUrl: must be https:\/\/ for a host other than/);
    assert.match(refused.message, /catchUp\.allowInsecureHttp/);
    const lab = client('http://192.0.2.10:8080', { allowInsecureHttp: true });
    assert.equal(lab.transport, 'http-insecure');
    assert.match(lab.transportWarning ?? '', /allowInsecureHttp is true.*192\.0\.2\.10:8080/);
    for (const url of ['http://127.0.0.1:1', 'http://localhost:1', 'http://[::1]:1']) {
      const local = client(url);
      assert.equal(local.transport, 'http-loopback', url);
      assert.equal(local.transportWarning, null);
    }
    assert.equal(client('https://orders.example.com').transportWarning, null);
  });

  it('a CA file only with https; signatures off only over https; on needs the service key', () => {
    const ca = thrown(() => client('http://127.0.0.1:1', { ca: 'PEM' }));
    assert.match(ca.message, /catchUp\.caFile: applies only to https:\/\//);
    const off = thrown(() => client('http://127.0.0.1:1', { responseSignature: 'off' }));
    assert.match(off.message, /catchUp\.responseSignature: may be "off" only over https:\/\//);
    const lab = thrown(() =>
      client('http://192.0.2.10', { responseSignature: 'off', allowInsecureHttp: true }),
    );
    assert.match(lab.message, /responseSignature/, 'not even with the lab switch');
    client('https://orders.example.com', { responseSignature: 'off', serviceKey: undefined });
    const keyless = thrown(() => client('https://orders.example.com', { serviceKey: undefined }));
    assert.match(keyless.message, /keys\.servicePublicKeyFile: is required/);
    assert.deepEqual(
      catchUpTransportIssues('http://192.0.2.10', {
        caFile: '/etc/ca.pem',
        responseSignature: 'off',
      }).map((i) => i.field),
      ['baseUrl', 'caFile', 'responseSignature'],
    );
  });
});

describe('catch-up answers: signature before parsing, caps', () => {
  let own: AnswerServer;
  let service: TestService;

  before(async () => {
    own = await AnswerServer.start();
    service = await startService();
    await service.create('Signed dish');
  });
  after(async () => {
    await own?.close();
    await service?.close();
  });

  it("the reference service's signed answers verify; the page says how", async () => {
    const result = await client(service.url).query({ ...aroundNow(), pageNum: 1, pageSize: 10 });
    assert.equal(result.authenticated, 'signature');
    assert.equal(result.entries.length, 1);
  });

  it('http to localhost: connects once the name resolved to loopback', async () => {
    const local = client(`http://localhost:${new URL(service.url).port}`);
    const result = await local.query({ ...aroundNow(), pageNum: 1, pageSize: 10 });
    assert.equal(result.authenticated, 'signature');
  });

  it('an unsigned answer is refused unread, whatever it says', async () => {
    const bodies = [
      pageBody(),
      // Its code is not even read: an unauthenticated 40006 would reset the cursor.
      JSON.stringify({ code: 40006, message: 'no such order', data: null }),
      '<html>bad gateway</html>',
      `${'['.repeat(50_000)}${']'.repeat(50_000)}`,
    ];
    for (const body of bodies) {
      own.answer(body);
      const error = await rejection(client(own.url).query(page));
      assert.equal(error.code, 'QUERY_REJECTED', body.slice(0, 40));
      assert.equal(error.details.refused, 'unsigned');
      assert.equal(error.details.responseCode, undefined);
      assert.match(error.message, /carries no X-Signature: refused unread/);
    }
  });

  it('a bad signature is refused unread: another key, other bytes, garbage, two headers', async () => {
    const body = pageBody();
    const headers: Array<(req: IncomingMessage) => string | string[]> = [
      (req) => signedFor(req, body, strangerKey),
      (req) => signedFor(req, `${body} `),
      () => 'not-base64!',
      (req) => signedFor(req, body).slice(0, -4),
      (req) => [signedFor(req, body), signedFor(req, body)],
    ];
    for (const value of headers) {
      own.answer(body, (req) => ({
        [RESPONSE_SIGNATURE_HEADER]: value(req),
        [RESPONSE_SIGNATURE_VERSION_HEADER]: '2',
      }));
      const error = await rejection(client(own.url).query(page));
      assert.equal(error.code, 'QUERY_REJECTED');
      assert.equal(error.details.refused, 'bad-signature');
      assert.match(error.message, /does not verify with the service public key/);
    }
    own.answer(body, signed(body));
    const ok = await client(own.url).query(page);
    assert.equal(ok.entries.length, 1, 'the same body, correctly signed, is taken');
  });

  it('signed for this request but no store: only a refusal is read, never records or 40006', async () => {
    // The reference service binds a refusal of a request it could not attribute to a store (an
    // unknown storeKey here) to no store: the agent reads its code, not "bad signature".
    const unknown = await rejection(
      client(service.url, { storeKey: 'sk-not-registered' }).query(page),
    );
    assert.equal(unknown.code, 'QUERY_REJECTED');
    assert.equal(unknown.details.responseCode, 40102, unknown.message);
    // A page, or "no such order for this store", signed for no store: not this store's answer.
    const failure = (code: number) => JSON.stringify({ code, message: 'refused', data: null });
    for (const [body, says] of [
      [pageBody(), 'lists orders'],
      [failure(40006), 'answers 40006'],
    ] as const) {
      own.answer(body, (req) => ({
        [RESPONSE_SIGNATURE_HEADER]: signedFor(req, body, serviceSigningKey, ''),
        [RESPONSE_SIGNATURE_VERSION_HEADER]: '2',
      }));
      const error = await rejection(client(own.url).query(page));
      assert.equal(error.code, 'QUERY_REJECTED');
      assert.equal(error.details.refused, 'wrong-store', error.message);
      assert.equal(error.details.responseCode, undefined, 'no code taken from it');
      assert.match(error.message, new RegExp(`signed for no store.*${says}`));
    }
    own.answer(failure(40101), (req) => ({
      [RESPONSE_SIGNATURE_HEADER]: signedFor(req, failure(40101), serviceSigningKey, ''),
      [RESPONSE_SIGNATURE_VERSION_HEADER]: '2',
    }));
    const refusal = await rejection(client(own.url).query(page));
    assert.equal(refusal.details.responseCode, 40101);
  });

  it('stripped or corrupted on the way from the reference service: refused', async () => {
    service.signature = () => undefined;
    try {
      const unsigned = await rejection(client(service.url).query(page));
      assert.equal(unsigned.details.refused, 'unsigned');
      service.signature = (_body, sig) => `${sig!.startsWith('A') ? 'B' : 'A'}${sig!.slice(1)}`;
      const corrupted = await rejection(client(service.url).query(page));
      assert.equal(corrupted.details.refused, 'bad-signature');
    } finally {
      service.signature = null;
    }
  });

  it('signed but nested too deep: refused before JSON.parse, also inside data as a string', async () => {
    const deep = `{"code":10000,"message":"ok","data":${'['.repeat(40)}${']'.repeat(40)}}`;
    const inner = JSON.stringify({
      code: 10000,
      message: 'ok',
      data: `${'{"a":'.repeat(40)}1${'}'.repeat(40)}`,
    });
    for (const body of [deep, inner]) {
      own.answer(body, signed(body));
      const error = await rejection(client(own.url).query(page));
      assert.equal(error.code, 'QUERY_REJECTED');
      assert.equal(error.details.refused, 'too-deep');
    }
  });

  it('more records than the pageSize asked for: the page is refused whole', async () => {
    const body = pageBody(11);
    own.answer(body, signed(body));
    const error = await rejection(client(own.url).query(page));
    assert.equal(error.code, 'QUERY_REJECTED');
    assert.equal(error.details.refused, 'too-many-records');
    assert.match(error.message, /11 records on a page of 10/);
    const exact = pageBody(10);
    own.answer(exact, signed(exact));
    assert.equal((await client(own.url).query(page)).entries.length, 10);
  });

  it('the body cap: exactly the cap is read, one byte more is refused', async () => {
    const body = pageBody();
    const small = (max: number) => client(own.url, { maxResponseBytes: max });
    own.answer(body, signed(body));
    assert.equal((await small(Buffer.byteLength(body)).query(page)).entries.length, 1);
    const error = await rejection(small(Buffer.byteLength(body) - 1).query(page));
    assert.equal(error.code, 'QUERY_REJECTED');
    assert.equal(error.details.refused, 'too-large');
  });

  for (const declare of [true, false]) {
    it(`a ${declare ? 'declared' : 'chunked'} 64 MiB answer: refused at 4 MiB, its connection dropped`, async () => {
      const total = 64 * 1024 * 1024;
      own.stream(total, declare);
      const from = own.answers.length;
      const error = await rejection(client(own.url).query(page));
      assert.equal(error.code, 'QUERY_REJECTED');
      assert.equal(error.details.refused, 'too-large');
      assert.equal(error.details.limitBytes, QUERY_RESPONSE_MAX_BYTES);
      assert.match(error.message, /larger than 4194304 bytes/);
      if (declare) assert.equal(error.details.declaredBytes, total);
      // The server sees the client hang up long before the end: the rest was never read.
      const answer = own.answers[from]!;
      await waitFor('the server to see the hang-up', () => answer.clientClosed, 10_000);
      assert.ok(
        answer.written < 24 * 1024 * 1024,
        `${answer.written} bytes written before the hang-up`,
      );
    });
  }
});

describe('catch-up over https (certificates made with openssl)', {
  skip: skipWithoutOpenssl(),
}, () => {
  let service: TestService;
  let ca: TestCa;
  let otherCa: TestCa;
  let caPem: string;
  let genuine: TlsFront;
  let impostor: TlsFront;

  before(async () => {
    service = await startService();
    await service.create('TLS dish');
    ca = TestCa.create('service');
    otherCa = TestCa.create('other');
    caPem = readFileSync(ca.certFile, 'utf8');
    const port = Number(new URL(service.url).port);
    genuine = await TlsFront.start(ca.issue({ name: 'service', ...LOCAL_NAMES }), port);
    impostor = await TlsFront.start(otherCa.issue({ name: 'impostor', ...LOCAL_NAMES }), port);
  });
  after(async () => {
    await genuine?.close();
    await impostor?.close();
    await service?.close();
  });

  it('the service CA pinned with the CA file: queries work, by name and by address', async () => {
    const pinned = loadCaFile(ca.certFile);
    assert.match(pinned.subjects[0]!, /CN=service test CA/);
    for (const host of ['localhost', '127.0.0.1']) {
      const result = await client(`https://${host}:${genuine.port}`, { ca: pinned.pem }).query({
        ...aroundNow(),
        pageNum: 1,
        pageSize: 10,
      });
      assert.equal(result.authenticated, 'signature', host);
      assert.equal(result.entries.length, 1);
    }
  });

  it('a certificate from another CA is refused, naming the check and catchUp.caFile', async () => {
    const error = await rejection(
      client(`https://localhost:${impostor.port}`, { ca: caPem }).query(page),
    );
    assert.equal(error.code, 'QUERY_FAILED');
    assert.ok(typeof error.details.tls === 'string', `details.tls: ${String(error.details.tls)}`);
    assert.match(error.message, /TLS check failed \(unknown-ca\).*catchUp\.caFile/);
    // Without the CA file only the system CAs count: the test CA is not one of them.
    const system = await rejection(client(`https://localhost:${genuine.port}`).query(page));
    assert.equal(system.code, 'QUERY_FAILED');
    assert.ok(system.details.tls);
  });

  it('signatures off (https only): the answer is taken on the certificate alone', async () => {
    service.signature = () => undefined;
    try {
      const result = await client(`https://localhost:${genuine.port}`, {
        ca: caPem,
        responseSignature: 'off',
        serviceKey: undefined,
      }).query({ ...aroundNow(), pageNum: 1, pageSize: 10 });
      assert.equal(result.authenticated, 'tls');
      assert.equal(result.entries.length, 1);
    } finally {
      service.signature = null;
    }
  });

  it('a CA file that holds no certificate is refused with the file named', () => {
    const { keyFile } = ca.issue({ name: 'not-a-ca', ...LOCAL_NAMES });
    const error = thrown(() => loadCaFile(keyFile));
    assert.equal(error.code, 'CONFIG_INVALID');
    assert.match(error.message, /catchUp\.caFile: .*must hold a PEM certificate/);
    assert.ok(!error.message.includes('PRIVATE KEY'), 'the content is never quoted');
  });
});
