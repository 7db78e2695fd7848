/**
 * Golden kitchen tickets (issue 18): each case rendered as the text twin and compared with a
 * reviewed file `test/fixtures/receipts/kitchen.<case>.<profile>.txt`. After a deliberate layout
 * change run `UPDATE_GOLDEN=1 node --import tsx --test test/receipt/kitchen-golden.test.ts`, then
 * read every changed file. Beside the files, every ticket is checked for what must hold whatever
 * the layout looks like: no money, every line within the columns, the listed dishes in order with
 * their quantity in large print, the paper's end the profile has, and no beep without a buzzer.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AgentError } from '../../src/errors.js';
import { centsToDecimal, formatMoney } from '../../src/protocol/money.js';
import { charsetFor } from '../../src/receipt/charset.js';
import { BIG, MARK, TALL_BOLD } from '../../src/receipt/layout.js';
import type { Receipt } from '../../src/receipt/model.js';
import { getProfile, profileColumns } from '../../src/receipt/profile.js';
import { type Rendered, renderReceipt } from '../../src/receipt/render.js';
import { displayWidth } from '../../src/receipt/width.js';
import {
  GOLDEN_CASES,
  GOLDEN_DIR,
  KITCHEN_CASES,
  type KitchenDocument,
  loadFixture,
  STORE_OPTIONS,
} from '../helpers/receipts.js';

const update = process.env.UPDATE_GOLDEN === '1';

function kitchen(fixture: string, profileId: string, document: KitchenDocument, markings = {}) {
  return renderReceipt({
    source: loadFixture(fixture),
    profile: getProfile(profileId),
    options: STORE_OPTIONS,
    markings,
    document,
  });
}

/** Every amount of the order, as the receipt would print it and as a bare number. */
function moneyTexts(r: Receipt): string[] {
  const amounts = [
    r.subtotal,
    r.total,
    r.amountPaid,
    ...r.items.flatMap((i) => [
      i.unitPrice,
      i.lineTotal,
      ...i.options.flatMap((o) => o.items.map((x) => x.price)),
    ]),
    ...r.adjustments.map((a) => a.amount),
    r.discount?.amount,
  ].filter((a): a is number => typeof a === 'number' && a !== 0);
  return amounts.flatMap((a) => [
    formatMoney(a, STORE_OPTIONS.money),
    formatMoney(a, { ...STORE_OPTIONS.money, display: 'code' }),
    formatMoney(Math.abs(a), { ...STORE_OPTIONS.money, display: 'code' }).replace('PHP ', ''),
    centsToDecimal(Math.abs(a)),
  ]);
}

/** What every kitchen ticket must be, whatever its golden file says. */
function checkTicket(rendered: Rendered, profileId: string, document: KitchenDocument): void {
  const profile = getProfile(profileId);
  const columns = profileColumns(profile);
  const { text, layout, receipt } = rendered;

  // No money: not the currency, not one amount of the order.
  assert.ok(!text.includes('PHP'), 'no currency code');
  assert.ok(!text.includes('₱'), 'no peso sign');
  for (const money of moneyTexts(receipt)) assert.ok(!text.includes(money), `no amount ${money}`);
  assert.equal(
    layout.commands.filter((c) => c.kind === 'qr').length,
    0,
    'no QR code on a kitchen ticket',
  );

  // Every line within the columns, on the layout (styles counted) and on the twin.
  for (const c of layout.commands) {
    if (c.kind !== 'line') continue;
    const width = c.segments.reduce((n, s) => n + displayWidth(s.text) * s.style.width, 0);
    assert.ok(width <= columns, `${JSON.stringify(c.segments)} is ${width} columns`);
  }
  for (const line of text.split('\n')) assert.ok(displayWidth(line) <= columns, line);

  // The station, in capitals, near the top.
  const lines = text.split('\n');
  const marks = layout.commands.filter(
    (c) => c.kind === 'line' && c.segments.some((s) => s.style === MARK),
  ).length;
  assert.ok(
    lines.slice(0, marks + 3).some((l) => l.trim() === document.role.toUpperCase()),
    'the role in capitals at the top',
  );

  // The listed dishes, in order, each with its quantity in large print and its name tall and
  // bold; the others not at all.
  const charset = charsetFor(profile);
  const listed = new Set(document.items ?? receipt.items.map((_, i) => i));
  const itemLines = layout.commands.filter(
    (c) => c.kind === 'line' && c.segments.some((s) => s.style === TALL_BOLD),
  );
  const names = itemLines
    .map((c) => (c.kind === 'line' ? c.segments.find((s) => s.style === TALL_BOLD)!.text : ''))
    .join(' ')
    .replace(/\s+/g, '');
  let from = 0;
  const quantities: string[] = [];
  for (const c of itemLines) {
    if (c.kind !== 'line') continue;
    const big = c.segments.find((s) => s.style === BIG);
    if (big) quantities.push(big.text);
  }
  const expected: string[] = [];
  receipt.items.forEach((item, i) => {
    const name = charset.map(item.name).text.replace(/\s+/g, '');
    const at = names.indexOf(name, from);
    if (listed.has(i)) {
      assert.ok(at >= 0, `item ${i} ${item.name} listed in order`);
      from = at + name.length;
      expected.push(`${item.quantity}x`);
    } else {
      assert.ok(!names.includes(name), `item ${i} ${item.name} belongs to another ticket`);
    }
  });
  assert.deepEqual(quantities, expected, 'each quantity in large print beside its name');

  // The paper's end as the profile has it; these profiles have no buzzer.
  const end = layout.commands.at(-1);
  if (profile.cutter === 'none')
    assert.deepEqual(end, { kind: 'feed', lines: profile.tearFeedLines });
  else assert.deepEqual(end, { kind: 'cut', type: profile.cutter });
  assert.ok(!layout.commands.some((c) => c.kind === 'buzzer'));
}

