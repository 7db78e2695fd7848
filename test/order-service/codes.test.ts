/**
 * The service's response codes (decision 76, issue 13): stable numbers, one meaning each, and
 * every one documented in docs/order-service.md, where integrators look them up.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { RESPONSE_CODES } from '../../src/order-service/index.js';
import { ROOT } from '../helpers/cli.js';

describe('order-service response codes', () => {
  it('has the issue 13 codes, every code distinct and listed in docs/order-service.md', () => {
    assert.equal(RESPONSE_CODES.CREATE_CONFLICT.code, 40901);
    assert.equal(RESPONSE_CODES.INSTRUCTION_TOO_LARGE.code, 41301);
    assert.equal(RESPONSE_CODES.TOO_DEEP.code, 40007);
    assert.equal(RESPONSE_CODES.REQUEST_TIMEOUT.code, 40800);
    assert.equal(RESPONSE_CODES.HEADERS_TOO_LARGE.code, 43100);
    assert.equal(RESPONSE_CODES.HTTP_INVALID.code, 40000);
    const codes = Object.values(RESPONSE_CODES).map((c) => c.code);
    assert.equal(new Set(codes).size, codes.length, 'one meaning per number');
    const section = readFileSync(join(ROOT, 'docs', 'order-service.md'), 'utf8');
    const paragraph = section.slice(
      section.indexOf('Codes beyond'),
      section.indexOf('dataAsString'),
    );
    for (const code of codes) {
      if (code === 10000 || code === 21000) continue; // the spec's own
      assert.ok(
        paragraph.includes(String(code)),
        `${code} in docs/order-service.md's list of codes`,
      );
    }
  });
});
