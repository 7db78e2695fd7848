/**
 * `printer-agent doctor` in this process (the CLI with injected I/O, src/cli/program.ts) against a
 * real Mosquitto and the emulator on TCP. `timedatectl` is a stub on the injected PATH, so the
 * clock check does not depend on the machine running the tests.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeLogoPng } from '../../harness/logo.js';
import { freePort, Mosquitto, skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { listenTcp, type TcpEndpoint, VirtualPrinter } from '../../src/emulator/index.js';
import { generateKeyPair } from '../../src/protocol/signing.js';
import {
  nonLoopbackAddress,
  SERVICE_PUBLIC_KEY_FILE,
  STORE_PRIVATE_KEY_FILE,
  startService,
  type TestService,
} from '../catchup/harness.js';
import { LOCAL_NAMES, TlsFront } from '../catchup/tls-front.js';
import { runCliInProcess } from '../helpers/cli.js';
import { TestCa } from '../helpers/test-ca.js';

const STORE_KEY = 'sk-doctor-secret-8841-never-printed';
const MQTT_PASSWORD = 'pw-doctor-secret-3307-never-printed';
const pair = generateKeyPair();

interface TestConfig {
  appId: string;
  storeKeyFile: string;
  mqtt: { url: string; protocolVersion: number; username?: string; passwordFile?: string };
  keys: { servicePublicKeyFile: string };
  printers: { id: string; url: string; profile: string }[];
  stateDir: string;
  catchUp: { enabled: boolean };
  console: { port: number };
  receipt?: { logo?: { file: string; widthMm?: number } };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function doctor(args: string[], ntp: 'yes' | 'no' = 'yes', bin?: string): Promise<Run> {
  // The service runs as the account running these tests: as root, doctor's service-user check
  // then has an account to ask (service-access.test.ts covers another account).
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PRINTER_AGENT_SERVICE_USER: userInfo().username,
  };
  if (bin) {
    writeFileSync(join(bin, 'timedatectl'), `#!/bin/sh\necho ${ntp}\n`);
    chmodSync(join(bin, 'timedatectl'), 0o755);
    env.PATH = `${bin}:${process.env.PATH ?? ''}`;
  }
  return runCliInProcess(['doctor', ...args], { env }).then((r) => ({
    code: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
  }));
}

function assertNoSecret(run: Run): void {
  for (const secret of [STORE_KEY, MQTT_PASSWORD]) {
    assert.ok(!run.stdout.includes(secret), 'a secret in stdout');
    assert.ok(!run.stderr.includes(secret), 'a secret in stderr');
  }
}

describe('printer-agent doctor', { skip: skipWithoutMosquitto() }, () => {
  let broker: Mosquitto;
  let emulator: VirtualPrinter;
  let endpoint: TcpEndpoint;
  let dir: string;
  let bin: string;
  /**
   * The local API port doctor asks a running agent on: a free one, not the default 8631, which a
   * demo or agent started by another test file may hold (doctor then reports that agent).
   */
  let consolePort: number;

  /** A config in `dir`; `change` edits the object before it is written. */
  function writeConfig(name: string, change: (c: TestConfig) => void = () => {}): string {
    const config: TestConfig = {
      appId: 'A-doctor',
      storeKeyFile: join(dir, 'store-key'),
      mqtt: {
        url: broker.url,
        protocolVersion: 5,
        username: 'store-doctor',
        passwordFile: join(dir, 'mqtt-password'),
      },
      keys: { servicePublicKeyFile: join(dir, 'service-public.pem') },
      printers: [{ id: 'receipt', url: endpoint.address, profile: 'generic-80mm' }],
      stateDir: join(dir, 'state'),
      catchUp: { enabled: false },
      console: { port: consolePort },
    };
    change(config);
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(config), { mode: 0o600 });
    return path;
  }

  before(async () => {
    broker = await Mosquitto.start();
    consolePort = await freePort();
    emulator = new VirtualPrinter({ columns: 48 });
    endpoint = await listenTcp(emulator, { port: 0 });
    dir = mkdtempSync(join(tmpdir(), 'pa-doctor-'));
    bin = join(dir, 'bin');
    mkdirSync(bin);
    mkdirSync(join(dir, 'state'));
    writeFileSync(join(dir, 'service-public.pem'), pair.publicPem, { mode: 0o644 });
    writeFileSync(join(dir, 'store-key'), `${STORE_KEY}\n`, { mode: 0o600 });
    writeFileSync(join(dir, 'mqtt-password'), `${MQTT_PASSWORD}\n`, { mode: 0o600 });
  });

  after(async () => {
    await endpoint?.close();
    await broker?.stop();
  });

  it('all green: every line ok, exit 0', async () => {
    const config = writeConfig('green.json', (c) => {
      c.mqtt.url = broker.url;
      c.mqtt.passwordFile = undefined;
      c.mqtt.username = undefined;
    });
    const run = await doctor(['--config', config], 'yes', bin);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const lines = run.stdout.trimEnd().split('\n');
    // The fonts line depends on the machine's font packages (a warning where CJK has none; its
    // own test, test/receipt/missing-fonts.test.ts, gives it a font set).
    assert.ok(
      lines.some((l) => /^(ok {3}|warn )fonts: raster lines drawn with /.test(l)),
      run.stdout,
    );
    // A check's continuation lines (its `fix:`) belong to it: the fonts warning's go with it.
    const checks = lines.filter((l) => !l.startsWith(' '));
    for (const line of checks.filter((l) => !l.startsWith('warn fonts:')))
      assert.match(line, /^ok {3}/, line);
    for (const name of ['config', 'keys', 'secret', 'permissions', 'state dir', 'broker', 'clock'])
      assert.ok(
        lines.some((l) => l.startsWith(`ok   ${name}:`)),
        `${name} missing:\n${run.stdout}`,
      );
    assert.ok(lines.includes(`ok   config: ${config}`), run.stdout);
    assert.ok(lines.includes(`ok   printer receipt: ${endpoint.address}: ready`), run.stdout);
    // As root, what the service's account can read is checked too (here: this account).
    if (process.getuid?.() === 0)
      assert.ok(
        lines.some((l) =>
          /^ok {3}service user: root can read the config and the \d+ files it names$/.test(l),
        ),
        run.stdout,
      );
    assertNoSecret(run);
  });

  it('--json gives the same checks', async () => {
    const config = writeConfig('json.json', (c) => {
      c.mqtt.passwordFile = undefined;
      c.mqtt.username = undefined;
    });
    const run = await doctor(['--config', config, '--json'], 'yes', bin);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const parsed = JSON.parse(run.stdout) as {
      ok: boolean;
      checks: { status: string; name: string }[];
    };
    assert.equal(parsed.ok, true);
    // The fonts line depends on the machine's font packages (see the test above).
    assert.ok(parsed.checks.every((c) => c.status === 'ok' || c.name === 'fonts'));
  });

  it('missing key file: FAIL keys with the path and a fix, other checks still run', async () => {
    const missing = join(dir, 'nowhere', 'service-public.pem');
    const config = writeConfig('nokey.json', (c) => {
      c.keys.servicePublicKeyFile = missing;
    });
    const run = await doctor(['--config', config], 'yes', bin);
    assert.equal(run.code, 1);
    assert.match(
      run.stdout,
      new RegExp(`^FAIL keys: ${missing}: cannot read public key file \\(ENOENT\\)$`, 'm'),
    );
    // The service's account (here this one) is named: the file is put in place for it.
    assert.match(
      run.stdout,
      new RegExp(`^ {5}fix: sudo install -m 0644 SERVICE-PUBLIC\\.pem ${missing} \\(`, 'm'),
    );
    assert.match(run.stdout, /^ok {3}broker: /m, 'the broker is checked all the same');
    assertNoSecret(run);
  });

  it('store logo: ok with its printed size; missing or not an image: FAIL logo naming the path', async () => {
    const good = writeLogoPng(join(dir, 'logo.png'));
    const ok = await doctor(
      [
        '--config',
        writeConfig('logo-ok.json', (c) => (c.receipt = { logo: { file: good, widthMm: 40 } })),
      ],
      'yes',
      bin,
    );
    assert.match(
      ok.stdout,
      new RegExp(`^ok {3}logo: ${good} \\(320x160 dots on generic-80mm\\)$`, 'm'),
    );
    const missing = join(dir, 'nowhere', 'logo.png');
    const notImage = join(dir, 'logo.txt');
    writeFileSync(notImage, 'our logo\n');
    for (const [file, why] of [
      [missing, 'missing \\(ENOENT\\)'],
      [notImage, 'not a PNG or SVG image'],
    ] as const) {
      const run = await doctor(
        ['--config', writeConfig('logo-bad.json', (c) => (c.receipt = { logo: { file } }))],
        'yes',
        bin,
      );
      assert.equal(run.code, 1);
      assert.match(
        run.stdout,
        new RegExp(`^FAIL logo: receipt\\.logo\\.file: ${file}: ${why}$`, 'm'),
      );
      assert.match(run.stdout, new RegExp(`^ {5}fix: put the logo at ${file} as PNG or SVG`, 'm'));
      assert.match(run.stdout, /^ok {3}broker: /m, 'the other checks still run');
      assertNoSecret(run);
    }
  });

  it('broker down (wrong port): FAIL broker with a fix', async () => {
    const config = writeConfig('nobroker.json', (c) => {
      c.mqtt.url = 'mqtt://127.0.0.1:1';
    });
    const run = await doctor(['--config', config], 'yes', bin);
    assert.equal(run.code, 1);
    assert.match(run.stdout, /^FAIL broker: mqtt:\/\/127\.0\.0\.1:1 .*ECONNREFUSED/m);
    assert.match(run.stdout, /^ {5}fix: check mqtt\.url and that the broker runs/m);
    assertNoSecret(run);
  });

  it('printer out of paper: FAIL printer with paper-out', async () => {
    emulator.setFault('paper-out', true);
    try {
      const config = writeConfig('paper.json');
      const run = await doctor(['--config', config], 'yes', bin);
      assert.equal(run.code, 1);
      assert.match(run.stdout, /^FAIL printer receipt: tcp:\/\/.*: paper-out/m);
      assert.match(run.stdout, /^ {5}fix: load a paper roll/m);
      assertNoSecret(run);
    } finally {
      emulator.setFault('paper-out', false);
    }
  });

  it('secret file readable by others and clock not synchronized', async () => {
    const exposed = join(dir, 'store-key-exposed');
    writeFileSync(exposed, `${STORE_KEY}\n`, { mode: 0o644 });
    chmodSync(exposed, 0o644);
    const config = writeConfig('exposed.json', (c) => {
      c.storeKeyFile = exposed;
    });
    const run = await doctor(['--config', config], 'no', bin);
    assert.equal(run.code, 1);
    assert.match(run.stdout, new RegExp(`^warn permissions: storeKeyFile: ${exposed}`, 'm'));
    // Owner and mode together: a bare chmod 600 would leave a file root wrote unreadable by the
    // service (test/doctor/doctor-template.test.ts applies the fix and runs config check).
    const user = userInfo().username;
    assert.match(
      run.stdout,
      new RegExp(
        `^ {5}fix: sudo chown ${user}:\\S+ ${exposed} && sudo chmod 0600 ${exposed}$`,
        'm',
      ),
    );
    assert.match(run.stdout, /^FAIL clock: .*not synchronized with NTP/m);
    assertNoSecret(run);
  });

  // print-protocol v1.1 §8: the catch-up transport, its CA file and signed answers.
  describe('catch-up', () => {
    let service: TestService;
    let lanService: TestService | null = null;
    let ca: TestCa;
    let genuine: TlsFront;
    let impostor: TlsFront;
    const lan = nonLoopbackAddress();

    before(async () => {
      service = await startService();
      if (lan) lanService = await startService({ host: lan });
      ca = TestCa.create('doctor');
      const port = Number(new URL(service.url).port);
      genuine = await TlsFront.start(ca.issue({ name: 'service', ...LOCAL_NAMES }), port);
      const other = TestCa.create('doctor-other').issue({ name: 'other', ...LOCAL_NAMES });
      impostor = await TlsFront.start(other, port);
    });
    after(async () => {
      await genuine?.close();
      await impostor?.close();
      await service?.close();
      await lanService?.close();
    });

    /** Only the catch-up lines of a doctor run, as printed (fix lines included). */
    async function catchUpLines(catchUp: Record<string, unknown>, serviceKey = true) {
      const config = writeConfig('catch-up.json', (c) => {
        c.catchUp = { enabled: true, ...catchUp } as TestConfig['catchUp'];
        (c.keys as Record<string, string>).storePrivateKeyFile = STORE_PRIVATE_KEY_FILE;
        if (serviceKey) c.keys.servicePublicKeyFile = SERVICE_PUBLIC_KEY_FILE;
      });
      const run = await doctor(['--config', config], 'yes', bin);
      assertNoSecret(run);
      const out = run.stdout.split('\n');
      const lines: string[] = [];
      out.forEach((line, i) => {
        if (!/^(ok|warn|FAIL) +catch-up: /.test(line)) return;
        lines.push(line);
        if (out[i + 1]?.startsWith('     fix: ')) lines.push(out[i + 1]!);
      });
      return { run, lines, text: lines.join('\n') };
    }

    it('https with the CA file pinned and signed answers: every line ok', async () => {
      const baseUrl = `https://localhost:${genuine.port}`;
      const { lines } = await catchUpLines({ baseUrl, caFile: ca.certFile });
      assert.equal(lines.length, 3, lines.join('\n'));
      assert.equal(
        lines[0],
        `ok   catch-up: ${baseUrl}: https, certificate verified against catchUp.caFile`,
      );
      assert.match(
        lines[1]!,
        /^ok {3}catch-up: catchUp\.caFile: .*ca\.crt \(CN=doctor test CA; valid until /,
      );
      assert.match(
        lines[2]!,
        /^ok {3}catch-up: .*: reachable; answers are signed \(X-Signature verifies/,
      );
    });

    it('a certificate from another CA: FAIL naming TLS and catchUp.caFile', async () => {
      const { run, text } = await catchUpLines({
        baseUrl: `https://localhost:${impostor.port}`,
        caFile: ca.certFile,
      });
      assert.equal(run.code, 1);
      assert.match(text, /^FAIL catch-up: .*TLS check failed \(unknown-ca\)/m);
      assert.match(text, /^ {5}fix: set catchUp\.caFile to the CA certificate that signed/m);
    });

    it('answers not signed, or signed with another key: FAIL with the fix', async () => {
      service.signature = () => undefined;
      try {
        const { run, text } = await catchUpLines({ baseUrl: service.url });
        assert.equal(run.code, 1);
        assert.match(
          text,
          /^ok {3}catch-up: http:\/\/127\.0\.0\.1:\d+: plain http to this machine/m,
        );
        assert.match(
          text,
          /^FAIL catch-up: .*carries no X-Signature: catch-up refuses every answer/m,
        );
        assert.match(text, /^ {5}fix: run an order service that signs its answers/m);
      } finally {
        service.signature = null;
      }
      // The config's service key is not this service's: its signatures do not verify.
      const { text } = await catchUpLines({ baseUrl: service.url }, false);
      assert.match(
        text,
        /^FAIL catch-up: .*X-Signature does not verify with keys\.servicePublicKeyFile/m,
      );
    });

    it('answers signed version 1 only (an older service): FAIL, or warn with allowV1Signatures', async () => {
      service.v1Only = true;
      try {
        const refused = await catchUpLines({ baseUrl: service.url });
        assert.equal(refused.run.code, 1);
        assert.match(
          refused.text,
          /^FAIL catch-up: .*answers are signed version 1 \(the body alone, not bound to the request\): catch-up refuses every answer/m,
        );
        assert.match(refused.text, /^ {5}fix: upgrade the order service to sign v2/m);
        const allowed = await catchUpLines({ baseUrl: service.url, allowV1Signatures: true });
        assert.match(allowed.text, /^warn catch-up: catchUp\.allowV1Signatures is true/m);
        assert.match(
          allowed.text,
          /^warn catch-up: .*reachable; answers are signed version 1 \(X-Signature verifies over the body alone/m,
        );
        assert.doesNotMatch(allowed.text, /^FAIL/m);
      } finally {
        service.v1Only = false;
      }
    });

    it('http to a host other than loopback: FAIL config saying why and how to fix it', async () => {
      const { run } = await catchUpLines({ baseUrl: 'http://192.0.2.10:8080' });
      assert.equal(run.code, 1);
      assert.match(
        run.stdout,
        /^FAIL config: .*catchUp\.baseUrl: must be https:\/\/ for a host other than loopback .*catchUp\.allowInsecureHttp to true/m,
      );
    });

    it('the lab switch: a loud warning, and the answers still checked', {
      skip: lan === null,
    }, async () => {
      const baseUrl = `http://${lan}:${new URL(lanService!.url).port}`;
      const { text } = await catchUpLines({ baseUrl, allowInsecureHttp: true });
      assert.match(text, /^warn catch-up: .*allowInsecureHttp is true: catch-up talks plain http/m);
      assert.match(text, /^ {5}fix: serve the order service over https:\/\//m);
      assert.match(text, /^ok {3}catch-up: .*: reachable; answers are signed/m);
    });
  });

  it('missing config file: FAIL config, exit 1', async () => {
    const run = await doctor(['--config', join(dir, 'absent.json')], 'yes', bin);
    assert.equal(run.code, 1);
    assert.match(run.stdout, /^FAIL config: .*absent\.json: no such file/m);
    assert.match(run.stdout, /^ {5}fix: /m);
  });
});