describe('golden kitchen tickets', () => {
  it('cover every order type, records, CJK, a part of an order, a reprint and a late ticket', () => {
    const both = (c: (typeof KITCHEN_CASES)[number]) =>
      c.profiles.includes('generic-58mm') && c.profiles.includes('generic-80mm');
    const fixtures = new Set(KITCHEN_CASES.filter(both).map((c) => c.fixture));
    for (const f of [
      'table-offline-simple',
      'queue-online-pwd',
      'takeout-online-sc',
      'table-cjk',
      'record-cjk-options',
      'record-options-remark',
    ])
      assert.ok(fixtures.has(f), `${f} on both widths`);
    assert.ok(KITCHEN_CASES.some((c) => both(c) && c.document.items));
    assert.ok(KITCHEN_CASES.some((c) => both(c) && c.markings && 'reprint' in c.markings));
    assert.ok(KITCHEN_CASES.some((c) => both(c) && c.document.placedMinutesAgo));
  });

  for (const c of KITCHEN_CASES) {
    for (const profileId of c.profiles) {
      it(`${c.name} on ${profileId}`, () => {
        const rendered = kitchen(c.fixture, profileId, c.document, c.markings);
        checkTicket(rendered, profileId, c.document);
        const file = join(GOLDEN_DIR, `kitchen.${c.name}.${profileId}.txt`);
        if (update || !existsSync(file)) {
          writeFileSync(file, rendered.text);
          if (!update)
            assert.fail(`${file} was missing and has been written: review it, then run again`);
          return;
        }
        assert.equal(rendered.text, readFileSync(file, 'utf8'));
      });
    }
  }
});

