/**
 * Issue 17 item 2: receipt previews drawn from the exact ESC/POS bytes, as the emulator's decoder
 * reads them. The QR code of a rendered receipt is read back from the PNG with a QR reader
 * (jsQR, on pixels decoded by pngjs) and compared with the content the layout put there; sizes
 * and positions are checked in the SVG against the printer's dot geometry (12-dot font A cells,
 * 576 dots on 80 mm, 384 on 58 mm, double size, white on black, raster image dots, a barcode's
 * bars); and the CLI writes both formats.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import { writeLogoPng } from '../../harness/logo.js';
import { bytesToSvg, svgToPng } from '../../src/emulator/index.js';
import { printInstructionSchema } from '../../src/protocol/print-protocol.js';
import { loadLogo } from '../../src/receipt/logo.js';
import { receiptOptions } from '../../src/receipt/options.js';
import { getProfile } from '../../src/receipt/profile.js';
import { LineRasterizer } from '../../src/receipt/raster-text.js';
import { renderReceipt } from '../../src/receipt/render.js';
import { ROOT, runCliInProcess } from '../helpers/cli.js';
import { skipWithoutFonts } from '../helpers/fonts.js';
import { bytes } from './bytes.js';

const ESC = 0x1b;
const GS = 0x1d;

// jsqr is CommonJS with `export default` in its types: the default import is the function.
const jsQR = jsQRModule as unknown as (
  data: Uint8ClampedArray,
  width: number,
  height: number,
) => { data: string } | null;

function readQr(png: Buffer): string | null {
  const image = PNG.sync.read(png);
  const found = jsQR(new Uint8ClampedArray(image.data), image.width, image.height);
  return found?.data ?? null;
}

/** `<text>` elements of an SVG: attributes and content. */
function texts(svg: string): Array<Record<string, string> & { content: string }> {
  return [...svg.matchAll(/<text ([^>]*)>([^<]*)<\/text>/g)].map((m) => ({
    ...Object.fromEntries([...m[1]!.matchAll(/([\w:-]+)="([^"]*)"/g)].map((a) => [a[1]!, a[2]!])),
    content: m[2]!,
  }));
}

/** Bounding box of every `M x y h w v h` square of a path's `d`. */
function pathBox(d: string): { x0: number; y0: number; x1: number; y1: number; parts: number } {
  const parts = [...d.matchAll(/M(-?[\d.]+) (-?[\d.]+)h(-?[\d.]+)v(-?[\d.]+)/g)].map((m) =>
    m.slice(1, 5).map(Number),
  ) as number[][];
  return {
    x0: Math.min(...parts.map((p) => p[0]!)),
    y0: Math.min(...parts.map((p) => p[1]!)),
    x1: Math.max(...parts.map((p) => p[0]! + p[2]!)),
    y1: Math.max(...parts.map((p) => p[1]! + p[3]!)),
    parts: parts.length,
  };
}

function fixture(name: string) {
  return printInstructionSchema.parse(
    JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'orders', name), 'utf8')),
  );
}

