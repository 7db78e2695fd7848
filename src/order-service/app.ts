/**
 * The HTTP face of the reference order service (order-api 4.1, 4.2). `buildApp` returns a
 * fastify instance that is not listening, so tests drive it with `inject()` and the CLI decides
 * where to listen.
 *
 * Every request goes through the same steps: Content-Type, body size, envelope (2.1), signature
 * with the app's registered key, storeKey among the app's stores, and only then the param schema
 * (all done by protocol's `openEnvelope`, which never parses unauthenticated param).
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import type { AgentError } from '../errors.js';
import type { Logger } from '../logging.js';
import {
  buildResponse,
  type CreateParams,
  createParamsSchema,
  formatTimestamp,
  openEnvelope,
  type QueryParams,
  queryParamsSchema,
  type RsaKey,
} from '../protocol/index.js';
import { type CallbackOptions, CallbackSender, callbackBody } from './callbacks.js';
import { codeForEnvelopeError, RESPONSE_CODES, type ResponseCodeName } from './codes.js';
import type { RegisteredStore, Registry } from './config.js';
import { toOrderRecord } from './order-record.js';
import { Outbox } from './outbox.js';
import { buildPrintInstruction } from './print-instruction.js';
import type { InstructionPublisher } from './publisher.js';
import { classifyQueryRejection } from './query-rejection.js';
import type { OrderStore } from './store.js';

export interface AppOptions {
  registry: Registry;
  store: OrderStore;
  serviceKey: RsaKey;
  publisher: InstructionPublisher;
  /** Send `data` as a JSON-encoded string, as the spec's sample does (order-api 2.10). */
  dataAsString?: boolean;
  /** IANA zone of createTime; default the host's zone. */
  timeZone?: string;
  maxBodyBytes?: number;
  /** Retry interval of the outbox while instructions are pending; 0 disables the timer. */
  outboxRetryMs?: number;
  publishTimeoutMs?: number;
  /** Order callbacks (order-api §6) for apps that registered a URL; omitted: none are sent. */
  callbacks?: CallbackOptions;
  now?: () => Date;
  logger?: Logger;
}

const DEFAULT_MAX_BODY = 1_048_576;

function isJson(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]?.trim().toLowerCase() === 'application/json';
}

export function buildApp(
  options: AppOptions,
): FastifyInstance & { outbox: Outbox; callbacks: CallbackSender | null } {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const now = options.now ?? (() => new Date());
  const log = options.logger;
  // pino's Logger is a FastifyBaseLogger at runtime; the generic types differ only in detail.
  const app: FastifyInstance = log
    ? Fastify({ bodyLimit: maxBodyBytes, loggerInstance: log as unknown as FastifyBaseLogger })
    : Fastify({ bodyLimit: maxBodyBytes, logger: false });
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
  const reject = (reply: FastifyReply, error: AgentError, name?: ResponseCodeName) =>
    send(reply, name ?? codeForEnvelopeError(error), null, error.message);

  // Checked before the body is read: the spec requires the header (4.1, 4.2).
  app.addHook('onRequest', async (request, reply) => {
    if (request.method === 'POST' && !isJson(request.headers['content-type'])) {
      return send(reply, 'UNSUPPORTED_MEDIA_TYPE', null, undefined, 415);
    }
  });

  // Framework errors (bad JSON, body too large) are the client's: answered 200 with our code.
  app.setErrorHandler(
    (error: { code?: string; statusCode?: number; message: string }, _req, reply) => {
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
        return send(reply, 'TOO_LARGE', null, `body: the limit is ${maxBodyBytes} bytes`);
      if (error.statusCode !== undefined && error.statusCode < 500)
        return send(reply, 'ENVELOPE_INVALID', null, 'body: must be a JSON object');
      log?.error({ err: error }, 'order service failure');
      return send(reply, 'SERVICE_ERROR', null, undefined, 500);
    },
  );
  app.setNotFoundHandler((_req, reply) => send(reply, 'NOT_FOUND', null, undefined, 404));

  const size = (header: string | undefined) => (header ? Number(header) : undefined);
  const identity = (appId: string, storeKey: string) =>
    options.registry.store(appId, storeKey) !== undefined;
  const verifyKey = (appId: string) => options.registry.appKey(appId);

  app.post('/open-api/order/create', async (request, reply) => {
    const opened = openEnvelope(
      request.body as object,
      { verifyKey, identity, paramSchema: createParamsSchema, maxBytes: maxBodyBytes },
      size(request.headers['content-length']),
    );
    if (!opened.ok) return reject(reply, opened.error);
    const { envelope } = opened;
    const params: CreateParams = opened.param;
    const store = options.registry.store(envelope.appId, envelope.storeKey)!;
    const order = options.store.createOrder(
      {
        appId: envelope.appId,
        storeKey: envelope.storeKey,
        createTime: formatTimestamp(now(), options.timeZone),
        orderType: params.orderType,
        pickUpNum: params.pickUpNum ? params.pickUpNum : null,
        rawParam: envelope.param,
      },
      (stored) => ({
        ...buildPrintInstruction(stored, options.serviceKey),
        storeId: store.storeId,
      }),
      (stored) =>
        callbacks && store.callbackUrl
          ? {
              url: store.callbackUrl,
              body: callbackBody(stored, store, options.serviceKey),
              nextAt: now().getTime(),
            }
          : null,
    );
    request.log.info(
      { appId: envelope.appId, storeId: store.storeId, orderNo: order.orderNo },
      'order created',
    );
    // Awaited (bounded by the publish timeout) so that a healthy broker has the instruction before
    // the merchant sees success; a failure only leaves it in the outbox.
    await outbox.drain();
    void callbacks?.deliverDue();
    return send(reply, 'SUCCESS', {
      orderNo: order.orderNo,
      pickUpNo: order.pickUpNo,
      takeoutNo: order.takeoutNo,
    });
  });

  app.post('/open-api/order/list', async (request, reply) => {
    const opened = openEnvelope(
      request.body as object,
      { verifyKey, identity, paramSchema: queryParamsSchema, maxBytes: maxBodyBytes },
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
    const result = options.store.listOrders(
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
