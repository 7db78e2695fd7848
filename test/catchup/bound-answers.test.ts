/**
 * Issue 40 item 5, print-protocol v1.2 §10: a catch-up answer is bound to its question. Against
 * the real reference order service over HTTP on loopback, with a hop of this file's own between
 * the agent's query client and the service: it relays requests (their `X-Request-Nonce` too) and
 * answers, and keeps both, so a test can answer a request with a genuine signed answer captured
 * from another one, or send the service another request under this request's nonce.
 *
 * Asserted: a genuine signed page replayed as the answer to another query (the same query again,
 * another page, another store's query) is refused with QUERY_REJECTED and nothing of it is
 * stored; in the demo's setup (restaurantNo and branchIdentifier unset) the poller stores and
 * prints nothing of another store's pages; a service that signs version 1 only (the body alone)
 * is refused by default, and accepted with `allowV1Signatures`, warned about at every round.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { waitFor } from '../../harness/waiting.js';
import { CatchUpPoller, type RoundSummary } from '../../src/catchup/poller.js';
import { QueryClient, type QueryRequest } from '../../src/catchup/query-client.js';
import { catchUpTransportWarnings } from '../../src/catchup/transport.js';
import { AgentError } from '../../src/errors.js';
import { JobStore } from '../../src/jobs/store.js';
import { createLogger } from '../../src/logging.js';
import {
  buildEnvelope,
  REQUEST_NONCE_HEADER,
  RESPONSE_SIGNATURE_HEADER,
  RESPONSE_SIGNATURE_VERSION_HEADER,
} from '../../src/protocol/index.js';
import { formatWallClock } from '../../src/protocol/time.js';
import {
  APP_ID,
  CATCH_UP_TIMING,
  OTHER_STORE_KEY,
  STORE_KEY,
  servicePublicKey,
  startService,
  storeKey,
  type TestService,
} from './harness.js';
import { VirtualClock } from './virtual-clock.js';

/** A request as the hop received it (and relays it). */
interface Exchange {
  path: string;
  body: Buffer;
  nonce: string | undefined;
}

/** An answer as the hop received it from the service (and sends it on). */
interface Answer {
  status: number;
  body: Buffer;
  signature: string | undefined;
  version: string | undefined;
}

/**
 * Between the client and the service: relays each request, or answers it with what `next`
 * makes of it (once); keeps every request and every answer it sent.
 */
class Hop {
  next: ((request: Exchange) => Promise<Answer>) | null = null;
  /** Answers every request with `always` while it is set (after `next`). */
  always: ((request: Exchange) => Promise<Answer>) | null = null;
  readonly requests: Exchange[] = [];
  readonly answers: Answer[] = [];

  private constructor(
    private readonly server: Server,
    private readonly upstream: string,
  ) {}

