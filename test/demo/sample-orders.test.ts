/**
 * The demo's data and terminal helpers: every sample order is a valid create request whose
 * receipt adds up to the amount paid, and the curl command survives the shell byte for byte.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { amountPaid, curlOrder, sampleOrders } from '../../src/demo/sample-orders.js';
import { curlCommand, orderNoOnReceipt, paperBox, shellQuote } from '../../src/demo/terminal.js';
import { createParamsSchema, printInstructionSchema } from '../../src/protocol/index.js';
import { receiptFromInstruction } from '../../src/receipt/from-instruction.js';

const NOW = new Date('2026-11-25T04:30:00Z');

describe('demo sample orders', () => {
  const orders = [
    ...sampleOrders(7, '261125-TEST', NOW, 'Asia/Manila'),
    curlOrder('261125-TEST', NOW),
  ];

  it('are valid create parameters (order-api 2.9, 4.2)', () => {
    for (const order of orders) {
      const parsed = createParamsSchema.safeParse(order.param);
      assert.ok(parsed.success, `${order.label}: ${JSON.stringify(parsed.error?.issues)}`);
    }
  });

  it('cover the three order types, cash and online, both fee bearers and two discounts', () => {
    const [table, queue, takeout] = orders;
    assert.equal(table!.param.orderType, 1);
    assert.equal(queue!.param.orderType, 2);
    assert.equal(queue!.param.pickUpNum, '', 'the service generates the pick-up code');
    assert.equal(takeout!.param.orderType, 3);
    assert.ok(takeout!.param.deliveryFee && takeout!.param.packingFee);
    assert.deepEqual(
      orders.slice(0, 3).map((o) => String(o.param.paymentWay)),
      ['2', '1', '1'],
    );
    assert.deepEqual(
      orders.slice(0, 3).map((o) => o.param.discountType ?? null),
      [null, '1', '4'],
    );
  });

  it('have receipts whose total is the amount paid, without warnings', () => {
    orders.forEach((order, i) => {
      const receipt = receiptFromInstruction(
        printInstructionSchema.parse({
          jobId: `P-${i}`,
          orderNo: `O-${i}`,
          createTime: '2026-11-25 12:30:00',
          order: order.param,
        }),
      );
      assert.deepEqual(receipt.warnings, [], order.label);
      assert.equal(receipt.total, order.param.paymentAmount, order.label);
      assert.equal(amountPaid(order.param), order.param.paymentAmount);
    });
  });

  it('have a distinct merchant order number each, within the 50 characters of 2.9', () => {
    const ids = orders.map((o) => o.param.paymentTransactionId);
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ids) assert.ok(id.length <= 50, id);
  });

  it('carry payment times in the given zone, before the order', () => {
    assert.equal(orders[1]!.param.transactionCreateTime, '2026-11-25 12:29:15');
    assert.equal(orders[1]!.param.transactionReturnTime, '2026-11-25 12:29:30');
  });
});

describe('demo terminal helpers', () => {
  it('shellQuote keeps any text intact through sh', () => {
    const nasty = `it's "quoted" $HOME \`id\` \\ \n; rm -rf / '' end`;
    const run = spawnSync('sh', ['-c', `printf '%s' ${shellQuote(nasty)}`], { encoding: 'utf8' });
    assert.equal(run.stdout, nasty);
  });

  it('curlCommand passes the body as one argument, unchanged', () => {
    const body = JSON.stringify({
      param: JSON.stringify({ name: 'Lola\'s "best"' }),
      sign: 'a+b/c==',
    });
    const command = curlCommand('http://127.0.0.1:1/open-api/order/create', body);
    assert.match(
      command,
      /^curl -s -w '\\n' -X POST 'http:\/\/127\.0\.0\.1:1\/open-api\/order\/create' /,
    );
    // The same words through sh, with curl replaced by something that prints its last argument.
    const run = spawnSync(
      'sh',
      ['-c', `curl() { for a; do last="$a"; done; printf '%s' "$last"; }; ${command}`],
      { encoding: 'utf8' },
    );
    assert.equal(run.stdout, body);
  });

  it('orderNoOnReceipt reads the order number line', () => {
    assert.equal(
      orderNoOnReceipt('TABLE ORDER\nOrder no.        O20261125000001\n'),
      'O20261125000001',
    );
    assert.equal(orderNoOnReceipt('TEST PAGE\n'), null);
  });

  it('paperBox frames every line to the paper width', () => {
    const box = paperBox('Kusina\n  1 x PHP 45.00\n', 20, '');
    assert.deepEqual(box.split('\n'), [
      `┌${'─'.repeat(22)}┐`,
      `│ Kusina${' '.repeat(14)} │`,
      `│   1 x PHP 45.00${' '.repeat(5)} │`,
      `└${'─'.repeat(22)}┘`,
    ]);
  });
});
