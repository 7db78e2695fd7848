import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { locateJsonError, parseConfigText } from '../../src/config/json-text.js';
import { AgentError } from '../../src/errors.js';
import { STORE_KEY } from './fixtures.js';

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

describe('locateJsonError', () => {
  const cases: [string, string, number, number, RegExp][] = [
    ['trailing comma', '{\n  "a": 1,\n}', 3, 1, /property name in double quotes/],
    ['missing comma', '{\n  "a": 1\n  "b": 2\n}', 3, 3, /expected ',' or '}'/],
    ['unquoted value', '{"storeKey": abc}', 1, 14, /expected a value/],
    ['single quotes', "{'a': 1}", 1, 2, /property name in double quotes/],
    ['unterminated string', '{"a": "b}', 1, 7, /never closed/],
    ['empty file', '', 1, 1, /unexpected end of file/],
    ['cut short', '{"a": [1, 2', 1, 12, /unexpected end of file/],
    ['text after the value', '{} x', 1, 4, /after the end/],
    ['comment', '{\n  // note\n  "a": 1\n}', 2, 3, /property name/],
    ['raw newline in a string', '{"a": "x\ny"}', 1, 9, /control character/],
    ['bad escape', '{"a": "\\q"}', 1, 8, /invalid escape/],
    ['trailing comma in a list', '[1, 2, ]', 1, 8, /no trailing commas/],
  ];
  for (const [name, text, line, column, reason] of cases) {
    it(`finds the ${name}`, () => {
      assert.equal(parses(text), false);
      const where = locateJsonError(text);
      assert.ok(where);
      assert.deepEqual([where.line, where.column], [line, column], where.reason);
      assert.match(where.reason, reason);
    });
  }

  it('agrees with JSON.parse on what is valid (property)', () => {
    const nearJson = fc.oneof(
      fc.json(),
      fc.string(),
      // Valid JSON with one character removed, doubled or inserted: the typical typos.
      fc
        .tuple(
          fc.json(),
          fc.nat(),
          fc.constantFrom('', ',', '}', ']', '"', ':', ' ', 'x', '\\', '\n'),
        )
        .map(([json, at, insert]) => {
          const i = json.length === 0 ? 0 : at % json.length;
          return json.slice(0, i) + insert + json.slice(i + (insert === '' ? 1 : 0));
        }),
    );
    fc.assert(
      fc.property(nearJson, (text) => {
        assert.equal(locateJsonError(text) === null, parses(text), JSON.stringify(text));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('parseConfigText', () => {
  it('parses an object and skips a byte-order mark', () => {
    assert.deepEqual(parseConfigText('\uFEFF{"a": 1}', '/c.json'), { a: 1 });
  });

  it('names the file and the position, and never quotes the text', () => {
    const text = `{\n  "appId": "A1",\n  "storeKey": "${STORE_KEY}" oops\n}`;
    const position = text.indexOf('oops');
    const column = position - text.lastIndexOf('\n', position);
    assert.throws(
      () => parseConfigText(text, '/etc/printer-agent/config.json'),
      (error: unknown) => {
        assert.ok(error instanceof AgentError);
        assert.equal(error.code, 'CONFIG_INVALID');
        assert.equal(
          error.message,
          `/etc/printer-agent/config.json: is not valid JSON: expected ',' or '}' after a ` +
            `property value at line 3 column ${column} (position ${position})`,
        );
        assert.ok(!error.message.includes(STORE_KEY));
        assert.equal(error.cause, undefined, 'JSON.parse quotes the text: its error is dropped');
        return true;
      },
    );
  });

  it('rejects a file that is not one object', () => {
    for (const text of ['[]', '"x"', 'null', '3']) {
      assert.throws(() => parseConfigText(text, '/c.json'), /\/c\.json: must hold one JSON object/);
    }
  });
});
