import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FieldIssue } from '../../src/errors.js';
import {
  COMMAND_TYPES,
  commandSchema,
  DEFAULT_PRINTER_ROLE,
  DEFAULT_TOPIC_PREFIX,
  JOB_STATES,
  jobEventSchema,
  lastWill,
  PRINTER_STATES,
  PROTOCOL_VERSION,
  parseWith,
  printInstructionSchema,
  statusSchema,
  topics,
} from '../../src/protocol/index.js';

/** A queue order paid offline: the create parameters of order-api 2.9. */
function order(): Record<string, unknown> {
  return {
    productInfo: [
      { productName: 'Chicken Adobo', price: 18500, quantity: 2 },
      { productName: 'Calamansi juice', price: 5000, quantity: 1 },
    ],
    orderType: 2,
    paymentWay: 2,
    paymentTransactionId: 'M-20261125-0001',
    pickUpNum: 'A023',
    paymentAmount: 42000,
  };
}

/** The print instruction of print-protocol section 4, without printer and copies. */
function instruction(): Record<string, unknown> {
  return {
    jobId: 'P20261125-000123',
    orderNo: 'O202611250001',
    pickUpNo: 'A023',
    takeoutNo: null,
    createTime: '2026-11-25 12:30:05',
    order: order(),
  };
}

function issuesOf(schema: Parameters<typeof parseWith>[0], input: unknown): FieldIssue[] {
  const r = parseWith(schema, input);
  if (r.ok) assert.fail(`expected ${JSON.stringify(input)} to be rejected`);
  return r.issues;
}

function paths(schema: Parameters<typeof parseWith>[0], input: unknown): string[] {
  return issuesOf(schema, input).map((i) => i.path);
}