describe('receipt previews from the bytes', () => {
  const profile = getProfile('generic-80mm');
  const instruction = fixture('table-every-fee.json');
  const rendered = renderReceipt({
    source: { kind: 'instruction', instruction },
    profile,
    options: receiptOptions({ header: ['Kusina ni Lola'], qr: true }),
  });

  it('the QR code read back from the PNG is the one in the bytes', async () => {
    const qrLine = rendered.text.split('\n').find((l) => l.startsWith('[QR: '))!;
    const expected = qrLine.slice(5, -1);
    assert.equal(expected, instruction.orderNo);
    const png = await svgToPng(bytesToSvg(rendered.bytes, { columns: 48 }));
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    assert.equal(readQr(png), expected);
  });

  it('columns, double size and the code in printer dots: 48 columns of 12 dots on 80 mm', () => {
    const svg = bytesToSvg(rendered.bytes, { columns: 48 });
    assert.match(svg, /^<svg [^>]*width="608"/, '576 dots and two 16-dot margins');
    const all = texts(svg);
    const total = all.find((t) => t.content.startsWith('TOTAL'))!;
    assert.equal(total.content.length, 48, 'label and amount fill the line');
    // The peso sign is a user-defined character: a blank in the text, its glyph drawn over it.
    assert.match(total.content, /^TOTAL +586\.65$/);
    const sign = 16 + (48 - '₱586.65'.length) * 12;
    const glyph = /<path class="user-defined" data-code="80" d="M(\d+) (\d+)/.exec(
      svg.slice(svg.indexOf('>TOTAL')),
    )!;
    assert.ok(glyph, 'the ₱ glyph is drawn on the TOTAL line');
    assert.ok(
      Number(glyph[1]) >= sign && Number(glyph[1]) < sign + 12,
      'in the cell before 586.65',
    );
    assert.equal(Number(total.x), 16);
    assert.equal(Number(total.textLength), 576);
    assert.equal(total['font-weight'], 'bold');
    const body = all.find((t) => t.content.startsWith('Subtotal'))!;
    assert.equal(
      Number(total['font-size']),
      2 * Number(body['font-size']),
      'TOTAL is double height',
    );
    const order = all.find((t) => t.content.startsWith('Order no.'))!;
    assert.ok(Number(order.y) < Number(total.y), 'printed in order, top to bottom');
    // The QR code: 21 modules (version 1) of the layout's module size, centred.
    const code =
      /<g class="code" data-symbology="QR" data-content="([^"]*)"><path d="([^"]*)"/.exec(svg)!;
    assert.equal(code[1], instruction.orderNo);
    const box = pathBox(code[2]!);
    const side = box.x1 - box.x0;
    assert.equal(side, box.y1 - box.y0, 'square');
    assert.equal(side % 21, 0, 'a whole number of dots per module');
    assert.equal(box.x0, 16 + Math.floor((576 - side) / 2), 'centred');
    assert.ok(box.y0 > Number(total.y), 'below the total');
    assert.match(svg, /<line class="cut"/);
  });

  it('white on black, double width, raster dots and a barcode, from hand-made bytes; 58 mm', () => {
    const image = [0b1111_0000, 0b0000_1111]; // 16 x 1 dots: 4 black, 8 white, 4 black
    const svg = bytesToSvg(
      bytes(
        [ESC, 0x40], // ESC @
        [GS, 0x42, 1], // GS B 1: reverse on
        'INV',
        [GS, 0x42, 0],
        '\n',
        [GS, 0x21, 0x10], // GS ! : double width
        'WIDE',
        [GS, 0x21, 0x00],
        '\n',
        [GS, 0x76, 0x30, 0, 2, 0, 1, 0], // GS v 0: 2 bytes wide, 1 row
        image,
        [GS, 0x68, 50], // GS h: bar height 50
        [GS, 0x77, 2], // GS w: module width 2
        [GS, 0x6b, 73, 8, 0x7b, 0x42, ...Buffer.from('ABC123')], // GS k CODE128 {B
        [GS, 0x56, 0x41, 0], // GS V: cut
      ),
      { columns: 32 },
    );
    assert.match(svg, /^<svg [^>]*width="416"/, '384 dots on 58 mm');
    const all = texts(svg);
    const inv = all.find((t) => t.content === 'INV')!;
    assert.equal(inv.fill, '#fff');
    assert.match(
      svg,
      new RegExp(`<rect x="${inv.x}" y="[\\d.]+" width="36" height="24" fill="#000"/>`),
    );
    const wide = all.find((t) => t.content === 'WIDE')!;
    assert.equal(Number(wide.textLength), 4 * 24, 'each character two 12-dot cells');
    const raster = /<g class="image"><path d="([^"]*)"/.exec(svg)!;
    const box = pathBox(raster[1]!);
    assert.equal(box.parts, 2, 'two black runs');
    assert.equal(box.x1 - box.x0, 16, 'from the first black dot to the last');
    const bars =
      /<g class="code" data-symbology="CODE128" data-content="ABC123"><path d="([^"]*)"/.exec(svg)!;
    const barBox = pathBox(bars[1]!);
    assert.equal(barBox.y1 - barBox.y0, 50, 'the bar height set with GS h');
    // CODE128 bars are 1 to 4 modules wide: every bar width a multiple of the 2-dot module.
    for (const m of bars[1]!.matchAll(/h(\d+)v/g)) assert.equal(Number(m[1]) % 2, 0);
    assert.ok(barBox.parts >= 15, `${barBox.parts} bars`);
  });

  it('CJK text on a CJK profile is drawn as the characters, two columns each', () => {
    const cjk = getProfile('pos-5890-gb18030');
    const out = renderReceipt({
      source: { kind: 'instruction', instruction: fixture('table-cjk.json') },
      profile: cjk,
      options: receiptOptions({}),
    });
    const name = fixture('table-cjk.json').order.productInfo[0]!.productName;
    const svg = bytesToSvg(out.bytes, { columns: cjk.fonts.A.columns });
    const run = texts(svg).find((t) => t.content.includes(name))!;
    assert.ok(run, `${name} drawn`);
    // A CJK character takes two 12-dot columns, a Latin one one (escpos-notes, "CJK").
    const columns = [...run.content].reduce((n, c) => n + (c.codePointAt(0)! >= 0x2e80 ? 2 : 1), 0);
    assert.equal(Number(run.textLength), columns * 12);
    assert.match(name, /[\u4e00-\u9fff]/, 'the fixture has CJK characters');
  });

  it('printer-agent render --format png|svg writes the pictures', async () => {
    const file = join(ROOT, 'test', 'fixtures', 'orders', 'table-every-fee.json');
    const png = await runCliInProcess(['render', file, '--format', 'png']);
    assert.equal(png.status, 0, png.stderr);
    const decoded = PNG.sync.read(png.stdoutBytes);
    assert.equal(decoded.width, 608);
    const svg = await runCliInProcess([
      'render',
      file,
      '--format',
      'svg',
      '--profile',
      'generic-58mm',
    ]);
    assert.equal(svg.status, 0, svg.stderr);
    assert.match(svg.stdout, /^<svg [^>]*width="416"/);
    assert.match(svg.stdout, /Order no\./);
  });
});

