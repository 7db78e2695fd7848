/**
 * Issue 18, every character on paper: a line holding characters no code page of the printer
 * carries (CJK on a printer without a CJK font, Thai, Arabic) prints as a raster image of the
 * whole line, with the columns its text line would have; every other line stays code-page text,
 * and the peso sign stays a user-defined character on the amount lines. Read off the emulator's
 * decoded paper (its GS v 0 decoder, not our encoder), with the system fonts the agent would use
 * (Debian packages fonts-dejavu-core and fonts-unifont; .ci/run installs them).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderText, type Ticket, VirtualPrinter } from '../../src/emulator/index.js';
import { printInstructionSchema } from '../../src/protocol/print-protocol.js';
import { receiptOptions } from '../../src/receipt/options.js';
import { getProfile } from '../../src/receipt/profile.js';
import { LineRasterizer } from '../../src/receipt/raster-text.js';
import { renderReceipt, renderReceiptInTurns } from '../../src/receipt/render.js';
import { skipWithoutFonts } from '../helpers/fonts.js';
import { paperText } from '../helpers/paper-text.js';

const rasterizer = LineRasterizer.fromSystem();
const NO_FONTS = skipWithoutFonts();

const instruction = printInstructionSchema.parse({
  jobId: 'P-RASTER-1',
  orderNo: 'O-RASTER-1',
  createTime: '2026-11-25 12:30:05',
  order: {
    productInfo: [
      { productName: '宫保鸡丁', price: 18_500, quantity: 2 },
      { productName: 'Adobo rice', price: 9_500, quantity: 1 },
      { productName: 'ผัดไทย กุ้งสด', price: 12_000, quantity: 1 },
      { productName: 'شاورما دجاج', price: 15_000, quantity: 1 },
    ],
    orderType: 1,
    paymentWay: 2,
    paymentTransactionId: 'M-RASTER-1',
  },
});

const options = receiptOptions({
  header: ['Manila Wok'],
  money: { currency: 'PHP', locale: 'en-PH', display: 'symbol' },
});

/** The receipt as the emulator decodes it: its first ticket. */
function printed(profileId: string, withRaster = true) {
  const profile = getProfile(profileId);
  const rendered = renderReceipt({
    source: { kind: 'instruction', instruction },
    profile,
    options: { ...options, rasterizer: withRaster ? rasterizer : null },
  });
  const emulator = new VirtualPrinter({ columns: profile.fonts.A.columns });
  emulator.write(rendered.bytes);
  // A printer without a cutter leaves its ticket open.
  const ticket: Ticket = emulator.paper.tickets[0] ?? emulator.paper.current;
  return { rendered, profile, ticket };
}

