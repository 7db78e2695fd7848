/**
 * Parsing the config file's text. `JSON.parse` errors are not fit to show: V8 quotes the text
 * around the mistake (`Unexpected token 'x', "{"storeKey": x..." is not valid JSON`), which can be
 * a secret, and its wording differs between Node versions. So on failure a small scanner finds the
 * first error itself and the message names the file, line, column and position, never the text.
 */
import { AgentError } from '../errors.js';

export interface JsonErrorLocation {
  /** Offset in UTF-16 units from the start of the text. */
  position: number;
  line: number;
  column: number;
  /** What was expected there, in words; never a quote of the text. */
  reason: string;
}

class Stop extends Error {
  constructor(
    readonly position: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** Finds the first syntax error of `text` by JSON's grammar (RFC 8259), or null if it is valid. */
export function locateJsonError(text: string): JsonErrorLocation | null {
  let i = 0;
  const end = (what: string) => new Stop(i, `unexpected end of file, expected ${what}`);
  const ws = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i]!)) i++;
  };
  const string = (_depth?: number) => {
    const start = i;
    i++; // opening quote
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c < 0x20) throw new Stop(i, 'control character inside a string (escape it)');
      if (c === 0x5c) {
        const next = text[i + 1];
        if (next === undefined) break;
        if (next === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6)))
            throw new Stop(i, 'invalid \\u escape inside a string');
          i += 6;
          continue;
        }
        if (!'"\\/bfnrt'.includes(next)) throw new Stop(i, 'invalid escape inside a string');
        i += 2;
        continue;
      }
      i++;
    }
    throw new Stop(start, 'string is never closed (missing ")');
  };
  const value = (depth: number): void => {
    if (depth > 512) throw new Stop(i, 'nested too deeply');
    ws();
    if (i >= text.length) throw end('a value');
    const open = { '{': object, '[': array, '"': string }[text[i]!];
    if (open) {
      open(depth);
      return;
    }
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, i)) {
        i += literal.length;
        return;
      }
    }
    NUMBER.lastIndex = i;
    if (NUMBER.test(text)) {
      i = NUMBER.lastIndex;
      return;
    }
    throw new Stop(i, 'expected a value (string in double quotes, number, true, false, null)');
  };
  const object = (depth: number) => {
    i++;
    ws();
    if (text[i] === '}') {
      i++;
      return;
    }
    for (;;) {
      ws();
      if (i >= text.length) throw end('a property name');
      if (text[i] !== '"')
        throw new Stop(i, 'expected a property name in double quotes (no trailing commas)');
      string();
      ws();
      if (i >= text.length) throw end("':'");
      if (text[i] !== ':') throw new Stop(i, "expected ':' after the property name");
      i++;
      value(depth + 1);
      ws();
      if (i >= text.length) throw end("',' or '}'");
      if (text[i] === '}') {
        i++;
        return;
      }
      if (text[i] !== ',') throw new Stop(i, "expected ',' or '}' after a property value");
      i++;
    }
  };
  const array = (depth: number) => {
    i++;
    ws();
    if (text[i] === ']') {
      i++;
      return;
    }
    for (;;) {
      value(depth + 1);
      ws();
      if (i >= text.length) throw end("',' or ']'");
      if (text[i] === ']') {
        i++;
        return;
      }
      if (text[i] !== ',') throw new Stop(i, "expected ',' or ']' after a list item");
      i++;
      ws();
      if (text[i] === ']') throw new Stop(i, 'expected a value (no trailing commas)');
    }
  };
  try {
    value(0);
    ws();
    if (i < text.length) throw new Stop(i, 'unexpected text after the end of the JSON value');
    return null;
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    return {
      ...lineAndColumn(text, error.position),
      position: error.position,
      reason: error.reason,
    };
  }
}

function lineAndColumn(text: string, position: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let k = 0; k < position && k < text.length; k++) {
    if (text[k] === '\n') {
      line++;
      lineStart = k + 1;
    }
  }
  return { line, column: position - lineStart + 1 };
}

/**
 * Parses the config file's text into a JSON object. A leading byte-order mark (editors on Windows
 * add one) is skipped. Errors are CONFIG_INVALID naming `file` and the position.
 */
export function parseConfigText(text: string, file: string): Record<string, unknown> {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    // JSON.parse's own message is dropped on purpose: it quotes the text (see the top of this file).
    const where = locateJsonError(body);
    const detail = where
      ? `${where.reason} at line ${where.line} column ${where.column} (position ${where.position})`
      : 'syntax error at an unknown position';
    throw new AgentError('CONFIG_INVALID', `${file}: is not valid JSON: ${detail}`, {
      details: { file },
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AgentError('CONFIG_INVALID', `${file}: must hold one JSON object ({...})`, {
      issues: [{ path: '(root)', message: 'must be a JSON object' }],
      details: { file },
    });
  }
  return value as Record<string, unknown>;
}
