/**
 * RSA signing over the raw `param` string (print-protocol §3): key loading and its error codes,
 * and interoperability with the `openssl` command line in both directions, which is the contract
 * any client of the service can rely on ("what `openssl dgst -sha256 -sign key.pem` produces").
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isAgentError } from '../../src/errors.js';
import {
  deriveStoreId,
  generateKeyPair,
  loadKeyFile,
  MIN_KEY_BITS,
  parseKey,
  type RsaKey,
  type SignatureScheme,
  signParam,
  verifyParam,
} from '../../src/protocol/index.js';

const HAS_OPENSSL = spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0;
const NEEDS_OPENSSL = HAS_OPENSSL ? false : 'needs the openssl command (Debian package openssl)';

/** `-sigopt` arguments for openssl, per scheme (print-protocol §3). */
const SIGOPTS: Record<SignatureScheme, string[]> = {
  'RSA-SHA256': [],
  'RSA-PSS-SHA256': [
    '-sigopt',
    'rsa_padding_mode:pss',
    '-sigopt',
    'rsa_pss_saltlen:32',
    '-sigopt',
    'rsa_mgf1_md:sha256',
  ],
};
const SCHEMES: SignatureScheme[] = ['RSA-SHA256', 'RSA-PSS-SHA256'];

const PARAM = JSON.stringify({ commandId: 'C-0042', type: 'reprint', orderNo: 'O202611250001' });
const UTF8_PARAM = JSON.stringify({ note: '₱ 烧鸡', price: '₱150.00', name: 'Lechon 烧鸡 𠀀' });

