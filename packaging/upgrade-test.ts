/**
 * The upgrade test (issue 43): a store on the previous release upgrades through apt, unattended,
 * with receipts still waiting for paper, as a chain's stores do.
 *
 * 1. A signed apt repository (release.ts, a throw-away gpg key) holds the previous release
 *    (built from its commit: old-release.ts) and this version; a fresh Debian trixie root
 *    (test-root.ts) gets it as a `file://` source with `Signed-By`, and installs the previous one.
 * 2. The store's config in that version's format (no `version`: config version 1); the agent,
 *    run as the unit runs it, takes signed instructions from this machine's Mosquitto while its
 *    printer (this machine's emulator) is out of paper: the jobs wait in its database.
 * 3. `apt-get upgrade` with debconf noninteractive and no dpkg conffile option: no prompt; the
 *    old prerm stops the unit once and the new postinst migrates the config (owner and mode kept,
 *    the original beside it) and restarts it once; the new agent migrates the job database.
 * 4. Paper loaded: every waiting receipt prints exactly once, with no duplicate mark.
 * 5. A downgrade to the previous release is refused by its agent with a clear message: the
 *    config (it does not know `version`) and, with the kept original, the database (newer).
 *
 * No systemd runs in these containers (systemd-nspawn cannot boot here: no system bus), so
 * /usr/bin/systemctl is diverted to systemctl-stand-in.sh, which runs the agent as the unit would
 * and logs every call; the counts of stops and restarts come from that log.
 *
 * Usage (as root): `tsx packaging/upgrade-test.ts NEW.deb [OLD_VERSION]` (default: the newest
 * entry of releases.json); amd64, where it runs natively.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import mqtt from 'mqtt';
import { signedOrder } from '../harness/instructions.js';
import { freePort, Mosquitto } from '../harness/mosquitto.js';
import { waitFor } from '../harness/waiting.js';
import { listenTcp, renderText, VirtualPrinter } from '../src/emulator/index.js';
import { topics } from '../src/protocol/print-protocol.js';
import { generateKeyPair } from '../src/protocol/signing.js';
import { deriveStoreId } from '../src/protocol/store-id.js';
import { formatTimestamp } from '../src/protocol/time.js';
import { oldRelease, RELEASES } from './old-release.js';
import { release } from './release.js';
import { freshRoot, sh } from './test-root.js';

const [newDeb, oldVersionArg] = process.argv.slice(2);
if (!newDeb || !existsSync(newDeb)) {
  console.error('usage: tsx packaging/upgrade-test.ts NEW.deb [OLD_VERSION]');
  process.exit(2);
}
const newVersion = sh('dpkg-deb', ['--field', newDeb, 'Version']).trim();
const arch = sh('dpkg-deb', ['--field', newDeb, 'Architecture']).trim();
const oldVersion = oldVersionArg ?? Object.keys(RELEASES).sort((a, b) => (a < b ? 1 : -1))[0]!;
assert.notEqual(oldVersion, newVersion, 'the upgrade needs an earlier release');
const started = Date.now();
const seconds = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
const log = (text: string) => console.log(`upgrade-test: ${text} (${seconds()})`);

const oldDeb = oldRelease(oldVersion, arch);
log(`${basename(oldDeb)} -> ${basename(newDeb)}`);

// 1. The signed repository, with a key made for this run only.
const work = mkdtempSync(join(tmpdir(), 'printer-agent-upgrade-'));
const gnupg = join(work, 'gnupg');
execFileSync('install', ['-d', '-m', '0700', gnupg]);
const gpgEnv = { ...process.env, GNUPGHOME: gnupg };
execFileSync(
  'gpg',
  [
    '--batch',
    '--passphrase',
    '',
    '--quick-gen-key',
    'printer-agent test archive <archive@test.invalid>',
    'ed25519',
    'sign',
    'never',
  ],
  { env: gpgEnv, stdio: 'ignore' },
);
const key = /^fpr:+([0-9A-F]+):/m.exec(
  execFileSync('gpg', ['--batch', '--with-colons', '--list-keys'], {
    env: gpgEnv,
    encoding: 'utf8',
  }),
)![1]!;
const repo = join(work, 'repo');
release({ out: repo, arches: [], debs: [oldDeb, newDeb], key, env: gpgEnv });

const { root, inRoot, shell, remove } = freshRoot(arch);
const broker = await Mosquitto.start();
const printer = new VirtualPrinter();
const endpoint = await listenTcp(printer, { port: 0 });
const client = mqtt.connect(broker.url, { protocolVersion: 5 });
try {
  cpSync(repo, join(root, 'srv/printer-agent-repo'), { recursive: true });
  cpSync(
    join(repo, 'printer-agent-archive-keyring.gpg'),
    join(root, 'usr/share/keyrings/printer-agent-archive-keyring.gpg'),
  );
  writeFileSync(
    join(root, 'etc/apt/sources.list.d/printer-agent.sources'),
    [
      'Types: deb',
      'URIs: file:///srv/printer-agent-repo',
      'Suites: stable',
      'Components: main',
      'Signed-By: /usr/share/keyrings/printer-agent-archive-keyring.gpg',
      '',
    ].join('\n'),
  );
  // Only our source: the root's Debian mirror is not needed (nodejs is installed) nor reachable.
  rmSync(join(root, 'etc/apt/sources.list'), { force: true });
  rmSync(join(root, 'etc/apt/sources.list.d/debian.sources'), { force: true });
  const update = await shell('apt-get update');
  assert.equal(update.code, 0, update.output);
  assert.doesNotMatch(update.output, /NO_PUBKEY|not signed|BADSIG|insecure/i, update.output);
  const policy = inRoot(['apt-cache', 'policy', 'printer-agent']);
  assert.match(policy, new RegExp(`Candidate: ${newVersion.replaceAll('.', '\\.')}`), policy);
  assert.match(policy, new RegExp(`${oldVersion.replaceAll('.', '\\.')} 500`), policy);

  // The stand-in for systemd (see above), and the marker that makes the scripts use it.
  inRoot(['dpkg-divert', '--local', '--rename', '--add', '/usr/bin/systemctl']);
  cpSync('packaging/systemctl-stand-in.sh', join(root, 'usr/bin/systemctl'));
  execFileSync('chmod', ['0755', join(root, 'usr/bin/systemctl')]);
  execFileSync('mkdir', ['-p', join(root, 'run/systemd/system')]);
  const systemctlCalls = () =>
    existsSync(join(root, 'run/systemctl.log'))
      ? readFileSync(join(root, 'run/systemctl.log'), 'utf8').trim().split('\n').filter(Boolean)
      : [];
  const agentLog = () =>
    existsSync(join(root, 'run/printer-agent.log'))
      ? readFileSync(join(root, 'run/printer-agent.log'), 'utf8')
      : '';

  const installOld = await shell(
    `apt-get install -y --no-install-recommends printer-agent=${oldVersion}`,
  );
  assert.equal(installOld.code, 0, installOld.output);
  assert.equal(inRoot(['printer-agent', '--version']).trim(), oldVersion);
  log(`installed ${oldVersion} from the signed repository`);

  // 2. The store's config as the old version writes it (config version 1: no `version`).
  const service = generateKeyPair();
  const appId = 'A-upgrade';
  const storeKey = 'sk-upgrade-test-secret-9071';
  const storeId = deriveStoreId(appId, storeKey);
  writeFileSync(join(root, 'etc/printer-agent/service-public.pem'), service.publicPem, {
    mode: 0o644,
  });
  writeFileSync(join(root, 'etc/printer-agent/store-key'), `${storeKey}\n`, { mode: 0o600 });
  inRoot(['chown', 'printer-agent:printer-agent', '/etc/printer-agent/store-key']);
  const config = {
    appId,
    storeKeyFile: '/etc/printer-agent/store-key',
    mqtt: { url: broker.url },
    keys: { servicePublicKeyFile: '/etc/printer-agent/service-public.pem' },
    printers: [{ id: 'receipt', url: endpoint.address, profile: 'generic-80mm' }],
    console: { port: await freePort() },
    catchUp: { enabled: false },
    // No clock service in a chroot: the instructions' times are trusted as they are.
    freshness: { clock: 'synchronized' },
  };
  writeFileSync(
    join(root, 'etc/printer-agent/config.json'),
    `${JSON.stringify(config, null, 2)}\n`,
  );
  const configMode = () => {
    const s = statSync(join(root, 'etc/printer-agent/config.json'));
    return `${(s.mode & 0o777).toString(8)} ${s.uid}:${s.gid}`;
  };
  const modeBefore = configMode();
  assert.equal(modeBefore, `640 0:${Number(inRoot(['id', '-g', 'printer-agent']).trim())}`);
  assert.match(inRoot(['printer-agent', 'config', 'check']), /^config OK/);

  const t = topics('printer-agent/v1', storeId);
  const status: Array<{ online?: boolean; agent?: { version?: string } }> = [];
  const events: Array<{ orderNo?: string; state?: string }> = [];
  client.on('message', (topic, payload) => {
    const message = JSON.parse(payload.toString()) as Record<string, unknown>;
    if (topic === t.status) status.push(message);
    else events.push(message);
  });
  await client.subscribeAsync([t.status, t.job], { qos: 1 });
  const online = (version: string) =>
    waitFor(
      `the agent ${version} online`,
      () => status.some((s) => s.online === true && s.agent?.version === version),
      30_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${agentLog().slice(-3000)}`);
    });

  printer.setFault('paper-out', true);
  inRoot(['systemctl', 'start', 'printer-agent.service']);
  await online(oldVersion);
  const day = formatTimestamp(new Date()).slice(0, 10).replaceAll('-', '');
  const orders = [1, 2, 3].map((n) => `O${day}77000${n}`);
  for (const orderNo of orders) {
    const body = signedOrder({
      appId,
      storeKey,
      privatePem: service.privatePem,
      storeId,
      orderNo,
      productName: 'Noodles before the upgrade',
    });
    await client.publishAsync(t.print, body, { qos: 1 });
  }
  // Stored (queued); the spooler does not send to a printer that reports no paper.
  await waitFor(
    'every receipt stored',
    () => orders.every((o) => events.some((e) => e.orderNo === o && e.state === 'queued')),
    30_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n${JSON.stringify(events)}\n${agentLog().slice(-3000)}`);
  });
  assert.equal(printer.tickets().length, 0, 'nothing printed without paper');
  log(`${orders.length} receipts wait for paper under ${oldVersion}`);

  // 3. The unattended upgrade.
  const callsBefore = systemctlCalls().length;
  const upgrade = await shell('apt-get upgrade -y');
  assert.equal(upgrade.code, 0, upgrade.output);
  assert.match(
    upgrade.output,
    new RegExp(`Setting up printer-agent \\(${newVersion.replaceAll('.', '\\.')}\\)`),
  );
  assert.doesNotMatch(
    upgrade.output,
    /Configuration file .*config\.json|conffile prompt|\*\*\* config\.json/,
    upgrade.output,
  );
  assert.equal(inRoot(['printer-agent', '--version']).trim(), newVersion);
  const calls = systemctlCalls().slice(callsBefore);
  const of = (verb: RegExp) => calls.filter((c) => verb.test(c) && /printer-agent/.test(c));
  assert.equal(of(/^stop\b/).length, 1, `one stop by the old prerm: ${calls.join(' | ')}`);
  assert.equal(
    of(/^(restart|start)\b/).length,
    1,
    `one restart by the new postinst: ${calls.join(' | ')}`,
  );
  log(`apt-get upgrade: no prompt, systemctl ${calls.join(', ')}`);

  const migrated = JSON.parse(
    readFileSync(join(root, 'etc/printer-agent/config.json'), 'utf8'),
  ) as {
    version?: number;
    printers: unknown;
  };
  assert.equal(
    typeof migrated.version,
    'number',
    'the config carries its version after the upgrade',
  );
  assert.deepEqual(migrated.printers, config.printers, 'the store settings are kept');
  assert.equal(configMode(), modeBefore, 'owner and mode kept');
  const kept = inRoot(['sh', '-c', 'ls /etc/printer-agent'])
    .split('\n')
    .filter((f) => f.startsWith('config.json.'));
  assert.equal(kept.length, 1, `the original kept beside: ${kept.join(', ')}`);
  assert.deepEqual(
    JSON.parse(readFileSync(join(root, 'etc/printer-agent', kept[0]!), 'utf8')),
    config,
    'the original is the old file, untouched',
  );

  // 4. The new agent (started by postinst) prints what waited, once each.
  await online(newVersion);
  const jobs = JSON.parse(
    inRoot([
      'printer-agent',
      'jobs',
      'list',
      '--json',
      '--config',
      '/etc/printer-agent/config.json',
    ]),
  ) as Array<{ orderNo: string; state: string }>;
  assert.deepEqual(
    // Pending: queued, waiting, or the head of the queue being tried against the empty printer.
    orders.map((o) =>
      ['queued', 'waiting', 'printing'].includes(jobs.find((j) => j.orderNo === o)?.state ?? ''),
    ),
    [true, true, true],
    `the jobs survived the upgrade, unprinted: ${JSON.stringify(jobs)}`,
  );
  printer.setFault('paper-out', false);
  const printedOnce = () =>
    orders.every((o) => printer.tickets().filter((tk) => renderText(tk).includes(o)).length === 1);
  await waitFor('every waiting receipt printed', printedOnce, 30_000);
  await waitFor(
    'the printed events',
    () => orders.every((o) => events.some((e) => e.orderNo === o && e.state === 'printed')),
    30_000,
  );
  for (const ticket of printer.tickets())
    assert.doesNotMatch(renderText(ticket), /DUPLICATE|REPRINT/i, 'no mark: each printed once');
  assert.equal(printer.tickets().length, orders.length, 'nothing printed twice');
  log(`${orders.length} receipts printed once each by ${newVersion}`);

  // 5. Back to the old version: its agent refuses, saying why.
  // The old version has the config as a conffile: the person downgrading keeps theirs.
  const downgrade = await shell(
    `apt-get install -y --allow-downgrades -o Dpkg::Options::=--force-confold printer-agent=${oldVersion}`,
  );
  assert.equal(downgrade.code, 0, downgrade.output);
  assert.equal(inRoot(['printer-agent', '--version']).trim(), oldVersion);
  const runOld = (configPath: string) =>
    shell(
      `setpriv --reuid=printer-agent --regid=printer-agent --init-groups -- printer-agent run --config ${configPath}`,
    );
  const withNewConfig = await runOld('/etc/printer-agent/config.json');
  assert.notEqual(withNewConfig.code, 0);
  assert.match(withNewConfig.output, /version/, withNewConfig.output);
  const withOldConfig = await runOld(`/etc/printer-agent/${kept[0]}`);
  assert.notEqual(withOldConfig.code, 0);
  assert.match(withOldConfig.output, /newer than this agent/, withOldConfig.output);
  log(`a downgrade to ${oldVersion} is refused: ${withOldConfig.output.trim().split('\n').pop()}`);
  inRoot(['systemctl', 'stop', 'printer-agent.service']);
  log('OK');
} finally {
  try {
    execFileSync('chroot', [root, 'systemctl', 'stop', 'printer-agent.service'], {
      stdio: 'ignore',
    });
  } catch {
    // Not installed any more, or never started.
  }
  await client.endAsync();
  remove();
  // gpg started an agent for the throw-away keyring: stopped with it.
  execFileSync('gpgconf', ['--kill', 'gpg-agent'], { env: gpgEnv, stdio: 'ignore' });
  rmSync(work, { recursive: true, force: true });
  await endpoint.close();
  await broker.stop();
}
