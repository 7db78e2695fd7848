/**
 * The store's logo in the running agent (issue 18), end to end as test/agent/agent-e2e.test.ts:
 * a real Mosquitto, the emulator on TCP, the agent in this process, one signed instruction.
 *
 * - A logo that cannot be used (a missing file, a file that is not an image) does not stop the
 *   agent: the receipt prints without an image, the retained status carries the problem as a
 *   warning (LOGO_UNREADABLE naming the path and why), not as a fault, and the log has it once,
 *   as a warning naming the path.
 * - A good logo prints first on the receipt, converted once at start for the printer's width.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeLogoPng } from '../../harness/logo.js';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { renderText, type Ticket } from '../../src/emulator/index.js';
import { buildEnvelope } from '../../src/protocol/envelope.js';
import { generateKeyPair, parseKey } from '../../src/protocol/signing.js';
import { formatTimestamp } from '../../src/protocol/time.js';
import type { LogoSettings } from '../../src/receipt/options.js';
import { type AgentRig, startAgentRig } from '../helpers/agent-rig.js';
import { runCliInProcess } from '../helpers/cli.js';

const APP_ID = 'A-logo';
const STORE_KEY = 'sk-logo-secret-4410-do-not-leak';
const pair = generateKeyPair();
const serviceKey = parseKey(pair.privatePem, 'private');

/** Broker, emulator and agent (with its local API) with `logo`, one receipt printed. */
async function start(logo: (dir: string) => LogoSettings): Promise<AgentRig> {
  const rig = await startAgentRig({
    appId: APP_ID,
    storeKey: STORE_KEY,
    header: 'Logo Store',
    servicePublicPem: pair.publicPem,
    console: true,
    settings: (dir) => ({ logo: logo(dir) }),
  });
  await rig.publish(
    rig.t.print,
    buildEnvelope({
      appId: APP_ID,
      storeKey: STORE_KEY,
      param: {
        storeId: rig.storeId,
        jobId: 'P-LOGO-1',
        orderNo: 'O-LOGO-1',
        createTime: formatTimestamp(new Date()),
        order: {
          productInfo: [{ productName: 'Adobo plate', price: 18500, quantity: 1 }],
          orderType: 2,
          paymentWay: 2,
          paymentTransactionId: 'M-LOGO-1',
        },
      },
      key: serviceKey,
    }),
  );
  await waitFor('the receipt printed', () => rig.statesOf('P-LOGO-1').includes('printed'), 15_000);
  return rig;
}

function receiptTicket(r: AgentRig): Ticket {
  const ticket = r.emulator.paper.tickets.find((tk) => renderText(tk).includes('Adobo plate'));
  assert.ok(ticket, 'the receipt is on the paper');
  return ticket;
}

const logged = (r: AgentRig) =>
  r.logLines.map((line) => JSON.parse(line) as Record<string, unknown> & { msg: string });

describe('agent with a logo file that cannot be used', { skip: skipWithoutMosquitto() }, () => {
  let r: AgentRig;
  let missing: string;
  before(async () => {
    r = await start((dir) => {
      missing = join(dir, 'logo.png');
      return { file: missing, align: 'center' };
    });
  });
  after(async () => r?.stop());

  it('prints the receipt, without an image', () => {
    const ticket = receiptTicket(r);
    assert.equal(ticket.images.length, 0);
    assert.match(renderText(ticket), /^ +Logo Store$/m);
  });

  it('says why in the retained status: a warning, not a fault', async () => {
    const expected = {
      code: 'LOGO_UNREADABLE',
      message: `receipt.logo.file: ${missing}: missing (ENOENT)`,
    };
    await waitFor('the status with its warning', () => {
      const s = r.status();
      return s?.online === true && s.warnings !== undefined;
    });
    const status = r.status();
    assert.ok(status?.online);
    assert.deepEqual(status.warnings, [expected]);
    assert.equal(status.fault ?? null, null, 'printing works: no fault');
    assert.equal(status.printers[0]?.state, 'ready');
    // The local API (`printer-agent status`, the status page) answers the same status.
    const own = r.agent.health.status();
    assert.ok(own.online);
    assert.deepEqual(own.warnings, [expected]);
  });

  it('`printer-agent status` shows it (the broken logo does not stop the command either)', async () => {
    const run = await runCliInProcess(['status', '--config', r.configPath]);
    assert.equal(run.status, 0, run.stderr);
    assert.match(
      run.stdout,
      new RegExp(
        `^WARNING LOGO_UNREADABLE: receipt\\.logo\\.file: ${missing}: missing \\(ENOENT\\)$`,
        'm',
      ),
    );
    assert.doesNotMatch(run.stdout, /^FAULT/m);
    assert.ok(!run.stdout.includes(STORE_KEY));
  });

  it('logs it once, as a warning naming the path', () => {
    const lines = logged(r).filter((l) => l.code === 'LOGO_UNREADABLE');
    assert.equal(lines.length, 1, JSON.stringify(lines));
    const line = lines[0]!;
    assert.equal(line.level, 40);
    assert.equal(line.file, missing);
    assert.equal(
      line.msg,
      `receipt.logo.file: ${missing}: missing (ENOENT); receipts print without the logo`,
    );
  });
});

