/**
 * `printer-agent emulator`: a loopback ESC/POS printer (issue 4) for tests and for people.
 *
 * It listens on one endpoint, writes every cut ticket to `--out` and prints one line per ticket.
 * Stdout lines that scripts can rely on:
 *   listening tcp://127.0.0.1:9100        (or serial:DIR/host, file:DIR/lp0: give it to the agent)
 *   control http://127.0.0.1:9101
 *   ticket 1: 12 lines, 1 code, 0 images, partial cut, 0 warnings -> DIR/0001.txt
 * Faults and link behaviours switch at run time through `--control` (HTTP) or commands typed on
 * stdin (`help`). SIGINT / SIGTERM stop it cleanly (exit 0): servers closed, socat killed, files
 * already complete (they are written synchronously).
 */
import { mkdirSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import {
  attachLineProtocol,
  type ControlServer,
  describeStatus,
  EmulatorControl,
  type Endpoint,
  FAULT_FIELDS,
  FAULTS,
  type FaultName,
  LinkSlot,
  listenTcp,
  openDeviceEndpoint,
  openSerialEndpoint,
  PrintSpeedLimiter,
  PtyEndpoint,
  SocatMissingError,
  startControlServer,
  TicketWriter,
  VirtualPrinter,
} from '../emulator/index.js';
import { AgentError, errorMessage } from '../errors.js';
import { isLoopbackHost } from '../host/loopback.js';
import { PRIVATE_DIRECTORY_MODE } from '../host/private-file.js';
import { getProfile } from '../receipt/profile.js';
import { emulatorOptionsForProfile } from './emulator-profile.js';
import type { CliContext, CliIo } from './io.js';

export type ListenSpec =
  | { kind: 'tcp'; host: string; port: number }
  | { kind: 'serial' | 'device'; dir: string };

const LISTEN_FORMS = 'tcp://HOST:PORT, serial:DIR or device:DIR';

function parsePort(text: string, what: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) {
    throw new InvalidArgumentError(`${what}: port must be a number from 0 to 65535`);
  }
  return Number(text);
}

/** `cwd`: what a relative serial or device DIR is relative to. */
export function parseListen(value: string, cwd: string): ListenSpec {
  const serial = /^(serial|device):(.+)$/.exec(value);
  if (serial) return { kind: serial[1] as 'serial' | 'device', dir: resolve(cwd, serial[2]!) };
  if (!value.startsWith('tcp://')) throw new InvalidArgumentError(`must be ${LISTEN_FORMS}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError(`must be ${LISTEN_FORMS}`);
  }
  if (
    url.username ||
    url.password ||
    url.search ||
    url.hash ||
    (url.pathname && url.pathname !== '/')
  ) {
    throw new InvalidArgumentError(`must be tcp://HOST:PORT with nothing after the port`);
  }
  if (url.port === '') {
    throw new InvalidArgumentError(
      'tcp://HOST:PORT needs a port (9100 is the usual one, 0 for any)',
    );
  }
  return {
    kind: 'tcp',
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: parsePort(url.port, 'tcp'),
  };
}

export function parseControl(value: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(value);
  if (!m) throw new InvalidArgumentError('must be HOST:PORT, e.g. 127.0.0.1:9101');
  const host = (m[1] ?? m[2])!;
  if (!isLoopbackHost(host)) {
    throw new InvalidArgumentError(
      `${host} is not a loopback address: the control interface has no authentication (use 127.0.0.1 or ::1)`,
    );
  }
  return { host, port: parsePort(m[3]!, 'control') };
}

function intOption(name: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max) {
      throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}`);
    }
    return n;
  };
}

function speedOption(name: string, unit: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+(\.\d+)?$/.test(value) || !(n > 0)) {
      throw new InvalidArgumentError(`${name} must be a number of ${unit} greater than 0`);
    }
    return n;
  };
}

function collectFault(value: string, previous: FaultName[] | undefined): FaultName[] {
  if (!(FAULTS as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`--fault must be one of ${FAULTS.join(', ')}`);
  }
  return [...(previous ?? []), value as FaultName];
}

interface EmulatorOptions {
  listen: ListenSpec;
  out: string;
  width: number;
  fontBColumns?: number;
  fault?: FaultName[];
  control?: { host: string; port: number };
  slowLink?: number;
  slowPrint?: number;
  bufferSize: number;
  mute?: boolean;
  profile?: string;
}

function describeListen(spec: ListenSpec): string {
  if (spec.kind !== 'tcp') return `${spec.kind}:${spec.dir}`;
  return `tcp://${spec.host.includes(':') ? `[${spec.host}]` : spec.host}:${spec.port}`;
}

