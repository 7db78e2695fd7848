/**
 * `printer-agent jobs ...`: look at and act on the print queue. Works on the daemon's own
 * database file while it runs: SQLite in WAL mode lets these readers run beside the spooler's
 * writes, the few writes here are single short transactions, and busy_timeout makes either side
 * wait for the other rather than fail. Whatever changes here (retry, reprint) writes its job
 * event to the outbox like the daemon does, and the daemon's spooler picks the job up within its
 * poll interval.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { CONFIG_PATH_ENV } from '../config/env.js';
import { loadConfig } from '../config/load.js';
import { AgentError } from '../errors.js';
import {
  type Job,
  jobSummary,
  markingWords,
  STORED_JOB_STATES,
  type StoredJobState,
} from '../jobs/job.js';
import { DEFAULT_STATE_DIR, JobStore } from '../jobs/store.js';
import { type CliContext, type CliIo, pathIn } from './io.js';

const STATE_DIR_HELP = `the agent state directory that holds jobs.db (default: the stateDir of $${CONFIG_PATH_ENV}'s config when set, else ${DEFAULT_STATE_DIR})`;
const CONFIG_HELP = "the agent's config file: its stateDir (as run and doctor)";

interface Where {
  stateDir?: string;
  config?: string;
}

function parseState(value: string): StoredJobState {
  if (!(STORED_JOB_STATES as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`--state must be one of ${STORED_JOB_STATES.join(', ')}`);
  }
  return value as StoredJobState;
}

function parseLimit(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 100_000) {
    throw new InvalidArgumentError('--limit must be a whole number from 1 to 100000');
  }
  return Number(value);
}

/** Same rule as the protocol's printer role (print-protocol §4 `printer`). */
function parsePrinter(value: string): string {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(value)) {
    throw new InvalidArgumentError(
      '--printer must be 1 to 64 letters, digits, dot, dash or underscore',
    );
  }
  return value;
}

/** Identifiers are at most 64 characters (decisions 8). */
function parseId(name: string) {
  return (value: string): string => {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
    if (value.length < 1 || [...value].length > 64 || /[\u0000-\u001f\u007f]/.test(value)) {
      throw new InvalidArgumentError(
        `${name} must be 1 to 64 characters without control characters`,
      );
    }
    return value;
  };
}

/**
 * `YYYY-MM-DD` is midnight at the start of that day in the agent's local time (the store's day);
 * anything else must be a full ISO 8601 time with a zone, so it means one instant.
 */
export function parseDate(value: string): number {
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (day) {
    const [y, m, d] = day.slice(1).map(Number) as [number, number, number];
    const date = new Date(y, m - 1, d);
    if (date.getFullYear() === y && date.getMonth() === m - 1 && date.getDate() === d)
      return date.getTime();
  } else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value)) {
    const ms = Date.parse(value);
    if (!Number.isNaN(ms)) return ms;
  }
  throw new InvalidArgumentError(
    '--printed-before must be a date (YYYY-MM-DD, local midnight) or an ISO 8601 time with a zone (2026-11-25T12:00:00Z)',
  );
}