describe('agent with a logo file that is not an image', { skip: skipWithoutMosquitto() }, () => {
  let r: AgentRig;
  let corrupt: string;
  before(async () => {
    r = await start((dir) => {
      // A PNG's name, a text's bytes: what a botched copy or upload leaves behind.
      corrupt = join(dir, 'logo.png');
      writeFileSync(corrupt, 'this is not an image\n');
      return { file: corrupt, align: 'center' };
    });
  });
  after(async () => r?.stop());

  it('prints the receipt without an image, and says why as a warning, not a fault', async () => {
    const ticket = receiptTicket(r);
    assert.equal(ticket.images.length, 0);
    assert.match(renderText(ticket), /^ +Logo Store$/m);
    const expected = {
      code: 'LOGO_UNREADABLE',
      message: `receipt.logo.file: ${corrupt}: not a PNG or SVG image`,
    };
    await waitFor('the status with its warning', () => {
      const s = r.status();
      return s?.online === true && s.warnings !== undefined;
    });
    const status = r.status();
    assert.ok(status?.online);
    assert.deepEqual(status.warnings, [expected]);
    assert.equal(status.fault ?? null, null);
    const own = r.agent.health.status();
    assert.ok(own.online);
    assert.deepEqual(own.warnings, [expected]);
    const run = await runCliInProcess(['status', '--config', r.configPath]);
    assert.equal(run.status, 0, run.stderr);
    assert.ok(run.stdout.split('\n').includes(`WARNING LOGO_UNREADABLE: ${expected.message}`));
    const lines = logged(r).filter((l) => l.code === 'LOGO_UNREADABLE');
    assert.equal(lines.length, 1, JSON.stringify(lines));
    assert.equal(lines[0]!.level, 40);
    assert.equal(lines[0]!.file, corrupt);
  });
});

describe('agent with a good logo', { skip: skipWithoutMosquitto() }, () => {
  let r: AgentRig;
  before(async () => {
    r = await start((dir) => ({ file: writeLogoPng(join(dir, 'logo.png')), align: 'center' }));
  });
  after(async () => r?.stop());

  it('prints it first on the receipt, the full print width, converted at start', () => {
    const ticket = receiptTicket(r);
    // 400 x 200 at 576 dots: 288 high, in two bands (240 + 48).
    assert.deepEqual(
      ticket.images.map((i) => [i.source, i.width, i.height, i.align, i.atLine]),
      [
        ['GS v 0', 576, 240, 'center', 0],
        ['GS v 0', 576, 48, 'center', 0],
      ],
    );
    assert.match(renderText(ticket), /^\[IMAGE 576x240\]\n\[IMAGE 576x48\]\n +Logo Store\n/);
    const ready = logged(r).filter((l) => l.msg === 'logo ready');
    assert.equal(ready.length, 1);
    assert.equal(ready[0]!.dots, '576x288');
    assert.equal(ready[0]!.bytesPerReceipt, 72 * 288 + 2 * 14);
  });

  it('no warning in the status', () => {
    const status = r.status();
    assert.ok(status?.online);
    assert.equal(status.warnings, undefined);
  });
});