describe('raster lines for characters no code page carries', { skip: NO_FONTS }, () => {
  it('generic-80mm: the CJK, Thai and Arabic names print as line images; the rest stays text', () => {
    const { rendered, profile, ticket } = printed('generic-80mm');
    // The text twin shows the names as written, never `?`.
    assert.match(rendered.text, /^宫保鸡丁$/m);
    assert.match(rendered.text, /^ผัดไทย กุ้งสด$/m);
    assert.match(rendered.text, /^شاورما دجاج$/m);
    assert.ok(
      rendered.warnings.every((w) => !w.includes("'?'")),
      rendered.warnings.join('\n'),
    );

    // On paper: three raster images, as wide as the print area and one text line high...
    const rasters = ticket.images.filter((i) => i.source === 'GS v 0');
    assert.equal(rasters.length, 3);
    for (const image of rasters) {
      assert.equal(image.width, profile.dotsPerLine);
      assert.equal(image.height, 24);
      assert.ok(
        image.data.some((b) => b !== 0),
        'ink on the line',
      );
    }
    // ...standing where the names stand: each item's name line is followed by its amount row,
    // which stays text, with the peso sign as the user-defined character.
    const text = paperText(ticket);
    assert.doesNotMatch(text, /\?/, 'no replacement character anywhere');
    const lines = text.split('\n');
    // The emulator's text shows each image as one line `[IMAGE WxH]` where it printed.
    const at = lines.flatMap((line, i) => (line === '[IMAGE 576x24]' ? [i] : []));
    assert.equal(at.length, 3);
    for (const i of at)
      assert.match(
        lines[i + 1] ?? '',
        /^ {2}\d+ x ₱[\d,]+\.\d\d +₱[\d,]+\.\d\d$/,
        `after the image: ${lines[i + 1]}`,
      );
    assert.match(text, /^Adobo rice$/m, 'a Latin name stays text');
    assert.match(text, /^TOTAL +₱/m);
  });

  it('58 mm paper: the images are 384 dots wide', () => {
    const { ticket } = printed('generic-58mm');
    const rasters = ticket.images.filter((i) => i.source === 'GS v 0');
    assert.equal(rasters.length, 3);
    assert.ok(rasters.every((i) => i.width === 384 && i.height === 24));
  });

  it('a line keeps its columns: a double-height banner draws 48 dots high', () => {
    const big = printInstructionSchema.parse({
      ...instruction,
      order: { ...instruction.order, customPrintContext: '欢迎光临' },
    });
    const profile = getProfile('generic-80mm');
    const rendered = renderReceipt({
      source: { kind: 'instruction', instruction: big },
      profile,
      options: { ...options, rasterizer },
      document: { layout: 'kitchen', role: 'kitchen' },
    });
    const emulator = new VirtualPrinter({ columns: 48 });
    emulator.write(rendered.bytes);
    const images = emulator.paper.tickets[0]!.images;
    // The kitchen ticket's item lines are double height (quantity and name): 48 dots.
    assert.ok(images.some((i) => i.height === 48 && i.width === 576));
    // The custom content line is normal height.
    assert.ok(images.some((i) => i.height === 24));
  });

  it('the CJK clone prints CJK through its own font: no image for the Chinese name', () => {
    const { ticket } = printed('pos-5890-gb18030');
    const text = renderText(ticket);
    assert.match(text, /宫保鸡丁/);
    // Thai and Arabic are still drawn.
    assert.equal(ticket.images.filter((i) => i.source === 'GS v 0').length, 2);
  });

  it('without a rasterizer (no fonts) the characters print as `?` with a warning, as before', () => {
    const { rendered, ticket } = printed('generic-80mm', false);
    assert.equal(ticket.images.length, 0);
    assert.match(rendered.text, /^\?\?\?\?$/m);
    assert.ok(rendered.warnings.some((w) => w.includes("replaced by '?'")));
  });

  it('the agent draws them one line per turn: the event loop runs between lines, same bytes', async () => {
    const many = printInstructionSchema.parse({
      ...instruction,
      order: {
        ...instruction.order,
        productInfo: Array.from({ length: 12 }, (_, i) => ({
          productName: `${i} 宫保鸡丁`,
          price: 100,
          quantity: 1,
        })),
      },
    });
    const input = {
      source: { kind: 'instruction' as const, instruction: many },
      profile: getProfile('generic-80mm'),
      options: { ...options, rasterizer },
    };
    let turns = 0;
    let counting = true;
    const count = () => {
      turns++;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const inTurns = await renderReceiptInTurns(input);
    counting = false;
    // Twelve raster lines, each after a turn: other work ran between them.
    assert.ok(turns >= 11, `${turns} turns of the event loop while 12 lines were drawn`);
    assert.deepEqual(inTurns.bytes, renderReceipt(input).bytes);
  });

  it('reports what a raster line costs: about 1.7 KB, 1.8 s at 9600 baud on 80 mm', () => {
    const { rendered: drawn } = printed('generic-80mm');
    const { rendered: plain } = printed('generic-80mm', false);
    const perLine = (drawn.bytes.length - plain.bytes.length) / 3;
    // 576 / 8 = 72 bytes per dot row, 24 rows, 8 bytes of GS v 0 header, minus the text it replaces.
    assert.ok(perLine > 1_650 && perLine < 1_740, `${perLine} bytes per raster line`);
  });
});
