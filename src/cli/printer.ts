/**
 * `printer-agent status` and `printer-agent print`: field tools that talk to a printer directly,
 * bypassing the queue. Exit codes beyond the usual: 3 the printer is not ready, 4 the job was
 * sent but not confirmed.
 */
import type { Command } from 'commander';
import { AgentError } from '../errors.js';
import { openPrinter } from '../printer/open-printer.js';
import { getProfile } from '../receipt/profile.js';
import type { CliContext } from './io.js';
import { parseIntOption } from './options.js';
import { renderFile } from './render.js';

export const EXIT_NOT_READY = 3;
export const EXIT_UNCONFIRMED = 4;

export function registerPrinter(program: Command, context: CliContext): void {
  const { io } = context;
  program
    .command('status')
    .description('ask a printer for its state (exit 0 when it can print, 3 when it cannot)')
    .requiredOption(
      '--printer <url>',
      'tcp://HOST:9100, serial:/dev/ttyUSB0?baudRate=115200, file:/dev/usb/lp0 or usb:VID:PID',
    )
    .option(
      '--profile <id>',
      'printer profile (decides whether the model answers status)',
      'generic-80mm',
    )
    .option(
      '--timeout <ms>',
      'how long one status reply may take',
      parseIntOption('--timeout'),
      1000,
    )
    .option('--json', 'print the state as JSON', false)
    .action(async (opts: { printer: string; profile: string; timeout: number; json: boolean }) => {
      const profile = getProfile(opts.profile);
      const printer = openPrinter(opts.printer, profile, { statusTimeoutMs: opts.timeout });
      try {
        const condition = await printer.status();
        if (opts.json)
          io.stdout.write(
            `${JSON.stringify({ printer: printer.transport.description, ...condition })}\n`,
          );
        else {
          const causes = condition.causes.length > 0 ? ` (${condition.causes.join(', ')})` : '';
          io.stdout.write(`${printer.transport.description}: ${condition.state}${causes}\n`);
        }
        if (condition.state !== 'ready' && condition.state !== 'paper-near-end')
          context.exitCode = EXIT_NOT_READY;
      } finally {
        await printer.close();
      }
    });

  program
    .command('print')
    .description(
      'render an instruction or order record and print it now, bypassing the queue (field tests)',
    )
    .argument('<file.json>', 'print instruction or order record')
    .requiredOption('--printer <url>', 'printer URL, as for status')
    .option('--profile <id>', 'printer profile from config/printers/', 'generic-80mm')
    .option('--options <file>', 'receipt options JSON: header, footer, money, qr')
    .action(async (file: string, opts: { printer: string; profile: string; options?: string }) => {
      const profile = getProfile(opts.profile);
      const rendered = renderFile(io, file, profile, opts.options);
      const printer = openPrinter(opts.printer, profile);
      try {
        const result = await printer.print(rendered.bytes);
        if (result.outcome === 'printed') {
          io.stdout.write(
            `printed ${rendered.bytes.length} bytes on ${printer.transport.description} (confirmed by ${result.confirmedBy})\n`,
          );
        } else {
          io.stdout.write(
            `sent ${rendered.bytes.length} bytes to ${printer.transport.description}, not confirmed: ${result.reason}\n`,
          );
          context.exitCode = EXIT_UNCONFIRMED;
        }
      } catch (error) {
        if (error instanceof AgentError && error.code === 'PRINTER_NOT_READY') {
          io.stderr.write(`${error.code}: ${error.message}\n`);
          context.exitCode = EXIT_NOT_READY;
          return;
        }
        throw error;
      } finally {
        await printer.close();
      }
    });
}
