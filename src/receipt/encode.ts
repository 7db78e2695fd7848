/**
 * Encoding: layout commands to ESC/POS bytes with ReceiptPrinterEncoder, which owns the command
 * bytes (styles, code page, QR). We add only what it lacks: CJK through `FS &` + GB18030 bytes +
 * `FS .` (it has no double-byte support), and the portable feed-and-cut `GS V 66 0`.
 *
 * The layout has already mapped every character to the profile's code page or CJK font, so the
 * encoder never meets a character it would turn into `?` or into a byte below 0x20.
 */
import type { Codepage } from '@point-of-sale/codepage-encoder';
import ReceiptPrinterEncoder from '@point-of-sale/receipt-printer-encoder';
import iconv from 'iconv-lite';
import type { Charset } from './charset.js';
import { type Layout, PLAIN, type Style } from './layout.js';
import type { PrinterProfile } from './profile.js';

const FS_AND = [0x1c, 0x26]; // FS &: enter Chinese double-byte mode
const FS_DOT = [0x1c, 0x2e]; // FS .: leave it
const CUT = { partial: [0x1d, 0x56, 0x42, 0x00], full: [0x1d, 0x56, 0x41, 0x00] } as const; // GS V m n: feed to the cutter, then cut
const QR_SIZE = 6;

function applyStyle(encoder: ReceiptPrinterEncoder, from: Style, to: Style): void {
  if (from.bold !== to.bold) encoder.bold(to.bold);
  if (from.underline !== to.underline) encoder.underline(to.underline);
  if (from.invert !== to.invert) encoder.invert(to.invert);
  if (from.width !== to.width || from.height !== to.height) encoder.size(to.width, to.height);
}

/** Splits text into runs printed from the code page and runs printed through the CJK font. */
function runs(text: string, charset: Charset): Array<{ cjk: boolean; text: string }> {
  const out: Array<{ cjk: boolean; text: string }> = [];
  for (const ch of text) {
    const cjk = charset.isCjk(ch) && !charset.inCodepage(ch);
    const last = out[out.length - 1];
    if (last && last.cjk === cjk) last.text += ch;
    else out.push({ cjk, text: ch });
  }
  return out;
}

export function encodeLayout(
  layout: Layout,
  profile: PrinterProfile,
  charset: Charset,
): Uint8Array {
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
          for (const run of runs(segment.text, charset)) {
            if (run.cjk) encoder.raw([...FS_AND, ...iconv.encode(run.text, 'gb18030'), ...FS_DOT]);
            else encoder.text(run.text);
          }
        }
        // Each line ends in plain style, so any line can be read (or reprinted) on its own.
        applyStyle(encoder, style, PLAIN);
        style = PLAIN;
        encoder.newline();
        break;
      case 'qr':
        encoder
          .align('center')
          .qrcode(command.data, { model: 2, size: QR_SIZE, errorlevel: 'm' })
          .align('left');
        break;
      case 'feed':
        encoder.raw([0x1b, 0x64, command.lines]); // ESC d n
        break;
      case 'cut':
        encoder.raw([...CUT[command.type]]);
        break;
    }
  }
  return encoder.encode();
}
