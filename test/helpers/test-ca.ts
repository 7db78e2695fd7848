/**
 * A certificate authority made by the test with the `openssl` command line, in a temp dir: no
 * key or certificate is kept in the repository. Keys are EC P-256 (fast to make, accepted by
 * Mosquitto and Node). Leaf certificates are issued with `openssl ca`, the one OpenSSL 3.0 command
 * that takes explicit start and end dates, so an expired certificate needs no sleeping and no
 * other package.
 *
 * Tests skip, naming the Debian package, when openssl is missing (`skipWithoutOpenssl`).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const OPENSSL_SKIP = 'needs openssl (Debian package openssl)';

/** `false` to run, or the skip message. */
export function skipWithoutOpenssl(): false | string {
  return spawnSync('openssl', ['version'], { stdio: 'ignore' }).error ? OPENSSL_SKIP : false;
}

function openssl(args: string[], cwd: string): string {
  const r = spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (r.error) throw new Error(`${OPENSSL_SKIP}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout;
}

/**
 * A self-signed certificate for `ip` in `dir` (`NAME.crt`, `NAME.key` 0600), as an installer
 * generates one for the agent's status page: its own trust anchor.
 */
export function selfSignedCertificate(
  dir: string,
  name: string,
  ip = '127.0.0.1',
): IssuedCertificate {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      '-addext',
      `subjectAltName=IP:${ip}`,
    ],
    dir,
  );
  chmodSync(keyFile, 0o600);
  return { certFile, keyFile };
}

export interface IssuedCertificate {
  certFile: string;
  keyFile: string;
}

export interface IssueOptions {
  /** Names the files (`NAME.crt`, `NAME.key`); unique per CA. */
  name: string;
  /** subjectAltName DNS names; default none. */
  dns?: string[];
  /** subjectAltName IP addresses; default none. */
  ips?: string[];
  /** `server` (default) or `client` (extendedKeyUsage). */
  usage?: 'server' | 'client';
  /** Valid from/to, as Dates; default from one hour ago for two days. */
  notBefore?: Date;
  notAfter?: Date;
}

/** `YYYYMMDDHHMMSSZ`, the form `openssl ca -startdate/-enddate` reads. */
function asn1Time(date: Date): string {
  return `${date.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
}

export class TestCa {
  readonly certFile: string;
  private readonly keyFile: string;
  private readonly config: string;

  private constructor(
    readonly dir: string,
    readonly name: string,
  ) {
    this.certFile = join(dir, 'ca.crt');
    this.keyFile = join(dir, 'ca.key');
    this.config = join(dir, 'ca.cnf');
  }

  /**
   * A new CA (`CN=name`) in a fresh temp dir (or under `parent`). The dir and every file are
   * readable by others: Mosquitto, started as root, drops to its own user and must read the
   * broker's key. Test keys only.
   */
  static create(name: string, parent?: string): TestCa {
    const base = parent ?? tmpdir();
    const dir = mkdtempSync(join(base, `pa-ca-${name}-`));
    chmodSync(dir, 0o755);
    const ca = new TestCa(dir, name);
    mkdirSync(join(dir, 'issued'));
    writeFileSync(join(dir, 'index.txt'), '');
    writeFileSync(join(dir, 'serial'), `${Date.now().toString(16).padStart(16, '0')}\n`);
    writeFileSync(
      ca.config,
      [
        '[ ca ]',
        'default_ca = test_ca',
        '[ test_ca ]',
        `database = ${join(dir, 'index.txt')}`,
        `new_certs_dir = ${join(dir, 'issued')}`,
        `certificate = ${ca.certFile}`,
        `private_key = ${ca.keyFile}`,
        `serial = ${join(dir, 'serial')}`,
        'default_md = sha256',
        'policy = policy_any',
        'unique_subject = no',
        'email_in_dn = no',
        '[ policy_any ]',
        'commonName = supplied',
        '[ req ]',
        'distinguished_name = dn',
        '[ dn ]',
        '',
      ].join('\n'),
    );
    openssl(
      [
        'req',
        '-x509',
        '-new',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        ca.keyFile,
        '-out',
        ca.certFile,
        '-days',
        '3',
        '-subj',
        `/CN=${name} test CA`,
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      ],
      dir,
    );
    chmodSync(ca.keyFile, 0o644);
    return ca;
  }

  /** Issues a leaf certificate signed by this CA; `CN` is the first DNS name or the name. */
  issue(options: IssueOptions): IssuedCertificate {
    const key = join(this.dir, `${options.name}.key`);
    const csr = join(this.dir, `${options.name}.csr`);
    const cert = join(this.dir, `${options.name}.crt`);
    const ext = join(this.dir, `${options.name}.ext`);
    const san = [
      ...(options.dns ?? []).map((d) => `DNS:${d}`),
      ...(options.ips ?? []).map((ip) => `IP:${ip}`),
    ];
    writeFileSync(
      ext,
      [
        '[ leaf ]',
        'basicConstraints = critical,CA:FALSE',
        'keyUsage = critical,digitalSignature,keyEncipherment',
        `extendedKeyUsage = ${options.usage === 'client' ? 'clientAuth' : 'serverAuth'}`,
        ...(san.length ? [`subjectAltName = ${san.join(',')}`] : []),
        '',
      ].join('\n'),
    );
    openssl(
      [
        'req',
        '-new',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        key,
        '-out',
        csr,
        '-subj',
        `/CN=${options.dns?.[0] ?? options.name}`,
      ],
      this.dir,
    );
    const now = Date.now();
    const notBefore = options.notBefore ?? new Date(now - 3600_000);
    const notAfter = options.notAfter ?? new Date(now + 2 * 86_400_000);
    openssl(
      [
        'ca',
        '-batch',
        '-notext',
        '-config',
        this.config,
        '-in',
        csr,
        '-out',
        cert,
        '-startdate',
        asn1Time(notBefore),
        '-enddate',
        asn1Time(notAfter),
        '-extfile',
        ext,
        '-extensions',
        'leaf',
      ],
      this.dir,
    );
    chmodSync(key, 0o644);
    return { certFile: cert, keyFile: key };
  }
}