describe('printInstructionSchema (print-protocol section 4)', () => {
  it('accepts the sample and fills printer "receipt" and copies 1', () => {
    const r = parseWith(printInstructionSchema, instruction());
    if (!r.ok) assert.fail(JSON.stringify(r.issues));
    assert.equal(r.value.printer, 'receipt');
    assert.equal(DEFAULT_PRINTER_ROLE, 'receipt');
    assert.equal(r.value.copies, 1);
    assert.equal(r.value.jobId, 'P20261125-000123');
    assert.equal(r.value.orderNo, 'O202611250001');
    assert.equal(r.value.pickUpNo, 'A023');
    assert.equal(r.value.takeoutNo, null);
    assert.equal(r.value.createTime, '2026-11-25 12:30:05');
    assert.equal(r.value.order.productInfo.length, 2);
    assert.equal(r.value.order.paymentTransactionId, 'M-20261125-0001');
  });

  it('keeps a given printer role and number of copies', () => {
    const r = parseWith(printInstructionSchema, {
      ...instruction(),
      printer: 'kitchen-2',
      copies: 3,
    });
    assert.ok(r.ok);
    assert.equal(r.value.printer, 'kitchen-2');
    assert.equal(r.value.copies, 3);
  });

  it('copies must be 1 to 5', () => {
    for (const copies of [1, 5]) {
      const r = parseWith(printInstructionSchema, { ...instruction(), copies });
      assert.ok(r.ok, `copies ${copies}`);
      assert.equal(r.value.copies, copies);
    }
    for (const copies of [0, 6, -1, 100]) {
      assert.deepEqual(issuesOf(printInstructionSchema, { ...instruction(), copies }), [
        { path: 'copies', message: 'must be between 1 and 5' },
      ]);
    }
    assert.deepEqual(paths(printInstructionSchema, { ...instruction(), copies: 1.5 }), ['copies']);
    assert.deepEqual(paths(printInstructionSchema, { ...instruction(), copies: '2' }), ['copies']);
  });

  it('jobId must be 1 to 64 characters', () => {
    const r = parseWith(printInstructionSchema, { ...instruction(), jobId: 'J'.repeat(64) });
    assert.ok(r.ok);
    for (const jobId of ['J'.repeat(65), '']) {
      assert.deepEqual(issuesOf(printInstructionSchema, { ...instruction(), jobId }), [
        { path: 'jobId', message: 'must be 1 to 64 characters' },
      ]);
    }
  });

  it('jobId length counts characters, not UTF-16 units', () => {
    // 64 astral characters are 128 UTF-16 units and still 64 characters.
    assert.ok(parseWith(printInstructionSchema, { ...instruction(), jobId: '𠀀'.repeat(64) }).ok);
    assert.deepEqual(paths(printInstructionSchema, { ...instruction(), jobId: '𠀀'.repeat(65) }), [
      'jobId',
    ]);
  });

  it('jobId, orderNo, createTime and order are required', () => {
    for (const field of ['jobId', 'orderNo', 'createTime', 'order']) {
      const input = instruction();
      delete input[field];
      const issues = issuesOf(printInstructionSchema, input);
      assert.deepEqual(
        issues.map((i) => i.path),
        [field],
      );
      if (field !== 'order') assert.equal(issues[0]!.message, 'is required');
    }
  });

  it('pickUpNo and takeoutNo are optional', () => {
    const input = instruction();
    delete input.pickUpNo;
    delete input.takeoutNo;
    assert.ok(parseWith(printInstructionSchema, input).ok);
    assert.ok(
      parseWith(printInstructionSchema, { ...instruction(), takeoutNo: 'T-77', pickUpNo: null }).ok,
    );
  });

  it('createTime must be a real yyyy-MM-dd HH:mm:ss', () => {
    for (const createTime of [
      '2026-11-25T12:30:05',
      '2026-11-25T12:30:06.120Z',
      '2026-02-30 12:30:05',
      '2026-11-25 24:00:00',
      '',
    ]) {
      const issues = issuesOf(printInstructionSchema, { ...instruction(), createTime });
      assert.deepEqual(
        issues.map((i) => i.path),
        ['createTime'],
        createTime,
      );
      assert.match(issues[0]!.message, /yyyy-MM-dd HH:mm:ss/);
    }
  });

  it('order is validated with the create rules; paths are rooted at order', () => {
    const o = order();
    (o.productInfo as Record<string, unknown>[])[0]!.price = 1_000_001;
    assert.deepEqual(issuesOf(printInstructionSchema, { ...instruction(), order: o }), [
      { path: 'order.productInfo[0].price', message: 'must be between 0 and 1000000' },
    ]);
    const neg = order();
    (neg.productInfo as Record<string, unknown>[])[0]!.price = -1;
    assert.deepEqual(paths(printInstructionSchema, { ...instruction(), order: neg }), [
      'order.productInfo[0].price',
    ]);
    const frac = order();
    (frac.productInfo as Record<string, unknown>[])[1]!.quantity = 1.5;
    assert.deepEqual(paths(printInstructionSchema, { ...instruction(), order: frac }), [
      'order.productInfo[1].quantity',
    ]);
  });

  it('order limits of section 8 apply: productInfo 1 to 50 entries', () => {
    assert.deepEqual(
      paths(printInstructionSchema, { ...instruction(), order: { ...order(), productInfo: [] } }),
      ['order.productInfo'],
    );
    const many = Array.from({ length: 51 }, () => ({
      productName: 'Rice',
      price: 2000,
      quantity: 1,
    }));
    assert.deepEqual(
      paths(printInstructionSchema, { ...instruction(), order: { ...order(), productInfo: many } }),
      ['order.productInfo'],
    );
  });

  it('order conditional rules of 4.2 apply (takeout fees, online payment fields)', () => {
    const takeout = { ...order(), orderType: 3 };
    const t = issuesOf(printInstructionSchema, { ...instruction(), order: takeout });
    assert.deepEqual(t.map((i) => i.path).sort(), ['order.deliveryFee', 'order.packingFee']);
    assert.match(t[0]!.message, /^is required/);

    const online = { ...order(), paymentWay: 1 };
    assert.deepEqual(paths(printInstructionSchema, { ...instruction(), order: online }).sort(), [
      'order.paymentChannel',
      'order.transactionCreateTime',
      'order.transactionReturnTime',
    ]);
  });

  it('order tolerates the sample quirks (paymentWay/transactionFeeType as strings, paymentTransaction)', () => {
    const quirky = {
      ...order(),
      paymentWay: '1',
      paymentChannel: 'CHANNEL_B_DYNAMIC_QR',
      transactionCreateTime: '2026-11-25 12:29:50',
      transactionReturnTime: '2026-11-25 12:30:01',
      transactionFee: 370,
      transactionFeeType: '1',
      paymentTransaction: 'opaque',
    };
    const r = parseWith(printInstructionSchema, { ...instruction(), order: quirky });
    if (!r.ok) assert.fail(JSON.stringify(r.issues));
    assert.equal(r.value.order.paymentWay, 1);
    assert.equal(r.value.order.transactionFeeType, 1);
  });

  it('a printer role that would be unsafe in a topic or a path is rejected', () => {
    for (const printer of [
      'a/b',
      'receipt#',
      '#',
      '+',
      'a+b',
      '../receipt',
      'a b',
      '',
      'r'.repeat(65),
      'kassé',
    ]) {
      const issues = issuesOf(printInstructionSchema, { ...instruction(), printer });
      assert.deepEqual(
        issues.map((i) => i.path),
        ['printer'],
        printer,
      );
      assert.match(issues[0]!.message, /letters, digits, dot, dash or underscore/);
    }
    for (const printer of ['receipt', 'kitchen_1', 'bar.2', 'R-01', 'r'.repeat(64)]) {
      assert.ok(parseWith(printInstructionSchema, { ...instruction(), printer }).ok, printer);
    }
  });

  it('a non-object param is rejected', () => {
    for (const input of [null, [], 'jobId', 7]) issuesOf(printInstructionSchema, input);
  });
});

