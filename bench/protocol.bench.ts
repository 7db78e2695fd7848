/**
 * Opening a signed envelope (size, shape, RSA verify over the raw param, identity, JSON.parse,
 * schema) against a baseline that only does the unavoidable part: node:crypto's verify of the
 * same signature plus JSON.parse. The ratio shows what our checks (envelope, identity, schema) cost on top.
 */
import { createPublicKey, verify } from 'node:crypto';
import {
  buildEnvelope,
  generateKeyPair,
  openEnvelope,
  parseKey,
  printInstructionSchema,
} from '../src/protocol/index.js';
import { type Comparison, compare, measureTogether } from './harness.js';

export function benchProtocol(minMs: number): Comparison[] {
  const pair = generateKeyPair(2048);
  const priv = parseKey(pair.privatePem, 'private');
  const pub = parseKey(pair.publicPem, 'public');
  const instruction = {
    jobId: 'P20261125-000123',
    orderNo: 'O202611250001',
    createTime: '2026-11-25 12:30:05',
    order: {
      productInfo: Array.from({ length: 20 }, (_, i) => ({
        productName: `Item ${i}`,
        price: 1000 + i,
        quantity: 1 + (i % 3),
      })),
      orderType: 1,
      paymentWay: 2,
      paymentTransactionId: 'M-1',
    },
  };
  const identity = { appId: 'A1', storeKey: 'K1' };
  const envelope = buildEnvelope({ ...identity, param: instruction, key: priv });
  const body = Buffer.from(JSON.stringify(envelope));
  const nodeKey = createPublicKey(pair.publicPem);

  const [subject, baseline] = measureTogether(
    [
      {
        name: 'openEnvelope (node:crypto + zod)',
        fn: () => {
          const r = openEnvelope(body, {
            verifyKey: pub,
            identity,
            paramSchema: printInstructionSchema,
          });
          if (!r.ok) throw r.error;
        },
      },
      {
        name: 'node:crypto verify + JSON.parse',
        fn: () => {
          const e = JSON.parse(body.toString('utf8')) as { param: string; sign: string };
          if (!verify('sha256', Buffer.from(e.param), nodeKey, Buffer.from(e.sign, 'base64')))
            throw new Error('bad');
          JSON.parse(e.param);
        },
      },
    ],
    minMs,
  );
  return [compare('open a signed print instruction', subject!, baseline!)];
}
