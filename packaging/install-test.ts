/**
 * The install test (issue 15): the package installed with `apt` into a Debian trixie root made by
 * mmdebstrap, with Debian's own nodejs, the way a store's IT person installs it; then the agent
 * started there as its service user, printing a signed instruction published on this machine's
 * Mosquitto to this machine's emulator (the root shares this machine's network); then removed
 * and purged. Needs root, mmdebstrap and mosquitto; `.ci/run` runs it.
 *
 * The root is made once and cached outside the repository (`PRINTER_AGENT_TEST_ROOTS`, default
 * /var/cache/printer-agent-test); each run installs into a fresh copy of it.
 *
 * Further Node binaries (`.ci/run` passes 22, 24 and 26 from the npm registry) are then put in
 * the root's /usr/local/bin, as a Node installed from elsewhere is, and the agent prints again.
 *
 * A package for another architecture (arm64 here) is tested the same way in a root of that
 * architecture, with that architecture's Node binaries: every program in the root, from dpkg's
 * maintainer scripts to the agent, runs under Debian's qemu-user-static through binfmt_misc,
 * several times slower, so the waits are longer. mmdebstrap, not debootstrap: it resolves and
 * unpacks with the host's apt and runs only the maintainer scripts emulated (arm64 root measured
 * here: debootstrap `--foreign` + second stage 16-20 min, mmdebstrap 5-7 min; decision 154).
 *
 * Usage: `tsx packaging/install-test.ts FILE.deb [NODE ...]`
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import {
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import mqtt from 'mqtt';
import { listenTcp, renderText, VirtualPrinter } from '../src/emulator/index.js';
import { buildEnvelope } from '../src/protocol/envelope.js';
import { topics } from '../src/protocol/print-protocol.js';
import { generateKeyPair, parseKey } from '../src/protocol/signing.js';
import { deriveStoreId } from '../src/protocol/store-id.js';
import { formatTimestamp } from '../src/protocol/time.js';
import { freePort, Mosquitto } from '../test/helpers/mosquitto.js';
import { waitFor } from '../test/helpers/waiting.js';

const [deb, ...otherNodes] = process.argv.slice(2);
if (!deb || !existsSync(deb)) {
  console.error('usage: tsx packaging/install-test.ts FILE.deb [NODE ...]');
  process.exit(2);
}
if (process.getuid?.() !== 0) {
  console.error('install-test: needs root (mmdebstrap, chroot, apt)');
  process.exit(2);
}

/** systemd's PATH for services, which finds `printer-agent` and the `node` its shebang asks for. */
const ROOT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const started = Date.now();
const seconds = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
const sh = (command: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
  execFileSync(command, args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive', ...env },
  });

const hostArch = sh('dpkg', ['--print-architecture']).trim();
const arch = sh('dpkg-deb', ['--field', deb, 'Architecture']).trim();
const foreign = arch !== hostArch;
const QEMU = { arm64: 'qemu-aarch64' }[arch];
const binfmt = `/proc/sys/fs/binfmt_misc/${QEMU}`;
if (foreign && !(QEMU && existsSync(binfmt) && readFileSync(binfmt, 'utf8').startsWith('enabled')))
  throw new Error(
    `an ${arch} root needs ${QEMU ?? `qemu for ${arch}`} registered with binfmt_misc: install Debian's qemu-user-static and binfmt-support, then update-binfmts --enable ${QEMU}`,
  );
/** How long the agent may take to come online and print: emulated, every step is slower. */
const WAIT_MS = foreign ? 180_000 : 30_000;
const cache = process.env.PRINTER_AGENT_TEST_ROOTS || '/var/cache/printer-agent-test';
// What a Pi's OS has that matters here: systemd (the unit is enabled offline, as in an image
// being built), udev, nodejs from Debian, and libatomic1, which the official Node binaries need
// (a store installing Node from elsewhere installs it too). The name changes when the list does.
const INCLUDE = 'nodejs,ca-certificates,systemd,udev,libatomic1';
const base = join(cache, `trixie-${arch}-mm-${INCLUDE.split(',').length}`);
if (!existsSync(join(base, 'usr', 'bin', 'node'))) {
  console.log(`install-test: mmdebstrap trixie ${arch} into ${base} (cached for later runs)`);
  rmSync(base, { recursive: true, force: true });
  // mmdebstrap makes the root's own directory, not the ones above it.
  mkdirSync(cache, { recursive: true });
  sh('mmdebstrap', [
    '--variant=minbase',
    `--arch=${arch}`,
    `--include=${INCLUDE}`,
    'trixie',
    base,
    'http://deb.debian.org/debian',
  ]);
  console.log(`install-test: root made in ${seconds()}`);
}

