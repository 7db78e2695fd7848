/**
 * Real traffic against the contract documents (issue 19): a private Mosquitto, the reference order
 * service from its composition root (SQLite, MQTT publisher), the agent in this process printing
 * on the emulator over TCP, and a plain MQTT client watching the store's topics.
 *
 * Everything that crosses a wire is validated with ajv against the schema the documents give it,
 * the parsed content of every `param` (and of `data` sent as a string) against its contentSchema:
 * the create and list requests as the service received them (a recording hop in front of it) and
 * the answers (success and refusals), the agent's own catch-up queries as the service received
 * them, the OpenAPI document the service serves, the print instruction the service published, the
 * commands sent, every job event the agent published and its retained status, online and then the
 * last will. Refusals are checked both ways: what the service refuses, the document refuses too,
 * so its schemas are not vacuous.
 */
import assert from 'node:assert/strict';
import { createPublicKey } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { Mosquitto, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { apiDocuments } from '../../packaging/api-docs.js';
import { Agent, type AgentSettings } from '../../src/agent.js';
import { QueryClient } from '../../src/catchup/query-client.js';
import { listenTcp, type TcpEndpoint, VirtualPrinter } from '../../src/emulator/index.js';
import { createLogger } from '../../src/logging.js';
import { OPENAPI_PATH } from '../../src/order-service/openapi-route.js';
import {
  buildEnvelope,
  createParamsSchema,
  deriveStoreId,
  formatTimestamp,
  parseKey,
  queryParamsSchema,
  RESPONSE_SIGNATURE_HEADER,
  topics,
} from '../../src/protocol/index.js';
import { receiptOptions } from '../../src/receipt/options.js';
import { testAgentBasics, testMqtt } from '../helpers/agent-settings.js';
import { ROOT } from '../helpers/cli.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import {
  APP_ID,
  clientKey,
  makeService,
  newOrder,
  postRaw,
  type RawAnswer,
  type RealService,
  STORE_KEY,
  dir as serviceKeyDir,
  servicePublicKey,
  signed,
  signedByService,
  startRealService,
  strangerKey,
} from '../order-service/harness.js';
import {
  assertMessage,
  DocumentValidator,
  matchMessage,
  requestPointer,
  responsePointer,
} from './contract-validators.js';
import { type Forwarded, type RecordingProxy, recordingProxy } from './recording-proxy.js';

const documents = apiDocuments();
const CREATE = '/open-api/order/create';
const LIST = '/open-api/order/list';
const storeId = deriveStoreId(APP_ID, STORE_KEY);
const t = topics('printer-agent/v1', storeId);

/** The service's own key pair, from the harness's key directory (it signs instructions). */
const servicePem = readFileSync(join(serviceKeyDir, 'service.key'), 'utf8');
const serviceKey = parseKey(servicePem, 'private');

interface Received {
  topic: string;
  text: string;
  body: Record<string, unknown>;
}

