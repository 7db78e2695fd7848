/**
 * One contract suite for the printer code over every transport the emulator can stand behind:
 * TCP (port 9100 style), serial (serialport on a socat pty) and the usblp device file (fs on a
 * pty). The emulator is the far side; assertions read its tickets and counters, never our
 * internals. Tests wait for events or poll with a deadline; none sleeps.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  type Endpoint,
  listenTcp,
  openDeviceEndpoint,
  openSerialEndpoint,
  renderText,
  type Ticket,
  VirtualPrinter,
} from '../../src/emulator/index.js';
import { AgentError } from '../../src/errors.js';
import { PrinterMonitor } from '../../src/printer/monitor.js';
import { openPrinter } from '../../src/printer/open-printer.js';
import type { ConfirmMode, Printer } from '../../src/printer/printer.js';
import type { PrinterCondition } from '../../src/printer/status.js';
import { getProfile } from '../../src/receipt/profile.js';
import { renderReceipt } from '../../src/receipt/render.js';
import { loadFixture, STORE_OPTIONS } from '../helpers/receipts.js';
import { skipWithoutSocat, waitFor } from '../helpers/waiting.js';

const SOCAT_SKIP = skipWithoutSocat();

const receipt = renderReceipt({
  source: loadFixture('table-offline-simple'),
  profile: getProfile('generic-80mm'),
  options: STORE_OPTIONS,
});

interface Rig {
  emulator: VirtualPrinter;
  endpoint: Endpoint;
  /** A printer client; earlier ones are closed first (a printer serves one link at a time). */
  open(confirm?: ConfirmMode, options?: { keepOthers?: boolean }): Promise<Printer>;
  close(): Promise<void>;
}

type Kind = 'tcp' | 'serial' | 'file';

async function rig(kind: Kind): Promise<Rig> {
  const emulator = new VirtualPrinter({ columns: 48, columnsFontB: 64 });
  const dir = mkdtempSync(join(tmpdir(), `pa-printer-${kind}-`));
  const endpoint =
    kind === 'tcp'
      ? await listenTcp(emulator, { port: 0 })
      : kind === 'serial'
        ? await openSerialEndpoint(emulator, { dir })
        : await openDeviceEndpoint(emulator, { dir });
  const opened: Printer[] = [];
  return {
    emulator,
    endpoint,
    async open(confirm = 'process-id', options = {}) {
      if (!options.keepOthers) {
        for (const p of opened.splice(0)) await p.close();
      }
      const printer = openPrinter(
        endpoint.address,
        { confirm, realtimeStatus: true },
        { statusTimeoutMs: 300, confirmTimeoutMs: 3000 },
      );
      opened.push(printer);
      return printer;
    },
    async close() {
      for (const p of opened) await p.close();
      await endpoint.close();
    },
  };
}

function cutTickets(emulator: VirtualPrinter): Ticket[] {
  return [...emulator.paper.tickets];
}

for (const kind of ['tcp', 'serial', 'file'] as const) {
  describe(`printer over ${kind}`, { skip: kind === 'tcp' ? false : SOCAT_SKIP }, () => {
    let r: Rig;
    before(async () => {
      r = await rig(kind);
    });
    after(async () => {
      await r.close();
    });

    it('reads the state of a ready printer', async () => {
      const printer = await r.open();
      const condition = await printer.status();
      assert.equal(condition.state, 'ready');
      assert.equal(condition.paper, 'ok');
      assert.equal(condition.coverOpen, false);
    });

    it('prints a receipt and confirms it with the process id (GS ( H)', async () => {
      const printer = await r.open('process-id');
      const before = cutTickets(r.emulator).length;
      const result = await printer.print(receipt.bytes);
      assert.deepEqual(result, { outcome: 'printed', confirmedBy: 'process-id' });
      const tickets = cutTickets(r.emulator);
      assert.equal(tickets.length, before + 1);
      assert.equal(renderText(tickets.at(-1)!), receipt.text);
    });

    it('confirms with GS r 1 where the profile has no process id', async () => {
      const printer = await r.open('status');
      const before = cutTickets(r.emulator).length;
      assert.deepEqual(await printer.print(receipt.bytes), {
        outcome: 'printed',
        confirmedBy: 'status',
      });
      assert.equal(cutTickets(r.emulator).length, before + 1);
    });

    it('does not send a job into a printer that is out of paper, and prints after the refill', async () => {
      const printer = await r.open();
      r.emulator.setFault('paper-out', true);
      try {
        assert.equal((await printer.status()).state, 'paper-out');
        const received = r.emulator.decoder.received;
        await assert.rejects(printer.print(receipt.bytes), (e: unknown) => {
          assert.ok(e instanceof AgentError);
          assert.equal(e.code, 'PRINTER_NOT_READY');
          assert.equal(e.retryable, true);
          assert.equal(e.details.state, 'paper-out');
          return true;
        });
        // Only the status queries reached the printer (3 bytes each), none of the job.
        assert.ok(r.emulator.decoder.received - received <= 12, 'no job bytes were sent');
      } finally {
        r.emulator.setFault('paper-out', false);
      }
      const before = cutTickets(r.emulator).length;
      assert.equal((await printer.print(receipt.bytes)).outcome, 'printed');
      assert.equal(cutTickets(r.emulator).length, before + 1);
    });

    it('reports cover open as its own state', async () => {
      const printer = await r.open();
      r.emulator.setFault('cover-open', true);
      try {
        const condition = await printer.status();
        assert.equal(condition.state, 'cover-open');
        assert.equal(condition.coverOpen, true);
      } finally {
        r.emulator.setFault('cover-open', false);
      }
    });

    it('a printer that never answers is unknown, still prints, and the job is unconfirmed', async () => {
      const printer = await r.open();
      r.emulator.setFault('mute', true);
      try {
        assert.equal((await printer.status()).state, 'unknown');
        const before = cutTickets(r.emulator).length;
        const result = await printer.print(receipt.bytes);
        assert.equal(result.outcome, 'unconfirmed');
        await waitFor(
          'the receipt still printed',
          () => cutTickets(r.emulator).length === before + 1,
        );
      } finally {
        r.emulator.setFault('mute', false);
      }
    });
  });
}