const root = mkdtempSync(join(cache, `run-${arch}-`));
const mounted: string[] = [];
let agent = null as ChildProcess | null;
const broker = await Mosquitto.start();
const printer = new VirtualPrinter();
const endpoint = await listenTcp(printer, { port: 0 });
try {
  // cp -a: the root holds device nodes, which fs.cp cannot copy.
  sh('cp', ['-a', `${base}/.`, root]);
  for (const [type, dir] of [
    ['proc', 'proc'],
    ['sysfs', 'sys'],
  ] as const) {
    sh('mount', ['-t', type, type, join(root, dir)]);
    mounted.push(join(root, dir));
  }
  const inRoot = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    sh('chroot', [root, ...args], env);

  // 1. apt installs it, with the root's own nodejs (Debian's).
  cpSync(deb, join(root, 'tmp', basename(deb)));
  const node = inRoot(['node', '--version']).trim();
  // The maintainer scripts speak on stderr: read both, as a person at the terminal would.
  const install = inRoot([
    'sh',
    '-c',
    `apt-get install -y --no-install-recommends /tmp/${basename(deb)} 2>&1`,
  ]);
  console.log(`install-test: installed with Debian's node ${node} in ${seconds()}`);
  assert.match(install, /Setting up printer-agent/);
  assert.equal(
    inRoot(['printer-agent', '--version']).trim(),
    JSON.parse(readFileSync('package.json', 'utf8')).version,
  );
  const account = inRoot(['id', 'printer-agent']);
  assert.match(account, /groups=.*\(printer-agent\)/);
  assert.match(account, /\(lp\)/);
  assert.match(account, /\(dialout\)/);
  const mode = (path: string) => {
    const s = statSync(join(root, path));
    return `${(s.mode & 0o777).toString(8)} ${s.uid}:${s.gid}`;
  };
  const uid = Number(inRoot(['id', '-u', 'printer-agent']).trim());
  const gid = Number(inRoot(['id', '-g', 'printer-agent']).trim());
  assert.equal(mode('var/lib/printer-agent'), `700 ${uid}:${gid}`);
  assert.equal(mode('etc/printer-agent'), `750 0:${gid}`);
  assert.equal(mode('etc/printer-agent/config.json'), `640 0:${gid}`);
  // The status page's certificate and token, made at install: the key and token the service
  // user's alone; the certificate names this host and loopback.
  assert.equal(mode('etc/printer-agent/console-key.pem'), `600 ${uid}:${gid}`);
  assert.equal(mode('etc/printer-agent/console-token'), `600 ${uid}:${gid}`);
  assert.equal(mode('etc/printer-agent/console-cert.pem'), '644 0:0');
  assert.match(
    readFileSync(join(root, 'etc/printer-agent/console-token'), 'utf8'),
    /^[0-9a-f]{48}\n$/,
  );
  const consoleCert = new X509Certificate(
    readFileSync(join(root, 'etc/printer-agent/console-cert.pem')),
  );
  assert.match(consoleCert.subjectAltName ?? '', /IP Address:127\.0\.0\.1/);
  assert.ok(new Date(consoleCert.validTo).getFullYear() >= 2100, consoleCert.validTo);
  // The link points into the root (an absolute path there), so it is read, not followed.
  assert.equal(
    readlinkSync(join(root, 'etc/systemd/system/multi-user.target.wants/printer-agent.service')),
    '/usr/lib/systemd/system/printer-agent.service',
    'the unit is enabled',
  );
  // The example config is not valid yet: installed, enabled, not started, and the person told.
  assert.match(
    install,
    /installed and enabled, not started: edit \/etc\/printer-agent\/config\.json/,
  );

  // 2. The store's config, written as root; the secrets the service user's alone.
  const service = generateKeyPair();
  const appId = 'A-install';
  const storeKey = 'sk-install-test-secret-4412';
  const storeId = deriveStoreId(appId, storeKey);
  writeFileSync(join(root, 'etc/printer-agent/service-public.pem'), service.publicPem, {
    mode: 0o644,
  });
  writeFileSync(join(root, 'etc/printer-agent/store-key'), `${storeKey}\n`, { mode: 0o600 });
  chownSync(join(root, 'etc/printer-agent/store-key'), uid, gid);
  const consolePort = await freePort();
  const configText = `${JSON.stringify(
    {
      appId,
      storeKeyFile: '/etc/printer-agent/store-key',
      mqtt: { url: broker.url },
      keys: { servicePublicKeyFile: '/etc/printer-agent/service-public.pem' },
      printers: [{ id: 'receipt', url: endpoint.address, profile: 'generic-80mm' }],
      // On the LAN with the files made at install, as README "Asking the running agent" says.
      console: {
        host: '0.0.0.0',
        port: consolePort,
        certFile: '/etc/printer-agent/console-cert.pem',
        keyFile: '/etc/printer-agent/console-key.pem',
        tokenFile: '/etc/printer-agent/console-token',
      },
      catchUp: { enabled: false },
      freshness: { clock: 'synchronized' },
    },
    null,
    2,
  )}\n`;
  writeFileSync(join(root, 'etc/printer-agent/config.json'), configText);
  assert.match(
    inRoot(['printer-agent', 'config', 'check']),
    /^config OK: \/etc\/printer-agent\/config\.json/,
  );

  // 3. The agent as its service user, as the unit runs it; a signed instruction prints: with
  // Debian's node, then with each further Node binary put first on the root's PATH
  // (/usr/local/bin, where a Node from elsewhere goes), the same package untouched.
  const client = mqtt.connect(broker.url, { protocolVersion: 5 });
  const t = topics('printer-agent/v1', storeId);
  const status: string[] = [];
  const events: string[] = [];
  client.on('message', (topic, payload) => {
    if (topic === t.status) status.push(payload.toString());
    else events.push(payload.toString());
  });
  await client.subscribeAsync([t.status, t.job]);
  const printWith = async (round: number, nodeLabel: string) => {
    status.length = 0;
    events.length = 0;
    let output = '';
    agent = spawn(
      'chroot',
      [
        root,
        // As the unit runs it: the service user with its groups (lp, dialout), the agent exec'd
        // in place (so SIGTERM reaches it, as systemd's stop does, and its exit code comes back).
        'setpriv',
        '--reuid=printer-agent',
        '--regid=printer-agent',
        '--init-groups',
        '--',
        'printer-agent',
        'run',
        '--config',
        '/etc/printer-agent/config.json',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PATH: ROOT_PATH } },
    );
    agent.stdout!.on('data', (d: Buffer) => (output += d));
    agent.stderr!.on('data', (d: Buffer) => (output += d));
    const withOutput = (error: Error) => {
      throw new Error(`${nodeLabel}: ${error.message}\n${output.slice(-3000)}`);
    };
    await waitFor(
      'the agent online',
      () => status.some((s) => s.includes('"online"')),
      WAIT_MS,
    ).catch(withOutput);
    const orderNo = `O2026112699000${round}`;
    const body = buildEnvelope({
      appId,
      storeKey,
      key: parseKey(service.privatePem, 'private'),
      param: {
        storeId,
        jobId: `job-${orderNo}`,
        orderNo,
        createTime: formatTimestamp(new Date()),
        order: {
          productInfo: [{ productName: 'Installed noodles', price: 1200, quantity: 1 }],
          orderType: 1,
          paymentWay: 2,
          paymentTransactionId: `M-${orderNo}`,
        },
      },
    });
    await client.publishAsync(t.print, JSON.stringify(body), { qos: 1 });
    const onPaper = () => printer.tickets().some((ticket) => renderText(ticket).includes(orderNo));
    await waitFor('the receipt on paper', onPaper, WAIT_MS).catch(withOutput);
    await waitFor('the printed event', () => events.some((e) => e.includes('"printed"')), WAIT_MS);
    console.log(
      `install-test: ${orderNo} printed by the installed agent on ${nodeLabel} in ${seconds()}`,
    );
    // The command asks the running agent over HTTPS with the token and certificate of the install.
    // Its printer may not have been checked yet under emulation (unknown: exit 3); the agent
    // answered, which is what this checks.
    const asked = inRoot([
      'sh',
      '-c',
      'printer-agent status --config /etc/printer-agent/config.json; echo "exit $?"',
    ]);
    assert.match(asked, /^agent .*: broker connected$/m, asked);
    assert.match(asked, /^printer receipt: (ready|unknown) /m, asked);
    assert.match(asked, /^exit [03]$/m, asked);
    agent.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => agent!.once('exit', resolve));
    agent = null;
    assert.equal(code, 0, `${nodeLabel}: exit ${code}\n${output.slice(-2000)}`);
  };
  await printWith(1, `Debian's node ${node} (${arch})`);
  for (const [index, binary] of otherNodes.entries()) {
    cpSync(binary, join(root, 'usr/local/bin/node'));
    const version = inRoot(['/usr/local/bin/node', '--version']).trim();
    assert.equal(
      inRoot(['sh', '-c', 'command -v node'], { PATH: ROOT_PATH }).trim(),
      '/usr/local/bin/node',
    );
    await printWith(index + 2, `node ${version} from /usr/local/bin`);
  }
  await client.endAsync();

  // 4. Removed, then purged: the config goes, the job database stays unless asked.
  inRoot(['apt-get', 'remove', '-y', 'printer-agent']);
  assert.ok(!existsSync(join(root, 'usr/bin/printer-agent')));
  assert.ok(existsSync(join(root, 'etc/printer-agent/config.json')), 'remove keeps the config');
  const purge = inRoot(['sh', '-c', 'apt-get purge -y printer-agent 2>&1']);
  assert.ok(!existsSync(join(root, 'etc/printer-agent')), 'purge removes the config');
  assert.ok(
    existsSync(join(root, 'var/lib/printer-agent/jobs.db')),
    'purge keeps the job database',
  );
  assert.match(
    purge,
    /kept \/var\/lib\/printer-agent \(the job database\); PRINTER_AGENT_PURGE_STATE=yes removes it/,
  );
  console.log(`install-test: OK in ${seconds()}`);
} finally {
  agent?.kill('SIGKILL');
  for (const path of mounted.reverse()) sh('umount', ['-l', path]);
  rmSync(root, { recursive: true, force: true });
  await endpoint.close();
  await broker.stop();
}