describe('real traffic is valid against the contract documents', {
  skip: skipWithoutMosquitto(),
}, () => {
  // Closed: besides being valid, the traffic carries no field the documents do not name.
  const openapi = new DocumentValidator(documents['docs/api/openapi.json']!, 'openapi', {
    closed: true,
  });
  const asyncapi = new DocumentValidator(documents['docs/api/asyncapi.json']!, 'asyncapi', {
    closed: true,
  });
  let broker: Mosquitto;
  let proxy: TcpProxy;
  let service: RealService;
  /** In front of the service: the POS side's requests (the test's) pass here... */
  let pos: RecordingProxy;
  /** ...and the agent's catch-up queries here. */
  let agentLink: RecordingProxy;
  let emulator: VirtualPrinter;
  let endpoint: TcpEndpoint;
  let agent: Agent | null = null;
  let observer: MqttClient;
  const received: Received[] = [];
  let orderNo = '';

  /** An HTTP answer checked against the document: body for its status, the signature header. */
  function assertAnswer(path: string, answer: RawAnswer, what: string): void {
    openapi.assertValid(responsePointer(path, 'post', answer.status), answer.body, what);
    assert.ok(answer.signature, `${what}: the documented ${RESPONSE_SIGNATURE_HEADER} header`);
  }

  /** A request body checked against the document, param content included. */
  function assertRequest(path: string, body: unknown, what: string): void {
    const before = openapi.contentChecks;
    openapi.assertValid(requestPointer(path, 'post'), body, what);
    assert.ok(openapi.contentChecks > before, `${what}: param was parsed and checked`);
  }

  const on = (topic: string) => received.filter((r) => r.topic === topic);

  /** Sends a signed request through the recording hop; the answer and what the service got. */
  async function send(
    path: string,
    param: object,
  ): Promise<{ answer: RawAnswer; receivedBody: unknown; forwarded: Forwarded }> {
    const before = pos.requests.length;
    const answer = await postRaw(`${pos.url}${path}`, signed(param));
    assert.equal(pos.requests.length, before + 1, 'one request went through');
    const forwarded = pos.requests.at(-1)!;
    assert.equal(forwarded.path, path);
    return { answer, receivedBody: JSON.parse(forwarded.body), forwarded };
  }

  /** The query param the service received in `forwarded` (a list request). */
  const queryParam = (forwarded: Forwarded) =>
    JSON.parse((JSON.parse(forwarded.body) as { param: string }).param) as Record<string, unknown>;

  before(async () => {
    broker = await Mosquitto.start();
    proxy = await TcpProxy.start({ targetPort: broker.port });
    observer = mqtt.connect(broker.url, { protocolVersion: 5, clientId: 'contract-observer' });
    observer.on('message', (topic, payload) => {
      const text = payload.toString('utf8');
      // An empty retained message clears a topic; it is no message of the protocol.
      if (text !== '') received.push({ topic, text, body: JSON.parse(text) });
    });
    await new Promise<void>((resolve) => observer.once('connect', () => resolve()));
    await observer.subscribeAsync([t.print, t.command, t.job, t.status], { qos: 1 });

    service = await startRealService({ brokerUrl: broker.url });
    pos = await recordingProxy(service.url);
    agentLink = await recordingProxy(service.url);
    emulator = new VirtualPrinter({ columns: 48 });
    endpoint = await listenTcp(emulator, { port: 0 });
    const agentDir = mkdtempSync(join(tmpdir(), 'pa-contract-'));
    const publicPem = createPublicKey(servicePem).export({ type: 'spki', format: 'pem' });
    writeFileSync(join(agentDir, 'service-public.pem'), publicPem);
    // The store's private key (the harness's client pair): the agent signs its queries with it.
    const storePrivateKeyFile = join(agentDir, 'store-private.pem');
    writeFileSync(storePrivateKeyFile, clientKey.key.export({ type: 'pkcs8', format: 'pem' }), {
      mode: 0o600,
    });
    const settings: AgentSettings = {
      appId: APP_ID,
      storeKey: STORE_KEY,
      storeId,
      // Through the proxy, so the test can cut the agent off and the broker sends its last will.
      mqtt: testMqtt(`mqtt://${proxy.address}`, storeId),
      keys: { servicePublicKeyFile: join(agentDir, 'service-public.pem'), scheme: 'RSA-SHA256' },
      printers: [
        {
          id: 'receipt',
          url: endpoint.address,
          profile: 'generic-80mm',
          roles: ['receipt'],
          statusIntervalMs: 200,
        },
      ],
      receipt: receiptOptions({ header: ['Contract Store'] }),
      ...testAgentBasics(join(agentDir, 'state')),
      // The service writes createTime in UTC; the machine's NTP state must not matter here.
      freshness: { maxAgeMs: 7 * 86_400_000, clock: 'synchronized', timeZone: 'UTC' },
      // Catch-up through its own recording hop: its first round (no cursor yet) queries at start.
      catchUp: {
        baseUrl: agentLink.url,
        storePrivateKeyFile,
        intervalMs: 10 * 60_000,
        minIntervalMs: 10_000,
        pageSize: 100,
        maxAgeMs: 60 * 60_000,
        windowMs: 5 * 60_000,
        timeZone: 'UTC',
      },
    };
    agent = await Agent.start(settings, createLogger({ level: 'silent' }));
    await waitFor('the agent online', () => on(t.status).some((r) => r.body.online === true));
  });

  after(async () => {
    await agent?.stop();
    await pos?.close();
    await agentLink?.close();
    await service?.close();
    await endpoint?.close();
    await observer?.endAsync();
    await proxy?.close();
    await broker?.stop();
  });

  it('create: the request, the answer, the published instruction, the job events', async () => {
    const param = newOrder({
      orderType: 2,
      pickUpNum: '',
      customPrintContext: 'Thank you',
      productInfo: [
        { productName: 'Beef noodles 牛肉麵', price: 12_000, quantity: 2 },
        { productName: 'Iced tea', price: 3_500, quantity: 1 },
      ],
    });
    const { answer, receivedBody } = await send(CREATE, param);
    assert.equal(answer.status, 200);
    assert.equal(answer.body.code, 10000, answer.body.message);
    // The body the service received and created this order from.
    assertRequest(CREATE, receivedBody, 'the create request as the service received it');
    assert.equal(
      JSON.parse((receivedBody as { param: string }).param).paymentTransactionId,
      param.paymentTransactionId,
    );
    assertAnswer(CREATE, answer, 'the create answer');
    orderNo = answer.body.data.orderNo;

    // What the service published for it, as the broker delivered it.
    await waitFor('the print instruction', () =>
      on(t.print).some((r) => JSON.parse(r.body.param as string).orderNo === orderNo),
    );
    const instruction = on(t.print).find(
      (r) => JSON.parse(r.body.param as string).orderNo === orderNo,
    )!;
    const before = asyncapi.contentChecks;
    assertMessage(asyncapi, instruction.topic, instruction.body, 'printInstruction');
    assert.ok(asyncapi.contentChecks > before, 'the instruction param was parsed and checked');

    // The agent's events for it, up to printed; each one valid (delivery is at least once).
    const jobId = JSON.parse(instruction.body.param as string).jobId as string;
    await waitFor('the job printed', () =>
      on(t.job).some((r) => r.body.jobId === jobId && r.body.state === 'printed'),
    );
    const events = on(t.job).filter((r) => r.body.jobId === jobId);
    const states = new Set(events.map((r) => r.body.state));
    for (const state of ['queued', 'printing', 'printed']) assert.ok(states.has(state), state);
    for (const event of events) assertMessage(asyncapi, event.topic, event.body, 'jobEvent');
    // The closed check has teeth: a field the document does not name makes an event invalid.
    const extra = { ...events[0]!.body, undocumented: 1 };
    assert.deepEqual(matchMessage(asyncapi, t.job, extra).matched, []);
  });

  it('create refused: the document refuses what the service refuses', async () => {
    // No paymentTransactionId (order-api 4.2 rule 1), and a takeout order without its fees.
    const refusedParams: Array<[string, Record<string, unknown>]> = [
      ['no paymentTransactionId', (({ paymentTransactionId: _, ...rest }) => rest)(newOrder())],
      ['a takeout order without fees', newOrder({ orderType: 3 })],
      ['a quantity of 0', newOrder({ productInfo: [{ productName: 'x', price: 1, quantity: 0 }] })],
    ];
    for (const [what, param] of refusedParams) {
      const { answer, receivedBody } = await send(CREATE, param);
      assert.equal(answer.status, 200);
      assert.equal(answer.body.code, 40003, `${what}: ${answer.body.message}`);
      assertAnswer(CREATE, answer, `the answer to ${what}`);
      assert.equal(createParamsSchema.safeParse(param).success, false);
      openapi.assertInvalid(requestPointer(CREATE, 'post'), receivedBody, `a request with ${what}`);
      openapi.assertInvalid('#/components/schemas/CreateParams', param, what);
    }
    // An envelope without sign: refused by the service before anything else, and by the document.
    const { sign: _, ...unsigned } = signed(newOrder());
    const answer = await postRaw(`${service.url}${CREATE}`, unsigned);
    assert.equal(answer.body.code, 40001, answer.body.message);
    assertAnswer(CREATE, answer, 'the answer to an envelope without sign');
    openapi.assertInvalid(requestPointer(CREATE, 'post'), unsigned, 'an envelope without sign');
  });

  it('HTTP refusals other than 200 have the body the document gives their status', async () => {
    const text = JSON.stringify(signed(newOrder()));
    const res = await fetch(`${service.url}${CREATE}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: text,
    });
    const answer: RawAnswer = {
      status: res.status,
      bytes: new Uint8Array(),
      signature: res.headers.get(RESPONSE_SIGNATURE_HEADER),
      body: await res.json(),
    };
    assert.equal(answer.status, 415);
    assertAnswer(CREATE, answer, 'the 415 answer');
    // The document ties the status to its code: another failure code is not a valid 415 body.
    openapi.assertInvalid(
      responsePointer(CREATE, 'post', 415),
      { ...answer.body, code: 40003 },
      'a 415 body with code 40003',
    );
  });

  it('list: the request and the page, every order record in it', async () => {
    assert.ok(orderNo, 'the create test ran first');
    const now = Date.now();
    const param = {
      startTime: formatTimestamp(new Date(now - 3_600_000), 'UTC'),
      endTime: formatTimestamp(new Date(now + 3_600_000), 'UTC'),
      pageSize: 100,
    };
    const { answer, receivedBody } = await send(LIST, param);
    assert.equal(answer.body.code, 10000, answer.body.message);
    assertRequest(LIST, receivedBody, 'the list request as the service received it');
    assertAnswer(LIST, answer, 'the list answer');
    const list = answer.body.data.list as Array<{ orderInnerNo: string }>;
    assert.ok(
      list.some((r) => r.orderInnerNo === orderNo),
      'the created order is listed',
    );

    // Incremental after the order: an empty page is valid too.
    const after = await send(LIST, { orderInnerNo: orderNo });
    assert.equal(after.answer.body.code, 10000, after.answer.body.message);
    assertRequest(LIST, after.receivedBody, 'the incremental list request as received');
    assertAnswer(LIST, after.answer, 'the incremental list answer');

    // Two query modes at once: refused by the service (40004) and by the document.
    const mixed = { orderInnerNo: orderNo, receiptNo: 'R-1' };
    const refused = await send(LIST, mixed);
    assert.equal(refused.answer.body.code, 40004, refused.answer.body.message);
    assertAnswer(LIST, refused.answer, 'the answer to two query modes');
    assert.equal(queryParamsSchema.safeParse(mixed).success, false);
    openapi.assertInvalid(requestPointer(LIST, 'post'), refused.receivedBody, 'two query modes');
  });

  it('data sent as a JSON string (dataAsString): the string content is checked too', async () => {
    const { app } = makeService({ dataAsString: true });
    try {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${port}${CREATE}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(signed(newOrder())),
      });
      const answer: RawAnswer = {
        status: res.status,
        bytes: new Uint8Array(),
        signature: res.headers.get(RESPONSE_SIGNATURE_HEADER),
        body: await res.json(),
      };
      assert.equal(typeof answer.body.data, 'string');
      const before = openapi.contentChecks;
      assertAnswer(CREATE, answer, 'a create answer with data as a string');
      assert.ok(openapi.contentChecks > before, 'the data string was parsed and checked');
      // A string whose content breaks the result schema is refused: the content is looked at.
      openapi.assertInvalid(
        responsePointer(CREATE, 'post', 200),
        { ...answer.body, data: JSON.stringify({ pickUpNo: 'A001' }) },
        'data as a string without orderNo',
      );
    } finally {
      await app.close();
    }
  });

  it('GET /openapi.json on the service: the committed document, signed like every answer', async () => {
    // The service as it runs (its composition root), nothing registered by the test.
    const res = await fetch(`${service.url}${OPENAPI_PATH}`);
    assert.equal(res.status, 200);
    assert.match(String(res.headers.get('content-type')), /^application\/json/);
    const bytes = new Uint8Array(await res.arrayBuffer());
    const signature = res.headers.get(RESPONSE_SIGNATURE_HEADER);
    assert.ok(signedByService({ bytes, signature }), 'signed by the service key');
    assert.deepEqual(
      JSON.parse(Buffer.from(bytes).toString('utf8')),
      JSON.parse(readFileSync(join(ROOT, 'docs/api/openapi.json'), 'utf8')),
    );
  });

  it("the agent's catch-up queries, as the service received them", async () => {
    // The agent's own first round (time range), sent by its query client at start.
    await waitFor("the agent's catch-up query at the service", () =>
      agentLink.requests.some((r) => r.path === LIST),
    );
    const first = agentLink.requests.find((r) => r.path === LIST)!;
    assert.equal(first.status, 200);
    assert.equal(JSON.parse(first.answer).code, 10000, first.answer);
    assertRequest(LIST, JSON.parse(first.body), "the agent's first catch-up query");
    assert.deepEqual(Object.keys(queryParam(first)).sort(), [
      'endTime',
      'pageNum',
      'pageSize',
      'startTime',
    ]);

    // The other mode the agent queries in, after its cursor: the same client class, same hop.
    assert.ok(orderNo, 'the create test ran first');
    const client = new QueryClient({
      baseUrl: agentLink.url,
      appId: APP_ID,
      storeKey: STORE_KEY,
      key: clientKey,
      serviceKey: servicePublicKey,
    });
    const before = agentLink.requests.length;
    const page = await client.query({ orderInnerNo: orderNo, pageNum: 1, pageSize: 100 });
    assert.equal(page.authenticated, 'signature');
    const cursor = agentLink.requests.slice(before).find((r) => r.path === LIST)!;
    assert.ok(cursor, 'the cursor query went through the hop');
    assertRequest(LIST, JSON.parse(cursor.body), 'a catch-up query after the cursor');
    assert.deepEqual(queryParam(cursor), { orderInnerNo: orderNo, pageNum: 1, pageSize: 100 });
  });

  it('commands and a refused instruction: the messages sent and the events answering them', async () => {
    assert.ok(orderNo, 'the create test ran first');
    const command = (param: Record<string, unknown>) =>
      buildEnvelope({ appId: APP_ID, storeKey: STORE_KEY, param, key: serviceKey });
    const commands = [
      command({ storeId, commandId: 'C-contract-status', type: 'status' }),
      command({ storeId, commandId: 'C-contract-reprint', type: 'reprint', orderNo }),
    ];
    for (const body of commands) {
      assertMessage(asyncapi, t.command, body, 'command');
      await observer.publishAsync(t.command, JSON.stringify(body), { qos: 1 });
    }
    // What the agent refuses, the document refuses: an unknown command type.
    const unknown = command({ storeId, commandId: 'C-contract-x', type: 'print' });
    assert.deepEqual(matchMessage(asyncapi, t.command, unknown).matched, []);
    await observer.publishAsync(t.command, JSON.stringify(unknown), { qos: 1 });
    // An instruction signed by a stranger's key: well-formed, so the document cannot tell (the
    // signature is beyond JSON Schema); the agent rejects it, and its rejection event is valid.
    const forged = buildEnvelope({
      appId: APP_ID,
      storeKey: STORE_KEY,
      key: strangerKey,
      param: {
        storeId,
        jobId: 'P-forged',
        orderNo: 'O-forged',
        createTime: formatTimestamp(new Date(), 'UTC'),
        order: newOrder(),
      },
    });
    assertMessage(asyncapi, t.print, forged, 'printInstruction');
    await observer.publishAsync(t.print, JSON.stringify(forged), { qos: 1 });

    for (const commandId of ['C-contract-status', 'C-contract-reprint', 'C-contract-x'])
      await waitFor(`an answer to ${commandId}`, () =>
        on(t.job).some((r) => r.body.commandId === commandId),
      );
    await waitFor('the forged instruction rejected', () =>
      on(t.job).some(
        (r) =>
          r.body.state === 'rejected' &&
          r.body.commandId == null &&
          r.body.reason !== null &&
          (r.body.reason as { code: string }).code === 'SIGNATURE_INVALID',
      ),
    );
    assert.ok(
      on(t.job).some((r) => r.body.commandId === 'C-contract-x' && r.body.state === 'rejected'),
      'the unknown command is rejected',
    );
    for (const event of on(t.job)) assertMessage(asyncapi, event.topic, event.body, 'jobEvent');
  });

  it('status: the retained status, then the last will when the agent vanishes', async () => {
    const online = on(t.status).filter((r) => r.body.online === true);
    assert.ok(online.length > 0);
    for (const status of online) assertMessage(asyncapi, status.topic, status.body, 'agentStatus');
    // A fresh subscriber gets the retained one, as a service starting later would.
    const late = mqtt.connect(broker.url, { protocolVersion: 4, clientId: 'contract-late' });
    const retained: Received[] = [];
    late.on('message', (topic, payload, packet) => {
      if (packet.retain)
        retained.push({ topic, text: payload.toString(), body: JSON.parse(payload.toString()) });
    });
    await new Promise<void>((resolve) => late.once('connect', () => resolve()));
    await late.subscribeAsync(t.status, { qos: 1 });
    await waitFor('the retained status', () => retained.length > 0);
    await late.endAsync();
    assertMessage(asyncapi, retained[0]!.topic, retained[0]!.body, 'agentStatus');

    // The agent vanishes (its connection reset, reconnects refused): the broker publishes the will.
    proxy.setMode('refuse');
    proxy.reset();
    await waitFor('the last will', () =>
      on(t.status).some((r) => r.body.online === false && r.body.at === null),
    );
    const will = on(t.status).find((r) => r.body.online === false)!;
    assertMessage(asyncapi, will.topic, will.body, 'agentOffline');
  });
});
