/**
 * The service as a program (`printer-agent order-service --config FILE`), driven by an HTTP
 * client that shares nothing with our code: `curl` from the shell, signing with `openssl dgst`,
 * keys made by `openssl genpkey`. This is what a brand party's integrator would do.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { cliEntry } from '../../harness/child-entry.js';
import { waitFor } from '../../harness/waiting.js';
import { ROOT, runCliInProcess } from '../helpers/cli.js';

const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const SKIP = !has('curl')
  ? 'needs curl (Debian package curl)'
  : !has('openssl')
    ? 'needs openssl (Debian package openssl)'
    : false;

/** Creates an order with curl and lists it; every step is plain shell. */
const CLIENT_SCRIPT = String.raw`
set -eu
sign() { printf '%s' "$1" | openssl dgst -sha256 -sign "$KEY" | base64 | tr -d '\n'; }
call() {
  param=$2
  body="{\"appId\":\"A1\",\"storeKey\":\"K-secret-1\",\"param\":\"$(printf '%s' "$param" | sed 's/"/\\"/g')\",\"sign\":\"$(sign "$param")\"}"
  curl -sS -X POST -H 'Content-Type: application/json' --data-binary "$body" "$URL/open-api/order/$1"
  echo
}
call create '{"productInfo":[{"productName":"Pho bo","price":8500,"quantity":2}],"orderType":2,"paymentWay":2,"paymentTransactionId":"POS-1"}'
call list "{\"startTime\":\"$(date -u -d '-1 hour' '+%Y-%m-%d %H:%M:%S')\",\"endTime\":\"$(date -u -d '+1 hour' '+%Y-%m-%d %H:%M:%S')\"}"
`;

describe('order-service program with curl and openssl', { skip: SKIP }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'order-service-cli-'));
  let child: ChildProcess | undefined;
  let url = '';

  before(async () => {
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir });
    openssl(
      'genpkey',
      '-algorithm',
      'RSA',
      '-pkeyopt',
      'rsa_keygen_bits:2048',
      '-out',
      'client.key',
    );
    openssl('pkey', '-in', 'client.key', '-pubout', '-out', 'client.pub');
    openssl(
      'genpkey',
      '-algorithm',
      'RSA',
      '-pkeyopt',
      'rsa_keygen_bits:2048',
      '-out',
      'service.key',
    );
    writeFileSync(
      join(dir, 'service.json'),
      JSON.stringify({
        apps: [
          {
            appId: 'A1',
            publicKeyFile: 'client.pub',
            stores: [{ storeKey: 'K-secret-1', restaurantNo: 'R1', branchIdentifier: 'B1' }],
          },
        ],
        servicePrivateKeyFile: 'service.key',
        timeZone: 'UTC',
        listen: { host: '127.0.0.1', port: 0 },
      }),
    );
    child = spawn(
      process.execPath,
      [...cliEntry(), 'order-service', '--config', join(dir, 'service.json')],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const lines = createInterface({ input: child.stdout! });
    const logs: string[] = [];
    url = await new Promise<string>((resolve, reject) => {
      child!.once('exit', (code) =>
        reject(new Error(`service exited ${code}: ${logs.join('\n')}`)),
      );
      lines.on('line', (line) => {
        logs.push(line);
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'order service listening' && entry.url) resolve(entry.url);
      });
    });
    (child as ChildProcess & { logs?: string[] }).logs = logs;
  });

  after(() => {
    child?.kill('SIGTERM');
  });

  it('creates an order and lists it', () => {
    const out = execFileSync('sh', ['-c', CLIENT_SCRIPT], {
      env: { ...process.env, URL: url, KEY: join(dir, 'client.key') },
      encoding: 'utf8',
    });
    const [created, listed] = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(created.code, 10000, JSON.stringify(created));
    assert.match(created.data.orderNo, /^O\d{14}$/);
    assert.equal(created.data.pickUpNo, 'A001');
    assert.equal(listed.code, 10000, JSON.stringify(listed));
    assert.equal(listed.data.total, 1);
    assert.equal(listed.data.list[0].orderInnerNo, created.data.orderNo);
    assert.equal(listed.data.list[0].skuList[0].productName, 'Pho bo');
    assert.equal(listed.data.list[0].totalAmount, 17_000);
  });

  it('logs every request without the store key', async () => {
    const logs = (child as ChildProcess & { logs?: string[] }).logs!;
    // pino writes asynchronously: wait for the lines rather than read them at once.
    await waitFor('the query log line', () => logs.some((l) => l.includes('"orders queried"')));
    await waitFor(
      'two request logs',
      () => logs.filter((l) => l.includes('"request completed"')).length >= 2,
    );
    const text = logs.join('\n');
    assert.match(text, /"service":"order-service"/);
    assert.match(text, /"msg":"request completed"/);
    assert.ok(!text.includes('K-secret-1'), 'the storeKey never appears in a log line');
  });

  it('stops on SIGTERM with exit code 0', async () => {
    const exited = new Promise<number | null>((resolve) => child!.once('exit', resolve));
    child!.kill('SIGTERM');
    assert.equal(await exited, 0);
  });
});

describe('order-service command line', () => {
  it('reports config problems as path: message and exits 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'order-service-bad-'));
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ apps: [], listen: { port: 70000 } }));
    const res = await runCliInProcess(['order-service', '--config', file]);
    assert.equal(res.status, 1);
    assert.match(res.stderr, /^CONFIG_INVALID: /);
    assert.match(res.stderr, /apps: must list at least one app/);
    assert.match(res.stderr, /listen\.port: must be 0 to 65535/);
  });

  it('requires --config and rejects a bad --port as usage errors', async () => {
    assert.equal((await runCliInProcess(['order-service'])).status, 2);
    const port = await runCliInProcess(['order-service', '--config', 'x.json', '--port', 'abc']);
    assert.equal(port.status, 2);
  });

  it('names a missing config file', async () => {
    const res = await runCliInProcess(['order-service', '--config', '/nonexistent/service.json']);
    assert.equal(res.status, 1);
    assert.match(
      res.stderr,
      /CONFIG_MISSING: \/nonexistent\/service\.json: cannot read \(ENOENT\)/,
    );
  });
});
