/**
 * `printer-agent printers`: finding out about printers before they are in a config (issue 41).
 * `printers identify URL` asks one printer who it is and proposes a profile; `printers scan`
 * (item 1) lists USB printers (sysfs), the device files of local printers and, on a subnet the
 * technician names, the open TCP 9100 ports, identifying each with the same function.
 * Exit codes of `identify`: 0 when the printer said anything usable (even if no profile fits: the
 * proposal says how sure it is), 5 when nothing could be learnt (unreachable, silent, only
 * garbage). `scan` exits 0 whatever it found (the list is the answer), 2 for a bad or too wide
 * `--network` (docs/decisions.md 243).
 */
import { resolve } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import {
  CidrError,
  hostCount,
  parseCidr,
  type Subnet,
  WIDEST_PREFIX,
  WIDEST_WIDE_PREFIX,
} from '../printer/network-scan.js';
import { printerUrlExamples } from '../printer/printer-url.js';
import { describeIdentification, identifyPrinter } from './identify-printer.js';
import type { CliContext } from './io.js';
import { parseIntOption } from './options.js';
import { describeScan, scanPrinters } from './scan-printers.js';

export const EXIT_UNIDENTIFIED = 5;

function parseNetwork(value: string): Subnet {
  try {
    return parseCidr(value);
  } catch (err) {
    if (err instanceof CidrError) throw new InvalidArgumentError(`--network ${err.message}`);
    throw err;
  }
}

function parseWidth(value: string): 58 | 80 {
  if (value !== '58' && value !== '80') throw new InvalidArgumentError('must be 58 or 80');
  return Number(value) as 58 | 80;
}

export function registerPrinters(program: Command, context: CliContext): void {
  const { io } = context;
  const printers = program
    .command('printers')
    .description('find out about printers before they are in a config: scan, identify');
  printers
    .command('scan')
    .description(
      'list the printers this machine can reach, one line each with the URL for the config: USB printers (sysfs), /dev/usb/lp*, /dev/serial/by-id/*, and TCP 9100 and mDNS _pdl-datastream._tcp on the subnet --network names (no network is probed without it)',
    )
    .option(
      '--network <cidr>',
      `IPv4 subnet whose hosts get TCP 9100 probed, e.g. 192.168.1.0/24 (wider than /${WIDEST_PREFIX} only with --wide)`,
      parseNetwork,
    )
    .option(
      '--wide',
      `allow a --network wider than /${WIDEST_PREFIX} (up to /${WIDEST_WIDE_PREFIX})`,
      false,
    )
    .option(
      '--timeout <ms>',
      'connect timeout of each probe, and of each reply when an open port is identified',
      parseIntOption('--timeout', 10, 60_000),
      500,
    )
    .option(
      '--concurrency <n>',
      'hosts probed at a time',
      parseIntOption('--concurrency', 1, 256),
      32,
    )
    .option('--width <mm>', 'paper width, 58 or 80, for printers that cannot say', parseWidth)
    .option('--json', 'print the scan as JSON', false)
    // Tests list a fake dev/ tree made under a temporary directory, or the usbfs emulator's sys/.
    .addOption(
      new Option('--root <dir>', 'where dev/ and sys/ are looked for').default('/').hideHelp(),
    )
    .action(
      async (
        opts: {
          network?: Subnet;
          wide: boolean;
          timeout: number;
          concurrency: number;
          width?: 58 | 80;
          json: boolean;
          root: string;
        },
        command: Command,
      ) => {
        if (opts.network && opts.network.prefix < WIDEST_WIDE_PREFIX) {
          command.error(
            `error: --network ${opts.network.cidr} has ${hostCount(opts.network)} hosts, wider than /${WIDEST_WIDE_PREFIX}, the widest scanned even with --wide`,
            { exitCode: 2, code: 'printers.scan.wide' },
          );
        }
        if (opts.network && opts.network.prefix < WIDEST_PREFIX && !opts.wide) {
          command.error(
            `error: --network ${opts.network.cidr} has ${hostCount(opts.network)} hosts, wider than /${WIDEST_PREFIX}: name the store's subnet, or add --wide to probe them all`,
            { exitCode: 2, code: 'printers.scan.wide' },
          );
        }
        const report = await scanPrinters({
          ...(opts.network ? { network: opts.network } : {}),
          timeoutMs: opts.timeout,
          concurrency: opts.concurrency,
          ...(opts.width !== undefined ? { widthMm: opts.width } : {}),
          root: resolve(io.cwd, opts.root),
        });
        io.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : describeScan(report));
      },
    );
  printers
    .command('identify')
    .description(
      'ask a printer who it is (GS I, DLE EOT) and propose a profile from config/printers/, saying how sure (exit 5: nothing could be learnt)',
    )
    .argument('<url>', `printer URL: ${printerUrlExamples()} (not one the running agent holds)`)
    .option(
      '--timeout <ms>',
      'how long the connection and one reply may take (a silent printer costs two replies, the worst case eleven)',
      parseIntOption('--timeout', 10, 60_000),
      1000,
    )
    .option(
      '--width <mm>',
      'paper width you see, 58 or 80, when the printer cannot say',
      parseWidth,
    )
    .option('--json', 'print the identification as JSON', false)
    .action(async (url: string, opts: { timeout: number; width?: 58 | 80; json: boolean }) => {
      const result = await identifyPrinter(url, {
        timeoutMs: opts.timeout,
        ...(opts.width !== undefined ? { widthMm: opts.width } : {}),
      });
      io.stdout.write(
        opts.json ? `${JSON.stringify(result, null, 2)}\n` : describeIdentification(result),
      );
      if (!result.learnt) context.exitCode = EXIT_UNIDENTIFIED;
    });
}
