/**
 * jsonDepth (print-protocol §9: nothing nested deeper than MAX_JSON_DEPTH is parsed) against the
 * plain character-by-character scan it replaced for speed (issue 16), kept here as the oracle:
 * both must agree on any text, valid JSON or not, with brackets inside strings, escaped quotes and
 * runs of backslashes; and on real JSON they must give JSON's actual nesting.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { jsonDepth, MAX_JSON_DEPTH, tooDeep } from '../../src/protocol/limits.js';

function oracle(text: string, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/** The nesting JSON.parse would build. */
function nesting(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(nesting));
}

describe('jsonDepth', () => {
  it('counts brackets outside strings only, whatever the escapes', () => {
    for (const [text, depth] of [
      ['{"a":[1,{"b":"]]]"}]}', 3],
      ['"\\\\"[[', 2],
      ['{"a":"\\"{{{"}', 1],
      ['{"a":"x\\\\\\"[["}', 1],
      ['[["\\\\\\\\"]]', 2],
      ['"never closed [[[', 0],
      ['', 0],
    ] as const)
      assert.equal(jsonDepth(text), depth, text);
  });

  it('agrees with the character-by-character scan on any text', () => {
    const text = fc.string({ unit: fc.constantFrom('{', '}', '[', ']', '"', '\\', 'a', ',', ':') });
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 8 }), (t, limit) => {
        assert.equal(jsonDepth(t), oracle(t));
        assert.equal(jsonDepth(t, limit), oracle(t, limit));
      }),
      { numRuns: 2000 },
    );
  });

  it('tooDeep agrees with the scan on any text and limit, also when openers hide in strings', () => {
    // tooDeep skips the scan when the text has no more openers than the limit: the limits here
    // are small so that both ways are taken, with brackets inside strings counted as openers.
    const text = fc.string({ unit: fc.constantFrom('{', '}', '[', ']', '"', '\\', 'a', ',') });
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 8 }), (t, max) => {
        assert.equal(tooDeep(t, max), oracle(t) > max);
      }),
      { numRuns: 2000 },
    );
    // A shallow text with many openers inside a string: scanned, and not too deep.
    assert.equal(tooDeep(`{"a":"${'['.repeat(100)}"}`, 3), false);
    assert.equal(tooDeep('[[[[', 3), true);
  });

  it("gives real JSON's nesting, and tooDeep holds exactly above MAX_JSON_DEPTH", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 40 }), (value) => {
        const text = JSON.stringify(value);
        assert.equal(jsonDepth(text), nesting(value));
        assert.equal(tooDeep(text), nesting(value) > MAX_JSON_DEPTH);
      }),
      { numRuns: 500 },
    );
  });
});
