/**
 * Routing at the store (issue 18): which roles an order goes to, with which items, and the job
 * id of each role's job. The stored side (one transaction, dedupe per role) is in store tests
 * below; the printed side end to end in test/agent/kitchen-routing.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import {
  DEFAULT_ROUTING,
  namedRoute,
  type RoutingRule,
  routableInstruction,
  routableRecord,
  routedJobId,
  routeOrder,
} from '../../src/jobs/routing.js';
import { JobStore } from '../../src/jobs/store.js';
import { type OrderRecord, orderRecordSchema } from '../../src/protocol/order-record.js';
import { ORDERS_DIR } from '../helpers/receipts.js';
import { instruction, openStore } from './fixtures.js';

const orderRecord = (orderNo: string): OrderRecord => ({
  ...orderRecordSchema.parse(
    JSON.parse(readFileSync(join(ORDERS_DIR, 'record-options-remark.json'), 'utf8')),
  ),
  orderInnerNo: orderNo,
});

const rule = (over: Partial<RoutingRule> & { role: string }): RoutingRule => ({
  layout: over.role === 'receipt' ? 'receipt' : 'kitchen',
  orderTypes: null,
  items: null,
  skus: null,
  ...over,
});

const RESTAURANT: RoutingRule[] = [
  rule({ role: 'receipt' }),
  rule({ role: 'kitchen', orderTypes: ['table', 'queue'] }),
  rule({ role: 'bar', items: ['*beer*', 'iced tea', 'Calamansi*'], skus: ['BAR-*'] }),
];

const order = (orderType: number | null, ...names: string[]) => ({
  orderType,
  items: names.map((name) => ({ name, sku: null })),
});

describe('routeOrder', () => {
  it('default routing: the payment receipt on the receipt role, whatever the order', () => {
    assert.deepEqual(routeOrder(order(3, 'Adobo'), DEFAULT_ROUTING), [
      { role: 'receipt', layout: 'receipt', items: null },
    ]);
  });

  it('a table order with drinks: receipt, kitchen (all items), bar (only the drinks)', () => {
    const routes = routeOrder(
      order(1, 'Adobo', 'San Miguel Beer', 'Iced Tea', 'calamansi juice'),
      RESTAURANT,
    );
    assert.deepEqual(routes, [
      { role: 'receipt', layout: 'receipt', items: null },
      { role: 'kitchen', layout: 'kitchen', items: null },
      { role: 'bar', layout: 'kitchen', items: [1, 2, 3] },
    ]);
  });

  it('a takeout order skips the table-and-queue kitchen; no drink, no bar ticket', () => {
    assert.deepEqual(
      routeOrder(order(3, 'Adobo'), RESTAURANT).map((r) => r.role),
      ['receipt'],
    );
  });

  it('patterns match the whole name, ignoring case; `*` is the only wildcard', () => {
    const bar = [rule({ role: 'bar', items: ['tea'] })];
    // "Iced tea" is not "tea"; a dot or a parenthesis in a pattern is literal.
    assert.deepEqual(routeOrder(order(1, 'Iced tea', 'TEA'), bar)[0]!.items, [1]);
    const literal = [rule({ role: 'bar', items: ['Cola (1.5 L)'] })];
    assert.deepEqual(routeOrder(order(1, 'Cola (1x5 L)', 'cola (1.5 l)'), literal)[0]!.items, [1]);
  });

  it('an order record has no type: an orderTypes rule takes it (a kitchen never misses a paid order)', () => {
    const routes = routeOrder(order(null, 'Adobo'), RESTAURANT);
    assert.deepEqual(
      routes.map((r) => r.role),
      ['receipt', 'kitchen'],
    );
  });

  it('SKU patterns match only items that carry a SKU (records); names still match', () => {
    const record = {
      orderType: null,
      items: [
        { name: 'House red', sku: 'BAR-7' },
        { name: 'Adobo', sku: 'K-1' },
        { name: 'Iced tea', sku: null },
      ],
    };
    assert.deepEqual(routeOrder(record, RESTAURANT).at(-1), {
      role: 'bar',
      layout: 'kitchen',
      items: [0, 2],
    });
  });

  it('an order no rule takes still prints its payment receipt', () => {
    const onlyBar = [rule({ role: 'bar', items: ['*beer*'] })];
    assert.deepEqual(routeOrder(order(1, 'Adobo'), onlyBar), [
      { role: 'receipt', layout: 'receipt', items: null },
    ]);
  });
});

describe('named roles and job ids', () => {
  it('a named role prints the whole order there, in its rule layout or the default for its name', () => {
    assert.deepEqual(namedRoute('bar', RESTAURANT), {
      role: 'bar',
      layout: 'kitchen',
      items: null,
    });
    assert.deepEqual(namedRoute('receipt', RESTAURANT).layout, 'receipt');
    assert.deepEqual(namedRoute('terrace', RESTAURANT).layout, 'kitchen');
    const copy = [rule({ role: 'counter-copy', layout: 'receipt' })];
    assert.equal(namedRoute('counter-copy', copy).layout, 'receipt');
  });

  it('the receipt role and a named role keep the jobId; other roles get #role', () => {
    assert.equal(routedJobId('P-1', 'receipt', false), 'P-1');
    assert.equal(routedJobId('P-1', 'kitchen', false), 'P-1#kitchen');
    assert.equal(routedJobId('P-1', 'kitchen', true), 'P-1');
  });

  it('reads instructions (no SKU) and records (dish or SKU name, SKU code)', () => {
    const i = instruction(1);
    assert.deepEqual(routableInstruction(i), {
      orderType: i.order.orderType,
      items: i.order.productInfo.map((p) => ({ name: p.productName, sku: null })),
    });
    const r: OrderRecord = orderRecord('O-R-1');
    const withSku: OrderRecord = {
      ...r,
      skuList: [
        { ...r.skuList[0]!, productName: undefined, skuName: 'Large', skuNo: 'K-9' },
        ...r.skuList.slice(1),
      ],
    };
    const routable = routableRecord(withSku);
    assert.equal(routable.orderType, null);
    assert.deepEqual(routable.items[0], { name: 'Large', sku: 'K-9' });
  });
});

describe('storing a routed order', () => {
  const routes = routeOrder(order(1, 'Adobo', 'Iced tea'), RESTAURANT);

  it('one job per route in one commit; a redelivery meets each as a duplicate', () => {
    const store = openStore('routed', { memory: true });
    try {
      const first = store.enqueueOrder(
        { kind: 'instruction', instruction: instruction(7) },
        routes,
      );
      assert.deepEqual(
        first.map(({ result }) =>
          result.status === 'inserted'
            ? [result.job.jobId, result.job.printer, result.job.layout, result.job.items]
            : null,
        ),
        [
          ['P-00007', 'receipt', 'receipt', null],
          ['P-00007#kitchen', 'kitchen', 'kitchen', null],
          ['P-00007#bar', 'bar', 'kitchen', [1]],
        ],
      );
      const again = store.enqueueOrder(
        { kind: 'instruction', instruction: instruction(7) },
        routes,
      );
      assert.deepEqual(
        again.map(({ result }) => [
          result.status,
          result.status === 'duplicate' && result.matchedOn,
        ]),
        [
          ['duplicate', 'jobId'],
          ['duplicate', 'jobId'],
          ['duplicate', 'jobId'],
        ],
      );
      // The same order by catch-up: one duplicate per role on (orderNo, role).
      const record = orderRecord(instruction(7).orderNo);
      const pulled = store.enqueueOrder({ kind: 'record', record }, routes);
      assert.deepEqual(
        pulled.map(({ result }) => result.status === 'duplicate' && result.matchedOn),
        ['orderNo', 'orderNo', 'orderNo'],
      );
      assert.equal(store.list({ limit: 10 }).length, 3);
    } finally {
      store.close();
    }
  });

  it('a kitchen job survives a reopen with its layout and items (schema version 4)', () => {
    const store = openStore('routed-reopen');
    store.enqueueOrder({ kind: 'instruction', instruction: instruction(8) }, routes);
    store.close();
    const again = JobStore.open({ stateDir: dirname(store.path) });
    try {
      const bar = again.list({ printer: 'bar' })[0]!;
      assert.equal(bar.layout, 'kitchen');
      assert.deepEqual(bar.items, [1]);
      assert.equal(again.list({ printer: 'receipt' })[0]!.layout, 'receipt');
    } finally {
      again.close();
    }
  });
});
