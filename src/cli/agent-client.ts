/**
 * The commands' way to ask the running agent (issue 17 item 4): its local API, found through the
 * same config file `run` reads. Over HTTPS the configured certificate is the only one trusted (the
 * agent's own, often self-signed, reached here by a loopback address it does not name). The
 * credential sent with every request is the agent's local token from its state dir
 * (console/local-token.ts: root and the service user read it), else the token from
 * `console.tokenFile` (issue 40 item 4).
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { type AgentConfig, loadConfig } from '../config/load.js';
import { readLocalToken } from '../console/local-token.js';
import { AgentError, ERROR_CODES, type ErrorCode, errorMessage } from '../errors.js';
import type { CliIo } from './io.js';

export interface AgentAnswer {
  status: number;
  body: unknown;
  /** Why the local token was not sent (this user cannot read it), for a refusal's message. */
  localTokenProblem?: string;
}

/** Where a command on this machine reaches the agent listening on `host`. */
function connectHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}

export async function askAgent(
  io: CliIo,
  configPath: string | undefined,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<AgentAnswer> {
  const { config } = loadConfig({ configPath, env: io.env, cwd: io.cwd });
  return askAgentAt(config, method, path, { body });
}

/** What it takes to reach the agent of a config: its local API settings and its state dir. */
export interface AgentEndpoint {
  console: Pick<AgentConfig['console'], 'enabled' | 'host' | 'port' | 'certFile' | 'token'>;
  /** Where the running agent keeps its local token. */
  stateDir: string;
}

/** The local API's address as a person reads it (`http://127.0.0.1:8631`). */
export function agentUrl(endpoint: AgentEndpoint): string {
  const host = connectHost(endpoint.console.host);
  const shown = host.includes(':') ? `[${host}]` : host;
  return `${endpoint.console.certFile !== undefined ? 'https' : 'http'}://${shown}:${endpoint.console.port}`;
}

/**
 * `askAgent` for a config already loaded: `doctor` has one, possibly without every file it names
 * readable. `timeoutMs` bounds the whole answer.
 */
export function askAgentAt(
  endpoint: AgentEndpoint,
  method: 'GET' | 'POST',
  path: string,
  { body, timeoutMs = 10_000 }: { body?: unknown; timeoutMs?: number } = {},
): Promise<AgentAnswer> {
  const c = endpoint.console;
  if (!c.enabled)
    return Promise.reject(
      new AgentError(
        'AGENT_UNREACHABLE',
        'the local API is off in the config (console.enabled: false): nothing to ask',
      ),
    );
  const host = connectHost(c.host);
  const https = c.certFile !== undefined;
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const shown = host.includes(':') ? `[${host}]` : host;
  const local = readLocalToken(endpoint.stateDir);
  const token = local.ok ? local.token : c.token;
  return new Promise<AgentAnswer>((resolve, reject) => {
    const req = (https ? httpsRequest : httpRequest)(
      {
        host,
        port: c.port,
        method,
        path,
        timeout: timeoutMs,
        headers: {
          host: `${shown}:${c.port}`,
          accept: 'application/json',
          ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
          ...(payload !== undefined
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
            : {}),
        },
        ...(https
          ? {
              ca: readFileSync(c.certFile!),
              // The certificate is pinned (the only CA trusted); its names need not include the
              // loopback address this command uses.
              checkServerIdentity: () => undefined,
            }
          : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // Not JSON (metrics, a proxy's page): kept as text.
          }
          resolve({
            status: res.statusCode ?? 0,
            body: parsed,
            ...(local.ok ? {} : { localTokenProblem: local.message }),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`)),
    );
    req.on('error', (error) =>
      reject(
        new AgentError(
          'AGENT_UNREACHABLE',
          `the agent's local API at ${https ? 'https' : 'http'}://${shown}:${c.port} does not answer (${errorMessage(error)}): is printer-agent running?`,
        ),
      ),
    );
    req.end(payload);
  });
}

/**
 * The API's `{error: {code, message}}` as the CLI's error: the agent's code when it is one of
 * ours, else INPUT_INVALID naming the HTTP refusal (a missing token, another Host).
 */
export function apiFailure(answer: AgentAnswer): AgentError {
  const error = (answer.body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  let message =
    typeof error?.message === 'string' ? error.message : `the agent answered HTTP ${answer.status}`;
  if (answer.status === 401 && answer.localTokenProblem !== undefined)
    message += ` (the agent's local token: ${answer.localTokenProblem}; run the command as root, e.g. with sudo, or as the service user)`;
  const code = typeof error?.code === 'string' ? error.code : '';
  return Object.hasOwn(ERROR_CODES, code)
    ? new AgentError(code as ErrorCode, message)
    : new AgentError(
        'INPUT_INVALID',
        `${message} (HTTP ${answer.status}${code ? ` ${code}` : ''})`,
      );
}
