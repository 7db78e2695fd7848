/**
 * `npm run docs`: writes the documents made from the code and the measurements, never kept by
 * hand, each formatted by biome so `biome check` stays clean on them. A test fails when a
 * committed one differs from what this makes now:
 * - `config`: docs/config-reference.md and config/config.schema.json from the config schema
 *   (src/config/reference.ts; test/config/reference.test.ts). `npm run config:docs` writes these.
 * - `errors`: docs/error-codes.md from the error catalogue (src/errors.ts;
 *   test/docs/generated-docs.test.ts).
 * - `performance`: docs/performance.md from bench/results.json, the last full `npm run bench`,
 *   with each figure's goal from bench/goals.ts (test/docs/generated-docs.test.ts). The page's
 *   prose (the machine, the date and the method, said once) is this file's template; the figures
 *   and the verdicts come from the run.
 * `npm run docs -- NAME...` writes only those. The contract documents (docs/api/) have their own
 * command, `npm run api:docs`.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkGoals, GUARD_FACTOR } from '../bench/goals.js';
import type { Comparison } from '../bench/harness.js';
import { configJsonSchema, configReference } from '../src/config/reference.js';
import { ERROR_CODES } from '../src/errors.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** bench/results.json as bench/harness.ts writes it; the CPU fields only where a run recorded them. */
export interface BenchResults {
  node: string;
  platform: string;
  /** When the run finished (ISO 8601). */
  at: string;
  /** The machine's logical CPUs and their model (os.cpus()), when the run recorded them. */
  cpus?: number;
  cpuModel?: string;
  results: Comparison[];
}

/** A Markdown table cell: no `|` or line break of the text may end it. */
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ];
}

/** The error-code table, from the catalogue: every code, whether retrying helps, what it means. */
export function errorCodesPage(): string {
  return [
    '# Error codes',
    '',
    '<!-- Generated from src/errors.ts by `npm run docs`; do not edit by hand. -->',
    '',
    'Every rejection and failure of the agent and its commands carries a stable upper-snake-case',
    'code and whether retrying can help: the `reason.code` of job events (print-protocol §6), the',
    '`CODE: message` a command prints on stderr, and the local API\'s `{"error":{"code","message"}}`.',
    'Validation messages name the field path and the rule, e.g.',
    '`order.productInfo[3].quantity: must be between 1 and 1000`. Branch on the code and on',
    'whether it is retryable, never on the text of a message; new codes may appear. The reference',
    "order service answers with numbers instead (the order API's 10000 and 21000, and its own",
    '4xxxx codes): [order-service.md](order-service.md).',
    '',
    ...table(
      ['code', 'retryable', 'meaning'],
      Object.entries(ERROR_CODES).map(([code, { retryable, summary }]) => [
        `\`${code}\``,
        retryable ? 'yes' : 'no',
        summary,
      ]),
    ),
    '',
  ].join('\n');
}

/** 1234.5 -> "1,235", 12.345 -> "12.35" (as bench/harness.ts prints them). */
function rate(n: number): string {
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2);
}

/**
 * A subject or a baseline as the table shows it. A time or a size is measured as a rate
 * (`1000/ms`, `1000/MB`: higher is better in every row) and its name already says the value
 * (`agent: 1.97 ms`); any other figure is the rate itself.
 */