function table(jobs: readonly Job[]): string {
  const header = ['ID', 'STATE', 'PRINTER', 'KIND', 'ORDER', 'JOB', 'TRIES', 'CREATED', 'NOTE'];
  const rows = jobs.map((j) => [
    String(j.id),
    j.held ? `${j.state} (held)` : j.state,
    j.printer,
    j.kind,
    j.orderNo ?? '-',
    j.jobId,
    String(j.attempts),
    new Date(j.createdAt).toISOString().replace(/\.\d+Z$/, 'Z'),
    [
      ...markingWords(j.markings),
      ...(j.lastError ? [`${j.lastError.code}: ${j.lastError.message}`] : []),
    ].join('; '),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows]
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function withStore<T>(io: CliIo, where: Where, fn: (store: JobStore) => T): T {
  if (where.stateDir !== undefined && where.config !== undefined)
    throw new AgentError('INPUT_INVALID', 'give --state-dir or --config, not both');
  // The agent's config, named by --config or, as `status` and `config` read it, by
  // $PRINTER_AGENT_CONFIG (issue 42 item 11): its queue, not the default one beside it.
  const configPath =
    where.stateDir === undefined ? (where.config ?? io.env[CONFIG_PATH_ENV]) : undefined;
  const stateDir = configPath
    ? loadConfig({ configPath, env: io.env, cwd: io.cwd }).config.stateDir
    : pathIn(io, where.stateDir ?? DEFAULT_STATE_DIR);
  const store = JobStore.open({ stateDir, create: false });
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

function findJob(store: JobStore, ref: string): Job {
  const job = store.find(ref);
  if (!job) throw new AgentError('JOB_NOT_FOUND', `no job with id or jobId ${JSON.stringify(ref)}`);
  return job;
}

export function registerJobs(program: Command, { io }: CliContext): void {
  const jobs = program
    .command('jobs')
    .description('look at and act on the print queue (safe while the agent runs)');

  jobs
    .command('list')
    .description('list jobs, newest first')
    .option(
      '--state <state>',
      `only jobs in this state: ${STORED_JOB_STATES.join(', ')}`,
      parseState,
    )
    .option('--printer <id>', 'only jobs for this printer role', parsePrinter)
    .option('--limit <n>', 'at most this many jobs', parseLimit, 100)
    .option('--json', 'print the jobs as a JSON array', false)
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--config <file>', CONFIG_HELP)
    .action(
      (opts: {
        state?: StoredJobState;
        printer?: string;
        limit: number;
        json: boolean;
        stateDir?: string;
        config?: string;
      }) => {
        const list = withStore(io, opts, (store) =>
          store.list({ state: opts.state, printer: opts.printer, limit: opts.limit }),
        );
        if (opts.json) io.stdout.write(`${JSON.stringify(list.map(jobSummary), null, 2)}\n`);
        else if (list.length === 0) io.stdout.write('no jobs\n');
        else io.stdout.write(`${table(list)}\n`);
      },
    );

  jobs
    .command('show')
    .description('show one job, with the instruction, record or command it holds (as JSON)')
    .argument('<id>', 'the job id from `jobs list`, or the jobId', parseId('ID'))
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--config <file>', CONFIG_HELP)
    .action((ref: string, opts: Where) => {
      const job = withStore(io, opts, (store) => findJob(store, ref));
      // A payload too deep to walk (stored by an agent before the nesting limit) is not read: the
      // job still shows, with the reason instead of the payload.
      const payload =
        job.payloadProblem === null
          ? { payload: job.payload }
          : { payload: null, payloadProblem: job.payloadProblem };
      io.stdout.write(`${JSON.stringify({ ...jobSummary(job), ...payload }, null, 2)}\n`);
    });

  jobs
    .command('retry')
    .description(
      'queue a failed, unconfirmed, waiting or held job again, to print now (unconfirmed and held ones print marked POSSIBLE DUPLICATE)',
    )
    .argument('<id>', 'the job id from `jobs list`, or the jobId', parseId('ID'))
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--config <file>', CONFIG_HELP)
    .action((ref: string, opts: Where) => {
      const job = withStore(io, opts, (store) => store.retry(findJob(store, ref).id));
      const words = markingWords(job.markings);
      io.stdout.write(
        `job ${job.id} (${job.jobId}) queued again on ${job.printer}${words.length ? `, marked ${words.join(', ')}` : ''}\n`,
      );
    });

  jobs
    .command('reprint')
    .description(
      'print the stored receipt of an order again, marked REPRINT with the count and the original time',
    )
    .argument('<orderNo>', 'the order number', parseId('ORDER_NO'))
    .option(
      '--printer <id>',
      "reprint this role's receipt of the order, on it (default: the receipt role's, else the oldest)",
      parsePrinter,
    )
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--config <file>', CONFIG_HELP)
    .action((orderNo: string, opts: Where & { printer?: string }) => {
      const result = withStore(io, opts, (store) =>
        store.enqueueReprint(orderNo, { printer: opts.printer }),
      );
      // A fresh jobId per local reprint: a duplicate here would be a bug, not a user error.
      if (result.status !== 'inserted') {
        throw new AgentError(
          'STORE_FAILED',
          `reprint of ${orderNo} was not stored (duplicate key)`,
        );
      }
      const reprint = result.job.markings.reprint;
      io.stdout.write(
        `job ${result.job.id} queued on ${result.job.printer}: REPRINT #${reprint?.count ?? '?'} of order ${orderNo} (original ${reprint?.originalTime ?? '?'})\n`,
      );
    });

  jobs
    .command('purge')
    .description(
      'delete printed jobs printed before a date (their dedupe keys are kept, so replays stay duplicates)',
    )
    .requiredOption(
      '--printed-before <date>',
      'YYYY-MM-DD (local midnight) or an ISO 8601 time with a zone',
      parseDate,
    )
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--config <file>', CONFIG_HELP)
    .action((opts: Where & { printedBefore: number }) => {
      const n = withStore(io, opts, (store) => store.purgePrinted(opts.printedBefore));
      io.stdout.write(
        `purged ${n} printed job${n === 1 ? '' : 's'} printed before ${new Date(opts.printedBefore).toISOString()}\n`,
      );
    });
}