describe('commandSchema (print-protocol section 5)', () => {
  const S = '3f2a9c0d41b7e655';

  it('v1.1: every command names its store (storeId, a topic-safe id)', () => {
    for (const body of [
      { commandId: 'C-1', type: 'status' },
      { commandId: 'C-1', type: 'test-print' },
      { commandId: 'C-1', type: 'reprint', orderNo: 'O1' },
    ]) {
      assert.deepEqual(paths(commandSchema, body), ['storeId']);
      assert.deepEqual(paths(commandSchema, { ...body, storeId: 'a/b' }), ['storeId']);
      assert.deepEqual(paths(commandSchema, { ...body, storeId: 7 }), ['storeId']);
    }
  });

  it('the command types are reprint, test-print and status', () => {
    assert.deepEqual([...COMMAND_TYPES], ['reprint', 'test-print', 'status']);
  });

  it('accepts the reprint sample', () => {
    const r = parseWith(commandSchema, {
      storeId: S,
      commandId: 'C-0042',
      type: 'reprint',
      orderNo: 'O202611250001',
    });
    assert.ok(r.ok);
    assert.deepEqual(r.value, {
      storeId: S,
      commandId: 'C-0042',
      type: 'reprint',
      orderNo: 'O202611250001',
    });
  });

  it('reprint needs orderNo', () => {
    assert.deepEqual(issuesOf(commandSchema, { storeId: S, commandId: 'C-1', type: 'reprint' }), [
      { path: 'orderNo', message: 'is required' },
    ]);
    assert.deepEqual(
      paths(commandSchema, { storeId: S, commandId: 'C-1', type: 'reprint', orderNo: '' }),
      ['orderNo'],
    );
  });

  it('reprint and test-print may name a printer role; it must be safe', () => {
    const r = parseWith(commandSchema, {
      storeId: S,
      commandId: 'C-1',
      type: 'reprint',
      orderNo: 'O1',
      printer: 'kitchen',
    });
    assert.ok(r.ok);
    assert.equal(r.value.type === 'reprint' && r.value.printer, 'kitchen');
    assert.deepEqual(
      paths(commandSchema, { storeId: S, commandId: 'C-1', type: 'test-print', printer: 'a/#' }),
      ['printer'],
    );
  });

  it('test-print and status need only commandId and type', () => {
    const t = parseWith(commandSchema, { storeId: S, commandId: 'C-2', type: 'test-print' });
    assert.ok(t.ok);
    assert.deepEqual(t.value, { storeId: S, commandId: 'C-2', type: 'test-print' });
    const s = parseWith(commandSchema, { storeId: S, commandId: 'C-3', type: 'status' });
    assert.ok(s.ok);
    assert.deepEqual(s.value, { storeId: S, commandId: 'C-3', type: 'status' });
  });

  it('an unknown type is rejected on the type path, not ignored', () => {
    for (const type of ['cancel', 'REPRINT', 'testprint', '', 1]) {
      const issues = issuesOf(commandSchema, { storeId: S, commandId: 'C-4', type, orderNo: 'O1' });
      assert.deepEqual(
        issues.map((i) => i.path),
        ['type'],
        String(type),
      );
      assert.match(issues[0]!.message, /reprint, test-print, status/);
    }
  });

  it('a missing type is rejected on the type path', () => {
    assert.deepEqual(paths(commandSchema, { storeId: S, commandId: 'C-5' }), ['type']);
  });

  it('commandId is required for every type, 1 to 64 characters', () => {
    for (const body of [
      { storeId: S, type: 'status' },
      { storeId: S, type: 'test-print' },
      { storeId: S, type: 'reprint', orderNo: 'O1' },
    ]) {
      assert.deepEqual(issuesOf(commandSchema, body), [
        { path: 'commandId', message: 'is required' },
      ]);
    }
    assert.deepEqual(paths(commandSchema, { storeId: S, commandId: '', type: 'status' }), [
      'commandId',
    ]);
    assert.deepEqual(
      paths(commandSchema, { storeId: S, commandId: 'C'.repeat(65), type: 'status' }),
      ['commandId'],
    );
    assert.ok(
      parseWith(commandSchema, { storeId: S, commandId: 'C'.repeat(64), type: 'status' }).ok,
    );
  });
});

