/**
 * Reliability guarantee 9: text never becomes a command. Control bytes in every text field of an
 * instruction and of an order record must produce exactly the bytes the same order produces
 * without them, on the receipt and on the kitchen ticket: no ESC/GS/DLE/FS sequence other than those the layout emits, and never the
 * drawer kick `1B 70`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { orderRecordSchema } from '../../src/protocol/order-record.js';
import { storedInstructionSchema } from '../../src/protocol/print-protocol.js';
import { getProfile, loadProfiles } from '../../src/receipt/profile.js';
import {
  type ReceiptSource,
  type RenderDocument,
  renderReceipt,
} from '../../src/receipt/render.js';
import { ESC_POS_PAYLOADS, STORE_OPTIONS, stripControls } from '../helpers/receipts.js';

const PAYLOADS = ESC_POS_PAYLOADS;

/** Read as the agent reads a stored job to print it (decision 238): ids carry the payloads too. */
function instruction(textOf: (base: string, i: number) => string): ReceiptSource {
  const t = textOf;
  return {
    kind: 'instruction',
    instruction: storedInstructionSchema.parse({
      jobId: 'P-INJ-1',
      orderNo: 'O-INJ-1',
      pickUpNo: 'A01',
      createTime: '2026-11-25 12:00:00',
      order: {
        productInfo: PAYLOADS.map((_, i) => ({
          productName: t(`Dish ${i}`, i),
          price: 1000,
          quantity: 1,
        })),
        orderType: 3,
        paymentWay: 1,
        deliveryFee: 100,
        packingFee: 100,
        userName: t('Juan', 0),
        userPhone: t('0917', 1),
        userAddress: t('Mabini St', 2),
        customPrintContext: t('Custom line one', 3),
        paymentChannel: t('CHANNEL_B_URL', 4),
        paymentTransactionId: t('MCH-1', 5),
        discountAmount: 100,
        discountType: 2,
        discountNo: t('PWD-12345', 6),
        discounterName: t('Maria', 7),
        discountValidityPeriod: t('2027-01-01', 8),
        transactionId: t('TXN-1', 9),
        paymentPlatform: t('Platform', 10),
        transactionCreateTime: '2026-11-25 11:59:00',
        transactionReturnTime: '2026-11-25 11:59:30',
      },
    }),
  };
}

function record(textOf: (base: string, i: number) => string): ReceiptSource {
  const t = textOf;
  return {
    kind: 'record',
    record: orderRecordSchema.parse({
      orderInnerNo: 'O-INJ-2',
      restaurantNo: 'R1',
      branchIdentifier: 'B1',
      orderSerialNumber: 7,
      channelName: t('Wallet', 0),
      realAmount: 2000,
      orderStatus: 2,
      paymentStatus: 2,
      createTime: '2026-11-25 12:00:00',
      paymentTime: '2026-11-25 12:00:10',
      receiptNo: t('R-1', 1),
      skuList: [
        {
          categoryNo: 'C',
          productNo: 'P',
          productName: t('Noodles', 2),
          variant: 1,
          skuNo: t('P-1', 7),
          skuName: t('Large', 3),
          count: 1,
          price: 2000,
          optionAmount: 0,
          optionList: [
            {
              optionName: t('Spice', 4),
              optionItemList: [{ optionItemName: t('Hot', 5), price: 0 }],
            },
          ],
        },
      ],
      remark: t('No onions', 6),
    }),
  };
}

const inject = (base: string, i: number) => `${base}${PAYLOADS[i % PAYLOADS.length]}!`;
const clean = (base: string, i: number) => stripControls(inject(base, i));

function indexOfSequence(bytes: Uint8Array, seq: readonly number[]): number {
  outer: for (let i = 0; i + seq.length <= bytes.length; i++) {
    for (let j = 0; j < seq.length; j++) if (bytes[i + j] !== seq[j]) continue outer;
    return i;
  }
  return -1;
}

/** The payment receipt, and the kitchen ticket (options, SKU, remark in other places). */
const DOCUMENTS: ReadonlyArray<RenderDocument> = [
  { layout: 'receipt' },
  { layout: 'kitchen', role: 'kitchen' },
];

describe('ESC/POS injection through text fields', () => {
  for (const profileId of loadProfiles().keys()) {
    for (const document of DOCUMENTS) {
      const on = `${profileId} (${document.layout})`;
      it(`instruction fields on ${on}: same bytes as without the control characters`, () => {
        const profile = getProfile(profileId);
        const options = STORE_OPTIONS;
        const dirty = renderReceipt({ source: instruction(inject), profile, options, document });
        const safe = renderReceipt({ source: instruction(clean), profile, options, document });
        assert.deepEqual(Buffer.from(dirty.bytes), Buffer.from(safe.bytes));
        assert.equal(indexOfSequence(dirty.bytes, [0x1b, 0x70]), -1, 'no drawer kick');
        assert.ok(
          dirty.warnings.some((w) => /control or invisible character/.test(w)),
          'removing characters is reported as a warning',
        );
      });

      it(`order record fields on ${on}: same bytes as without the control characters`, () => {
        const profile = getProfile(profileId);
        const options = STORE_OPTIONS;
        const dirty = renderReceipt({ source: record(inject), profile, options, document });
        const safe = renderReceipt({ source: record(clean), profile, options, document });
        assert.deepEqual(Buffer.from(dirty.bytes), Buffer.from(safe.bytes));
        assert.equal(indexOfSequence(dirty.bytes, [0x1b, 0x70]), -1, 'no drawer kick');
        if (document.layout === 'kitchen')
          assert.ok(safe.text.includes(`SKU ${clean('P-1', 7)}`), 'the SKU, cleaned');
      });
    }
  }

  it('characters a code page keeps at control positions never reach the printer as control bytes', () => {
    // In PC437/PC858 the byte 0x1B prints as '←' and 0x10 as '►': an encoder that maps them back
    // would emit ESC and DLE. They must print as '?' instead.
    const arrows = (base: string) => `${base} ←p►\x04\x01 ☺♪⌂`;
    const question = (base: string) => `${base} ?p? ???`;
    const profile = getProfile('generic-80mm');
    const dirty = renderReceipt({ source: instruction(arrows), profile, options: STORE_OPTIONS });
    const safe = renderReceipt({ source: instruction(question), profile, options: STORE_OPTIONS });
    assert.deepEqual(Buffer.from(dirty.bytes), Buffer.from(safe.bytes));
    assert.ok(
      dirty.warnings.some((w) => w.includes('U+2190')),
      'the replaced arrow is reported',
    );
  });
});
