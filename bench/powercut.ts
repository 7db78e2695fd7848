/**
 * `npm run powercut -- --cuts N [--service-cuts M] [--seed S] [--out FILE]`: the power-cut loops
 * of issue 39 for as many cuts as asked, the phases in turn: the agent's (test/powercut/loop.ts),
 * then the order service's (test/powercut/service-loop.ts; M defaults to a fifth of N, at least 3).
 * Prints a line per cut and the counts, writes them as JSON (bench/powercut-report.json unless
 * --out), and exits 1 when an acknowledged instruction or an answered create was lost, an order
 * printed twice unmarked, a job stuck, or a cut did not land where it was aimed. Needs root,
 * /dev/fuse, libfuse3-dev and Mosquitto (CI has them).
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { MOSQUITTO_SKIP, Mosquitto, skipWithoutMosquitto } from '../harness/mosquitto.js';
import { forgetfsSkip } from '../test/powercut/forgetfs.js';
import { runPowerCutLoop } from '../test/powercut/loop.js';
import { runServicePowerCutLoop } from '../test/powercut/service-loop.js';
import { positiveArg } from './harness.js';

const { values: args } = parseArgs({
  options: {
    cuts: { type: 'string', default: '30' },
    'service-cuts': { type: 'string' },
    seed: { type: 'string' },
    out: { type: 'string' },
  },
});
const cuts = Math.floor(positiveArg('cuts', args.cuts));
const serviceCuts =
  args['service-cuts'] === undefined
    ? Math.max(3, Math.ceil(cuts / 5))
    : Math.floor(positiveArg('service-cuts', args['service-cuts']));
const seed = args.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(args.seed);
const out = args.out ?? join(dirname(fileURLToPath(import.meta.url)), 'powercut-report.json');

const skip = skipWithoutMosquitto() ? MOSQUITTO_SKIP : forgetfsSkip();
if (skip) {
  process.stderr.write(`powercut: ${skip}\n`);
  process.exit(1);
}

const started = Date.now();
const log = (line: string) => process.stdout.write(`[powercut] ${line}\n`);
const broker = await Mosquitto.start({ persistence: true });
let agent: Awaited<ReturnType<typeof runPowerCutLoop>>;
let service: Awaited<ReturnType<typeof runServicePowerCutLoop>>;
try {
  agent = await runPowerCutLoop({ cuts, seed, broker, log });
  service = await runServicePowerCutLoop({ cuts: serviceCuts, seed, broker, log });
} finally {
  await broker.stop();
}
const minutes = Math.round((Date.now() - started) / 6000) / 10;
writeFileSync(
  out,
  `${JSON.stringify({ agent, service, minutes, at: new Date().toISOString() }, null, 2)}\n`,
);
const notLanded = Object.entries(agent.phases).filter(([, p]) => p.cuts > p.landed);
log(
  `seed ${seed}: ${agent.cuts} cuts (${agent.tornCuts} with a torn page), ` +
    `${agent.acknowledged} acknowledged, ${agent.printed} printed, lost ${agent.lost}, ` +
    `unmarked duplicates ${agent.unmarkedDuplicates}, stuck ${agent.stuck}, ` +
    `integrity checks ${agent.integrityChecks} ok, config checks ${agent.configChecks} ok, ` +
    `fsyncs per printed job ${agent.fsyncsPerPrintedJob?.toFixed(2) ?? '-'}, ${minutes} min -> ${out}`,
);
for (const [phase, p] of Object.entries(agent.phases))
  log(`  ${phase.padEnd(26)} ${p.cuts} cuts, ${p.landed} landed`);
log(
  `order service: ${service.cuts} cuts (${service.landed} landed), ${service.answered} creates answered, ` +
    `lost ${service.lost}, order numbers for two orders ${service.publishedTwice}, ` +
    `never published ${service.neverPublished}`,
);
const failed =
  agent.lost > 0 ||
  agent.unmarkedDuplicates > 0 ||
  agent.stuck > 0 ||
  notLanded.length > 0 ||
  service.lost > 0 ||
  service.publishedTwice > 0 ||
  service.neverPublished > 0 ||
  service.landed < service.cuts;
if (failed) {
  process.stderr.write(`powercut: FAILED (seed ${seed})\n`);
  process.exit(1);
}