describe('jobEventSchema (print-protocol section 6)', () => {
  const sample = {
    eventId: '7d9f6c1e-2b1a-4f7e-9a55-0c3e2d1b4a77',
    jobId: 'P20261125-000123',
    orderNo: 'O202611250001',
    state: 'printed',
    printer: 'receipt',
    attempt: 1,
    at: '2026-11-25T12:30:06.120Z',
    reason: null,
  };

  it('the states are exactly those of section 6, in the order a job moves', () => {
    assert.deepEqual(
      [...JOB_STATES],
      [
        'queued',
        'waiting',
        'printing',
        'printed',
        'unconfirmed',
        'failed',
        'rejected',
        'duplicate',
      ],
    );
  });

  it('accepts the sample', () => {
    const r = parseWith(jobEventSchema, sample);
    assert.ok(r.ok);
    assert.deepEqual(r.value, sample);
  });

  for (const state of JOB_STATES) {
    it(`accepts state ${state}`, () => {
      const r = parseWith(jobEventSchema, { ...sample, state });
      assert.ok(r.ok);
      assert.equal(r.value.state, state);
    });
  }

  it('rejects an unknown state', () => {
    for (const state of ['done', 'Printed', 'PRINTED', '', null]) {
      assert.deepEqual(paths(jobEventSchema, { ...sample, state }), ['state'], String(state));
    }
  });

  it('carries a reason with an upper snake case code', () => {
    const waiting = {
      ...sample,
      state: 'waiting',
      reason: { code: 'PAPER_OUT', message: 'the printer is out of paper' },
    };
    assert.ok(parseWith(jobEventSchema, waiting).ok);
    for (const code of ['paper_out', 'Paper-Out', '_PAPER', '1PAPER', '']) {
      const bad = { ...waiting, reason: { code, message: 'x' } };
      assert.deepEqual(paths(jobEventSchema, bad), ['reason.code'], code);
    }
  });

  it('a rejected message whose param was unreadable has null jobId, orderNo and printer', () => {
    const r = parseWith(jobEventSchema, {
      eventId: 'e-1',
      jobId: null,
      orderNo: null,
      state: 'rejected',
      printer: null,
      attempt: 0,
      at: '2026-11-25T12:30:06.120Z',
      reason: { code: 'SIGNATURE_INVALID', message: 'signature does not verify over param' },
    });
    assert.ok(r.ok);
  });

  it('v1.1: every event carries an eventId (consumers count distinct events)', () => {
    const { eventId: _, ...without } = sample;
    assert.deepEqual(paths(jobEventSchema, without), ['eventId']);
    assert.deepEqual(paths(jobEventSchema, { ...sample, eventId: '' }), ['eventId']);
  });

  it('v1.1: warnings are reasons (CONTENT_CUT, CLOCK_UNSYNCHRONIZED) that did not stop the job', () => {
    const warned = {
      ...sample,
      warnings: [
        { code: 'CONTENT_CUT', message: 'order.customPrintContext: 19000 lines; 40 printed' },
      ],
    };
    assert.deepEqual(parseWith(jobEventSchema, warned).ok, true);
    assert.deepEqual(
      paths(jobEventSchema, { ...sample, warnings: [{ code: 'cut', message: '' }] }),
      ['warnings[0].code'],
    );
  });

  it('at must be an ISO date-time and attempt a whole number', () => {
    assert.deepEqual(paths(jobEventSchema, { ...sample, at: '2026-11-25 12:30:06' }), ['at']);
    assert.deepEqual(paths(jobEventSchema, { ...sample, attempt: -1 }), ['attempt']);
    assert.deepEqual(paths(jobEventSchema, { ...sample, attempt: 1.5 }), ['attempt']);
  });
});