describe('printer over tcp: link failures', () => {
  let r: Rig;
  before(async () => {
    r = await rig('tcp');
  });
  after(async () => {
    await r.close();
  });

  it('printed but the link dropped before the confirmation: unconfirmed, never re-sent', async () => {
    const printer = await r.open('process-id');
    const before = cutTickets(r.emulator).length;
    // The receipt is cut (a ticket), then the link goes before the process id reply can leave.
    const drop = () => {
      r.emulator.off('ticket', drop);
      r.endpoint.slot.disconnect();
    };
    r.emulator.on('ticket', drop);
    const result = await printer.print(receipt.bytes);
    assert.equal(result.outcome, 'unconfirmed');
    assert.equal(cutTickets(r.emulator).length, before + 1, 'printed exactly once');
  });

  it('the monitor reports disconnected when the link drops and ready after it reconnects', async () => {
    const printer = await r.open();
    const monitor = new PrinterMonitor(printer, {
      intervalMs: 50,
      initialBackoffMs: 20,
      maxBackoffMs: 100,
    });
    const states: string[] = [];
    monitor.on('change', (c: PrinterCondition) => states.push(c.state));
    monitor.start();
    try {
      await waitFor('first ready', () => states.includes('ready'));
      r.endpoint.slot.disconnect();
      await waitFor('disconnected reported', () => states.includes('disconnected'));
      await waitFor(
        'ready again after reconnecting',
        () => states.lastIndexOf('ready') > states.indexOf('disconnected'),
      );
    } finally {
      monitor.stop();
    }
  });

  it('a second client on the same printer is turned away while the first is connected', async () => {
    const first = await r.open();
    assert.equal((await first.status()).state, 'ready');
    const second = await r.open('process-id', { keepOthers: true });
    const refusedBefore = (r.endpoint as Endpoint & { refused: number }).refused;
    const condition = await second.status();
    assert.notEqual(condition.state, 'ready');
    assert.equal((r.endpoint as Endpoint & { refused: number }).refused, refusedBefore + 1);
    await second.close();
    assert.equal((await first.status()).state, 'ready', 'the first client is unaffected');
  });
});

describe('printer over the device file: a printer that stops taking data', {
  skip: SOCAT_SKIP,
}, () => {
  let r: Rig;
  before(async () => {
    r = await rig('file');
  });
  after(async () => {
    await r.close();
  });

  it('a write that cannot complete times out with the bytes sent, without freezing the event loop', async () => {
    const printer = openPrinter(
      r.endpoint.address,
      { confirm: 'none', realtimeStatus: true },
      { chunkTimeoutMs: 400, statusTimeoutMs: 300 },
    );
    // The printer goes offline as soon as the job starts arriving: its buffer fills, then the pty.
    const offlineOnJob = (bytes: Uint8Array) => {
      if (!bytes.includes(0x41)) return; // status queries go through; the job's 'A's do not
      r.endpoint.slot.off('deliver', offlineOnJob);
      r.emulator.setFault('offline', true);
    };
    r.endpoint.slot.on('deliver', offlineOnJob);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const job = new Uint8Array(256 * 1024).fill(0x41);
    try {
      await assert.rejects(printer.print(job), (e: unknown) => {
        assert.ok(e instanceof AgentError);
        assert.equal(e.code, 'TRANSPORT_TIMEOUT');
        const sent = e.details.sentBytes as number;
        assert.ok(sent > 0 && sent < job.length, `sentBytes ${sent}`);
        return true;
      });
      assert.ok(ticks >= 20, `the event loop kept running (${ticks} ticks)`);
    } finally {
      clearInterval(timer);
      r.emulator.setFault('offline', false);
      await printer.close();
    }
  });
});

describe('monitor events', () => {
  it('emits a change for each new state only', async () => {
    const r = await rig('tcp');
    try {
      const printer = await r.open();
      const monitor = new PrinterMonitor(printer, { intervalMs: 30 });
      const changes: string[] = [];
      monitor.on('change', (c: PrinterCondition) => changes.push(c.state));
      monitor.start();
      await waitFor('the expected change', () => changes.length === 1);
      r.emulator.setFault('paper-near-end', true);
      await waitFor('the expected change', () => changes.includes('paper-near-end'));
      r.emulator.setFault('paper-near-end', false);
      await waitFor('the expected change', () => changes.length === 3);
      monitor.stop();
      assert.deepEqual(changes, ['ready', 'paper-near-end', 'ready']);
    } finally {
      await r.close();
    }
  });
});
