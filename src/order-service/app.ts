/**
 * The HTTP face of the reference order service (order-api 4.1, 4.2). `buildApp` returns a
 * fastify instance that is not listening, so tests drive it with `inject()` and the CLI decides
 * where to listen.
 *
 * Every request goes through the same steps: Content-Type, body size, JSON nesting depth (body and
 * param), envelope (2.1), signature with the app's registered key, storeKey among the app's
 * stores, and only then the param schema (protocol's `openEnvelope`, which never parses
 * unauthenticated param). Every answer is signed (`X-Signature`, print-protocol v1.1 §8; bound to
 * the request when it carries `X-Request-Nonce`, v1.2 §10: response-signature.ts), and the
 * HTTP server cuts off slow and idle clients and caps connections, in all and per client address
 * (§9).
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyHttpOptions,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { AgentError, errorMessage, isAgentError } from '../errors.js';
import type { Logger } from '../logging.js';
import {
  buildResponse,
  type CreateParams,
  createParamsSchema,
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_SIGNATURE_SCHEME,
  formatTimestamp,
  openEnvelope,
  type QueryParams,
  queryParamsSchema,
  REQUEST_NONCE_HEADER,
  type RsaKey,
  type SignatureScheme,
  tooDeep,
} from '../protocol/index.js';
import { type CallbackOptions, CallbackSender, callbackBody } from './callbacks.js';
import {
  codeForClientError,
  nestedTooDeep,
  RESPONSE_CODES,
  type ResponseCodeName,
} from './codes.js';
import {
  DEFAULT_HTTP_LIMITS,
  DEFAULT_MAX_BODY_BYTES,
  type HttpLimits,
  type RegisteredStore,
  type Registry,
} from './config.js';
import { canonicalCreate, canonicalStored, differingFields } from './create-identity.js';
import { registerOpenApiRoute } from './openapi-route.js';
import { toOrderRecord } from './order-record.js';
import { Outbox } from './outbox.js';
import { buildPrintInstruction } from './print-instruction.js';
import type { InstructionPublisher } from './publisher.js';
import { classifyQueryRejection } from './query-rejection.js';
import { ResponseSigner } from './response-signature.js';
import type { CreateOutcome, OrderStore } from './store.js';

export interface AppOptions {
  registry: Registry;
  store: OrderStore;
  serviceKey: RsaKey;
  /** Scheme of every signature made and checked (print-protocol §3); default RSA-SHA256. */
  scheme?: SignatureScheme;
  publisher: InstructionPublisher;
  /** Send `data` as a JSON-encoded string, as the spec's sample does (order-api 2.10). */
  dataAsString?: boolean;
  /** IANA zone of createTime; default the host's zone. */
  timeZone?: string;
  /** Default: the config schema's (DEFAULT_MAX_BODY_BYTES). */
  maxBodyBytes?: number;
  /** The agents' message size limit: larger instructions are refused at create (41301). */
  agentMaxMessageBytes?: number;
  /** Default: the config schema's (DEFAULT_HTTP_LIMITS). */
  http?: Partial<HttpLimits>;
  /** Retry interval of the outbox while instructions are pending; 0 disables the timer. */
  outboxRetryMs?: number;
  publishTimeoutMs?: number;
  /** Order callbacks (order-api §6) for apps that registered a URL; omitted: none are sent. */
  callbacks?: CallbackOptions;
  now?: () => Date;
  logger?: Logger;
}

function isJson(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]?.trim().toLowerCase() === 'application/json';
}

/**
 * Closes at once every connection from a client address that already has `cap` open, so one host
 * cannot take every slot of `maxConnections` and lock the other clients out (print-protocol v1.1
 * §9). Node applies the global cap first: a connection it drops never gets here. Counted on the
 * server's `connection` event (after node's HTTP listener, so a closed one is simply a client
 * that went away) and released on the socket's `close`. One warning when a client reaches its cap
 * and one count when it is under it again, not a line per refused connection: a flood of
 * connections does not flood the log too.
 */
