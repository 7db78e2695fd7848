/**
 * Issue 41 item 4, the cash drawer, from the job store through the spooler and a real `Printer` to
 * the emulator's paper, which records every `ESC p` pulse as a `drawer` event on the ticket it
 * came with: a cash payment receipt (paymentWay 2) opens the drawer once, on the configured pin
 * with the profile's pulse, whatever its copies; a card payment, a reprint, a kitchen ticket, a
 * test page, a copy printed again after an unconfirmed or interrupted print (POSSIBLE DUPLICATE),
 * and a store that did not turn the drawer on (the config's default) never do.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { waitFor } from '../../harness/waiting.js';
import { settingsFrom } from '../../src/cli/agent-settings.js';
import { resolveConfig } from '../../src/config/load.js';
import { agentConfigSchema } from '../../src/config/schema.js';
import { type PaperEvent, renderText, type Ticket } from '../../src/emulator/index.js';
import type { DrawerSettings } from '../../src/jobs/render-job.js';
import { Spooler } from '../../src/jobs/spooler.js';
import type { JobStore } from '../../src/jobs/store.js';
import { formatTimestamp } from '../../src/protocol/time.js';
import { getProfile, type PrinterProfile } from '../../src/receipt/profile.js';
import {
  type EmulatedPrinter,
  emulatedPrinter,
  instruction,
  OPTIONS,
  openStore,
  PROFILE,
  printedReceipts,
  tempDir,
} from './fixtures.js';

const cleanup: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const fn of cleanup.reverse()) await fn();
});

/** generic-80mm with a pulse of its own, so the test sees the profile's timing on paper. */
const DRAWER_PROFILE: PrinterProfile = {
  ...getProfile(PROFILE),
  drawerPulse: { onMs: 120, offMs: 240 },
};
const CASH_DRAWER: DrawerSettings = { openOn: ['offline'], pin: 5 };
const KITCHEN = { role: 'kitchen', layout: 'kitchen', items: null } as const;

async function rig(name: string, options: { confirmTimeoutMs?: number } = {}) {
  const store = openStore(name);
  cleanup.push(() => store.close());
  const printer = await emulatedPrinter(options);
  cleanup.push(() => printer.close());
  return { store, printer };
}

function spooler(
  store: JobStore,
  printer: EmulatedPrinter,
  drawer: DrawerSettings | null | undefined,
  roles: readonly string[] = ['receipt'],
) {
  const s = new Spooler({
    store,
    printers: roles.map((id) => ({ id, printer: printer.printer, profile: DRAWER_PROFILE })),
    receiptOptions: OPTIONS,
    backoff: { initialMs: 20, maxMs: 200 },
    pollIntervalMs: 50,
    ...(drawer !== undefined ? { drawer } : {}),
    renderTestPage: () => ({
      bytes: Uint8Array.of(0x1b, 0x40, ...Buffer.from('TEST PAGE\n'), 0x1d, 0x56, 0x42, 0x00),
      text: 'TEST PAGE',
      warnings: [],
    }),
  });
  cleanup.push(() => s.stop());
  return s;
}

type DrawerEvent = Extract<PaperEvent, { type: 'drawer' }>;

/** Every drawer pulse on the paper, with the text of the ticket it came with. */
function pulses(printer: EmulatedPrinter): Array<{ event: DrawerEvent; ticket: string }> {
  return printer.emulator
    .tickets()
    .flatMap((t: Ticket) =>
      t.events
        .filter((e): e is DrawerEvent => e.type === 'drawer')
        .map((event) => ({ event, ticket: renderText(t) })),
    );
}

/** A card payment (paymentWay 1, with what order-api 4.2 rule 3 requires of it). */
function cardOrder(n: number) {
  const base = instruction(n);
  const at = formatTimestamp(new Date(Date.now() - 60_000));
  return instruction(n, {
    order: {
      ...base.order,
      paymentWay: 1,
      paymentChannel: 'CHANNEL_B_URL',
      transactionCreateTime: at,
      transactionReturnTime: at,
    },
  });
}

const printed = (store: JobStore, jobId: string) => store.getByJobId(jobId)?.state === 'printed';

