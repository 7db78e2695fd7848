/**
 * The printer's status is four `DLE EOT` round trips. A fault that clears between them (the cover
 * closed after n=1 said "offline", before n=2 named the cause) used to read as offline with no
 * cause: one spurious PRINTER_OFFLINE wait, and a journal line for an outage that was over (seen
 * by the waiting-log test on a busy CI machine). The emulator closes the cover on the exact reply,
 * so the tear happens every run, not by luck.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { listenTcp, type TcpEndpoint, VirtualPrinter } from '../../src/emulator/index.js';
import { openPrinter } from '../../src/printer/open-printer.js';
import type { Printer } from '../../src/printer/printer.js';

describe('a status read torn by a fault that clears', () => {
  let emulator: VirtualPrinter;
  let endpoint: TcpEndpoint;
  let printer: Printer;

  before(async () => {
    emulator = new VirtualPrinter({ columns: 48 });
    endpoint = await listenTcp(emulator, { port: 0 });
    printer = openPrinter(
      endpoint.address,
      { realtimeStatus: true, confirm: 'status' },
      { confirmTimeoutMs: 1500, statusTimeoutMs: 500 },
    );
  });

  after(async () => {
    await printer?.close();
    await endpoint?.close();
  });

  /** Clears `fault` right after the printer's first "offline" n=1 reply left the emulator. */
  const clearAfterFirstOfflineReply = (fault: 'cover-open' | 'offline') => {
    let replies = 0;
    const onReply = (bytes: Uint8Array) => {
      replies++;
      // n=1 is the first query of a read; its bit 3 is "offline".
      if (replies === 1 && bytes.length === 1 && (bytes[0]! & 0x08) !== 0) {
        emulator.off('reply', onReply);
        emulator.setFault(fault, false);
      }
    };
    emulator.on('reply', onReply);
    return () => emulator.off('reply', onReply);
  };

  it('the cover closed between n=1 and n=2: read again, ready', async () => {
    emulator.setFault('cover-open', true);
    assert.equal((await printer.status()).state, 'cover-open');
    const done = clearAfterFirstOfflineReply('cover-open');
    const condition = await printer.status();
    done();
    assert.equal(condition.state, 'ready', `read as ${condition.causes.join(', ')}`);
  });

  it('paper loaded as the cover opens, between n=2 and n=4: read again, cover open', async () => {
    emulator.setFault('paper-out', true);
    assert.equal((await printer.status()).state, 'paper-out');
    // n=2 answers "paper end stop"; then the cover opens and the paper is loaded at once, so n=4
    // says paper present: a read with no cause left.
    let replies = 0;
    const onReply = () => {
      if (++replies !== 2) return;
      emulator.off('reply', onReply);
      emulator.setFault('cover-open', true);
      emulator.setFault('paper-out', false);
    };
    emulator.on('reply', onReply);
    const condition = await printer.status();
    emulator.off('reply', onReply);
    emulator.setFault('cover-open', false);
    assert.equal(condition.state, 'cover-open', `read as ${condition.causes.join(', ')}`);
  });

  it('a printer that stays offline with no cause is still offline', async () => {
    emulator.setFault('offline', true);
    const condition = await printer.status();
    emulator.setFault('offline', false);
    assert.equal(condition.state, 'offline');
    assert.deepEqual(condition.causes, ['offline']);
  });
});