const dir = mkdtempSync(join(tmpdir(), 'signing-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let fileCounter = 0;
/** A fresh file path in the temp dir (every test writes its own files). */
function tmp(name: string): string {
  fileCounter += 1;
  return join(dir, `${fileCounter}-${name}`);
}

function openssl(args: string[], input?: string): string {
  return execFileSync('openssl', args, { input, stdio: ['pipe', 'pipe', 'pipe'] }).toString('utf8');
}

/** `openssl dgst -sha256 -sign` over the exact UTF-8 bytes of `param`; standard base64. */
function opensslSign(param: string, privPath: string, scheme: SignatureScheme): string {
  const paramFile = tmp('param.txt');
  const sigFile = tmp('sig.bin');
  writeFileSync(paramFile, param, 'utf8');
  openssl(['dgst', '-sha256', '-sign', privPath, ...SIGOPTS[scheme], '-out', sigFile, paramFile]);
  return readFileSync(sigFile).toString('base64');
}

/** `openssl dgst -sha256 -verify`; exit status and output, never throws on a bad signature. */
function opensslVerify(param: string, sign: string, pubPath: string, scheme: SignatureScheme) {
  const paramFile = tmp('param.txt');
  const sigFile = tmp('sig.bin');
  writeFileSync(paramFile, param, 'utf8');
  writeFileSync(sigFile, Buffer.from(sign, 'base64'));
  const r = spawnSync(
    'openssl',
    ['dgst', '-sha256', '-verify', pubPath, ...SIGOPTS[scheme], '-signature', sigFile, paramFile],
    { encoding: 'utf8' },
  );
  return { status: r.status, stdout: r.stdout };
}

/** The base64 lines between the BEGIN and END lines (and after any `Key: value` headers). */
function pemBody(pem: string): string[] {
  return pem
    .split(/\r?\n/)
    .filter((l) => l.length > 0 && !l.startsWith('-----') && !l.includes(':'));
}

/**
 * Runs `fn`, expects an AgentError with `code`, and checks the message never carries key
 * material: no line of the PEM body, nor any long base64 run.
 */
function expectKeyError(fn: () => unknown, code: string, pem?: string) {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  assert.ok(isAgentError(caught), `expected an AgentError ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  assert.doesNotMatch(caught.message, /[A-Za-z0-9+/]{40,}/, 'message looks like key material');
  if (pem !== undefined) {
    const body = pemBody(pem);
    assert.ok(body.length > 0, 'test setup: the PEM has a body');
    assert.ok(!caught.message.includes(body.join('')), 'message contains the PEM body');
    for (const line of body)
      assert.ok(!caught.message.includes(line), `message contains a PEM body line: ${line}`);
  }
  return caught;
}

describe('signing without openssl (keys from generateKeyPair)', () => {
  let priv: RsaKey;
  let pub: RsaKey;
  let otherPriv: RsaKey;
  let otherPub: RsaKey;
  let pems: { privatePem: string; publicPem: string };

  before(() => {
    pems = generateKeyPair();
    priv = parseKey(pems.privatePem, 'private');
    pub = parseKey(pems.publicPem, 'public');
    const other = generateKeyPair();
    otherPriv = parseKey(other.privatePem, 'private');
    otherPub = parseKey(other.publicPem, 'public');
  });

  it('generateKeyPair gives a PKCS#8 private and an SPKI public key of 2048 bits', () => {
    assert.match(pems.privatePem, /^-----BEGIN PRIVATE KEY-----\r?\n/);
    assert.match(pems.publicPem, /^-----BEGIN PUBLIC KEY-----\r?\n/);
    assert.equal(MIN_KEY_BITS, 2048);
    assert.equal(priv.kind, 'private');
    assert.equal(priv.bits, 2048);
    assert.equal(pub.kind, 'public');
    assert.equal(pub.bits, 2048);
    assert.equal(pub.source, 'inline PEM');
    assert.equal(
      parseKey(pems.publicPem, 'public', 'config.serviceKey').source,
      'config.serviceKey',
    );
  });

  it('generateKeyPair rejects fewer than 2048 bits (and non-integers) with INPUT_INVALID', () => {
    for (const bits of [1024, 2047, 512, 0, -2048, 2048.5, Number.NaN, 16384]) {
      expectKeyError(() => generateKeyPair(bits), 'INPUT_INVALID');
    }
  });

  it('two calls give two different key pairs', () => {
    assert.notEqual(signParam(PARAM, priv), signParam(PARAM, otherPriv));
  });

  for (const scheme of SCHEMES) {
    it(`${scheme}: signParam then verifyParam holds, also for a non-ASCII param`, () => {
      for (const param of [PARAM, UTF8_PARAM, '']) {
        const sign = signParam(param, priv, scheme);
        assert.match(sign, /^[A-Za-z0-9+/]+={0,2}$/, 'standard base64');
        assert.equal(Buffer.from(sign, 'base64').length, 256);
        assert.equal(verifyParam(param, sign, pub, scheme), true);
        // A private key serves where a public one is wanted.
        assert.equal(verifyParam(param, sign, priv, scheme), true);
      }
    });

    it(`${scheme}: a one-byte change in param fails`, () => {
      const sign = signParam(PARAM, priv, scheme);
      const changed = PARAM.replace('C-0042', 'C-0043');
      assert.equal(Buffer.byteLength(changed), Buffer.byteLength(PARAM));
      assert.equal(verifyParam(changed, sign, pub, scheme), false);
      assert.equal(verifyParam(`${PARAM} `, sign, pub, scheme), false);
      // Same text, different bytes: U+00E9 precomposed vs e + U+0301.
      const composed = JSON.stringify({ name: 'caf\u00e9' });
      const decomposed = JSON.stringify({ name: 'cafe\u0301' });
      assert.equal(verifyParam(decomposed, signParam(composed, priv, scheme), pub, scheme), false);
    });

    it(`${scheme}: a signature by another key fails`, () => {
      assert.equal(verifyParam(PARAM, signParam(PARAM, otherPriv, scheme), pub, scheme), false);
      assert.equal(verifyParam(PARAM, signParam(PARAM, priv, scheme), otherPub, scheme), false);
    });
  }

  it('a PKCS#1 v1.5 signature checked as PSS fails, and a PSS signature checked as PKCS#1', () => {
    const pkcs1 = signParam(PARAM, priv, 'RSA-SHA256');
    const pss = signParam(PARAM, priv, 'RSA-PSS-SHA256');
    assert.equal(verifyParam(PARAM, pkcs1, pub, 'RSA-PSS-SHA256'), false);
    assert.equal(verifyParam(PARAM, pss, pub, 'RSA-SHA256'), false);
    // Controls: each holds under its own scheme, and the key's scheme is not left switched.
    assert.equal(verifyParam(PARAM, pkcs1, pub, 'RSA-SHA256'), true);
    assert.equal(verifyParam(PARAM, pss, pub, 'RSA-PSS-SHA256'), true);
    assert.equal(verifyParam(PARAM, pkcs1, pub), true, 'default scheme is RSA-SHA256');
  });

  it('the default scheme is deterministic PKCS#1 v1.5; PSS is salted', () => {
    assert.equal(signParam(PARAM, priv), signParam(PARAM, priv, 'RSA-SHA256'));
    assert.notEqual(
      signParam(PARAM, priv, 'RSA-PSS-SHA256'),
      signParam(PARAM, priv, 'RSA-PSS-SHA256'),
    );
  });

  it('malformed signatures are simply false, never an exception', () => {
    const sign = signParam(PARAM, priv);
    const bytes = Buffer.from(sign, 'base64');
    // Node's base64 decoder skips characters outside the alphabet: this would decode to the
    // valid signature, so only the strict check stands between it and "valid".
    const withJunk = `${sign.slice(0, 10)}!${sign.slice(10)}`;
    assert.deepEqual(Buffer.from(withJunk, 'base64'), bytes);
    const cases = [
      '',
      'not base64 at all',
      '!!!!',
      withJunk,
      sign.replace(/=+$/, ''), // the same bytes without the padding
      `${sign.slice(0, 20)} ${sign.slice(20)}`, // a space inside
      sign.replaceAll('+', '-').replaceAll('/', '_'), // the URL alphabet
      sign.slice(0, -4), // truncated
      Buffer.concat([bytes, Buffer.from([0])]).toString('base64'), // one byte too long
      Buffer.concat([Buffer.from([0]), bytes]).toString('base64'), // leading zero byte
      bytes.subarray(0, 255).toString('base64'), // one byte short
      Buffer.alloc(256).toString('base64'), // right length, all zeros
      Buffer.alloc(256, 0xff).toString('base64'), // right length, larger than the modulus
    ];
    for (const scheme of SCHEMES) {
      for (const bad of cases) {
        let result: boolean | undefined;
        assert.doesNotThrow(() => {
          result = verifyParam(PARAM, bad, pub, scheme);
        });
        assert.equal(result, false, `${scheme}: ${JSON.stringify(bad.slice(0, 20))}`);
      }
    }
  });

  it('signParam needs a private key: KEY_INVALID', () => {
    expectKeyError(() => signParam(PARAM, pub), 'KEY_INVALID');
  });

  it('garbage is KEY_INVALID, for either kind', () => {
    const garbage = [
      '',
      'hello world',
      '-----BEGIN RSA PRIVATE KEY-----\nQUJDRA==\n-----END RSA PRIVATE KEY-----\n',
      '-----BEGIN PRIVATE KEY-----\n!!!!@@@@\n-----END PRIVATE KEY-----\n',
      '-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n',
    ];
    for (const pem of garbage)
      for (const kind of ['private', 'public'] as const)
        expectKeyError(() => parseKey(pem, kind), 'KEY_INVALID');
  });

  it('a truncated PEM body is KEY_INVALID and the message shows no key material', () => {
    const lines = pems.privatePem.trim().split('\n');
    const truncated = [...lines.slice(0, 12), lines.at(-1)].join('\n');
    for (const kind of ['private', 'public'] as const)
      expectKeyError(() => parseKey(truncated, kind), 'KEY_INVALID', truncated);
  });

  it('loadKeyFile: a missing file is KEY_FILE_MISSING and the message names the path', () => {
    const missing = join(dir, 'no-such-dir', 'service.pub.pem');
    for (const kind of ['private', 'public'] as const) {
      const error = expectKeyError(() => loadKeyFile(missing, kind), 'KEY_FILE_MISSING');
      assert.ok(error.message.includes(missing), error.message);
      assert.match(error.message, /ENOENT/);
    }
    const aDirectory = join(dir, 'a-directory.pem');
    mkdirSync(aDirectory);
    const error = expectKeyError(() => loadKeyFile(aDirectory, 'private'), 'KEY_FILE_MISSING');
    assert.ok(error.message.includes(aDirectory), error.message);
  });

  it('loadKeyFile: the key source is the file path', () => {
    const path = tmp('gen.pem');
    writeFileSync(path, pems.privatePem);
    const key = loadKeyFile(path, 'private');
    assert.equal(key.source, path);
    assert.equal(verifyParam(PARAM, signParam(PARAM, key), pub), true);
  });
});

describe('signing and openssl', { skip: NEEDS_OPENSSL }, () => {
  /** Paths of the key files openssl made. */
  const f = {
    pkcs1: '', // RSA PRIVATE KEY, key A
    pkcs1Spki: '', // PUBLIC KEY of A
    pkcs1RsaPub: '', // RSA PUBLIC KEY of A
    pkcs8: '', // PRIVATE KEY, key B
    pkcs8Spki: '', // PUBLIC KEY of B
    short: '', // 1024-bit RSA PRIVATE KEY
    shortSpki: '', // its PUBLIC KEY
    ec: '', // PKCS#8 EC PRIVATE KEY (label PRIVATE KEY)
    ecTraditional: '', // EC PRIVATE KEY
    ecSpki: '', // EC PUBLIC KEY
    encPkcs8: '', // ENCRYPTED PRIVATE KEY
    encPkcs1: '', // RSA PRIVATE KEY with Proc-Type: 4,ENCRYPTED
  };
  const pem = (path: string) => readFileSync(path, 'utf8');

  before(() => {
    if (!HAS_OPENSSL) return;
    const p = (name: string) => join(dir, name);
    Object.assign(f, {
      pkcs1: p('a.pkcs1.pem'),
      pkcs1Spki: p('a.spki.pem'),
      pkcs1RsaPub: p('a.rsapub.pem'),
      pkcs8: p('b.pkcs8.pem'),
      pkcs8Spki: p('b.spki.pem'),
      short: p('short.pem'),
      shortSpki: p('short.spki.pem'),
      ec: p('ec.pkcs8.pem'),
      ecTraditional: p('ec.trad.pem'),
      ecSpki: p('ec.spki.pem'),
      encPkcs8: p('enc.pkcs8.pem'),
      encPkcs1: p('enc.pkcs1.pem'),
    });
    openssl(['genrsa', '-traditional', '-out', f.pkcs1, '2048']);
    openssl(['rsa', '-in', f.pkcs1, '-pubout', '-out', f.pkcs1Spki]);
    openssl(['rsa', '-in', f.pkcs1, '-RSAPublicKey_out', '-out', f.pkcs1RsaPub]);
    openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', f.pkcs8]);
    openssl(['rsa', '-in', f.pkcs8, '-pubout', '-out', f.pkcs8Spki]);
    openssl(['genrsa', '-traditional', '-out', f.short, '1024']);
    openssl(['rsa', '-in', f.short, '-pubout', '-out', f.shortSpki]);
    openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', f.ec]);
    openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', f.ecTraditional]);
    openssl(['pkey', '-in', f.ec, '-pubout', '-out', f.ecSpki]);
    openssl(['pkcs8', '-topk8', '-in', f.pkcs8, '-passout', 'pass:pw123456', '-out', f.encPkcs8]);
    openssl([
      'rsa',
      '-in',
      f.pkcs1,
      '-traditional',
      '-aes256',
      '-passout',
      'pass:pw123456',
      '-out',
      f.encPkcs1,
    ]);
  });

  describe('key forms', () => {
    it('the test keys have the PEM labels they are meant to have', () => {
      assert.match(pem(f.pkcs1), /^-----BEGIN RSA PRIVATE KEY-----/);
      assert.match(pem(f.pkcs1Spki), /^-----BEGIN PUBLIC KEY-----/);
      assert.match(pem(f.pkcs1RsaPub), /^-----BEGIN RSA PUBLIC KEY-----/);
      assert.match(pem(f.pkcs8), /^-----BEGIN PRIVATE KEY-----/);
      assert.match(pem(f.ec), /^-----BEGIN PRIVATE KEY-----/);
      assert.match(pem(f.ecTraditional), /^-----BEGIN EC PRIVATE KEY-----/);
      assert.match(pem(f.encPkcs8), /^-----BEGIN ENCRYPTED PRIVATE KEY-----/);
      assert.match(pem(f.encPkcs1), /Proc-Type: 4,ENCRYPTED/);
    });

    it('accepts PKCS#1 and PKCS#8 private keys, from a file and inline', () => {
      for (const path of [f.pkcs1, f.pkcs8]) {
        const fromFile = loadKeyFile(path, 'private');
        assert.equal(fromFile.kind, 'private');
        assert.equal(fromFile.bits, 2048);
        assert.equal(fromFile.source, path);
        const inline = parseKey(pem(path), 'private');
        assert.equal(inline.kind, 'private');
        assert.equal(inline.bits, 2048);
        assert.equal(inline.source, 'inline PEM');
      }
    });

    it('accepts SPKI and PKCS#1 public keys, and a private key where a public one is wanted', () => {
      for (const path of [f.pkcs1Spki, f.pkcs1RsaPub, f.pkcs8Spki]) {
        const key = loadKeyFile(path, 'public');
        assert.equal(key.kind, 'public', path);
        assert.equal(key.bits, 2048);
        assert.equal(parseKey(pem(path), 'public').kind, 'public');
      }
      assert.equal(loadKeyFile(f.pkcs1, 'public').bits, 2048);
      assert.equal(loadKeyFile(f.pkcs8, 'public').bits, 2048);
    });

    it('every public form of a key verifies what its private key signed; the other key does not', () => {
      for (const privPath of [f.pkcs1, f.pkcs8]) {
        const sign = signParam(PARAM, loadKeyFile(privPath, 'private'));
        const own = privPath === f.pkcs1 ? [f.pkcs1Spki, f.pkcs1RsaPub, f.pkcs1] : [f.pkcs8Spki];
        const other = privPath === f.pkcs1 ? [f.pkcs8Spki, f.pkcs8] : [f.pkcs1Spki, f.pkcs1RsaPub];
        for (const pub of own)
          assert.equal(verifyParam(PARAM, sign, loadKeyFile(pub, 'public')), true, pub);
        for (const pub of other)
          assert.equal(verifyParam(PARAM, sign, loadKeyFile(pub, 'public')), false, pub);
      }
    });

    it('a public key where a private key is needed is KEY_INVALID', () => {
      for (const path of [f.pkcs1Spki, f.pkcs1RsaPub]) {
        const error = expectKeyError(() => loadKeyFile(path, 'private'), 'KEY_INVALID', pem(path));
        assert.ok(error.message.includes(path), 'the message names the file');
        expectKeyError(() => parseKey(pem(path), 'private'), 'KEY_INVALID', pem(path));
      }
    });

    it('an EC key is KEY_INVALID, in every form and for either kind', () => {
      for (const path of [f.ec, f.ecTraditional])
        for (const kind of ['private', 'public'] as const)
          expectKeyError(() => loadKeyFile(path, kind), 'KEY_INVALID', pem(path));
      expectKeyError(() => loadKeyFile(f.ecSpki, 'public'), 'KEY_INVALID', pem(f.ecSpki));
    });

    it('an encrypted private key is KEY_INVALID (PKCS#8 and traditional)', () => {
      for (const path of [f.encPkcs8, f.encPkcs1]) {
        for (const kind of ['private', 'public'] as const) {
          const error = expectKeyError(() => loadKeyFile(path, kind), 'KEY_INVALID', pem(path));
          assert.match(error.message, /encrypted/);
        }
      }
    });

    it('a 1024-bit key is KEY_TOO_SHORT, private or public', () => {
      for (const [path, kind] of [
        [f.short, 'private'],
        [f.short, 'public'],
        [f.shortSpki, 'public'],
      ] as const) {
        const error = expectKeyError(() => loadKeyFile(path, kind), 'KEY_TOO_SHORT', pem(path));
        assert.match(error.message, /1024/);
        assert.match(error.message, /2048/);
        expectKeyError(() => parseKey(pem(path), kind), 'KEY_TOO_SHORT', pem(path));
      }
    });
  });

  describe('interop with openssl dgst', () => {
    for (const scheme of SCHEMES) {
      it(`${scheme}: openssl's signature verifies with verifyParam, for every public form`, () => {
        for (const [privPath, pubs] of [
          [f.pkcs1, [f.pkcs1Spki, f.pkcs1RsaPub]],
          [f.pkcs8, [f.pkcs8Spki]],
        ] as const) {
          for (const param of [PARAM, UTF8_PARAM]) {
            const sign = opensslSign(param, privPath, scheme);
            for (const pub of pubs) {
              const key = loadKeyFile(pub, 'public');
              assert.equal(verifyParam(param, sign, key, scheme), true, `${pub} ${param}`);
              assert.equal(verifyParam(`${param} `, sign, key, scheme), false);
            }
          }
        }
      });

      it(`${scheme}: signParam's signature verifies with openssl (Verified OK)`, () => {
        for (const [privPath, pubPath] of [
          [f.pkcs1, f.pkcs1Spki],
          [f.pkcs8, f.pkcs8Spki],
        ] as const) {
          const key = loadKeyFile(privPath, 'private');
          for (const param of [PARAM, UTF8_PARAM]) {
            const r = opensslVerify(param, signParam(param, key, scheme), pubPath, scheme);
            assert.equal(r.status, 0, r.stdout);
            assert.match(r.stdout, /Verified OK/);
          }
        }
      });

      it(`${scheme}: openssl rejects what does not hold (the harness is not vacuous)`, () => {
        const key = loadKeyFile(f.pkcs1, 'private');
        const sign = signParam(PARAM, key, scheme);
        const changed = opensslVerify(`${PARAM}x`, sign, f.pkcs1Spki, scheme);
        assert.notEqual(changed.status, 0);
        assert.match(changed.stdout, /Verification failure/);
        const otherKey = opensslVerify(PARAM, sign, f.pkcs8Spki, scheme);
        assert.notEqual(otherKey.status, 0);
      });
    }

    it('a non-ASCII UTF-8 param round-trips with openssl over its UTF-8 bytes', () => {
      const param = JSON.stringify({
        productName: '₱ 烧鸡',
        customPrintContext: 'Salamat po! 谢谢',
      });
      assert.ok(Buffer.byteLength(param, 'utf8') > param.length, 'test setup: multi-byte');
      const priv = loadKeyFile(f.pkcs8, 'private');
      const pub = loadKeyFile(f.pkcs8Spki, 'public');
      for (const scheme of SCHEMES) {
        assert.equal(verifyParam(param, opensslSign(param, f.pkcs8, scheme), pub, scheme), true);
        const r = opensslVerify(param, signParam(param, priv, scheme), f.pkcs8Spki, scheme);
        assert.match(r.stdout, /Verified OK/);
      }
      // A signature over Latin-1 bytes of the same text is not a signature over the param.
      const latin1 = '{"price":"caf\u00e9"}';
      const file = tmp('latin1.txt');
      const sig = tmp('latin1.sig');
      writeFileSync(file, Buffer.from(latin1, 'latin1'));
      openssl(['dgst', '-sha256', '-sign', f.pkcs8, '-out', sig, file]);
      assert.equal(verifyParam(latin1, readFileSync(sig).toString('base64'), pub), false);
    });

    it('PKCS#1 v1.5 is deterministic: our signature equals openssl’s byte for byte', () => {
      for (const privPath of [f.pkcs1, f.pkcs8]) {
        const key = loadKeyFile(privPath, 'private');
        for (const param of [PARAM, UTF8_PARAM]) {
          assert.equal(signParam(param, key), opensslSign(param, privPath, 'RSA-SHA256'));
          assert.equal(
            signParam(param, key, 'RSA-SHA256'),
            opensslSign(param, privPath, 'RSA-SHA256'),
          );
        }
      }
    });

    it("openssl's PKCS#1 signature fails as PSS and its PSS signature fails as PKCS#1", () => {
      const pub = loadKeyFile(f.pkcs1Spki, 'public');
      const pkcs1 = opensslSign(PARAM, f.pkcs1, 'RSA-SHA256');
      const pss = opensslSign(PARAM, f.pkcs1, 'RSA-PSS-SHA256');
      assert.equal(verifyParam(PARAM, pkcs1, pub, 'RSA-PSS-SHA256'), false);
      assert.equal(verifyParam(PARAM, pss, pub, 'RSA-SHA256'), false);
      assert.equal(verifyParam(PARAM, pss, pub), false, 'the default is RSA-SHA256');
      // ... and openssl agrees about ours.
      const key = loadKeyFile(f.pkcs1, 'private');
      const asPss = opensslVerify(PARAM, signParam(PARAM, key), f.pkcs1Spki, 'RSA-PSS-SHA256');
      assert.notEqual(asPss.status, 0);
      const ourPss = signParam(PARAM, key, 'RSA-PSS-SHA256');
      assert.notEqual(opensslVerify(PARAM, ourPss, f.pkcs1Spki, 'RSA-SHA256').status, 0);
    });
  });

  describe('generateKeyPair and openssl', () => {
    it('produces 2048-bit keys that openssl reads and checks', () => {
      const { privatePem, publicPem } = generateKeyPair();
      const privPath = tmp('gen.priv.pem');
      const pubPath = tmp('gen.pub.pem');
      writeFileSync(privPath, privatePem, { mode: 0o600 });
      writeFileSync(pubPath, publicPem);
      assert.match(openssl(['rsa', '-in', privPath, '-check', '-noout']), /RSA key ok/);
      assert.match(openssl(['rsa', '-in', privPath, '-text', '-noout']), /Private-Key: \(2048 bit/);
      assert.match(
        openssl(['rsa', '-pubin', '-in', pubPath, '-text', '-noout']),
        /Public-Key: \(2048 bit/,
      );
      // The public key is the public half of the private key.
      assert.equal(
        openssl(['rsa', '-in', privPath, '-pubout']).trim(),
        openssl(['rsa', '-pubin', '-in', pubPath, '-pubout']).trim(),
      );
      // And the pair interoperates.
      const r = opensslVerify(
        PARAM,
        signParam(PARAM, parseKey(privatePem, 'private')),
        pubPath,
        'RSA-SHA256',
      );
      assert.match(r.stdout, /Verified OK/);
      const sign = opensslSign(PARAM, privPath, 'RSA-SHA256');
      assert.equal(verifyParam(PARAM, sign, parseKey(publicPem, 'public')), true);
    });
  });
});

