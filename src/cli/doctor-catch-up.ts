/**
 * `doctor`'s catch-up lines (print-protocol v1.1 §8): the transport (https, loopback http, or the
 * lab switch), the pinned CA file, the response signature mode and, when the service can be
 * reached, whether its answers are signed with the key the agent holds.
 *
 * The probe sends no secret and asks for no order: it POSTs `{}` to the query URL, which the
 * service answers with an error envelope, signed like every answer. So it neither spends the
 * store's query spacing nor shows the storeKey to a service that may be the wrong one. It sends a
 * nonce like a query (print-protocol v1.2 §10), so it also shows whether the service binds its
 * answers to the request (version 2, bound to no store since the probe names none) or signs the
 * body alone (version 1, which catch-up refuses unless catchUp.allowV1Signatures).
 */

import { QUERY_PATH } from '../catchup/query-client.js';
import { ServiceLink } from '../catchup/service-link.js';
import { catchUpTransportKind, insecureHttpWarning, loadCaFile } from '../catchup/transport.js';
import type { ConfigFile } from '../config/schema.js';
import { errorMessage, isAgentError } from '../errors.js';
import { loadKeyFile, type RsaKey } from '../protocol/signing.js';

/** One line of the checklist (the shape of doctor's CheckLine). */
export interface CatchUpCheck {
  status: 'ok' | 'warn' | 'FAIL';
  name: string;
  detail: string;
  fix?: string;
}

const NAME = 'catch-up';
const PROBE_TIMEOUT_MS = 5000;

