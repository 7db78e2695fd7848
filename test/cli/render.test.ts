import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCliInProcess } from '../helpers/cli.js';
import { skipWithoutFonts } from '../helpers/fonts.js';
import { ORDERS_DIR } from '../helpers/receipts.js';

describe('printer-agent render', () => {
  const fixture = join(ORDERS_DIR, 'table-offline-simple.json');

  it('prints the text twin of an instruction on the chosen profile', async () => {
    const r = await runCliInProcess(['render', fixture, '--profile', 'generic-58mm']);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.split('\n');
    assert.ok(
      lines.every((l) => l.length <= 32),
      'fits 32 columns',
    );
    assert.ok(lines.includes('Sinigang na Baboy'));
    assert.ok(
      lines.some((l) => /^TOTAL +₱335\.50$/.test(l)),
      'total of 245.00 + 2 x 30.00 + 30.50 service fee',
    );
  });

  it('renders an order record as well', async () => {
    const r = await runCliInProcess(['render', join(ORDERS_DIR, 'record-options-remark.json')]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^Milk tea \(Large\)$/m);
    assert.match(r.stdout, /\+ Toppings: Pearls/);
  });

  it('--kitchen renders the kitchen ticket for a role: no amounts; a bad role name is refused', async () => {
    const r = await runCliInProcess([
      'render',
      fixture,
      '--profile',
      'generic-58mm',
      '--kitchen',
      'bar',
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^ +BAR$/m);
    assert.match(r.stdout, /Sinigang na Baboy/);
    assert.doesNotMatch(r.stdout, /PHP|TOTAL|\d\.\d\d/);
    const bad = await runCliInProcess(['render', fixture, '--kitchen', 'bar role!']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--kitchen.*must be 1 to 64 letters, digits, dot, dash or underscore/);
  });

  it('writes raw ESC/POS bytes starting with ESC @ and ending with the cut', async () => {
    const r = await runCliInProcess(['render', fixture, '--format', 'escpos']);
    assert.equal(r.status, 0, r.stderr);
    const bytes = r.stdoutBytes;
    assert.deepEqual([...bytes.subarray(0, 2)], [0x1b, 0x40]);
    assert.deepEqual([...bytes.subarray(-4)], [0x1d, 0x56, 0x42, 0x00]);
  });

  it('writes a hex dump with offsets', async () => {
    const r = await runCliInProcess(['render', fixture, '--format', 'hex']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^000000 {2}1b 40 /);
  });

  it('prints warnings on stderr and keeps stdout the receipt', async () => {
    // Raster lines off (a slow serial printer): CJK on a Western printer becomes `?`, said once.
    const dir = mkdtempSync(join(tmpdir(), 'pa-render-'));
    writeFileSync(join(dir, 'opts.json'), JSON.stringify({ rasterLines: false }));
    const r = await runCliInProcess([
      'render',
      join(ORDERS_DIR, 'table-cjk.json'),
      '--profile',
      'generic-80mm',
      '--options',
      join(dir, 'opts.json'),
    ]);
    assert.equal(r.status, 0);
    assert.match(
      r.stderr,
      /^warning: characters not printable on this printer were replaced by '\?': U\+767D/m,
    );
    assert.ok(!r.stdout.includes('warning'));
  });

  it('by default shows the CJK names as the agent prints them: drawn, not `?`', {
    skip: skipWithoutFonts(),
  }, async () => {
    const r = await runCliInProcess(['render', join(ORDERS_DIR, 'table-cjk.json')]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^白切鸡 Hainanese Chicken$/m);
    assert.doesNotMatch(r.stderr, /replaced by/);
  });

  it('applies receipt options from a file and rejects bad ones by path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pa-render-'));
    writeFileSync(
      join(dir, 'opts.json'),
      JSON.stringify({ header: ['My Store'], money: { display: 'code' } }),
    );
    const ok = await runCliInProcess(['render', fixture, '--options', join(dir, 'opts.json')]);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /^ +My Store$/m);
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ money: { currency: 'peso' } }));
    const bad = await runCliInProcess(['render', fixture, '--options', join(dir, 'bad.json')]);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /^INPUT_INVALID: .*money\.currency: must be an ISO 4217 code/m);
  });

  it('rejects invalid orders with the field path, unknown profiles and unknown formats', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pa-render-'));
    const file = join(dir, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({
        jobId: 'J',
        orderNo: 'O',
        createTime: '2026-11-25 12:00:00',
        order: {
          productInfo: [{ productName: 'X', price: 1, quantity: 0 }],
          orderType: 1,
          paymentWay: 2,
          paymentTransactionId: 'M',
        },
      }),
    );
    const invalid = await runCliInProcess(['render', file]);
    assert.equal(invalid.status, 1);
    assert.match(
      invalid.stderr,
      /^PARAM_INVALID: .*order\.productInfo\[0\]\.quantity: must be between 1 and 1000/,
    );
    const neither = join(dir, 'neither.json');
    writeFileSync(neither, '{"hello":1}');
    assert.match(
      (await runCliInProcess(['render', neither])).stderr,
      /^INPUT_INVALID: .*must be a print instruction/,
    );
    const profile = await runCliInProcess(['render', fixture, '--profile', 'nope']);
    assert.equal(profile.status, 1);
    assert.match(
      profile.stderr,
      /^PROFILE_MISSING: profile "nope": not found; known: .*generic-58mm/,
    );
    const format = await runCliInProcess(['render', fixture, '--format', 'pdf']);
    assert.equal(format.status, 2);
  });
});