describe('deriveStoreId', { skip: NEEDS_OPENSSL }, () => {
  /** The first 16 hex digits of `printf '%s' INPUT | openssl dgst -sha256`. */
  function opensslStoreId(input: string): string {
    const out = openssl(['dgst', '-sha256'], input);
    const hex = /([0-9a-f]{64})\s*$/.exec(out)?.[1];
    assert.ok(hex, `unexpected openssl output: ${out}`);
    return hex.slice(0, 16);
  }

  it("deriveStoreId('A1','K1') is the first 16 hex digits of sha256('A1:K1') per openssl", () => {
    const expected = opensslStoreId('A1:K1');
    assert.match(expected, /^[0-9a-f]{16}$/);
    assert.equal(deriveStoreId('A1', 'K1'), expected);
  });

  it('hashes the UTF-8 bytes and differs per appId and storeKey', () => {
    const storeKey = 'sk-₱-烧鸡-secret';
    const id = deriveStoreId('A1', storeKey);
    assert.equal(id, opensslStoreId(`A1:${storeKey}`));
    assert.ok(!id.includes(storeKey));
    assert.notEqual(deriveStoreId('A1', 'K2'), deriveStoreId('A1', 'K1'));
    assert.notEqual(deriveStoreId('A2', 'K1'), deriveStoreId('A1', 'K1'));
  });
});
