/** Option parsers for commander that reject bad values with a message naming the option. */
import { InvalidArgumentError } from 'commander';
import { PARAM_KINDS, type ParamKind } from '../protocol/param-schemas.js';
import { SIGNATURE_SCHEMES, type SignatureScheme } from '../protocol/signing.js';

export function parseIntOption(name: string, min = 0, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`${name} must be a whole number`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`${name} must be ${min} to ${max}`);
    return n;
  };
}

export function parseScheme(value: string): SignatureScheme {
  if (!(SIGNATURE_SCHEMES as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`must be one of ${SIGNATURE_SCHEMES.join(', ')}`);
  }
  return value as SignatureScheme;
}

export function parseParamKind(value: string): ParamKind {
  if (!(PARAM_KINDS as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`must be one of ${PARAM_KINDS.join(', ')}`);
  }
  return value as ParamKind;
}