function figure(group: string, m: Comparison['subject']): string {
  return /\(1000\/(ms|MB)/.test(group) ? m.name : `${m.name}: ${rate(m.opsPerSec)}/s`;
}

/** "2026-11-29T01:04:13.749Z" -> "2026-11-29 01:04 UTC". */
function when(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) throw new Error(`bench/results.json: "at" is not a date: ${iso}`);
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** The performance page: the run's machine and date, the method, then every figure with its goal. */
export function performancePage(run: BenchResults): string {
  const checks = checkGoals(run.results, true);
  const machine =
    run.cpus !== undefined
      ? `${run.platform}, ${run.cpus} CPUs${run.cpuModel ? ` (${run.cpuModel.trim()})` : ''}`
      : `${run.platform} (the run did not record its CPUs)`;
  const withGoal = checks.filter((c) => c.comparison);
  const met = withGoal.filter((c) => c.comparison!.ratio >= c.goalRatio!);
  const unmeasured = checks.filter((c) => !c.comparison);
  const rows = run.results.map((c) => {
    const check = checks.find((k) => k.comparison === c);
    return [
      c.group,
      figure(c.group, c.subject),
      figure(c.group, c.baseline),
      `${c.ratio.toFixed(3)}x`,
      check ? `${check.goal.says} (ratio at least ${check.goalRatio!.toFixed(3)}x)` : '-',
      check ? (c.ratio >= check.goalRatio! ? 'met' : '**not met**') : '-',
    ];
  });
  const verdict =
    unmeasured.length === 0 && met.length === withGoal.length
      ? `every one met (${met.length} of ${withGoal.length}; "Goals" below).`
      : `${met.length} of ${withGoal.length + unmeasured.length} met ("Goals" below).`;
  return [
    '# Performance',
    '',
    '<!-- Generated from bench/results.json by `npm run docs`; do not edit by hand. -->',
    '',
    'The figures of the last full `npm run bench` run. Each figure stands beside a baseline measured',
    'in the same run on the same machine, and the ratio is what to compare across machines and runs.',
    '',
    `- Machine: ${machine}, Node ${run.node}.`,
    `- Date: the run finished ${when(run.at)}.`,
    `- Goals: ${verdict}`,
    '',
    '## How the figures are measured',
    '',
    '`npm run bench` runs every benchmark and writes `bench/results.json`, from which `npm run docs`',
    'makes this page (`--only NAME` runs one group; `--quick` shortens every measurement and writes',
    '`bench/results.quick.json`, a guard, never this page). A full run takes 2.5 to 5 minutes.',
    'Absolute numbers move by a factor of two between machines and with their load, the ratios much',
    'less; on one machine the figures move by 10-20% from run to run, the e2e ratios by about 0.15.',
    '',
    "- **In the benchmark's process** (opening, rendering, throughput, the store, the backlog): loaded",
    "  from one bundle made with the production build's options (`bench/in-process.ts`, decision",
    '  209), so our side of every ratio runs as a store runs it, not as tsx transpiles the sources.',
    "  The backlog bench runs the emulator in the same process as both drains, and the emulator's",
    "  paper model takes about 40% of that process's CPU: a cost both sides share, which pulls the",
    '  ratio towards 1.',
    '- **End to end** (publish -> cut): the agent and the floor bundled with the same options, in',
    "  child processes (`bench/e2e.bench.ts`: a small child script starts the agent with the bench's",
    "  settings, the unit's environment and the V8 setting `printer-agent run` makes); the agent, the",
    '  relay and the floor take turns, a tenth of the latency jobs each per round (decision 208).',
    '  Latencies are measured twice: over jobs 21-1,020 after the agent started, while V8 is still',
    '  compiling its code ("JIT warming up"), and after 2,000 more jobs that every subject prints,',
    '  the steady state a daemon runs in and the one the goals are read against (decision 214).',
    '- **Footprint** (start, RSS, CPU per job): the production build (`node dist/cli.js run',
    "  --config`, the esbuild bundle `npm run build` makes, with the unit's environment) in child",
    '  processes (`bench/footprint.bench.ts`). CPU per job is counted after 2,000 warm-up jobs, whose',
    "  own CPU per job has a row (decision 213). The agent's RSS is read right after the 12,000 jobs",
    '  and again 30 s later: V8 gives back what the burst grew only when its memory reducer runs,',
    "  some seconds after the work stops. The start is also measured from outside the agent's",
    '  code (`bench/start-outside.sh`, issue 45): shell timestamps around `node dist/cli.js run`',
    "  on the package's config made a store's with `printer-agent config set`, a `mosquitto_sub`",
    '  seeing the retained `online`, against bare Node + mqtt.js seen by the same subscriber.',
    '- **The floor of this design** (`bench/floor.ts`) is what no correct agent can skip, done',
    "  plainly: the job committed before the broker's acknowledgement, committed again around the",
    '  print (WAL, `synchronous=FULL`), the four `DLE EOT` status round trips before sending, the',
    '  pre-rendered bytes, the confirmation round trip after the cut; every millisecond above it is',
    "  the agent's own (issue 16). The floor runs in a process of its own, as the agent does, for the",
    "  latency and the CPU figures; for the backlog both run in the benchmark's process, the floor",
    "  half its jobs before the agent's drain and half after, so that the machine's drift between",
    '  them does not decide the ratio.',
    '- The agent logs at `warn` in these rows and runs without its local API and status page',
    '  (`console`); what each of them costs is in the notes below.',
    '- A time or a size is measured as a rate (`1000/ms`, `1000/MB`), so that higher is better in',
    "  every row; its ratio is the baseline's time or size over the subject's.",
    '',
    '## The figures',
    '',
    ...table(['benchmark', 'subject', 'baseline (same run)', 'ratio', 'goal', 'met'], rows),
    '',
    '## Goals',
    '',
    "The goals are issue 16's, kept in `bench/goals.ts` as ratios against baselines measured in the",
    'same run, so that they hold on another machine or a busy one (its milliseconds and megabytes',
    'were set where bare Node started in 152 ms and took 39 MB). A goal is met when its ratio is at',
    `least the goal's. \`npm run bench\` exits 1 when a ratio falls below ${GUARD_FACTOR}x its goal, and CI`,
    'runs `npm run bench -- --quick` as that guard. CPU per printed job has no goal there: issue',
    "16's 1 ms, and what the floor leaves of it, are in the notes below.",
    ...(unmeasured.length > 0
      ? [
          '',
          'Goals no figure of this run measured (not met):',
          '',
          ...unmeasured.map((c) => `- ${c.goal.says} (\`${c.goal.group.source}\`)`),
        ]
      : []),
    '',
    '## What it means for a store',
    '',
    "A store prints a few receipts a minute at peak; the agent's end-to-end latency is milliseconds",
    "and its throughput hundreds of confirmed jobs per second, so the printer's own speed (0.6-0.8 s",
    'for a receipt on an 80 mm printer) is what a customer waits for.',
    '',
    'Measured apart from this table, by hand and dated: how far machines move the figures, where the',
    "agent's CPU goes, what the console, the log level, a logo and raster lines cost, what each",
    'change gained, and the libraries measured against the design card:',
    '[performance-notes.md](performance-notes.md).',
    '',
  ].join('\n');
}

/** bench/results.json, read. */
export function benchResults(): BenchResults {
  return JSON.parse(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8')) as BenchResults;
}

/** The text as biome formats a file at `path` (its tables aligned, as `biome check` wants them). */
export function formatted(text: string, path: string): string {
  const biome = join(ROOT, 'node_modules', '@biomejs', 'biome', 'bin', 'biome');
  const result = spawnSync(process.execPath, [biome, 'format', `--stdin-file-path=${path}`], {
    cwd: ROOT,
    input: text,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`biome format ${path}: ${result.stderr}`);
  return result.stdout;
}

/** Each generated document by name: its path in the repository and its text before formatting. */
export const GENERATED: Record<string, () => Record<string, string>> = {
  config: () => ({
    'docs/config-reference.md': configReference(),
    'config/config.schema.json': `${JSON.stringify(configJsonSchema(), null, 2)}\n`,
  }),
  errors: () => ({ 'docs/error-codes.md': errorCodesPage() }),
  performance: () => ({ 'docs/performance.md': performancePage(benchResults()) }),
};

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const names = process.argv.slice(2);
  const unknown = names.filter((name) => !(name in GENERATED));
  if (unknown.length > 0) {
    console.error(`${unknown.join(', ')}: not one of ${Object.keys(GENERATED).join(', ')}`);
    process.exit(2);
  }
  for (const name of names.length > 0 ? names : Object.keys(GENERATED))
    for (const [path, text] of Object.entries(GENERATED[name]!())) {
      writeFileSync(join(ROOT, path), formatted(text, path));
      console.log(`wrote ${path}`);
    }
}
