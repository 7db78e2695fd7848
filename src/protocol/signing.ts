/**
 * RSA signatures over the raw `param` string (print-protocol §3), with node-rsa.
 *
 * node-rsa's default scheme is PSS: every key object here is created with the scheme set
 * explicitly. `RSA-SHA256` is PKCS#1 v1.5 + SHA-256, byte-identical to
 * `openssl dgst -sha256 -sign`; `RSA-PSS-SHA256` is PSS with MGF1-SHA256 and a 32-byte salt.
 * Which one applies is configuration, never something a message chooses.
 */
import { readFileSync } from 'node:fs';
import NodeRSA, { type NodeRSAOptions } from 'node-rsa';
import { AgentError, errorMessage } from '../errors.js';

export const SIGNATURE_SCHEMES = ['RSA-SHA256', 'RSA-PSS-SHA256'] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];
export const DEFAULT_SIGNATURE_SCHEME: SignatureScheme = 'RSA-SHA256';
export const MIN_KEY_BITS = 2048;
/** print-protocol §3: PSS salt length. */
export const PSS_SALT_LENGTH = 32;

type SchemeOption = NodeRSAOptions['signingScheme'];

function nodeRsaScheme(scheme: SignatureScheme): SchemeOption {
  return scheme === 'RSA-SHA256'
    ? { scheme: 'pkcs1', hash: 'sha256' }
    : { scheme: 'pss', hash: 'sha256', saltLength: PSS_SALT_LENGTH };
}

/** A loaded key. Opaque on purpose: nothing outside this file touches key material. */
export interface RsaKey {
  readonly kind: 'private' | 'public';
  readonly bits: number;
  /** Where it came from, for messages: a file path or `inline PEM`. Never the key itself. */
  readonly source: string;
  readonly rsa: NodeRSA;
}

const PEM_LABELS = {
  private: ['RSA PRIVATE KEY', 'PRIVATE KEY'],
  public: ['RSA PUBLIC KEY', 'PUBLIC KEY'],
} as const;

function pemLabel(pem: string): string | null {
  return /-----BEGIN ([A-Z ]+)-----/.exec(pem)?.[1] ?? null;
}

/**
 * Parses a PEM key: PKCS#1 (`RSA PRIVATE KEY`, `RSA PUBLIC KEY`) or PKCS#8/SPKI (`PRIVATE KEY`,
 * `PUBLIC KEY`), at least 2048 bits. A private key may also serve where a public key is wanted
 * (its public half is used). Errors name the source and the rule, never the key material.
 */
export function parseKey(pem: string, kind: 'private' | 'public', source = 'inline PEM'): RsaKey {
  const label = pemLabel(pem);
  if (label === 'ENCRYPTED PRIVATE KEY' || /Proc-Type: 4,ENCRYPTED/.test(pem)) {
    throw new AgentError(
      'KEY_INVALID',
      `${source}: encrypted private keys are not supported; store it unencrypted with mode 0600`,
    );
  }
  const accepted: readonly string[] =
    kind === 'private' ? PEM_LABELS.private : [...PEM_LABELS.public, ...PEM_LABELS.private];
  if (label === null || !accepted.includes(label)) {
    throw new AgentError(
      'KEY_INVALID',
      `${source}: must be a PEM RSA ${kind} key (${accepted.map((l) => `BEGIN ${l}`).join(', ')})` +
        (label === null ? '; no PEM header found' : `; found BEGIN ${label}`),
    );
  }
  let rsa: NodeRSA;
  try {
    rsa = new NodeRSA(pem, undefined as never, {
      signingScheme: nodeRsaScheme(DEFAULT_SIGNATURE_SCHEME),
    });
  } catch (cause) {
    // node-rsa's messages describe the structure (e.g. an EC key's OID), never the key bytes.
    const detail = errorMessage(cause);
    throw new AgentError('KEY_INVALID', `${source}: not a usable RSA key (${detail})`, { cause });
  }
  const bits = rsa.getKeySize();
  if (bits < MIN_KEY_BITS) {
    throw new AgentError(
      'KEY_TOO_SHORT',
      `${source}: RSA key has ${bits} bits; at least ${MIN_KEY_BITS} are required`,
    );
  }
  return { kind: rsa.isPrivate() ? 'private' : 'public', bits, source, rsa };
}