  static async start(upstream: string): Promise<Hop> {
    const box: { hop?: Hop } = {};
    const server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const nonce = req.headers[REQUEST_NONCE_HEADER];
      const request: Exchange = {
        path: req.url ?? '/',
        body: Buffer.concat(chunks),
        nonce: typeof nonce === 'string' ? nonce : undefined,
      };
      const hop = box.hop!;
      hop.requests.push(request);
      const plan = hop.next ?? hop.always;
      hop.next = null;
      const answer = await (plan ?? ((r: Exchange) => hop.relay(r)))(request);
      hop.answers.push(answer);
      res.writeHead(answer.status, {
        'content-type': 'application/json; charset=utf-8',
        ...(answer.signature !== undefined
          ? { [RESPONSE_SIGNATURE_HEADER]: answer.signature }
          : {}),
        ...(answer.version !== undefined
          ? { [RESPONSE_SIGNATURE_VERSION_HEADER]: answer.version }
          : {}),
      });
      res.end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    box.hop = new Hop(server, upstream);
    return box.hop;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Sends `request` to the real service, as is, and returns its answer. */
  async relay(request: Exchange): Promise<Answer> {
    const res = await fetch(`${this.upstream}${request.path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(request.nonce !== undefined ? { [REQUEST_NONCE_HEADER]: request.nonce } : {}),
      },
      body: request.body,
    });
    return {
      status: res.status,
      body: Buffer.from(await res.arrayBuffer()),
      signature: res.headers.get(RESPONSE_SIGNATURE_HEADER) ?? undefined,
      version: res.headers.get(RESPONSE_SIGNATURE_VERSION_HEADER) ?? undefined,
    };
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function client(baseUrl: string, key = STORE_KEY, allowV1Signatures = false): QueryClient {
  return new QueryClient({
    baseUrl,
    appId: APP_ID,
    storeKey: key,
    key: storeKey,
    serviceKey: servicePublicKey,
    ...(allowV1Signatures ? { allowV1Signatures } : {}),
  });
}

async function rejection(promise: Promise<unknown>, what: string): Promise<AgentError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AgentError, `${what}: an AgentError, got ${String(error)}`);
    return error;
  }
  throw new Error(`${what}: accepted, expected a refusal`);
}

/** Creates an order of `storeKey`'s store (signed like a POS); returns its orderNo. */
async function createFor(service: TestService, key: string, name: string): Promise<string> {
  const res = await fetch(`${service.url}/open-api/order/create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(
      buildEnvelope({
        appId: APP_ID,
        storeKey: key,
        key: storeKey,
        param: {
          productInfo: [{ productName: name, price: 10_000, quantity: 1 }],
          orderType: 1,
          paymentWay: '2',
          paymentTransactionId: `M-${name}`.replace(/\s/g, '-'),
        },
      }),
    ),
  });
  const body = (await res.json()) as { code: number; message: string; data: { orderNo: string } };
  assert.equal(body.code, 10000, body.message);
  return body.data.orderNo;
}

/** The page an answer lists: its pageNum and its records' order numbers and restaurant. */
function listed(answer: Answer): { code: number; pageNum: number; orders: string[][] } {
  const parsed = JSON.parse(answer.body.toString('utf8')) as {
    code: number;
    data: { pageNum: number; list: Array<{ orderInnerNo: string; restaurantNo: string }> };
  };
  return {
    code: parsed.code,
    pageNum: parsed.data.pageNum,
    orders: parsed.data.list.map((r) => [r.orderInnerNo, r.restaurantNo]),
  };
}

describe('catch-up answers are bound to the request (issue 40 item 5, v1.2 §10)', () => {
  const clock = new VirtualClock();
  let service: TestService;
  let hop: Hop;
  const ours: string[] = [];
  const theirs: string[] = [];
  const cleanup: Array<() => Promise<void> | void> = [];

  /** A time range around the virtual now, one record a page. */
  const query = (pageNum: number, pageSize = 1): QueryRequest => ({
    startTime: formatWallClock(clock.now() - 3_600_000),
    endTime: formatWallClock(clock.now() + 3_600_000),
    pageNum,
    pageSize,
  });

  before(async () => {
    service = await startService({ clock });
    hop = await Hop.start(service.url);
    for (const i of [1, 2, 3]) ours.push(await service.create(`Our dish ${i}`));
    // Another store of the same app (R200, B-2): what a store owner of the demo could be.
    for (const i of [1, 2]) theirs.push(await createFor(service, OTHER_STORE_KEY, `Their ${i}`));
  });
  after(async () => {
    await hop?.close();
    await service?.close();
  });
  afterEach(async () => {
    hop.next = null;
    hop.always = null;
    service.v1Only = false;
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it('a genuine signed page replayed as the answer to another query is refused, unread', async () => {
    const a = client(hop.url);
    const b = client(hop.url, OTHER_STORE_KEY);
    // The captures: real answers of the real service, each taken by the client it answered.
    const first = await a.query(query(1));
    assert.deepEqual(
      first.entries.map((e) => e.ok && e.record.orderInnerNo),
      [ours[0]],
    );
    const ourPage1 = hop.answers.at(-1)!;
    const ourQuery1 = hop.requests.at(-1)!;
    const other = await b.query(query(1, 100));
    assert.equal(other.entries.length, theirs.length);
    const theirPage = hop.answers.at(-1)!;
    const theirQuery = hop.requests.at(-1)!;

    const attempts: Array<[string, QueryRequest, (r: Exchange) => Promise<Answer>, string]> = [
      ['the same query asked again (a new nonce)', query(1), async () => ourPage1, 'bad-signature'],
      ['page 2 of the query', query(2), async () => ourPage1, 'bad-signature'],
      ["another store's page", query(1, 100), async () => theirPage, 'bad-signature'],
      // The store: the other store's genuine query sent under this request's nonce (by that
      // store's owner, or whoever captured it): a fresh answer of the service, for this request,
      // listing that store's orders.
      [
        "another store's query under this request's nonce",
        query(1, 100),
        (r) => hop.relay({ ...theirQuery, nonce: r.nonce }),
        'bad-signature',
      ],
      // The page: our own query for page 1 replayed under the nonce of the request for page 2:
      // a fresh answer for this request and this store, but of page 1.
      [
        "page 1's query under the nonce of page 2",
        query(2),
        (r) => hop.relay({ ...ourQuery1, nonce: r.nonce }),
        'wrong-page',
      ],
    ];
    for (const [what, request, answer, refused] of attempts) {
      hop.next = answer;
      const error = await rejection(a.query(request), what);
      assert.equal(error.code, 'QUERY_REJECTED', what);
      assert.equal(error.details.refused, refused, `${what}: ${error.message}`);
      const sent = hop.answers.at(-1)!;
      assert.equal(sent.status, 200, what);
      assert.ok(sent.signature, `${what}: a signed answer of the service`);
      assert.equal(listed(sent).code, 10000, `${what}: a genuine page, orders listed`);
    }
    // What the last two sent were real pages: the other store's orders, and our page 1.
    assert.deepEqual(
      listed(hop.answers.at(-2)!).orders.map(([, restaurantNo]) => restaurantNo),
      theirs.map(() => 'R200'),
    );
    assert.deepEqual(listed(hop.answers.at(-1)!), {
      code: 10000,
      pageNum: 1,
      orders: [[ours[0], 'R100']],
    });
    assert.equal(ourPage1.version, '2', 'the service bound its answers to the request');
    // The same client, answered by the service itself, is not stuck: page 2 is ours[1].
    const second = await a.query(query(2));
    assert.deepEqual(
      second.entries.map((e) => e.ok && e.record.orderInnerNo),
      [ours[1]],
    );
  });

  it("another store's pages under our nonce: nothing stored or printed, the cursor unset (demo setup)", async () => {
    // The demo's agent knows neither restaurantNo nor branchIdentifier: only the binding stands
    // between it and another store's orders.
    const b = client(hop.url, OTHER_STORE_KEY);
    await b.query(query(1, 100));
    const theirQuery = hop.requests.at(-1)!;
    hop.always = (r) => hop.relay({ ...theirQuery, nonce: r.nonce });

    const store = JobStore.open({ stateDir: mkdtempSync(join(tmpdir(), 'pa-bound-')) });
    const lines: string[] = [];
    const log = createLogger({
      level: 'debug',
      destination: { write: (line: string) => void lines.push(line) },
    });
    const poller = new CatchUpPoller(client(hop.url), store, { ...CATCH_UP_TIMING, clock }, log);
    const rounds: RoundSummary[] = [];
    poller.on('round', (s) => rounds.push(s));
    cleanup.push(() => store.close());
    cleanup.push(() => poller.stop());
    const from = hop.answers.length;
    poller.start();
    await waitFor('the first round', () => rounds.length >= 1, 20_000);

    const round = rounds[0]!;
    assert.equal(round.error?.code, 'QUERY_REJECTED');
    assert.equal(round.error?.details.refused, 'bad-signature');
    assert.equal(round.orders, 0, 'not one record of it was looked at');
    // It was the other store's genuine page, signed by the service.
    assert.deepEqual(
      listed(hop.answers[from]!).orders.map(([orderNo]) => orderNo),
      theirs,
    );
    assert.deepEqual(store.list({ limit: 100 }), [], 'no job: nothing prints');
    assert.deepEqual(store.drainOutbox(100), [], 'no job event');
    assert.equal(store.getCatchUpCursor(), null);
  });

  it('an answer signed version 1 (the body alone) is refused by default', async () => {
    service.v1Only = true;
    const error = await rejection(client(hop.url).query(query(1)), 'a version 1 answer');
    assert.equal(hop.answers.at(-1)!.version, undefined, 'the service signed version 1');
    assert.equal(error.code, 'QUERY_REJECTED');
    assert.equal(error.details.refused, 'v1-signature');
    assert.match(error.message, /signed version 1 .*catchUp\.allowV1Signatures/);
  });

  it('version 1 accepted with catchUp.allowV1Signatures, and warned about at every round', async () => {
    service.v1Only = true;
    const store = JobStore.open({ stateDir: mkdtempSync(join(tmpdir(), 'pa-bound-v1-')) });
    const lines: string[] = [];
    const log = createLogger({
      level: 'debug',
      destination: { write: (line: string) => void lines.push(line) },
    });
    const lab = client(hop.url, STORE_KEY, true);
    const poller = new CatchUpPoller(lab, store, { ...CATCH_UP_TIMING, clock }, log);
    const rounds: RoundSummary[] = [];
    poller.on('round', (s) => rounds.push(s));
    cleanup.push(() => store.close());
    cleanup.push(() => poller.stop());
    poller.start();
    await waitFor('the first round', () => rounds.length >= 1, 20_000);
    poller.request();
    await waitFor('the second round', () => rounds.length >= 2, 20_000);

    assert.deepEqual(
      rounds.map((r) => r.error),
      [null, null],
    );
    assert.equal(rounds[0]!.queued, ours.length, 'our orders, taken from version 1 answers');
    const warnings = lines
      .map((line) => JSON.parse(line) as { level: number; msg: string; v1Answers?: number })
      .filter((r) => r.level === 40 && r.msg.includes('catchUp.allowV1Signatures is true'));
    assert.equal(warnings.length, rounds.length, 'one warning per round');
    assert.deepEqual(
      warnings.map((w) => w.v1Answers),
      rounds.map((r) => r.queries),
      'each counts the version 1 answers of its round',
    );
    // `config check` says it too.
    assert.match(
      catchUpTransportWarnings(hop.url, { allowV1Signatures: true }).join('\n'),
      /catchUp\.allowV1Signatures is true: answers signed version 1/,
    );
    assert.deepEqual(catchUpTransportWarnings(hop.url, {}), []);
  });
});
