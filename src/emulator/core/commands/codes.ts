/**
 * Barcodes and 2-D symbols: the `GS k` barcode with its settings (`GS H` HRI position, `GS f` HRI
 * font, `GS h` height, `GS w` module width), and the `GS ( k` symbols (QR Code, PDF417, ...):
 * settings per symbol type, store (fn 80), print (fn 81). A code is kept on the paper with its
 * content as text (CODE128 code-set prefixes decoded), its raw data and its settings.
 */
import { BARCODE_SYMBOLOGIES, decodeCode128, SYMBOL_TYPES } from '../barcodes.js';
import { hex } from '../command-syntax.js';
import type { CommandFamily, Execution } from './command.js';

const QR_LEVELS: Record<number, string> = { 48: 'L', 49: 'M', 50: 'Q', 51: 'H' };
const QR_MODELS: Record<number, string> = { 49: 'model 1', 50: 'model 2', 51: 'micro' };

export const codes: CommandFamily = {
  'GS H'(x, { n }) {
    x.state.barcode.hri = n % 48;
  },
  'GS f'(x, { n }) {
    x.state.barcode.hriFont = n % 48;
  },
  'GS h'(x, { n }) {
    x.state.barcode.height = n;
  },
  'GS w'(x, { n }) {
    x.state.barcode.moduleWidth = n;
  },
  // GS k m d1..dk NUL (form A, m 0-6) or GS k m n d1..dn (form B, m 65-79).
  'GS k'(x, { frame, bytes: b }) {
    const m = b[2]!;
    const formB = m >= 65;
    let data: Uint8Array;
    if (formB) {
      data = b.subarray(4);
    } else {
      const nul = b[b.length - 1] === 0;
      data = b.subarray(3, nul ? b.length - 1 : b.length);
      if (!nul) x.warn(frame, 'GS k form A data not ended by NUL: ended at the first control byte');
    }
    const symbology = BARCODE_SYMBOLOGIES[m];
    if (!symbology) return x.warn(frame, `GS k: unknown barcode system m=${m}: skipped`);
    if (!x.paper.atLineStart) {
      return x.warn(frame, 'GS k is only processed with an empty print buffer (Epson): ignored');
    }
    let content = latin1(data);
    if (m === 73) {
      const decoded = decodeCode128(data);
      content = decoded.text;
      if (decoded.problem) x.warn(frame, decoded.problem);
    }
    const { height, moduleWidth, hri, hriFont } = x.state.barcode;
    x.paper.addCode(
      {
        kind: 'barcode',
        symbology,
        content,
        data: Uint8Array.from(data),
        options: { height, moduleWidth, hri, hriFont },
      },
      height,
    );
  },
  /** `GS ( k pL pH cn fn ...`: 2-D symbols; settings, store (fn 80), print (fn 81). */
  'GS ( k'(x, { frame, bytes: b }) {
    const cn = b[5];
    const fn = b[6];
    if (cn === undefined || fn === undefined) return x.warn(frame, 'GS ( k without cn and fn');
    const type = SYMBOL_TYPES[cn];
    if (!type) return x.warn(frame, `GS ( k: unknown symbol type cn=${cn}: skipped`);
    const settings = symbolSettings(x, cn);
    if (fn === 80) {
      settings.set(80, b.slice(8)); // m = 48, then the data
      return;
    }
    if (fn === 81) {
      if (!x.paper.atLineStart) {
        return x.warn(frame, `${type} print is only processed with an empty print buffer: ignored`);
      }
      const data = settings.get(80);
      if (!data) return x.warn(frame, `${type} print with no stored data: ignored`);
      const options = cn === 49 ? qrOptions(settings) : rawOptions(settings);
      const size = cn === 49 ? Number(options.size) : 3;
      x.paper.addCode(
        { kind: '2d', symbology: type, content: symbolText(data), data, options },
        size * 25,
      );
      return;
    }
    if (fn === 82) return x.warn(frame, `${type} size information reply is not emulated`);
    settings.set(fn, b.slice(7));
  },
};

function symbolSettings(x: Execution, cn: number): Map<number, Uint8Array> {
  let s = x.state.symbolSettings.get(cn);
  if (!s) {
    s = new Map();
    x.state.symbolSettings.set(cn, s);
  }
  return s;
}

function latin1(data: Uint8Array): string {
  return String.fromCharCode(...data);
}

/** 2-D symbol data as text: UTF-8 when it is valid UTF-8, Latin-1 otherwise. */
function symbolText(data: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    return latin1(data);
  }
}

function qrOptions(settings: Map<number, Uint8Array>): Record<string, number | string> {
  const model = settings.get(65)?.[0] ?? 50;
  const size = settings.get(67)?.[0] ?? 3;
  const level = settings.get(69)?.[0] ?? 48;
  return {
    model: QR_MODELS[model] ?? String(model),
    size,
    level: QR_LEVELS[level] ?? String(level),
  };
}

function rawOptions(settings: Map<number, Uint8Array>): Record<string, number | string> {
  const out: Record<string, number | string> = {};
  for (const [fn, params] of settings) if (fn !== 80) out[`fn${fn}`] = hex(params);
  return out;
}
