/** `printer-agent render`: an instruction or an order record to a receipt, without a printer. */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { AgentError } from '../errors.js';
import { orderRecordSchema } from '../protocol/order-record.js';
import { printInstructionSchema } from '../protocol/print-protocol.js';
import { describeIssues, parseWith } from '../protocol/validation.js';
import { receiptOptionsSchema } from '../receipt/options.js';
import { getProfile, type PrinterProfile } from '../receipt/profile.js';
import { LineRasterizer } from '../receipt/raster-text.js';
import {
  type ReceiptSource,
  type RenderDocument,
  type Rendered,
  renderReceipt,
} from '../receipt/render.js';
import { type CliContext, type CliIo, readJsonObject } from './io.js';

const FORMATS = ['text', 'escpos', 'hex', 'svg', 'png'] as const;
type Format = (typeof FORMATS)[number];

/** An instruction has `jobId` and `order`; an order record has `orderInnerNo` and `skuList`. */
export function readReceiptSource(io: CliIo, file: string): ReceiptSource {
  const value = readJsonObject(io, file);
  if ('orderInnerNo' in value) {
    const parsed = parseWith(orderRecordSchema, value);
    if (!parsed.ok)
      throw new AgentError('PARAM_INVALID', `${file}: ${describeIssues(parsed.issues)}`, {
        issues: parsed.issues,
      });
    return { kind: 'record', record: parsed.value };
  }
  if ('order' in value || 'jobId' in value) {
    const parsed = parseWith(printInstructionSchema, value);
    if (!parsed.ok)
      throw new AgentError('PARAM_INVALID', `${file}: ${describeIssues(parsed.issues)}`, {
        issues: parsed.issues,
      });
    return { kind: 'instruction', instruction: parsed.value };
  }
  throw new AgentError(
    'INPUT_INVALID',
    `${file}: must be a print instruction (jobId, orderNo, order, ...) or an order record (orderInnerNo, skuList, ...)`,
  );
}

/**
 * Renders a fixture or field file for `render` and `print`: receipt options from `--options` (or
 * the defaults), warnings on stderr.
 */
export function renderFile(
  io: CliIo,
  file: string,
  profile: PrinterProfile,
  optionsFile?: string,
  document?: RenderDocument,
): Rendered {
  let options = receiptOptionsSchema.parse({});
  if (optionsFile) {
    const parsed = parseWith(receiptOptionsSchema, readJsonObject(io, optionsFile));
    if (!parsed.ok)
      throw new AgentError('INPUT_INVALID', `${optionsFile}: ${describeIssues(parsed.issues)}`);
    options = parsed.value;
  }
  const rendered = renderReceipt({
    source: readReceiptSource(io, file),
    profile,
    // What the agent prints: lines its fonts cannot carry drawn as images (issue 18).
    options: { ...options, rasterizer: options.rasterLines ? LineRasterizer.fromSystem() : null },
    ...(document ? { document } : {}),
  });
  for (const warning of rendered.warnings) io.stderr.write(`warning: ${warning}\n`);
  return rendered;
}

/** 16 bytes per line, offset first: easy to compare with a command reference. */
export function hexDump(bytes: Uint8Array): string {
  const lines: string[] = [];
  for (let i = 0; i < bytes.length; i += 16) {
    const chunk = [...bytes.subarray(i, i + 16)];
    const hex = chunk.map((b) => b.toString(16).padStart(2, '0')).join(' ');
    const ascii = chunk.map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    lines.push(`${i.toString(16).padStart(6, '0')}  ${hex.padEnd(47)}  ${ascii}`);
  }
  return `${lines.join('\n')}\n`;
}

export function registerRender(program: Command, { io }: CliContext): void {
  program
    .command('render')
    .description(
      'render a print instruction or an order record as a receipt (text, ESC/POS bytes, hex, SVG or PNG)',
    )
    .argument('<file.json>', 'print instruction or order record, or - for standard input')
    .option('--profile <id>', 'printer profile from config/printers/', 'generic-80mm')
    .addOption(
      // The choices are data commander shows in --help, and the README's command table is
      // checked against them (test/docs/command-table.test.ts).
      new Option(
        '--format <format>',
        'text (the text twin), escpos (raw bytes), hex, or a picture of the bytes as the emulator prints them: svg or png',
      )
        .choices(FORMATS)
        .argParser((v: string) => {
          if (!(FORMATS as readonly string[]).includes(v))
            throw new InvalidArgumentError(`must be one of ${FORMATS.join(', ')}`);
          return v as Format;
        })
        .default('text'),
    )
    .option(
      '--options <file>',
      'receipt options JSON: header, footer, money {currency, locale, display}, qr',
    )
    .option(
      '--kitchen [role]',
      'the kitchen ticket for this printer role (default kitchen) instead of the payment receipt',
      (v: string) => {
        if (!/^[A-Za-z0-9._-]{1,64}$/.test(v))
          throw new InvalidArgumentError(
            'must be 1 to 64 letters, digits, dot, dash or underscore',
          );
        return v;
      },
    )
    .action(
      async (
        file: string,
        opts: { profile: string; format: Format; options?: string; kitchen?: string | true },
      ) => {
        const profile = getProfile(opts.profile);
        const role = opts.kitchen === true ? 'kitchen' : opts.kitchen;
        const rendered = renderFile(
          io,
          file,
          profile,
          opts.options,
          role === undefined ? undefined : { layout: 'kitchen', role },
        );
        if (opts.format === 'text') io.stdout.write(rendered.text);
        else if (opts.format === 'hex') io.stdout.write(hexDump(rendered.bytes));
        else if (opts.format === 'svg' || opts.format === 'png') {
          // The emulator's room draws what its decoder reads: loaded only for a picture.
          const { bytesToSvg, svgToPng } = await import('../emulator/index.js');
          const svg = bytesToSvg(rendered.bytes, { columns: profile.fonts.A.columns });
          io.stdout.write(opts.format === 'svg' ? svg : await svgToPng(svg));
        } else io.stdout.write(rendered.bytes);
      },
    );
}