function capConnectionsPerClient(server: Server, cap: number, log: Logger | undefined): void {
  const clients = new Map<string, { open: number; refused: number }>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined) return; // already closed: nothing to count
    const client = clients.get(address) ?? { open: 0, refused: 0 };
    if (client.open >= cap) {
      socket.destroy();
      if (client.refused++ === 0)
        log?.warn(
          { client: address, open: client.open, cap },
          'connections from one client over http.maxConnectionsPerClient: further ones closed',
        );
      return;
    }
    client.open++;
    clients.set(address, client);
    socket.once('close', () => {
      client.open--;
      // The episode ends when the client is under its cap again: its count, then a fresh start.
      if (client.refused > 0) {
        log?.info(
          { client: address, refused: client.refused, cap },
          'connections closed over http.maxConnectionsPerClient while the client was at its cap',
        );
        client.refused = 0;
      }
      if (client.open === 0) clients.delete(address);
    });
  });
}

/**
 * Node checks the header and request timeouts on an interval (30 s by default), so a timeout
 * fires up to that much late; a quarter of the shortest timeout, at most 1 s, keeps it close.
 */
function checkingInterval(limits: HttpLimits): number {
  const shortest = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs);
  return Math.max(50, Math.min(1000, Math.floor(shortest / 4)));
}

