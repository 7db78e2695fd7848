/**
 * Issue 42 item 13 in the running agent, end to end as test/agent/logo.test.ts: a real Mosquitto,
 * the emulator on TCP, the agent in this process with a font set of DejaVu alone (what a Pi with
 * only fonts-dejavu-core draws with), two orders with a CJK dish. Each receipt prints the name as
 * `?` (no image of empty boxes) and the job keeps the warning; the journal says it once,
 * as a warning with FONT_MISSING and the packages; the retained status and `printer-agent status`
 * carry it as a warning, not a fault. Every line the agent logged names its room (item 10).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { renderText } from '../../src/emulator/index.js';
import { buildEnvelope } from '../../src/protocol/envelope.js';
import { generateKeyPair, parseKey } from '../../src/protocol/signing.js';
import { deriveStoreId } from '../../src/protocol/store-id.js';
import { formatTimestamp } from '../../src/protocol/time.js';
import { LineRasterizer } from '../../src/receipt/raster-text.js';
import { type AgentRig, startAgentRig } from '../helpers/agent-rig.js';
import { runCliInProcess } from '../helpers/cli.js';

const APP_ID = 'A-fonts';
const STORE_KEY = 'sk-fonts-secret-5120-do-not-leak';
const STORE_ID = deriveStoreId(APP_ID, STORE_KEY);
const pair = generateKeyPair();
const serviceKey = parseKey(pair.privatePem, 'private');
const DEJAVU = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';

const skip =
  skipWithoutMosquitto() ||
  (existsSync(DEJAVU) ? false : 'needs DejaVu Sans (Debian package fonts-dejavu-core)');

describe('agent whose raster fonts lack CJK', { skip }, () => {
  let rig: AgentRig;

  const publish = (n: number) =>
    rig.publish(
      rig.t.print,
      buildEnvelope({
        appId: APP_ID,
        storeKey: STORE_KEY,
        param: {
          storeId: STORE_ID,
          jobId: `P-FONTS-${n}`,
          orderNo: `O-FONTS-${n}`,
          createTime: formatTimestamp(new Date()),
          order: {
            productInfo: [
              { productName: '宫保鸡丁', price: 18500, quantity: 1 },
              { productName: `Adobo plate ${n}`, price: 9500, quantity: 1 },
            ],
            orderType: 2,
            paymentWay: 2,
            paymentTransactionId: `M-FONTS-${n}`,
          },
        },
        key: serviceKey,
      }),
    );
  const printed = (n: number) =>
    waitFor(`receipt ${n} printed`, () => rig.statesOf(`P-FONTS-${n}`).includes('printed'));
  const records = () => rig.logLines.map((l) => JSON.parse(l) as Record<string, unknown>);

  before(async () => {
    rig = await startAgentRig({
      appId: APP_ID,
      storeKey: STORE_KEY,
      header: 'Fonts Store',
      servicePublicPem: pair.publicPem,
      receipt: {
        rasterizer: LineRasterizer.fromSystem([{ family: 'DejaVu Sans', files: [DEJAVU] }]),
      },
      console: true,
      logLevel: 'info',
    });
    await publish(1);
    await printed(1);
    await publish(2);
    await printed(2);
  });

  after(async () => rig?.stop());

  it('prints the CJK name as ? with the job warning, and no image of empty boxes', () => {
    assert.equal(rig.emulator.paper.tickets.length, 2);
    for (const ticket of rig.emulator.paper.tickets) {
      assert.match(renderText(ticket), /^\?\?\?\?$/m);
      assert.equal(ticket.images.length, 0, 'no raster line drawn');
    }
    // The job keeps what its render found (`jobs show`, the status page).
    const job = rig.agent.store.getByJobId('P-FONTS-1');
    assert.ok(
      job?.warnings.some((w) => w.includes("replaced by '?'") && w.includes('U+5BAB')),
      JSON.stringify(job?.warnings),
    );
  });

  it('logs it once, as a FONT_MISSING warning naming the packages', () => {
    const lines = records().filter((r) => r.code === 'FONT_MISSING');
    assert.equal(lines.length, 1, JSON.stringify(lines));
    assert.equal(lines[0]!.level, 40);
    assert.equal(lines[0]!.room, 'receipt');
    assert.match(String(lines[0]!.msg), /U\+5BAB \(宫\).*print as '\?'.*fonts-unifont/);
  });

  it('shows it in the retained status and in `printer-agent status`, as a warning', async () => {
    await waitFor('the status with the warning', () => {
      const s = rig.status();
      return Boolean(s?.online && s.warnings?.some((w) => w.code === 'FONT_MISSING'));
    });
    const status = rig.status();
    assert.ok(status?.online);
    assert.equal(status.fault ?? null, null, 'printing works: no fault');
    const run = await runCliInProcess(['status', '--config', rig.configPath]);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^WARNING FONT_MISSING: no installed font has U\+5BAB/m);
  });

  it('every line it logged names its room (issue 42 item 10)', () => {
    const all = records();
    assert.ok(all.some((r) => r.msg === 'agent started'));
    assert.deepEqual(
      all.filter((r) => typeof r.room !== 'string').map((r) => r.msg),
      [],
    );
  });
});