describe('statusSchema (print-protocol section 7)', () => {
  const online = {
    online: true,
    storeId: '3f2a9c0d11e4b7a8',
    agent: { version: '0.1.0', startedAt: '2026-11-25T08:00:00.000Z' },
    printers: [
      {
        id: 'receipt',
        state: 'ready',
        paper: 'ok',
        coverOpen: false,
        queue: { pending: 0, oldestPendingSec: 0 },
        lastPrintedAt: '2026-11-25T12:30:06.120Z',
      },
    ],
    at: '2026-11-25T12:30:06.200Z',
  };

  it('accepts the full online sample unchanged', () => {
    const r = parseWith(statusSchema, online);
    assert.ok(r.ok);
    assert.deepEqual(r.value, online);
  });

  it('the printer states are exactly those of section 7', () => {
    assert.deepEqual(
      [...PRINTER_STATES],
      [
        'ready',
        'paper-near-end',
        'paper-out',
        'cover-open',
        'offline',
        'error',
        'disconnected',
        'unknown',
      ],
    );
    for (const state of PRINTER_STATES) {
      const s = structuredClone(online);
      s.printers[0]!.state = state;
      assert.ok(parseWith(statusSchema, s).ok, state);
    }
    const bad = structuredClone(online);
    bad.printers[0]!.state = 'jammed';
    assert.equal(parseWith(statusSchema, bad).ok, false);
  });

  it('an online status without its agent or printers is rejected', () => {
    const { agent: _a, ...noAgent } = online;
    assert.equal(parseWith(statusSchema, noAgent).ok, false);
    const { printers: _p, ...noPrinters } = online;
    assert.equal(parseWith(statusSchema, noPrinters).ok, false);
  });

  it('a printer that never printed and does not report its cover is valid', () => {
    const s = structuredClone(online) as unknown as { printers: Record<string, unknown>[] };
    s.printers[0]!.lastPrintedAt = null;
    s.printers[0]!.coverOpen = null;
    s.printers[0]!.state = 'unknown';
    s.printers[0]!.paper = 'unknown';
    assert.ok(parseWith(statusSchema, s).ok);
  });

  it('lastWill() is {"online":false,"storeId":...,"at":null} and a valid status', () => {
    const will = lastWill('3f2a9c0d11e4b7a8');
    assert.deepEqual(will, { online: false, storeId: '3f2a9c0d11e4b7a8', at: null });
    assert.equal(JSON.stringify(will), '{"online":false,"storeId":"3f2a9c0d11e4b7a8","at":null}');
    const r = parseWith(statusSchema, will);
    assert.ok(r.ok);
    assert.deepEqual(r.value, will);
  });

  it('online false with a time is also valid; online missing is not', () => {
    assert.ok(
      parseWith(statusSchema, { online: false, storeId: 's', at: '2026-11-25T12:30:06.200Z' }).ok,
    );
    assert.equal(parseWith(statusSchema, { storeId: 's', at: null }).ok, false);
    assert.equal(parseWith(statusSchema, { online: true, storeId: 's', at: null }).ok, false);
  });
});

describe('topics (print-protocol section 2)', () => {
  it('gives the four topics under {prefix}/{storeId}', () => {
    assert.deepEqual(topics('printer-agent/v1', 'abc'), {
      print: 'printer-agent/v1/abc/print',
      command: 'printer-agent/v1/abc/command',
      job: 'printer-agent/v1/abc/job',
      status: 'printer-agent/v1/abc/status',
    });
  });

  it('the default prefix is printer-agent/v1, protocol version v1', () => {
    assert.equal(DEFAULT_TOPIC_PREFIX, 'printer-agent/v1');
    assert.equal(PROTOCOL_VERSION, 'v1');
    assert.equal(
      topics(DEFAULT_TOPIC_PREFIX, '3f2a9c0d11e4b7a8').status,
      'printer-agent/v1/3f2a9c0d11e4b7a8/status',
    );
  });

  it('every topic of one store lies in that store’s own subtree', () => {
    const t = topics('x/v1', 'store1');
    for (const topic of Object.values(t)) assert.ok(topic.startsWith('x/v1/store1/'), topic);
    assert.equal(new Set(Object.values(t)).size, 4);
  });
});
