/**
 * `npm run test:stress`: the whole suite, exactly as `npm test` runs it, several times in a row
 * while busy loops compete for every core (issue 14: CI runs on a developer's machine that may be
 * busy, and a test that depends on timing it does not control is a defect).
 *
 * Options: `--runs N` (default 3), `--busy N` busy-loop processes (default one per core),
 * `--out FILE` for the JSON report (default bench/stress-report.json). Each run's wall time,
 * test counts and failures are printed as they finish, and a failed run's whole output is kept
 * beside the report (`stress-run-N.tap`); the exit code is 1 when any run failed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    busy: { type: 'string', default: String(availableParallelism()) },
    out: { type: 'string', default: join(ROOT, 'bench', 'stress-report.json') },
  },
});

function count(name: string, value: string | undefined, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    console.error(`--${name}: must be a whole number of at least ${min}`);
    process.exit(2);
  }
  return n;
}

const runs = count('runs', args.runs, 1);
const busy = count('busy', args.busy, 0);

interface RunResult {
  run: number;
  wallSec: number;
  exitCode: number | null;
  tests: number | null;
  pass: number | null;
  fail: number | null;
  failures: string[];
  /** The run's whole TAP output, kept when it failed (the failing tests' errors are in it). */
  output?: string;
}

/** Busy loops that keep every core occupied (lowest priority they can get: none, on purpose). */
function startBusyLoops(n: number): ChildProcess[] {
  return Array.from({ length: n }, () =>
    spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }),
  );
}

/** One `npm test`, its TAP output scanned for the summary and the failing tests. */
function runSuite(run: number): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['test'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (out += d));
    child.on('exit', (code) => {
      const summary = (name: string) => {
        const m = new RegExp(`^# ${name} (\\d+)$`, 'm').exec(out);
        return m ? Number(m[1]) : null;
      };
      const failures = [...out.matchAll(/^\s*not ok \d+ - (.*)$/gm)].map((m) => m[1]!.trim());
      resolve({
        run,
        wallSec: Math.round((Date.now() - started) / 100) / 10,
        exitCode: code,
        tests: summary('tests'),
        pass: summary('pass'),
        fail: summary('fail'),
        failures,
        output: code === 0 ? undefined : join(dirname(args.out!), `stress-run-${run}.tap`),
      });
      if (code !== 0) writeFileSync(join(dirname(args.out!), `stress-run-${run}.tap`), out);
    });
  });
}

const loops = startBusyLoops(busy);
const stop = () => {
  for (const l of loops) l.kill('SIGKILL');
};
process.on('SIGINT', () => {
  stop();
  process.exit(130);
});
console.log(`test:stress: ${runs} run(s) of npm test beside ${busy} busy loop(s)`);
const results: RunResult[] = [];
try {
  for (let i = 1; i <= runs; i++) {
    const r = await runSuite(i);
    results.push(r);
    console.log(
      `run ${i}: ${r.exitCode === 0 ? 'passed' : 'FAILED'} in ${r.wallSec} s; tests ${r.tests}, pass ${r.pass}, fail ${r.fail}`,
    );
    for (const f of r.failures) console.log(`  not ok: ${f}`);
    if (r.output) console.log(`  output: ${r.output}`);
  }
} finally {
  stop();
}
writeFileSync(
  args.out!,
  `${JSON.stringify({ at: new Date().toISOString(), busy, runs: results }, null, 2)}\n`,
);
console.log(`report: ${args.out}`);
process.exitCode = results.every((r) => r.exitCode === 0) ? 0 : 1;
