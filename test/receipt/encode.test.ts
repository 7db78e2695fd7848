/**
 * The direct ESC/POS encoder (issue 16) against the library it replaced: ReceiptPrinterEncoder,
 * driven exactly as `src/receipt/encode.ts` drove it before (the oracle below is that code), must
 * produce the same bytes for every golden receipt, the test page of every profile, and random
 * layouts of styled code-page text, CJK runs, QR codes, feeds and cuts. The library never wrote
 * user-defined characters, so the profiles are compared without them (test/receipt/udc.test.ts
 * checks those bytes, the emulator tests what they print). The library stays a
 * development dependency for this comparison; what the bytes mean on paper is checked by the
 * emulator's decoder in the golden, emulator and printer tests.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Codepage } from '@point-of-sale/codepage-encoder';
import ReceiptPrinterEncoder from '@point-of-sale/receipt-printer-encoder';
import fc from 'fast-check';
import iconv from 'iconv-lite';
import { type Charset, charsetFor } from '../../src/receipt/charset.js';
import { encodeLayout } from '../../src/receipt/encode.js';
import { type Layout, type LayoutCommand, PLAIN, type Style } from '../../src/receipt/layout.js';
import { receiptOptions } from '../../src/receipt/options.js';
import { getProfile, loadProfiles, type PrinterProfile } from '../../src/receipt/profile.js';
import { renderReceipt, renderTestPage } from '../../src/receipt/render.js';
import { displayWidth } from '../../src/receipt/width.js';
import { GOLDEN_CASES, loadFixture, STORE_OPTIONS } from '../helpers/receipts.js';

/** The encoder as it was: the library's commands, text through its code-page encoder. */
function libraryEncode(layout: Layout, profile: PrinterProfile, charset: Charset): Uint8Array {
  const applyStyle = (encoder: ReceiptPrinterEncoder, from: Style, to: Style) => {
    if (from.bold !== to.bold) encoder.bold(to.bold);
    if (from.underline !== to.underline) encoder.underline(to.underline);
    if (from.invert !== to.invert) encoder.invert(to.invert);
    if (from.width !== to.width || from.height !== to.height) encoder.size(to.width, to.height);
  };
  const encoder = new ReceiptPrinterEncoder({
    language: 'esc-pos',
    columns: layout.columns,
    newline: '\n',
    codepageMapping: profile.codepageNumbers,
  });
  encoder.initialize().codepage(profile.codepage as Codepage);
  let style = PLAIN;
  for (const command of layout.commands) {
    switch (command.kind) {
      case 'line':
        for (const segment of command.segments) {
          applyStyle(encoder, style, segment.style);
          style = segment.style;
          const runs: Array<{ cjk: boolean; text: string }> = [];
          for (const ch of segment.text) {
            const cjk = charset.isCjk(ch) && !charset.inCodepage(ch);
            const last = runs[runs.length - 1];
            if (last && last.cjk === cjk) last.text += ch;
            else runs.push({ cjk, text: ch });
          }
          for (const run of runs) {
            if (run.cjk)
              encoder.raw([0x1c, 0x26, ...iconv.encode(run.text, 'gb18030'), 0x1c, 0x2e]);
            else encoder.text(run.text);
          }
        }
        applyStyle(encoder, style, PLAIN);
        style = PLAIN;
        encoder.newline();
        break;
      case 'qr':
        encoder
          .align('center')
          .qrcode(command.data, { model: 2, size: 6, errorlevel: 'm' })
          .align('left');
        break;
      case 'feed':
        encoder.raw([0x1b, 0x64, command.lines]);
        break;
      case 'cut':
        encoder.raw(command.type === 'partial' ? [0x1d, 0x56, 0x42, 0] : [0x1d, 0x56, 0x41, 0]);
        break;
    }
  }
  return encoder.encode();
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

/** The profile as the library could drive it: `₱` falls back to `PHP` (decision 22). */
const withoutUdc = (profile: PrinterProfile): PrinterProfile => ({
  ...profile,
  userDefinedCharacters: false,
});

describe('direct ESC/POS encoder', () => {
  it('writes the bytes the library wrote, for every golden receipt', () => {
    let compared = 0;
    for (const c of GOLDEN_CASES) {
      for (const profileId of c.profiles) {
        const profile = withoutUdc(getProfile(profileId));
        const rendered = renderReceipt({
          source: loadFixture(c.fixture),
          profile,
          options: c.options ?? STORE_OPTIONS,
          markings: c.markings,
        });
        const oracle = libraryEncode(rendered.layout, profile, charsetFor(profile));
        assert.equal(hex(rendered.bytes), hex(oracle), `${c.name} on ${profileId}`);
        compared++;
      }
    }
    assert.ok(compared >= 24, `compared ${compared} receipts`);
  });

  it('writes the bytes the library wrote, for the test page of every profile', () => {
    const profiles = [...loadProfiles().values()].map(withoutUdc);
    assert.ok(profiles.length >= 4);
    for (const profile of profiles) {
      const page = renderTestPage(profile, receiptOptions({ qr: true }), '9.9.9');
      assert.equal(
        hex(page.bytes),
        hex(libraryEncode(page.layout, profile, charsetFor(profile))),
        profile.id,
      );
    }
  });

  it('writes the bytes the library wrote, for random layouts', () => {
    const style = fc.record({
      bold: fc.boolean(),
      underline: fc.boolean(),
      invert: fc.boolean(),
      width: fc.constantFrom(1 as const, 2 as const),
      height: fc.constantFrom(1 as const, 2 as const),
    });
    // Text the layout could hand over: code-page characters (ASCII, accented, €) and, on the
    // CJK profile, ideographs. Never empty: the layout writes no empty segment.
    const text = fc.string({
      unit: fc.constantFrom(...'ab Z09-.:é€ñ', '宫', '保', '鸡', '丁'),
      minLength: 1,
      maxLength: 20,
    });
    const command: fc.Arbitrary<LayoutCommand> = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.record({
          kind: fc.constant('line' as const),
          segments: fc.array(fc.record({ text, style }), { maxLength: 4 }),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constant('qr' as const),
          data: fc.string({ maxLength: 60 }),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constant('feed' as const),
          lines: fc.integer({ min: 0, max: 10 }),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constant('cut' as const),
          type: fc.constantFrom('partial' as const, 'full' as const),
        }),
      },
    );
    const COLUMNS = 48;
    const profiles = ['generic-58mm', 'epson-tm-t20iii', 'pos-5890-gb18030'].map((id) =>
      getProfile(id),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...profiles),
        fc.array(command, { maxLength: 30 }),
        (profile, commands) => {
          const charset = charsetFor(profile);
          // What the layout hands over: characters the profile cannot print are mapped, and a
          // line never exceeds the columns (the library would wrap it; we never need to).
          const printable = commands.map((c) => {
            if (c.kind !== 'line') return c;
            let used = 0;
            const segments = [];
            for (const segment of c.segments) {
              const text = charset.map(segment.text).text;
              used += displayWidth(text) * segment.style.width;
              if (used > COLUMNS) break;
              segments.push({ ...segment, text });
            }
            return { ...c, segments };
          });
          const layout: Layout = {
            columns: COLUMNS,
            commands: printable,
            warnings: [],
            notices: [],
          };
          assert.equal(
            hex(encodeLayout(layout, profile, charset)),
            hex(libraryEncode(layout, profile, charset)),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
