/**
 * Which TLS check failed when connecting to the broker (issue 13, item 10) or to the order
 * service for catch-up (print-protocol §8), in words an installer can act on. Node reports
 * certificate problems by OpenSSL's verify codes and the peer's refusals by the TLS alert it sent;
 * the agent's log, the catch-up errors and `doctor` all name the check from them.
 *
 * The checks, as Node and OpenSSL 3 report them against Mosquitto:
 * - `unknown-ca`: the broker's certificate does not chain to `mqtt.tls.caFile` (or, without a CA
 *   file, to the system's CAs): UNABLE_TO_VERIFY_LEAF_SIGNATURE and friends;
 * - `expired` / `not-yet-valid`: outside its validity dates (CERT_HAS_EXPIRED, CERT_NOT_YET_VALID);
 *   a Pi without a clock gets the second until its time is set;
 * - `host-name`: valid, but for another name than the one in `mqtt.url` (ERR_TLS_CERT_ALTNAME_INVALID);
 * - `client-certificate-required`: the broker wants a client certificate and none is configured
 *   (TLS 1.3 alert 116 "certificate required"; TLS 1.2 says only "handshake failure");
 * - `client-certificate-refused`: one is configured and the broker refused it (alerts unknown ca,
 *   bad/expired/revoked/unsupported certificate, access denied);
 * - `not-tls`: `mqtts://` to a port that does not speak TLS.
 */

export type TlsCheck =
  | 'unknown-ca'
  | 'expired'
  | 'not-yet-valid'
  | 'host-name'
  | 'client-certificate-required'
  | 'client-certificate-refused'
  | 'not-tls';

export interface TlsFailure {
  check: TlsCheck;
  /** One sentence: what failed, with the names Node gave where they help (the host, its names). */
  reason: string;
  /** What to change, naming the config field. */
  fix: string;
}

const UNKNOWN_CA = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
]);

/** TLS alerts a broker sends about the client's certificate. */
const CLIENT_CERT_ALERTS =
  /ALERT_(UNKNOWN_CA|BAD_CERTIFICATE|CERTIFICATE_EXPIRED|CERTIFICATE_REVOKED|CERTIFICATE_UNKNOWN|UNSUPPORTED_CERTIFICATE|ACCESS_DENIED|DECRYPT_ERROR)$/;

/** Who the agent was talking to: the names in the messages and the settings to change. */
export type TlsPeer = 'broker' | 'service';

const WORDS: Record<TlsPeer, { peer: string; caFile: string; url: string; renew: string }> = {
  broker: {
    peer: 'broker',
    caFile: 'mqtt.tls.caFile',
    url: 'mqtt.url',
    renew: "renew the broker's certificate (Mosquitto: certfile)",
  },
  service: {
    peer: 'order service',
    caFile: 'catchUp.caFile',
    url: 'catchUp.baseUrl',
    renew: "have the order service's certificate renewed",
  },
};

/**
 * The failed check behind a connection error, or null when it was not a TLS check (refused,
 * timeout, bad password...). `clientCertificate`: whether `mqtt.tls.certFile` is configured.
 */
export function tlsFailure(
  error: Error,
  options: { clientCertificate: boolean; peer?: TlsPeer },
): TlsFailure | null {
  const w = WORDS[options.peer ?? 'broker'];
  const code = (error as NodeJS.ErrnoException).code ?? '';
  const text = `${code} ${error.message}`;
  if (UNKNOWN_CA.has(code)) {
    return {
      check: 'unknown-ca',
      reason: `the ${w.peer}'s certificate is not signed by a trusted CA (${error.message})`,
      fix: `set ${w.caFile} to the CA certificate that signed the ${w.peer} certificate (PEM), or install the ${w.peer} certificate the CA issued`,
    };
  }
  if (code === 'CERT_HAS_EXPIRED') {
    return {
      check: 'expired',
      reason: `the ${w.peer}'s certificate has expired`,
      fix: `${w.renew}; if it should still be valid, check this machine's clock (timedatectl)`,
    };
  }
  if (code === 'CERT_NOT_YET_VALID') {
    return {
      check: 'not-yet-valid',
      reason: `the ${w.peer}'s certificate is not valid yet`,
      fix: "check this machine's clock (timedatectl: NTP synchronized), then the certificate's start date",
    };
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const names = /cert's altnames: (.*)$/.exec(error.message)?.[1];
    const host = (error as { host?: string }).host;
    return {
      check: 'host-name',
      reason: `the ${w.peer}'s certificate is for another host name${host ? ` than ${host}` : ''}${names ? ` (it names ${names})` : ''}`,
      fix: `put a host name the certificate names into ${w.url}, or reissue the ${w.peer} certificate with this host name in subjectAltName`,
    };
  }
  if (/ALERT_CERTIFICATE_REQUIRED|alert certificate required/i.test(text)) {
    return options.clientCertificate
      ? clientRefused(error, w.peer)
      : {
          check: 'client-certificate-required',
          reason: `the ${w.peer} requires a client certificate and none is configured`,
          fix: "set mqtt.tls.certFile and mqtt.tls.keyFile to the store's client certificate and key (issued by the CA the broker trusts)",
        };
  }
  const alert = /ERR_SSL_(?:TLSV1|SSLV3|TLSV13)_(ALERT_[A-Z_]+)/.exec(code)?.[1] ?? '';
  if (CLIENT_CERT_ALERTS.test(alert)) return clientRefused(error, w.peer);
  if (/ALERT_HANDSHAKE_FAILURE|alert handshake failure/i.test(text) && !options.clientCertificate) {
    // TLS 1.2 brokers answer a missing client certificate with a bare handshake failure.
    return {
      check: 'client-certificate-required',
      reason: `the ${w.peer} ended the TLS handshake (handshake failure): most likely it requires a client certificate and none is configured`,
      fix: "set mqtt.tls.certFile and mqtt.tls.keyFile to the store's client certificate and key; if the broker needs none, check its TLS versions and ciphers",
    };
  }
  if (/WRONG_VERSION_NUMBER|wrong version number|packet length too long/i.test(text)) {
    return {
      check: 'not-tls',
      reason: `the ${w.peer} port does not speak TLS`,
      fix:
        options.peer === 'service'
          ? 'use the https port of the order service in catchUp.baseUrl'
          : 'use the TLS port of the broker in mqtt.url (usually 8883), or mqtt:// for a plain port on a trusted network',
    };
  }
  return null;
}

function clientRefused(error: Error, peer: string): TlsFailure {
  const alert = /alert ([a-z ]+?)(?::|$)/i.exec(error.message)?.[1]?.trim();
  return {
    check: 'client-certificate-refused',
    reason: `the ${peer} refused our client certificate${alert ? ` (${alert})` : ''}`,
    fix: 'check mqtt.tls.certFile and mqtt.tls.keyFile: a certificate issued by the CA the broker trusts (its cafile), valid today, for client use',
  };
}
