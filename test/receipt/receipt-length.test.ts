/**
 * print-protocol v1.1 §9 (issue 13 item 5): a receipt never prints more than a documented length.
 * Free text (custom print content, remark) is cut at FREE_TEXT_MAX_LINES lines on paper, the cut
 * is marked on the receipt and reported as a CONTENT_CUT notice; items, amounts and payment lines
 * are never cut, and a receipt whose items alone would pass RECEIPT_MAX_LINES is refused
 * (RENDER_FAILED) instead of printing meters of paper.
 *
 * Checked on the paper the emulator decodes from the exact bytes, not only on the layout.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderText, VirtualPrinter } from '../../src/emulator/index.js';
import { isAgentError } from '../../src/errors.js';
import {
  FREE_TEXT_MAX_CHARS,
  FREE_TEXT_MAX_LINES,
  RECEIPT_MAX_LINES,
} from '../../src/protocol/limits.js';
import { orderRecordSchema } from '../../src/protocol/order-record.js';
import { printInstructionSchema } from '../../src/protocol/print-protocol.js';
import { layoutLength } from '../../src/receipt/layout.js';
import { getProfile } from '../../src/receipt/profile.js';
import { type ReceiptSource, renderReceipt } from '../../src/receipt/render.js';
import { STORE_OPTIONS } from '../helpers/receipts.js';

function instruction(customPrintContext: string, products = 3): ReceiptSource {
  return {
    kind: 'instruction',
    instruction: printInstructionSchema.parse({
      jobId: 'P-LEN-1',
      orderNo: 'O-LEN-1',
      createTime: '2026-11-25 12:00:00',
      order: {
        productInfo: Array.from({ length: products }, (_, i) => ({
          productName: `Dish number ${i + 1}`,
          price: 1000 + i,
          quantity: 1,
        })),
        orderType: 1,
        paymentWay: 2,
        paymentTransactionId: 'MCH-LEN-1',
        customPrintContext,
      },
    }),
  };
}

function record(remark: string, skus: number): ReceiptSource {
  return {
    kind: 'record',
    record: orderRecordSchema.parse({
      orderInnerNo: 'O-LEN-2',
      restaurantNo: 'R1',
      branchIdentifier: 'B1',
      orderSerialNumber: 1,
      realAmount: 1000 * skus,
      orderStatus: 2,
      paymentStatus: 2,
      createTime: '2026-11-25 12:00:00',
      paymentTime: '2026-11-25 12:00:00',
      skuList: Array.from({ length: skus }, (_, i) => ({
        categoryNo: 'C1',
        productNo: `P${i}`,
        variant: 2,
        skuName: `Item ${i + 1}`,
        count: 1,
        price: 1000,
        optionAmount: 0,
      })),
      remark,
    }),
  };
}

/** The decoded paper of one receipt on the 58 mm profile. */
function paper(source: ReceiptSource, profileId = 'generic-58mm') {
  const profile = getProfile(profileId);
  const rendered = renderReceipt({ source, profile, options: STORE_OPTIONS });
  const printer = new VirtualPrinter({ columns: profile.fonts.A.columns });
  assert.equal(printer.write(rendered.bytes), true);
  const ticket = printer.paper.tickets[0];
  assert.ok(ticket, 'the receipt was cut');
  return { rendered, ticket, text: renderText(ticket) };
}

