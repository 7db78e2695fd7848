/**
 * Issue 42 items 2 and 4, the pure parts: the banners' sentences (what to do, then what waits, in
 * the issue's own words), unconfirmed jobs asking for a person for an hour, and the server-drawn
 * view escaping what came from the order service and formatting times in the store's zone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { age, attentionOf, type UnconfirmedJob } from '../../src/console/attention.js';
import { firstView, type PageStatus } from '../../src/console/first-view.js';

const at = Date.parse('2030-03-04T05:06:07Z');
const printer = (id: string, state: PageStatus['printers'][number]['state'], pending = 0) => ({
  id,
  state,
  paper: 'ok',
  queue: { pending, oldestPendingSec: pending ? 245 : 0 },
  lastPrintedAt: null,
});

describe('what needs a person (attention.ts)', () => {
  it('says what to do at the printer, then how many tickets wait and for how long', () => {
    const out = attentionOf(
      {
        broker: { connected: true },
        printers: [printer('kitchen', 'paper-out', 3), printer('bar', 'cover-open', 1)],
      },
      [],
      at,
    );
    assert.deepEqual(
      out.map((a) => a.message),
      [
        'Load paper in the kitchen printer; 3 tickets wait, the oldest 4 min',
        'Close the cover of the bar printer; 1 ticket waits, 4 min',
      ],
    );
    assert.deepEqual(
      out.map((a) => [a.code, a.printer]),
      [
        ['PAPER_OUT', 'kitchen'],
        ['COVER_OPEN', 'bar'],
      ],
    );
  });

  it('is quiet for printers that can print, and speaks for a lost broker', () => {
    const out = attentionOf(
      {
        broker: { connected: false },
        printers: [
          printer('a', 'ready', 2),
          printer('b', 'paper-near-end'),
          printer('c', 'unknown'),
        ],
      },
      [],
      at,
    );
    assert.deepEqual(
      out.map((a) => a.code),
      ['BROKER_UNAVAILABLE'],
    );
  });

  it('asks about unconfirmed jobs of the last hour, by order, then by count', () => {
    const job = (n: number, minutesAgo: number): UnconfirmedJob => ({
      jobId: `job-${n}`,
      orderNo: `O-${n}`,
      kind: 'receipt',
      printer: 'receipt',
      state: 'unconfirmed',
      finishedAt: new Date(at - minutesAgo * 60_000).toISOString(),
    });
    const one = attentionOf({ printers: [] }, [job(1, 5), job(2, 61)], at);
    assert.equal(one.length, 1);
    assert.match(one[0]!.message, /^Check whether order O-1 came out of the receipt printer/);
    assert.match(one[0]!.message, /POSSIBLE DUPLICATE/);
    const two = attentionOf({ printers: [] }, [job(1, 5), job(3, 59)], at);
    assert.match(two[0]!.message, /^Check whether 2 tickets came out of the receipt printer/);
  });

  it('ages in seconds, minutes, then hours', () => {
    assert.deepEqual(
      [age(45), age(60), age(3599), age(3600), age(7500)],
      ['45 s', '1 min', '59 min', '1 h', '2 h 5 min'],
    );
  });
});

describe("the server's first view (first-view.ts)", () => {
  it('escapes what came from outside and draws times in the store zone', () => {
    const status: PageStatus = {
      storeId: 's1',
      agent: { version: '1.0.0', startedAt: '2030-03-04T05:06:07.000Z' },
      broker: { connected: true },
      printers: [printer('receipt', 'ready')],
      jobs: { failed: 1 },
      recent: [
        {
          id: 1,
          jobId: 'j1',
          orderNo: '<img src=x onerror=alert(1)>',
          commandId: null,
          kind: 'receipt',
          source: 'mqtt',
          printer: 'receipt',
          state: 'failed',
          held: false,
          attempts: 1,
          markings: [],
          reason: { code: 'PARAM_INVALID', message: 'a "quoted" & <b>bold</b> reason' },
          warnings: [],
          notices: [],
          createdAt: '2030-03-04T05:06:07.000Z',
          printingAt: null,
          printedAt: null,
          finishedAt: null,
          nextAttemptAt: null,
        },
      ],
      attention: [],
    };
    const view = firstView(status, 'Asia/Kathmandu');
    assert.ok(!view.jobs.includes('<img'), view.jobs);
    assert.ok(!view.jobs.includes('<b>'), view.jobs);
    assert.match(view.jobs, /&lt;img src=x onerror=alert\(1\)&gt;/);
    assert.match(view.jobs, /a &quot;quoted&quot; &amp; &lt;b&gt;bold&lt;\/b&gt; reason/);
    // 05:06:07 UTC is 10:51:07 in Kathmandu (UTC+05:45, no daylight saving).
    assert.equal(view.agent, 'store s1 · version 1.0.0 · up since 2030-03-04 10:51:07');
    assert.match(view.jobs, /receipt · 2030-03-04 10:51:07/);
    assert.equal(view.queue, '1 failed');
  });
});
