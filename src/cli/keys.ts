/** `printer-agent keys generate`: RSA key pairs for the service and for stores. */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { AgentError } from '../errors.js';
import { generateKeyPair, MIN_KEY_BITS } from '../protocol/signing.js';
import { type CliContext, pathIn } from './io.js';
import { parseIntOption } from './options.js';

export interface GeneratedKeyFiles {
  privatePath: string;
  publicPath: string;
}

/** Writes `<name>-private.pem` (0600) and `<name>-public.pem` (0644) into `dir`. */
export function writeKeyPair(
  dir: string,
  options: { name?: string; bits?: number; force?: boolean } = {},
): GeneratedKeyFiles {
  const prefix = options.name ? `${options.name}-` : '';
  const privatePath = join(dir, `${prefix}private.pem`);
  const publicPath = join(dir, `${prefix}public.pem`);
  if (!options.force) {
    for (const path of [privatePath, publicPath]) {
      if (existsSync(path))
        throw new AgentError('INPUT_INVALID', `${path}: already exists; use --force to replace it`);
    }
  }
  const pair = generateKeyPair(options.bits ?? MIN_KEY_BITS);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // mode applies only when the file is created; chmod covers --force over an existing file.
  writeFileSync(privatePath, pair.privatePem, { mode: 0o600 });
  chmodSync(privatePath, 0o600);
  writeFileSync(publicPath, pair.publicPem, { mode: 0o644 });
  return { privatePath, publicPath };
}

export function registerKeys(program: Command, { io }: CliContext): void {
  const keys = program.command('keys').description('manage RSA signing keys');
  keys
    .command('generate')
    .description('generate an RSA key pair: <name>-private.pem (mode 0600) and <name>-public.pem')
    .requiredOption('--out <dir>', 'directory to write the key files into (created if missing)')
    .option('--name <name>', 'file name prefix, e.g. service or store (default: none)')
    .option(
      '--bits <n>',
      `modulus size in bits, at least ${MIN_KEY_BITS}`,
      parseIntOption('--bits'),
      MIN_KEY_BITS,
    )
    .option('--force', 'replace existing key files', false)
    .action((opts: { out: string; name?: string; bits: number; force: boolean }) => {
      if (opts.name !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(opts.name)) {
        throw new AgentError(
          'INPUT_INVALID',
          '--name: must be 1 to 64 letters, digits, dot, dash or underscore',
        );
      }
      const files = writeKeyPair(pathIn(io, opts.out), opts);
      io.stdout.write(`private key: ${files.privatePath} (mode 0600, keep it secret)\n`);
      io.stdout.write(`public key:  ${files.publicPath}\n`);
    });
}