export async function catchUpChecks(file: ConfigFile): Promise<CatchUpCheck[]> {
  const c = file.catchUp;
  if (!c.enabled)
    return [
      {
        status: 'ok',
        name: NAME,
        detail: 'off (catchUp.enabled is false): orders the broker does not deliver are not pulled',
      },
    ];
  if (c.baseUrl === undefined) return []; // the config check already failed on it
  const out: CatchUpCheck[] = [];
  const kind = catchUpTransportKind(c.baseUrl);
  if (kind === 'https')
    out.push({
      status: 'ok',
      name: NAME,
      detail: `${c.baseUrl}: https, certificate verified against ${c.caFile !== undefined ? 'catchUp.caFile' : 'the system CAs'}`,
    });
  else if (kind === 'http-loopback')
    out.push({
      status: 'ok',
      name: NAME,
      detail: `${c.baseUrl}: plain http to this machine (loopback only)`,
    });
  else if (kind === 'http-insecure')
    out.push({
      status: 'warn',
      name: NAME,
      detail: `${c.baseUrl}: ${insecureHttpWarning(c.baseUrl)}`,
      fix: 'serve the order service over https:// and set catchUp.baseUrl to it (catchUp.caFile for a private CA), then remove catchUp.allowInsecureHttp',
    });

  let ca: string | undefined;
  if (c.caFile !== undefined) {
    const fix = `copy the PEM certificate of the CA that signed the order service's certificate to ${c.caFile}`;
    try {
      const bundle = loadCaFile(c.caFile);
      const expired = new Date(bundle.validTo).getTime() < Date.now();
      out.push({
        status: expired ? 'FAIL' : 'ok',
        name: NAME,
        detail: `catchUp.caFile: ${c.caFile} (${bundle.subjects.join('; ')}; ${expired ? 'expired' : 'valid until'} ${bundle.validTo})`,
        ...(expired ? { fix } : {}),
      });
      ca = bundle.pem;
    } catch (error) {
      out.push({ status: 'FAIL', name: NAME, detail: errorMessage(error), fix });
      return out; // the probe would only repeat it
    }
  }

  const signatures = c.responseSignature;
  if (signatures === 'off')
    out.push({
      status: 'warn',
      name: NAME,
      detail:
        'catchUp.responseSignature is "off": answers are trusted on the TLS certificate alone',
      fix: 'set catchUp.responseSignature to "required" once the order service signs its answers (X-Signature)',
    });

  const allowV1 = c.allowV1Signatures === true && signatures === 'required';
  if (allowV1)
    out.push({
      status: 'warn',
      name: NAME,
      detail:
        'catchUp.allowV1Signatures is true: answers signed version 1 (the body alone, not bound ' +
        'to the query) are accepted',
      fix: 'remove catchUp.allowV1Signatures once the order service signs v2 (print-protocol v1.2 §10)',
    });

  let serviceKey: RsaKey | undefined;
  try {
    serviceKey = loadKeyFile(file.keys.servicePublicKeyFile, 'public');
  } catch {
    if (signatures === 'required') {
      out.push({
        status: 'FAIL',
        name: NAME,
        detail: 'answers not checked: keys.servicePublicKeyFile cannot be read (see keys above)',
        fix: 'fix keys.servicePublicKeyFile first',
      });
      return out;
    }
  }

  let link: ServiceLink;
  try {
    link = new ServiceLink({
      url: `${c.baseUrl.replace(/\/+$/, '')}${QUERY_PATH}`,
      scheme: file.keys.scheme,
      timeoutMs: PROBE_TIMEOUT_MS,
      responseSignature: signatures,
      allowInsecureHttp: c.allowInsecureHttp,
      ...(serviceKey ? { serviceKey } : {}),
      ...(ca !== undefined ? { ca } : {}),
    });
  } catch (error) {
    out.push({ status: 'FAIL', name: NAME, detail: errorMessage(error) });
    return out;
  }
  try {
    const probe = await link.probe();
    if (probe.signature === 'valid')
      out.push({
        status: 'ok',
        name: NAME,
        detail: `${link.url}: reachable; answers are signed (X-Signature verifies with keys.servicePublicKeyFile, version 2: bound to the request)`,
      });
    else if (probe.signature === 'v1')
      out.push(
        signatures === 'off'
          ? {
              status: 'ok',
              name: NAME,
              detail: `${link.url}: reachable; answers are signed version 1 (not checked: catchUp.responseSignature is "off")`,
            }
          : allowV1
            ? {
                status: 'warn',
                name: NAME,
                detail: `${link.url}: reachable; answers are signed version 1 (X-Signature verifies over the body alone, not bound to the request)`,
                fix: 'upgrade the order service to sign v2 (print-protocol v1.2 §10)',
              }
            : {
                status: 'FAIL',
                name: NAME,
                detail: `${link.url}: HTTP ${probe.status}, answers are signed version 1 (the body alone, not bound to the request): catch-up refuses every answer`,
                fix: 'upgrade the order service to sign v2 (print-protocol v1.2 §10: X-Signature-Version 2 for requests with X-Request-Nonce); meanwhile only catchUp.allowV1Signatures accepts them, warned at every round',
              },
      );
    else if (probe.signature === 'missing')
      out.push(
        signatures === 'required'
          ? {
              status: 'FAIL',
              name: NAME,
              detail: `${link.url}: HTTP ${probe.status}, the answer carries no X-Signature: catch-up refuses every answer`,
              fix: 'run an order service that signs its answers (print-protocol v1.1 §8); only over https may catchUp.responseSignature be "off"',
            }
          : {
              status: 'warn',
              name: NAME,
              detail: `${link.url}: reachable; answers are not signed (taken on the certificate alone)`,
            },
      );
    else if (probe.signature === 'unchecked')
      out.push({
        status: 'warn',
        name: NAME,
        detail: `${link.url}: reachable; answers carry X-Signature, not checked (keys.servicePublicKeyFile cannot be read)`,
      });
    else
      out.push({
        status: 'FAIL',
        name: NAME,
        detail: `${link.url}: HTTP ${probe.status}, the answer's X-Signature does not verify with keys.servicePublicKeyFile`,
        fix: "check that keys.servicePublicKeyFile is this order service's public key and keys.scheme its scheme; otherwise something on the path rewrites its answers",
      });
  } catch (error) {
    // A failed TLS check names its own fix (src/host/tls-failure.ts), like the broker's.
    const tlsFix = isAgentError(error) ? error.details.fix : undefined;
    out.push({
      status: 'FAIL',
      name: NAME,
      detail: errorMessage(error),
      fix:
        typeof tlsFix === 'string'
          ? tlsFix
          : 'check catchUp.baseUrl and that the order service runs and can be reached from here',
    });
  }
  return out;
}