async function openEndpoint(spec: ListenSpec, slot: LinkSlot): Promise<Endpoint> {
  try {
    if (spec.kind === 'tcp') return await listenTcp(slot, { host: spec.host, port: spec.port });
    const open = spec.kind === 'serial' ? openSerialEndpoint : openDeviceEndpoint;
    return await open(slot, { dir: spec.dir });
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    const detail =
      cause instanceof SocatMissingError
        ? cause.message
        : code === 'EADDRINUSE'
          ? 'address already in use'
          : code === 'EADDRNOTAVAIL'
            ? 'no such local address'
            : cause instanceof Error
              ? cause.message
              : String(cause);
    throw new AgentError('INPUT_INVALID', `--listen ${describeListen(spec)}: ${detail}`, { cause });
  }
}

async function runEmulator(opts: EmulatorOptions, command: Command, io: CliIo): Promise<void> {
  const say = (line: string) => io.stdout.write(`${line}\n`);
  if (
    opts.fontBColumns !== undefined &&
    (opts.fontBColumns < opts.width || opts.fontBColumns > opts.width * 2)
  ) {
    command.error(
      `error: --font-b-columns ${opts.fontBColumns}: must be from --width (${opts.width}) to twice it (${opts.width * 2})`,
      { exitCode: 2, code: 'emulator.font-b-columns' },
    );
  }
  const out = resolve(io.cwd, opts.out);
  try {
    // Tickets hold customer data: a directory made here is private (issue 40 item 9).
    mkdirSync(out, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
    if (!statSync(out).isDirectory()) throw new Error('not a directory');
  } catch (err) {
    command.error(`error: --out ${opts.out}: cannot use as a directory (${errorMessage(err)})`, {
      exitCode: 2,
      code: 'emulator.out',
    });
  }

  // A profile gives the columns and the GS I identity of its model; --width and
  // --font-b-columns given explicitly still win.
  const played =
    opts.profile !== undefined ? emulatorOptionsForProfile(getProfile(opts.profile)) : {};
  const widthGiven = command.getOptionValueSource('width') !== 'default';
  const printer = new VirtualPrinter({
    ...played,
    ...(widthGiven || played.columns === undefined ? { columns: opts.width } : {}),
    ...(opts.fontBColumns !== undefined ? { columnsFontB: opts.fontBColumns } : {}),
    bufferSize: opts.bufferSize,
  });
  for (const fault of opts.fault ?? []) printer.setFault(fault, true);
  if (opts.mute) printer.setFault('mute', true);

  const slot = new LinkSlot(printer, { slowLinkBps: opts.slowLink ?? null });
  const printSpeed = new PrintSpeedLimiter(printer, opts.slowPrint ?? null);
  const writer = new TicketWriter(printer, { dir: out });
  slot.on('deliver', (bytes, offset) => writer.capture(offset, bytes));
  writer.on('written', (t) => say(`${t.summary} -> ${t.files.txt}`));
  writer.on('failure', (err, n) =>
    io.stderr.write(`error: ticket ${n}: cannot write to ${out}: ${err.message}\n`),
  );
  printer.on('status', (next, previous) => {
    for (const name of FAULTS) {
      const field = FAULT_FIELDS[name];
      if (next[field] !== previous[field]) say(`fault ${name} ${next[field] ? 'on' : 'off'}`);
    }
  });
  slot.on('link', () => say('link: host connected'));
  slot.on('unlink', (_link, reason) => say(`link: closed (${reason})`));

  let endpoint: Endpoint | undefined;
  let control: ControlServer | undefined;
  let stopInput: (() => void) | undefined;
  const shutdown = async () => {
    stopInput?.();
    // A reading stdin would keep the process alive after everything else has closed.
    io.stdin.destroy();
    await control?.close();
    await endpoint?.close();
    printSpeed.close();
    writer.close();
  };

  // Signal handlers go in first: a SIGTERM that arrives while starting up must still stop socat
  // and the servers rather than kill the process with them half made.
  let stop: (failure: Error | undefined) => void = () => {};
  const stopped = new Promise<Error | undefined>((done) => {
    stop = done;
  });
  const onSignal = () => stop(undefined);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  let failure: Error | undefined;
  try {
    endpoint = await openEndpoint(opts.listen, slot);
    if (endpoint instanceof PtyEndpoint) {
      const pty = endpoint;
      pty.on('failure', (err) => stop(err));
      pty.on('replug', () => say(`listening ${pty.address} (plugged in again)`));
    }
    const emulator = new EmulatorControl({ printer, slot, printSpeed, address: endpoint.address });
    say(`listening ${endpoint.address}`);
    if (opts.control) {
      try {
        control = await startControlServer(emulator, opts.control);
      } catch (cause) {
        const code = (cause as NodeJS.ErrnoException).code;
        throw new AgentError(
          'INPUT_INVALID',
          `--control ${opts.control.host}:${opts.control.port}: ${code === 'EADDRINUSE' ? 'address already in use' : errorMessage(cause)}`,
          { cause },
        );
      }
      say(`control ${control.url}`);
    }
    say(`tickets to ${out}`);
    stopInput = attachLineProtocol(emulator, io.stdin, io.stdout);
    if (io.stdin.isTTY) say(`${describeStatus(emulator.status())}\ntype help for commands`);

    failure = await stopped;
    // A second signal while stopping means the person wants out now.
    const force = () => process.exit(130);
    process.once('SIGINT', force);
    process.once('SIGTERM', force);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await shutdown();
  }
  if (failure)
    throw new AgentError('INPUT_INVALID', `--listen: ${failure.message}`, { cause: failure });
  say('stopped');
}

/** A profile id of config/printers/, refused as a usage error naming the known ones. */
function parseProfileId(value: string): string {
  try {
    getProfile(value);
  } catch (error) {
    throw new InvalidArgumentError(errorMessage(error));
  }
  return value;
}

export function registerEmulator(program: Command, { io }: CliContext): void {
  program
    .command('emulator')
    .description(
      'run a loopback ESC/POS printer: tickets to --out as .txt/.json/.bin, faults switchable at run time',
    )
    .requiredOption('--listen <url>', `where the agent connects: ${LISTEN_FORMS}`, (v: string) =>
      parseListen(v, io.cwd),
    )
    .requiredOption('--out <dir>', 'directory for the tickets: 0001.txt, .styled.txt, .json, .bin')
    .option(
      '--width <columns>',
      'font A columns per line (48 on 80 mm, 32 on 58 mm)',
      intOption('--width', 16, 128),
      48,
    )
    .option(
      '--font-b-columns <columns>',
      'font B columns per line (default: what fits, 64 for 48 columns)',
      intOption('--font-b-columns', 16, 256),
    )
    .option(
      '--fault <name...>',
      `fault present at start, repeatable: ${FAULTS.join(', ')}`,
      collectFault,
    )
    .option(
      '--control <host:port>',
      'HTTP control interface on a loopback address (port 0: any)',
      parseControl,
    )
    .option(
      '--slow-link <bps>',
      'cap the link at BPS bytes per second each way (960 = 9600 baud)',
      speedOption('--slow-link', 'bytes per second'),
    )
    .option(
      '--slow-print <mm-per-s>',
      'print at this many mm of paper per second',
      speedOption('--slow-print', 'mm per second'),
    )
    .option(
      '--buffer-size <bytes>',
      'receive buffer size; the printer turns busy when it is full',
      intOption('--buffer-size', 16, 1 << 20),
      4096,
    )
    .option('--mute', 'answer no status queries, like many cheap printers')
    .option(
      '--profile <id>',
      'play a profile of config/printers/: its columns and the GS I identity of its model',
      parseProfileId,
    )
    .action(async (opts: EmulatorOptions, command: Command) => {
      await runEmulator(opts, command, io);
    });
}