describe('the cash drawer opens with a cash payment receipt, once (issue 41)', () => {
  it('cash: one pulse on the configured pin with the profile pulse, with two copies; card: none', async () => {
    const { store, printer } = await rig('drawer-cash');
    store.enqueueInstruction(instruction(1, { copies: 2 }));
    store.enqueueInstruction(cardOrder(2));
    spooler(store, printer, CASH_DRAWER).start();
    await waitFor('both printed', () => printed(store, 'P-00001') && printed(store, 'P-00002'));

    const found = pulses(printer);
    assert.equal(found.length, 1, 'one pulse for the cash receipt and its copy, none for the card');
    const [{ event, ticket }] = found as [{ event: DrawerEvent; ticket: string }];
    assert.deepEqual(
      [event.pin, event.onMs, event.offMs, event.realtime],
      [5, 120, 240, false],
      'ESC p on pin 5 (m = 1), 120 ms on and 240 ms off, in the data',
    );
    assert.match(ticket, /O-00001/, "on the cash receipt's own ticket, before its cut");
    const receipts = printedReceipts(printer.emulator);
    assert.deepEqual(
      receipts.map((r) => r.orderNo),
      ['O-00001', 'O-00001', 'O-00002'],
      'both copies and the card receipt printed',
    );
  });

  it('no kick on a reprint, a kitchen ticket or a test page of a cash order', async () => {
    const { store, printer } = await rig('drawer-not');
    store.enqueueInstruction(instruction(3));
    const s = spooler(store, printer, CASH_DRAWER, ['receipt', 'kitchen']);
    s.start();
    await waitFor('the receipt printed', () => printed(store, 'P-00003'));
    assert.equal(pulses(printer).length, 1, 'the receipt itself kicks');

    const reprint = store.enqueueReprint('O-00003');
    assert.equal(reprint.status, 'inserted');
    store.enqueueInstruction(instruction(4), { route: KITCHEN });
    const test = store.enqueueTestPrint('receipt');
    assert.equal(test.status, 'inserted');
    await waitFor(
      'reprint, kitchen ticket and test page printed',
      () =>
        reprint.status === 'inserted' &&
        test.status === 'inserted' &&
        store.get(reprint.job.id)?.state === 'printed' &&
        store.get(test.job.id)?.state === 'printed' &&
        printed(store, 'P-00004'),
    );
    const texts = printer.emulator.tickets().map((t) => renderText(t));
    assert.ok(texts.some((t) => /REPRINT/.test(t)));
    assert.ok(texts.some((t) => /KITCHEN/.test(t)));
    assert.ok(texts.some((t) => /TEST PAGE/.test(t)));
    assert.equal(pulses(printer).length, 1, 'still the one pulse of the receipt');
  });

  it('printed again after an unconfirmed print (POSSIBLE DUPLICATE): no second kick', async () => {
    const { store, printer } = await rig('drawer-duplicate', { confirmTimeoutMs: 300 });
    // A printer that stops answering: the receipt goes out (with its pulse), never confirmed.
    printer.emulator.setFault('mute', true);
    const { job } = store.enqueueInstruction(instruction(5)) as { job: { id: number } };
    spooler(store, printer, CASH_DRAWER).start();
    await waitFor('unconfirmed', () => store.get(job.id)?.state === 'unconfirmed');
    assert.equal(pulses(printer).length, 1, 'the first print kicked');

    printer.emulator.setFault('mute', false);
    store.retry(job.id);
    await waitFor('printed again', () => store.get(job.id)?.state === 'printed');
    const receipts = printedReceipts(printer.emulator).filter((r) => r.orderNo === 'O-00005');
    assert.deepEqual(
      receipts.map((r) => r.possibleDuplicate),
      [false, true],
      'the retry is marked POSSIBLE DUPLICATE',
    );
    assert.equal(pulses(printer).length, 1, 'and does not open the drawer again');
  });

  it('interrupted while printing (found printing at start): printed again marked, no kick', async () => {
    const { store, printer } = await rig('drawer-interrupted');
    const { job } = store.enqueueInstruction(instruction(6)) as { job: { id: number } };
    // A crash after `printing` was committed: the pulse may have gone out with the first bytes.
    store.markPrinting(job.id, { markings: {}, warnings: [], notices: [] });
    spooler(store, printer, CASH_DRAWER).start();
    await waitFor('printed', () => store.get(job.id)?.state === 'printed');
    // The next cash order kicks as usual: the one pulse on paper is its own.
    store.enqueueInstruction(instruction(9));
    await waitFor('the next order printed', () => printed(store, 'P-00009'));
    const receipts = printedReceipts(printer.emulator);
    assert.deepEqual(
      receipts.map((r) => [r.orderNo, r.possibleDuplicate]),
      [
        ['O-00006', true],
        ['O-00009', false],
      ],
    );
    const found = pulses(printer);
    assert.equal(found.length, 1);
    assert.match(found[0]!.ticket, /O-00009/, 'the pulse came with the next order, not the copy');
  });

  it('a retry after nothing was sent (printer out of paper) still kicks, once', async () => {
    const { store, printer } = await rig('drawer-waiting');
    printer.emulator.setFault('paper-out', true);
    const { job } = store.enqueueInstruction(instruction(7)) as { job: { id: number } };
    spooler(store, printer, CASH_DRAWER).start();
    await waitFor('waiting', () => store.get(job.id)?.state === 'waiting');
    printer.emulator.setFault('paper-out', false);
    await waitFor('printed', () => store.get(job.id)?.state === 'printed');
    assert.deepEqual(store.get(job.id)!.markings, {}, 'not marked: nothing had been sent');
    assert.equal(pulses(printer).length, 1);
  });

  it("off by default: the config's drawer section, left out, opens nothing", async () => {
    const keyFile = join(tempDir('drawer-key'), 'service-public.pem');
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(keyFile, publicKey.export({ type: 'spki', format: 'pem' }));
    const file = agentConfigSchema.parse({
      appId: 'app-1',
      storeKey: 'store-key-1',
      mqtt: { url: 'mqtt://127.0.0.1:1883' },
      keys: { servicePublicKeyFile: keyFile },
      printers: [{ id: 'receipt', url: 'tcp://127.0.0.1:9100', profile: PROFILE }],
      catchUp: { enabled: false },
    });
    const settings = settingsFrom(resolveConfig(file, { file: '/tmp/config.json' }).config);
    assert.deepEqual(settings.drawer, { openOn: [], pin: 2 });
    const { store, printer } = await rig('drawer-default');
    store.enqueueInstruction(instruction(8));
    spooler(store, printer, settings.drawer).start();
    await waitFor('printed', () => printed(store, 'P-00008'));
    assert.equal(pulses(printer).length, 0);
  });
});
