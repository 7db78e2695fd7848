/**
 * The transport rules of catch-up (print-protocol v1.1 §8), in one place for the config check,
 * `doctor` and the query client:
 *
 * - `https://` with the certificate verified (system CAs, or `catchUp.caFile` to pin the
 *   service's CA);
 * - `http://` only to a loopback host (127.0.0.0/8, ::1, `localhost`), which never leaves the
 *   machine, or with the lab switch `catchUp.allowInsecureHttp`, warned about at every round;
 * - `catchUp.caFile` only with https, and `catchUp.responseSignature: "off"` only over https
 *   (an unsigned answer over http could come from anyone on the path).
 *
 * The loopback test reads the URL's host as written: a name is loopback only when it is
 * `localhost` (or under `.localhost`, RFC 6761). Any other name could resolve anywhere, and DNS is
 * exactly what an attacker on the store network can answer; the client checks again what
 * `localhost` resolved to before it connects.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AgentError, errorMessage } from '../errors.js';
import { isLoopbackHost } from '../host/loopback.js';

export type CatchUpTransportKind = 'https' | 'http-loopback' | 'http-insecure';

export interface CatchUpTransportRules {
  allowInsecureHttp?: boolean;
  /** Whether a CA file is configured (its path, or just `true`). */
  caFile?: string | boolean;
  responseSignature?: 'required' | 'off';
  /** v1.2 §10: answers signed version 1 (not bound to the request) accepted. */
  allowV1Signatures?: boolean;
}

export interface CatchUpTransportIssue {
  /** The catchUp field a person has to change. */
  field: 'baseUrl' | 'caFile' | 'responseSignature';
  message: string;
}

/** How a base URL would be reached; null when it is not an http(s) URL at all. */
export function catchUpTransportKind(baseUrl: string): CatchUpTransportKind | null {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return null;
  }
  if (url.protocol === 'https:') return 'https';
  if (url.protocol !== 'http:') return null;
  return isLoopbackHost(url.hostname) ? 'http-loopback' : 'http-insecure';
}

/** Every rule of §8 the settings break, with the field to change and how. */
export function catchUpTransportIssues(
  baseUrl: string,
  rules: CatchUpTransportRules,
): CatchUpTransportIssue[] {
  const kind = catchUpTransportKind(baseUrl);
  if (kind === null) return []; // the URL's own check reports it
  const issues: CatchUpTransportIssue[] = [];
  if (kind === 'http-insecure' && rules.allowInsecureHttp !== true)
    issues.push({
      field: 'baseUrl',
      message:
        'must be https:// for a host other than loopback (print-protocol §8): over http anyone ' +
        "on the network path can answer in the service's place and read the storeKey; use " +
        "https:// (catchUp.caFile pins the service's CA), or only in a lab set " +
        'catchUp.allowInsecureHttp to true',
    });
  if (kind !== 'https' && rules.caFile !== undefined && rules.caFile !== false)
    issues.push({
      field: 'caFile',
      message:
        'applies only to https:// URLs; change catchUp.baseUrl to https:// or remove catchUp.caFile',
    });
  if (kind !== 'https' && rules.responseSignature === 'off')
    issues.push({
      field: 'responseSignature',
      message:
        'may be "off" only over https:// (print-protocol §8): over http an unsigned answer could ' +
        'come from anyone; keep "required" or change catchUp.baseUrl to https://',
    });
  return issues;
}

/** The warning of the lab switch: in the config check, in `doctor`, and at every round. */
export function insecureHttpWarning(baseUrl: string): string {
  let host = baseUrl;
  try {
    host = new URL(baseUrl).host;
  } catch {
    // the URL as given
  }
  return (
    `catchUp.allowInsecureHttp is true: catch-up talks plain http to ${host}, so the storeKey ` +
    'travels in clear text and only the response signature keeps forged receipts out. Lab ' +
    'only: use https:// in a store'
  );
}

/**
 * Warnings of settings that are allowed but weaken catch-up (none for https with signatures
 * bound to the request).
 */
export function catchUpTransportWarnings(baseUrl: string, rules: CatchUpTransportRules): string[] {
  const kind = catchUpTransportKind(baseUrl);
  const warnings: string[] = [];
  if (kind === 'http-insecure' && rules.allowInsecureHttp === true)
    warnings.push(insecureHttpWarning(baseUrl));
  if (kind === 'https' && rules.responseSignature === 'off')
    warnings.push(
      'catchUp.responseSignature is "off": catch-up answers are trusted on the TLS certificate ' +
        'alone; set it to "required" once the order service signs its answers (X-Signature)',
    );
  if (kind !== null && rules.responseSignature !== 'off' && rules.allowV1Signatures === true)
    warnings.push(
      'catchUp.allowV1Signatures is true: answers signed version 1 (the body alone) are ' +
        'accepted, so a captured page of the service is accepted as the answer to any other ' +
        "query, page or store's query (print-protocol v1.2 §10); remove it once the order " +
        'service signs v2 (X-Signature-Version: 2)',
    );
  return warnings;
}

/** The certificates of a PEM CA file, each checked; what `catchUp.caFile` pins. */
export interface CaBundle {
  path: string;
  /** The PEM text, as TLS takes it. */
  pem: string;
  /** Subject of each certificate, for `doctor`. */
  subjects: string[];
  /** The earliest expiry among them (ISO 8601). */
  validTo: string;
}

/**
 * Reads a PEM CA file: at least one certificate, every one parseable. Errors name the file and
 * the rule (CONFIG_INVALID), never the content.
 */
export function loadCaFile(path: string): CaBundle {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (cause) {
    const reason = (cause as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new AgentError('CONFIG_INVALID', `catchUp.caFile: ${path}: cannot read (${reason})`, {
      cause,
    });
  }
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0)
    throw new AgentError(
      'CONFIG_INVALID',
      `catchUp.caFile: ${path}: must hold a PEM certificate (BEGIN CERTIFICATE); none found`,
    );
  const certificates = blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch (cause) {
      throw new AgentError(
        'CONFIG_INVALID',
        `catchUp.caFile: ${path}: certificate ${i + 1} cannot be read (${errorMessage(cause)})`,
        { cause },
      );
    }
  });
  const validTo = new Date(
    Math.min(...certificates.map((c) => new Date(c.validTo).getTime())),
  ).toISOString();
  return { path, pem, subjects: certificates.map((c) => c.subject.replace(/\n/g, ', ')), validTo };
}