describe('receipt length (print-protocol v1.1 §9)', () => {
  it('cuts custom print content at FREE_TEXT_MAX_LINES lines, marks the cut and reports it', () => {
    // 1,000 lines within the 2,000-character limit of the field: the worst the schema lets in.
    const custom = Array.from({ length: FREE_TEXT_MAX_CHARS / 2 }, () => 'x').join('\n');
    assert.equal([...custom].length, FREE_TEXT_MAX_CHARS - 1);
    const { rendered, ticket, text } = paper(instruction(custom));

    const xs = ticket.lines.filter((l) => l.text.trim() === 'x');
    assert.equal(xs.length, FREE_TEXT_MAX_LINES - 1, 'the first lines are kept');
    const cut = ticket.lines.find((l) => /CUT: \d+\+? lines not printed/.test(l.text));
    assert.ok(cut, 'the cut is marked on the paper');
    assert.match(
      cut.text,
      new RegExp(`CUT: ${1000 - (FREE_TEXT_MAX_LINES - 1)} lines not printed`),
    );
    assert.ok(
      cut.runs.some((r) => r.reverse && r.text.includes('CUT')),
      'the marking is printed reversed, like REPRINT',
    );
    // Everything after the free text is still there: nothing but free text is cut.
    assert.match(text, /TOTAL/);
    for (const n of [1, 2, 3]) assert.match(text, new RegExp(`Dish number ${n}`));

    assert.deepEqual(
      rendered.notices.map((n) => n.code),
      ['CONTENT_CUT'],
    );
    assert.match(rendered.notices[0]!.message, /^order\.customPrintContext: 1000 lines/);
  });

  it('counts wrapped lines: one long paragraph is cut too', () => {
    const custom = 'word '.repeat(FREE_TEXT_MAX_CHARS / 5).trim();
    const { rendered, text } = paper(instruction(custom));
    assert.equal(rendered.notices.length, 1);
    assert.match(text, /CUT: \d+\+? lines not printed/);
  });

  it('leaves free text of exactly FREE_TEXT_MAX_LINES lines alone', () => {
    const custom = Array.from({ length: FREE_TEXT_MAX_LINES }, (_, i) => `line ${i}`).join('\n');
    const { rendered, text } = paper(instruction(custom));
    assert.deepEqual(rendered.notices, []);
    assert.doesNotMatch(text, /CUT:/);
    assert.match(text, new RegExp(`line ${FREE_TEXT_MAX_LINES - 1}\\b`));
  });

  it("cuts an order record's remark the same way", () => {
    const remark = Array.from({ length: 500 }, (_, i) => `r${i}`).join('\n');
    const { rendered, text } = paper(record(remark, 2));
    assert.deepEqual(
      rendered.notices.map((n) => n.code),
      ['CONTENT_CUT'],
    );
    assert.match(rendered.notices[0]!.message, /^remark: 500 lines/);
    assert.match(text, /CUT: 461 lines not printed/);
  });

  it('a remark of megabytes in one paragraph is cut without wrapping it whole', () => {
    // An order record's remark has no length limit of its own (the 4 MiB answer bounds it).
    const { rendered, text } = paper(record('z'.repeat(3_000_000), 2));
    assert.equal(rendered.notices.length, 1);
    assert.match(rendered.notices[0]!.message, /^remark: at least \d+ lines on paper/);
    assert.match(text, /CUT: \d+\+ lines not printed/);
    assert.ok(layoutLength(rendered.layout.commands) < RECEIPT_MAX_LINES);
  });

  it('the longest instruction the create limits allow stays under RECEIPT_MAX_LINES', () => {
    // 50 products of 50 characters (wrapping on 58 mm), the longest free text.
    const source = instruction(
      Array.from({ length: FREE_TEXT_MAX_CHARS / 2 }, () => 'y').join('\n'),
      50,
    );
    if (source.kind === 'instruction')
      for (const p of source.instruction.order.productInfo) p.productName = 'N'.repeat(50);
    for (const profileId of ['generic-58mm', 'generic-80mm']) {
      const rendered = renderReceipt({
        source,
        profile: getProfile(profileId),
        options: STORE_OPTIONS,
      });
      const length = layoutLength(rendered.layout.commands);
      assert.ok(length < RECEIPT_MAX_LINES, `${profileId}: ${length} lines`);
    }
  });

  it('refuses (RENDER_FAILED) a record whose items alone would pass RECEIPT_MAX_LINES', () => {
    assert.throws(
      () =>
        renderReceipt({
          source: record('', RECEIPT_MAX_LINES),
          profile: getProfile('generic-58mm'),
          options: STORE_OPTIONS,
        }),
      (error: unknown) =>
        isAgentError(error) &&
        error.code === 'RENDER_FAILED' &&
        /more than the 600 a receipt may/.test(error.message),
    );
  });
});
