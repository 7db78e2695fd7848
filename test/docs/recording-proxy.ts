/**
 * An HTTP hop in front of the order service that keeps every request as it passes (issue 19
 * contract tests): the body validated is the exact bytes the service received and answered, not
 * a copy the test built beside them. Requests are forwarded unchanged (method, path, content type,
 * `X-Request-Nonce`, body); answers come back with their status, content type, `X-Signature`,
 * `X-Signature-Version` and exact bytes, so a client that verifies the signature (the agent's
 * query client, which wants it bound to its request: print-protocol v1.2 §10) works through it.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  REQUEST_NONCE_HEADER,
  RESPONSE_SIGNATURE_HEADER,
  RESPONSE_SIGNATURE_VERSION_HEADER,
} from '../../src/protocol/index.js';

export interface Forwarded {
  method: string;
  path: string;
  /** The request body as the service received it. */
  body: string;
  /** The service's answer. */
  status: number;
  answer: string;
}

export interface RecordingProxy {
  /** `http://127.0.0.1:port`: use it as the service's base URL. */
  url: string;
  requests: Forwarded[];
  close(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function recordingProxy(target: string): Promise<RecordingProxy> {
  const requests: Forwarded[] = [];
  const server = createServer(async (req, res) => {
    try {
      const body = await bodyOf(req);
      const method = req.method ?? 'GET';
      const contentType = req.headers['content-type'];
      const nonce = req.headers[REQUEST_NONCE_HEADER];
      const upstream = await fetch(`${target}${req.url}`, {
        method,
        headers: {
          ...(contentType ? { 'content-type': contentType } : {}),
          ...(typeof nonce === 'string' ? { [REQUEST_NONCE_HEADER]: nonce } : {}),
        },
        ...(method === 'GET' || method === 'HEAD' ? {} : { body }),
        redirect: 'manual',
      });
      const bytes = Buffer.from(await upstream.arrayBuffer());
      requests.push({
        method,
        path: req.url ?? '',
        body: body.toString('utf8'),
        status: upstream.status,
        answer: bytes.toString('utf8'),
      });
      const headers: Record<string, string> = { 'content-length': String(bytes.length) };
      for (const name of [
        'content-type',
        RESPONSE_SIGNATURE_HEADER,
        RESPONSE_SIGNATURE_VERSION_HEADER,
      ]) {
        const value = upstream.headers.get(name);
        if (value !== null) headers[name] = value;
      }
      res.writeHead(upstream.status, headers).end(bytes);
    } catch (error) {
      res.writeHead(502).end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