/** Every `<g class="image">` of an SVG, in drawing order, with the box of its black dots. */
function images(svg: string) {
  return [...svg.matchAll(/<g class="image"><path d="([^"]*)"/g)].map((m) => ({
    at: m.index,
    ...pathBox(m[1]!),
  }));
}

const rasterizer = LineRasterizer.fromSystem();

describe('previews of the logo and of raster lines (issue 18)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pa-preview-logo-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const profile = getProfile('generic-80mm');
  const instruction = printInstructionSchema.parse({
    jobId: 'P-PREVIEW-1',
    orderNo: 'O-PREVIEW-1',
    createTime: '2026-11-25 12:30:05',
    order: {
      productInfo: [
        { productName: '宫保鸡丁', price: 18_500, quantity: 2 },
        { productName: 'Adobo rice', price: 9_500, quantity: 1 },
      ],
      orderType: 1,
      paymentWay: 2,
      paymentTransactionId: 'M-PREVIEW-1',
    },
  });

  it('the logo first, at its width in dots and centred: 288 x 144 at the top of the paper', async () => {
    // A 400 x 200 frame with its diagonal, 36 mm of the 72 mm print width: 288 dots, 144 high.
    const logo = await loadLogo(
      { file: writeLogoPng(join(dir, 'logo.png')), widthMm: 36, align: 'center' },
      [profile],
    );
    const rendered = renderReceipt({
      source: { kind: 'instruction', instruction },
      profile,
      options: { ...receiptOptions({ header: ['Preview Grill'] }), logo },
    });
    const svg = bytesToSvg(rendered.bytes, { columns: 48 });
    const [image, ...others] = images(svg);
    assert.ok(image, 'the logo is drawn');
    assert.equal(
      others.length,
      0,
      'one image: the logo (no rasterizer here: the CJK name prints as ?)',
    );
    // The frame's outer dots are the image's edges: 16-dot margin + (576 - 288) / 2.
    assert.deepEqual([image.x0, image.x1, image.y0, image.y1], [160, 448, 16, 160]);
    assert.ok(image.at < svg.indexOf('<text '), 'drawn before any text');
    const header = texts(svg).find((t) => t.content.includes('Preview Grill'))!;
    assert.ok(Number(header.y) > image.y1, 'the header under the logo');
  });

  it("a CJK name drawn as its line: an image over the name's columns, one text line high", {
    skip: skipWithoutFonts(),
  }, () => {
    const rendered = renderReceipt({
      source: { kind: 'instruction', instruction },
      profile,
      options: { ...receiptOptions({ header: ['Preview Grill'] }), rasterizer },
    });
    const svg = bytesToSvg(rendered.bytes, { columns: 48 });
    const [line, ...others] = images(svg);
    assert.ok(line, 'the raster line is drawn');
    assert.equal(others.length, 0, 'only the CJK line is an image');
    assert.ok(!texts(svg).some((t) => t.content.includes('?')), 'no `?` anywhere');
    // Its ink lies over the name's 8 columns (4 CJK characters), from the first cell on.
    assert.ok(line.x0 >= 16 && line.x0 < 16 + 12, `from the first column: ${line.x0}`);
    assert.ok(line.x1 <= 16 + 8 * 12 && line.x1 > 16 + 7 * 12, `to the 8th column: ${line.x1}`);
    // It stands where the name stands: after the rule above the items, before the amount row
    // "2 x ...", and takes 24 dots where a text line takes 30 (24 + the 6-dot gap).
    const all = texts(svg);
    const amountRow = all.findIndex((t) => /^ {2}2 x /.test(t.content));
    const before = all[amountRow - 1]!;
    const after = all[amountRow]!;
    assert.match(before.content, /^-{48}$/, 'the rule above the items');
    const beforeAt = svg.indexOf(`y="${before.y}"`);
    const afterAt = svg.indexOf(`y="${after.y}"`);
    assert.ok(beforeAt < line.at && line.at < afterAt, 'drawn between them');
    assert.equal(Number(after.y) - Number(before.y), 30 + 24, 'one text line and a 24-dot image');
    const top = Number(before.y) + 30 - 24 * 0.8;
    assert.ok(line.y0 >= top && line.y1 <= top + 24, `inside its 24 dots: ${line.y0}..${line.y1}`);
  });

  it('printer-agent render --format svg draws the CJK lines as images, never `?`', {
    skip: skipWithoutFonts(),
  }, async () => {
    const file = join(ROOT, 'test', 'fixtures', 'orders', 'table-cjk.json');
    const svg = await runCliInProcess(['render', file, '--format', 'svg']);
    assert.equal(svg.status, 0, svg.stderr);
    // Four CJK names and the CJK line of the custom content.
    assert.equal(images(svg.stdout).length, 5);
    assert.ok(!texts(svg.stdout).some((t) => t.content.includes('?')));
  });
});
