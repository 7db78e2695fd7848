/**
 * Rendering a 20-item receipt end to end (model, layout, code-page mapping, encoding, text twin)
 * beside two baselines: `receiptline`, a peer that turns its own markup of the same receipt
 * (columns, prices formatted, QR code, cut) into ESC/POS (issue 16: at least as fast as the
 * peer), and ReceiptPrinterEncoder encoding the same finished lines alone, the library our
 * encoder replaced (decision 155): it once was the floor, now it is slower than the whole render.
 */
import type { Codepage } from '@point-of-sale/codepage-encoder';
import ReceiptPrinterEncoder from '@point-of-sale/receipt-printer-encoder';
import receiptline from 'receiptline';
import { printInstructionSchema } from '../src/protocol/print-protocol.js';
import { receiptOptions } from '../src/receipt/options.js';
import { getProfile } from '../src/receipt/profile.js';
import { renderReceipt } from '../src/receipt/render.js';
import { type Comparison, compare, measureTogether } from './harness.js';

export function benchReceipt(minMs: number): Comparison[] {
  const instruction = printInstructionSchema.parse({
    jobId: 'P-BENCH',
    orderNo: 'O-BENCH-0001',
    pickUpNo: 'A023',
    createTime: '2026-11-25 12:30:05',
    order: {
      productInfo: Array.from({ length: 20 }, (_, i) => ({
        productName: `Menu item number ${i + 1} with a longer name`,
        price: 12_500 + i * 25,
        quantity: 1 + (i % 3),
      })),
      orderType: 2,
      paymentWay: 1,
      serviceFee: 1000,
      paymentChannel: 'CHANNEL_B_URL',
      paymentTransactionId: 'MCH-1',
      transactionCreateTime: '2026-11-25 12:29:00',
      transactionReturnTime: '2026-11-25 12:29:30',
      customPrintContext: 'Thank you for dining with us!\nFree Wi-Fi: CafeGuest',
    },
  });
  const profile = getProfile('generic-80mm');
  const options = receiptOptions({
    header: ['Kusina ni Lola', '123 Mabini St.'],
    footer: ['Salamat po!'],
    qr: true,
  });
  const input = { source: { kind: 'instruction' as const, instruction }, profile, options };
  const lines = renderReceipt(input).text.split('\n');

  const encoderAlone = () => {
    const encoder = new ReceiptPrinterEncoder({
      columns: 48,
      newline: '\n',
      codepageMapping: profile.codepageNumbers,
    });
    encoder.initialize().codepage(profile.codepage as Codepage);
    for (const line of lines) encoder.line(line);
    encoder.raw([0x1d, 0x56, 0x42, 0x00]);
    return encoder.encode();
  };
  const order = instruction.order;
  const money = (cents: number) => (cents / 100).toFixed(2);
  const withReceiptline = () => {
    const doc = [
      '^^Kusina ni Lola',
      '123 Mabini St.',
      '-',
      `Order | ${instruction.orderNo}`,
      `^^Pick-up ${instruction.pickUpNo}`,
      `Created | ${instruction.createTime}`,
      '-',
      ...order.productInfo.map(
        (item) => `${item.quantity} x ${item.productName} | ${money(item.price * item.quantity)}`,
      ),
      '-',
      `Service fee | ${money(order.serviceFee ?? 0)}`,
      `^TOTAL | ${money(order.productInfo.reduce((sum, item) => sum + item.price * item.quantity, order.serviceFee ?? 0))}`,
      `Paid by | ${order.paymentChannel}`,
      `Transaction | ${order.paymentTransactionId}`,
      `Paid at | ${order.transactionReturnTime}`,
      '-',
      ...(order.customPrintContext ?? '').split('\n'),
      'Salamat po!',
      `{code:${instruction.orderNo};option:qrcode,6,m}`,
      '=',
    ].join('\n');
    return receiptline.transform(doc, {
      cpl: 48,
      encoding: 'multilingual',
      command: 'escpos',
      cutting: true,
    });
  };
  const [subject, baseline, peer] = measureTogether(
    [
      { name: 'renderReceipt (20 items)', fn: () => renderReceipt(input) },
      { name: 'ReceiptPrinterEncoder alone, same lines', fn: encoderAlone },
      { name: 'receiptline, same receipt', fn: withReceiptline },
    ],
    minMs,
  );
  return [
    compare('render a 20-item receipt, vs the encoder library it replaced', subject!, baseline!),
    compare('render a 20-item receipt, vs receiptline', subject!, peer!),
  ];
}
