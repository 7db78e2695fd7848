/** `printer-agent sign` and `printer-agent verify`: envelopes by hand, for integrators. */
import type { Command } from 'commander';
import { z } from 'zod';
import { AgentError } from '../errors.js';
import { buildEnvelope, openEnvelope } from '../protocol/envelope.js';
import { PARAM_SCHEMAS, type ParamKind } from '../protocol/param-schemas.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../protocol/print-protocol.js';
import {
  DEFAULT_SIGNATURE_SCHEME,
  loadKeyFile,
  type SignatureScheme,
} from '../protocol/signing.js';
import { describeIssues, parseWith } from '../protocol/validation.js';
import { type CliContext, pathIn, readInput, readJsonObject, secretFrom } from './io.js';
import { parseIntOption, parseParamKind, parseScheme } from './options.js';

const anyObject = z.record(z.string(), z.unknown());

export function registerEnvelopes(program: Command, { io }: CliContext): void {
  program
    .command('sign')
    .description('sign a param JSON file and print the request envelope (order-api 2.1) as JSON')
    .argument('<param.json>', 'file with the param object, or - for standard input')
    .requiredOption('--key <file>', 'PEM private key that signs')
    .requiredOption('--app-id <appId>', 'application id issued by the service')
    .option(
      '--store-key <storeKey>',
      'store key issued by the service (visible in ps: prefer --store-key-file)',
    )
    .option('--store-key-file <file>', 'file whose first line is the store key')
    .option(
      '--scheme <scheme>',
      'RSA-SHA256 or RSA-PSS-SHA256',
      parseScheme,
      DEFAULT_SIGNATURE_SCHEME,
    )
    .option(
      '--validate <kind>',
      'check param against the create, query, print or command schema first',
      parseParamKind,
    )
    .option(
      '--raw',
      'sign the file content exactly as it is (minus a trailing newline) instead of compact JSON',
      false,
    )
    .action(
      (
        file: string,
        opts: {
          key: string;
          appId: string;
          storeKey?: string;
          storeKeyFile?: string;
          scheme: SignatureScheme;
          validate?: ParamKind;
          raw: boolean;
        },
      ) => {
        const storeKey = secretFrom(io, opts.storeKey, opts.storeKeyFile, 'store-key');
        if (storeKey === undefined)
          throw new AgentError('INPUT_INVALID', '--store-key or --store-key-file: is required');
        const key = loadKeyFile(pathIn(io, opts.key), 'private');
        const object = readJsonObject(io, file);
        if (opts.validate) {
          const parsed = parseWith(PARAM_SCHEMAS[opts.validate], object);
          if (!parsed.ok)
            throw new AgentError('PARAM_INVALID', describeIssues(parsed.issues), {
              issues: parsed.issues,
            });
        }
        const param = opts.raw ? readInput(io, file).replace(/\r?\n$/, '') : JSON.stringify(object);
        const envelope = buildEnvelope({
          appId: opts.appId,
          storeKey,
          param,
          key,
          scheme: opts.scheme,
        });
        io.stdout.write(`${JSON.stringify(envelope)}\n`);
      },
    );

  program
    .command('verify')
    .description(
      'verify a request envelope: signature over param, then identity and schema if asked',
    )
    .argument('<envelope.json>', 'file with the envelope, or - for standard input')
    .requiredOption('--pub <file>', 'PEM public key of the signer')
    .option(
      '--scheme <scheme>',
      'RSA-SHA256 or RSA-PSS-SHA256',
      parseScheme,
      DEFAULT_SIGNATURE_SCHEME,
    )
    .option('--app-id <appId>', 'require this appId')
    .option('--store-key <storeKey>', 'require this store key')
    .option('--store-key-file <file>', 'require the store key in this file')
    .option(
      '--validate <kind>',
      'check param against the create, query, print or command schema (print and command: as the agent does, storeId required)',
      parseParamKind,
    )
    .option(
      '--store-id <storeId>',
      "require param.storeId to be this store's id, as the agent does (print-protocol §4)",
    )
    .option(
      '--max-bytes <n>',
      'size limit of the envelope in bytes',
      parseIntOption('--max-bytes'),
      DEFAULT_MAX_MESSAGE_BYTES,
    )
    .action(
      (
        file: string,
        opts: {
          pub: string;
          scheme: SignatureScheme;
          appId?: string;
          storeKey?: string;
          storeKeyFile?: string;
          validate?: ParamKind;
          storeId?: string;
          maxBytes: number;
        },
      ) => {
        if (!Number.isSafeInteger(opts.maxBytes) || opts.maxBytes < 1) {
          throw new AgentError('INPUT_INVALID', '--max-bytes: must be a positive whole number');
        }
        const storeKey = secretFrom(io, opts.storeKey, opts.storeKeyFile, 'store-key');
        const key = loadKeyFile(pathIn(io, opts.pub), 'public');
        const body = readInput(io, file);
        const result = openEnvelope(body, {
          verifyKey: key,
          scheme: opts.scheme,
          identity: (appId, givenKey) =>
            (opts.appId === undefined || appId === opts.appId) &&
            (storeKey === undefined || givenKey === storeKey),
          paramSchema: opts.validate ? PARAM_SCHEMAS[opts.validate] : anyObject,
          ...(opts.storeId !== undefined ? { storeId: opts.storeId } : {}),
          maxBytes: opts.maxBytes,
        });
        if (!result.ok) throw result.error;
        // The storeKey is a secret: the report names the app, the scheme and the param only.
        const report = {
          valid: true,
          appId: result.envelope.appId,
          scheme: opts.scheme,
          param: result.param,
        };
        io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      },
    );
}