export function buildApp(
  options: AppOptions,
): FastifyInstance & { outbox: Outbox; callbacks: CallbackSender | null } {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const agentMaxBytes = options.agentMaxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const scheme = options.scheme ?? DEFAULT_SIGNATURE_SCHEME;
  const limits: HttpLimits = { ...DEFAULT_HTTP_LIMITS, ...options.http };
  const now = options.now ?? (() => new Date());
  const log = options.logger;
  const signer = new ResponseSigner(options.serviceKey, scheme);

  // Framework-level answers to broken HTTP (a header timeout, malformed request line) are written
  // straight to the socket; they get our envelope and signature like every other answer.
  function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket) {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const timeout = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    const [status, text, name]: [number, string, ResponseCodeName] = timeout
      ? [408, 'Request Timeout', 'REQUEST_TIMEOUT']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'HEADERS_TOO_LARGE']
        : [400, 'Bad Request', 'HTTP_INVALID'];
    log?.debug({ err: error.code }, 'client error answered and connection closed');
    const { code, message } = RESPONSE_CODES[name];
    const body = JSON.stringify(buildResponse(code, message, null));
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          `X-Signature: ${signer.sign(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  }

  const serverOptions: FastifyHttpOptions<Server> = {
    bodyLimit: maxBodyBytes,
    // Slow or abusive clients (print-protocol v1.1 §9), all enforced by node's http server.
    connectionTimeout: limits.idleTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      connectionsCheckingInterval: checkingInterval(limits),
    },
    clientErrorHandler,
  };
  // pino's Logger is a FastifyBaseLogger at runtime; the generic types differ only in detail.
  const app: FastifyInstance = log
    ? Fastify({ ...serverOptions, loggerInstance: log as unknown as FastifyBaseLogger })
    : Fastify({ ...serverOptions, logger: false });
  // Further connections are closed at once by node, before a byte of them is read.
  app.server.maxConnections = limits.maxConnections;
  capConnectionsPerClient(app.server, limits.maxConnectionsPerClient, log);
  const outbox = new Outbox(options.store, options.publisher, log, options.publishTimeoutMs);
  const callbacks = options.callbacks
    ? new CallbackSender(options.store, { now: () => now().getTime(), ...options.callbacks }, log)
    : null;

  const send = (
    reply: FastifyReply,
    name: ResponseCodeName,
    data: unknown = null,
    message?: string,
    status = 200,
  ) => {
    const { code, message: text } = RESPONSE_CODES[name];
    return reply
      .status(status)
      .send(
        buildResponse(code, message ?? text, data, { dataAsString: options.dataAsString ?? false }),
      );
  };
  /** A client's mistake, answered with the response code of its catalogue code (HTTP 200). */
  const reject = (reply: FastifyReply, error: AgentError, name?: ResponseCodeName) =>
    send(reply, name ?? codeForClientError(error) ?? 'ENVELOPE_INVALID', null, error.message);

  // print-protocol v1.1 §8: every body sent is signed over its exact bytes. Registered first, so
  // it signs what the handlers made; fastify has serialized objects to a string by now.
  /** The store each request was authenticated for: what a version 2 signature binds to. */
  const answeredFor = new WeakMap<FastifyRequest, string>();
  // v1.2 §10: bound to the request (its nonce, target and store) when it carries a nonce.
  app.addHook('onSend', async (request, reply, payload) => {
    if (typeof payload === 'string' || payload instanceof Uint8Array)
      reply.headers(
        signer.headers(payload, {
          method: request.method,
          url: request.raw.url ?? request.url,
          nonce: request.headers[REQUEST_NONCE_HEADER],
          storeId: answeredFor.get(request) ?? '',
        }),
      );
    return payload;
  });

  // Checked before the body is read: the spec requires the header (4.1, 4.2).
  app.addHook('onRequest', async (request, reply) => {
    if (request.method === 'POST' && !isJson(request.headers['content-type'])) {
      return send(reply, 'UNSUPPORTED_MEDIA_TYPE', null, undefined, 415);
    }
  });

  // The body's nesting is measured on the raw text before JSON.parse (and fastify's prototype
  // poisoning scan, which recurses) walks it: a 20,000-deep body is a client error, not a crash.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (tooDeep(body as string)) {
      done(nestedTooDeep('body'), undefined);
      return;
    }
    parseJson(request, body as string, done);
  });

  // Framework errors (bad JSON, body too large) and ours with a client's code (a body nested too
  // deep) are the client's: answered 200 with our code. Anything else is the service's: 21000.
  app.setErrorHandler(
    (error: { code?: string; statusCode?: number; message: string }, _req, reply) => {
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
        return send(reply, 'TOO_LARGE', null, `body: the limit is ${maxBodyBytes} bytes`);
      if (isAgentError(error)) {
        const name = codeForClientError(error);
        if (name !== null) return reject(reply, error, name);
      } else if (error.statusCode !== undefined && error.statusCode < 500)
        return send(reply, 'ENVELOPE_INVALID', null, 'body: must be a JSON object');
      log?.error({ err: errorMessage(error) }, 'order service failure');
      return send(reply, 'SERVICE_ERROR', null, undefined, 500);
    },
  );
  app.setNotFoundHandler((_req, reply) => send(reply, 'NOT_FOUND', null, undefined, 404));

  const size = (header: string | undefined) => (header ? Number(header) : undefined);
  // The same bound for the JSON inside `param` (a string, so the body's scan skipped it), checked
  // before anything parses it: here too a deep param is the client's mistake, never a 500.
  const deepParam = (body: unknown) => {
    const param = (body as { param?: unknown } | null)?.param;
    return typeof param === 'string' && tooDeep(param);
  };
  const refuseDeepParam = (reply: FastifyReply) => reject(reply, nestedTooDeep('param'));
  const identity = (appId: string, storeKey: string) =>
    options.registry.store(appId, storeKey) !== undefined;
  const verifyKey = (appId: string) => options.registry.appKey(appId);

  app.post('/open-api/order/create', async (request, reply) => {
    if (deepParam(request.body)) return refuseDeepParam(reply);
    const opened = openEnvelope(
      request.body as object,
      { verifyKey, identity, scheme, paramSchema: createParamsSchema, maxBytes: maxBodyBytes },
      size(request.headers['content-length']),
    );
    if (!opened.ok) return reject(reply, opened.error);
    const { envelope } = opened;
    const params: CreateParams = opened.param;
    const store = options.registry.store(envelope.appId, envelope.storeKey)!;
    answeredFor.set(request, store.storeId);
    let outcome: CreateOutcome;
    try {
      outcome = await options.store.createOrder(
        {
          appId: envelope.appId,
          storeKey: envelope.storeKey,
          now: () => formatTimestamp(now(), options.timeZone),
          orderType: params.orderType,
          pickUpNum: params.pickUpNum ? params.pickUpNum : null,
          paymentTransactionId: params.paymentTransactionId,
          rawParam: envelope.param,
        },
        (stored) => {
          const instruction = buildPrintInstruction(
            stored,
            store.storeId,
            options.serviceKey,
            scheme,
          );
          // Measured on the exact envelope that would be published; throwing rolls back the
          // order, so nothing is stored, numbered or published for a create no agent accepts.
          const bytes = Buffer.byteLength(instruction.body, 'utf8');
          if (bytes > agentMaxBytes)
            throw new AgentError(
              'TOO_LARGE',
              `param: its print instruction would be ${bytes} bytes; agents accept at most ${agentMaxBytes} (shorten customPrintContext or productInfo)`,
              { details: { instructionBytes: bytes, limit: agentMaxBytes } },
            );
          return instruction;
        },
        (stored) =>
          callbacks && store.callbackUrl
            ? {
                url: store.callbackUrl,
                body: callbackBody(stored, store, options.serviceKey, scheme),
                nextAt: now().getTime(),
              }
            : null,
      );
    } catch (error) {
      // Only the instruction check above raises TOO_LARGE in a create; anything else is the
      // service's own failure (21000, logged by the error handler).
      if (!isAgentError(error) || error.code !== 'TOO_LARGE') throw error;
      request.log.info(
        { appId: envelope.appId, storeId: store.storeId, bytes: error.details.instructionBytes },
        'create refused: print instruction too large',
      );
      return reject(reply, error, 'INSTRUCTION_TOO_LARGE');
    }
    const { order } = outcome;
    if (!outcome.created) {
      const differs = differingFields(canonicalStored(order.rawParam), canonicalCreate(params));
      if (differs.length > 0) {
        request.log.warn(
          { appId: envelope.appId, storeId: store.storeId, orderNo: order.orderNo, differs },
          'create refused: paymentTransactionId already used with different content',
        );
        return send(
          reply,
          'CREATE_CONFLICT',
          null,
          `paymentTransactionId: already used for order ${order.orderNo} with different content (${differs.join(', ')})`,
        );
      }
      // A retried create (a POS after a timeout): the original answer, nothing published again.
      request.log.info(
        { appId: envelope.appId, storeId: store.storeId, orderNo: order.orderNo },
        'create repeated: original order answered',
      );
    } else {
      request.log.info(
        { appId: envelope.appId, storeId: store.storeId, orderNo: order.orderNo },
        'order created',
      );
    }
    // Awaited (bounded by the publish timeout) so that a healthy broker has the instruction before
    // the merchant sees success; a failure only leaves it in the outbox. After a repeat it only
    // helps an instruction still waiting there.
    await outbox.drain();
    if (outcome.created) void callbacks?.deliverDue();
    return send(reply, 'SUCCESS', {
      orderNo: order.orderNo,
      pickUpNo: order.pickUpNo,
      takeoutNo: order.takeoutNo,
    });
  });

  app.post('/open-api/order/list', async (request, reply) => {
    if (deepParam(request.body)) return refuseDeepParam(reply);
    const opened = openEnvelope(
      request.body as object,
      { verifyKey, identity, scheme, paramSchema: queryParamsSchema, maxBytes: maxBodyBytes },
      size(request.headers['content-length']),
    );
    if (!opened.ok) {
      const special =
        opened.error.code === 'PARAM_INVALID'
          ? classifyQueryRejection((request.body as { param?: unknown }).param)
          : null;
      return reject(reply, opened.error, special ?? undefined);
    }
    const { envelope } = opened;
    const q: QueryParams = opened.param;
    const store: RegisteredStore = options.registry.store(envelope.appId, envelope.storeKey)!;
    answeredFor.set(request, store.storeId);
    const result = await options.store.listOrders(
      envelope.appId,
      envelope.storeKey,
      q,
      q.pageNum,
      q.pageSize,
    );
    // order-api §8 recommends logging every query; the storeKey never appears, only the storeId.
    request.log.info(
      { appId: envelope.appId, storeId: store.storeId, mode: q.mode, pageNum: q.pageNum },
      'orders queried',
    );
    if (!result.ok) {
      const field = q.mode === 'after-receipt' ? 'receiptNo' : 'orderInnerNo';
      return send(reply, 'START_ORDER_UNKNOWN', null, `${field}: no such order for this store`);
    }
    return send(reply, 'SUCCESS', {
      total: result.total,
      pageNum: q.pageNum,
      pageSize: q.pageSize,
      list: result.orders.map((o) => toOrderRecord(o, store)),
    });
  });

  // The contract as a document (issue 19): the order API in OpenAPI 3.1, signed like every answer.
  registerOpenApiRoute(app);

  let timer: NodeJS.Timeout | undefined;
  if ((options.outboxRetryMs ?? 5000) > 0) {
    timer = setInterval(() => void outbox.drain(), options.outboxRetryMs ?? 5000);
    timer.unref();
  }
  callbacks?.start();
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await callbacks?.close();
  });
  return Object.assign(app, { outbox, callbacks });
}