describe('kitchen ticket content', () => {
  const text = (minutes: number | null) =>
    kitchen('table-offline-simple', 'generic-58mm', {
      layout: 'kitchen',
      role: 'kitchen',
      placedMinutesAgo: minutes,
    });

  it('says how long ago a late order was placed, marked, from one minute on', () => {
    for (const [minutes, shown] of [
      [1, 'placed 1 min ago'],
      [25.9, 'placed 25 min ago'],
      [60, 'placed 1 h ago'],
      [125, 'placed 2 h 5 min ago'],
    ] as const) {
      const rendered = text(minutes);
      const line = rendered.layout.commands.find(
        (c) => c.kind === 'line' && c.segments.some((s) => s.text.trim() === shown),
      );
      assert.ok(line && line.kind === 'line', `${minutes}: ${shown}`);
      assert.ok(
        line.segments.some((s) => s.style === MARK),
        'white on black',
      );
      // Near the top: before the first dish.
      const lines = rendered.text.split('\n');
      const at = lines.findIndex((l) => l.trim() === shown);
      assert.ok(at >= 0 && at < lines.findIndex((l) => l.includes('Sinigang')));
    }
    for (const minutes of [null, 0, 0.9, Number.NaN]) {
      assert.ok(!text(minutes).text.includes('placed'), `${minutes}: nothing`);
    }
  });

  it('names the station of a part of an order and counts pieces, not lines', () => {
    // queue-online-pwd: 2x adobo, 1x halo-halo, 3x water.
    const all = kitchen('queue-online-pwd', 'generic-80mm', { layout: 'kitchen', role: 'kitchen' });
    assert.ok(all.text.split('\n').includes('6 items'));
    const bar = kitchen('queue-online-pwd', 'generic-80mm', {
      layout: 'kitchen',
      role: 'bar',
      items: [2, 1],
    });
    assert.ok(bar.text.split('\n').includes('4 of 6 items (bar)'));
    // In the order's order whatever the list's; every index listed: the whole order.
    const lines = bar.text.split('\n');
    assert.ok(
      lines.findIndex((l) => l.includes('Halo-halo')) <
        lines.findIndex((l) => l.includes('Bottled water')),
    );
    const whole = kitchen('queue-online-pwd', 'generic-80mm', {
      layout: 'kitchen',
      role: 'kitchen',
      items: [0, 1, 2],
    });
    assert.equal(whole.text, all.text);
    const one = kitchen('table-offline-simple', 'generic-58mm', {
      layout: 'kitchen',
      role: 'kitchen',
      items: [0],
    });
    assert.ok(one.text.split('\n').includes('1 of 3 items (kitchen)'));
  });

  it('refuses items the order does not have, or none at all (a routing bug, not a ticket)', () => {
    for (const items of [[3], [-1], [0.5], []]) {
      assert.throws(
        () => kitchen('queue-online-pwd', 'generic-58mm', { layout: 'kitchen', role: 'k', items }),
        (e: unknown) => e instanceof AgentError && e.code === 'RENDER_FAILED',
        JSON.stringify(items),
      );
    }
  });

  it('prints the SKU and the options of a record under the name, and the remark', () => {
    const rendered = kitchen('record-options-remark', 'generic-58mm', {
      layout: 'kitchen',
      role: 'kitchen',
    });
    const lines = rendered.text.split('\n').map((l) => l.trim());
    const name = lines.indexOf('2x Milk tea (Large)');
    assert.ok(name >= 0);
    assert.deepEqual(lines.slice(name + 1, name + 5), [
      '+ Toppings: Pearls',
      '+ Toppings: Pudding',
      '+ Sugar: Less sugar',
      'SKU P10-L',
    ]);
    assert.equal(lines[name + 5], '1x Beef tapa', 'no SKU line where the record has none');
    assert.ok(lines.includes('Remark:'));
    assert.ok(rendered.text.includes('(allergy!)'));
  });

  it('wraps a long name beside its quantity, indented under the name on paper', () => {
    const rendered = kitchen('queue-online-pwd', 'generic-58mm', {
      layout: 'kitchen',
      role: 'kitchen',
    });
    const i = rendered.layout.commands.findIndex(
      (c) => c.kind === 'line' && c.segments[0]?.text === '2x',
    );
    const [first, next] = rendered.layout.commands.slice(i, i + 2);
    assert.ok(first?.kind === 'line' && next?.kind === 'line');
    assert.deepEqual(
      first.segments.map((s) => [s.text, s.style]),
      [
        ['2x', BIG],
        [' Chicken Adobo with Garlic', TALL_BOLD],
      ],
    );
    // `2x` takes four columns on paper, plus the space: the name's next line starts at five.
    assert.deepEqual(
      next.segments.map((s) => [s.text, s.style.height]),
      [
        ['     ', 1],
        ['Rice and Fried Egg', 2],
      ],
    );
  });
});

describe('a quantity too wide to share its line', () => {
  it('puts the name below it, still within the columns', () => {
    const source = loadFixture('record-options-remark');
    assert.ok(source.kind === 'record');
    const record = structuredClone(source.record);
    record.skuList[0]!.count = 1_000_000_000; // `1000000000x`: 22 of the 32 columns
    const rendered = renderReceipt({
      source: { kind: 'record', record },
      profile: getProfile('generic-58mm'),
      options: STORE_OPTIONS,
      document: { layout: 'kitchen', role: 'kitchen' },
    });
    const lines = rendered.text.split('\n');
    const at = lines.indexOf('1000000000x');
    assert.ok(at >= 0, 'the quantity alone on its line');
    assert.deepEqual(lines.slice(at + 1, at + 3), ['  Milk tea (Large)', '  + Toppings: Pearls']);
    for (const c of rendered.layout.commands) {
      if (c.kind !== 'line') continue;
      const width = c.segments.reduce((n, s) => n + displayWidth(s.text) * s.style.width, 0);
      assert.ok(width <= 32);
    }
  });
});

describe('the receipt is unchanged by the document field', () => {
  for (const c of GOLDEN_CASES) {
    for (const profileId of c.profiles) {
      it(`${c.name} on ${profileId}: { layout: 'receipt' } gives the same bytes`, () => {
        const input = {
          source: loadFixture(c.fixture),
          profile: getProfile(profileId),
          options: c.options ?? STORE_OPTIONS,
          markings: c.markings,
        };
        const plain = renderReceipt(input);
        const explicit = renderReceipt({ ...input, document: { layout: 'receipt' } });
        assert.deepEqual(explicit.bytes, plain.bytes);
        assert.equal(
          explicit.text,
          readFileSync(join(GOLDEN_DIR, `${c.name}.${profileId}.txt`), 'utf8'),
        );
      });
    }
  }
});