/** Reads and parses a PEM key file; a missing or unreadable file is `KEY_FILE_MISSING`. */
export function loadKeyFile(path: string, kind: 'private' | 'public'): RsaKey {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (cause) {
    const reason = (cause as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new AgentError('KEY_FILE_MISSING', `${path}: cannot read ${kind} key file (${reason})`, {
      cause,
    });
  }
  return parseKey(pem, kind, path);
}

/** A fresh key pair as PEM: PKCS#8 private key and SPKI public key. */
export function generateKeyPair(bits = MIN_KEY_BITS): { privatePem: string; publicPem: string } {
  if (!Number.isInteger(bits) || bits < MIN_KEY_BITS || bits > 8192) {
    throw new AgentError(
      'INPUT_INVALID',
      `bits: must be an integer between ${MIN_KEY_BITS} and 8192`,
    );
  }
  const rsa = new NodeRSA({ b: bits });
  return {
    privatePem: rsa.exportKey('pkcs8-private-pem'),
    publicPem: rsa.exportKey('pkcs8-public-pem'),
  };
}

function withScheme(key: RsaKey, scheme: SignatureScheme): NodeRSA {
  key.rsa.setOptions({ signingScheme: nodeRsaScheme(scheme) });
  return key.rsa;
}

/** Signs the exact UTF-8 bytes of `param`; returns standard base64. */
export function signParam(
  param: string,
  key: RsaKey,
  scheme: SignatureScheme = DEFAULT_SIGNATURE_SCHEME,
): string {
  if (key.kind !== 'private') {
    throw new AgentError('KEY_INVALID', `${key.source}: signing needs a private key`);
  }
  return withScheme(key, scheme).sign(Buffer.from(param, 'utf8'), 'base64');
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * True when `sign` is a valid signature of the exact UTF-8 bytes of `param` under `scheme`.
 * Malformed signatures (not base64, wrong length) are simply invalid, never an exception.
 */
export function verifyParam(
  param: string,
  sign: string,
  key: RsaKey,
  scheme: SignatureScheme = DEFAULT_SIGNATURE_SCHEME,
): boolean {
  if (!BASE64.test(sign)) return false;
  const signature = Buffer.from(sign, 'base64');
  if (signature.length !== Math.ceil(key.bits / 8)) return false;
  try {
    return withScheme(key, scheme).verify(Buffer.from(param, 'utf8'), signature);
  } catch {
    return false;
  }
}

/**
 * print-protocol v1.1 §8: the header that carries the service's signature of a query response
 * body, `X-Signature: <base64>`, the configured scheme over the exact body bytes.
 */
export const RESPONSE_SIGNATURE_HEADER = 'x-signature';

/** Signs exact bytes (a response body as sent); returns standard base64. */
export function signBytes(
  bytes: Uint8Array,
  key: RsaKey,
  scheme: SignatureScheme = DEFAULT_SIGNATURE_SCHEME,
): string {
  if (key.kind !== 'private') {
    throw new AgentError('KEY_INVALID', `${key.source}: signing needs a private key`);
  }
  return withScheme(key, scheme).sign(Buffer.from(bytes), 'base64');
}

/** True when `sign` is a valid signature of exactly `bytes` (a response body as received). */
export function verifyBytes(
  bytes: Uint8Array,
  sign: string,
  key: RsaKey,
  scheme: SignatureScheme = DEFAULT_SIGNATURE_SCHEME,
): boolean {
  if (!BASE64.test(sign)) return false;
  const signature = Buffer.from(sign, 'base64');
  if (signature.length !== Math.ceil(key.bits / 8)) return false;
  try {
    return withScheme(key, scheme).verify(Buffer.from(bytes), signature);
  } catch {
    return false;
  }
}
