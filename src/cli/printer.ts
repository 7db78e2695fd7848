/**
 * `printer-agent status`, `test-print`, `drawer open` and `print`: `status` asks the running agent
 * (or, with `--printer`, a printer directly), `test-print` has the agent print its test page,
 * `drawer open` has it pulse the cash drawer (issue 41), `print` talks to a printer directly,
 * bypassing the queue. Exit codes beyond the usual: 3 the printer is not ready, 4 the job was
 * sent but not confirmed.
 */
import type { Command } from 'commander';
import { AgentError, errorMessage, isAgentError } from '../errors.js';
import { openPrinter } from '../printer/open-printer.js';
import { printerUrlExamples } from '../printer/printer-url.js';
import { getProfile } from '../receipt/profile.js';
import { apiFailure, askAgent } from './agent-client.js';
import type { CliContext } from './io.js';
import { parseIntOption } from './options.js';
import { renderFile } from './render.js';

export const EXIT_NOT_READY = 3;
/** States a printer prints in (low paper still prints). */
const CAN_PRINT = new Set(['ready', 'paper-near-end']);

interface AgentStatusAnswer {
  storeId: string;
  agent?: { version: string; startedAt: string };
  broker: { connected: boolean };
  printers: Array<{
    id: string;
    roles?: string[];
    state: string;
    paper: string;
    /** Kick-out connector pin 3 (the drawer's sensor); null or absent: not reported. */
    drawerPinHigh?: boolean | null;
    queue: { pending: number; oldestPendingSec: number };
    lastPrintedAt: string | null;
  }>;
  unrouted?: Array<{ role: string; pending: number }>;
  fault?: { code: string; message: string } | null;
  /** Problems that do not stop printing (LOGO_UNREADABLE). */
  warnings?: Array<{ code: string; message: string }>;
  jobs: Record<string, number>;
  recent: Array<{
    id: number;
    state: string;
    printer: string;
    orderNo: string | null;
    jobId: string;
    reason: { code: string; message: string } | null;
  }>;
}

/** The agent's status for a person: one line per printer, the queue, then the last jobs. */
function describeStatus(s: AgentStatusAnswer): string {
  const lines = [
    `agent ${s.agent?.version ?? '?'} (store ${s.storeId}, up since ${s.agent?.startedAt ?? '?'}): broker ${s.broker.connected ? 'connected' : 'NOT connected'}`,
  ];
  if (s.fault) lines.push(`FAULT ${s.fault.code}: ${s.fault.message}`);
  for (const w of s.warnings ?? []) lines.push(`WARNING ${w.code}: ${w.message}`);
  for (const p of s.printers)
    lines.push(
      `printer ${p.id}${p.roles && !(p.roles.length === 1 && p.roles[0] === p.id) ? ` (${p.roles.join(', ')})` : ''}: ${p.state} (paper ${p.paper}), ${p.queue.pending} pending` +
        (p.queue.pending > 0 ? `, oldest ${p.queue.oldestPendingSec} s` : '') +
        `, last printed ${p.lastPrintedAt ?? 'never'}` +
        (p.drawerPinHigh == null ? '' : `, drawer pin 3 ${p.drawerPinHigh ? 'high' : 'low'}`),
    );
  for (const u of s.unrouted ?? [])
    lines.push(`role ${u.role}: ${u.pending} pending, no configured printer serves it`);
  const counts = Object.entries(s.jobs)
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${n} ${state}`);
  lines.push(`jobs: ${counts.length > 0 ? counts.join(', ') : 'none'}`);
  for (const j of s.recent.slice(0, 10))
    lines.push(
      `  ${String(j.id).padStart(5)}  ${j.state.padEnd(11)} ${j.printer.padEnd(10)} ${(j.orderNo ?? '-').padEnd(20)} ${j.reason ? `${j.reason.code}: ${j.reason.message}` : ''}`.trimEnd(),
    );
  return `${lines.join('\n')}\n`;
}
export const EXIT_UNCONFIRMED = 4;

export function registerPrinter(program: Command, context: CliContext): void {
  const { io } = context;
  program
    .command('status')
    .description(
      'the running agent, its printers and queue (exit 3 when a printer cannot print); with --printer, ask that printer directly',
    )
    .option(
      '--printer <url>',
      `ask this printer directly instead of the agent: ${printerUrlExamples()} (while the agent runs it holds the printer: ask the agent)`,
    )
    .option('--config <file>', 'config file of the agent to ask (as run and doctor)')
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
    .action(
      async (opts: {
        printer?: string;
        config?: string;
        profile: string;
        timeout: number;
        json: boolean;
      }) =>
        statusAction(opts).catch((error: unknown) => {
          // A script that asked for JSON gets JSON whatever happened (issue 42 item 12): the local
          // API's error document, `{"error":{"code","message"}}`; stderr and the exit code stay
          // as without --json.
          if (opts.json) {
            const reason = isAgentError(error)
              ? error.toReason()
              : { code: 'INTERNAL_ERROR', message: errorMessage(error) };
            io.stdout.write(`${JSON.stringify({ error: reason })}\n`);
          }
          throw error;
        }),
    );

  async function statusAction(opts: {
    printer?: string;
    config?: string;
    profile: string;
    timeout: number;
    json: boolean;
  }): Promise<void> {
    if (opts.printer === undefined) {
      const answer = await askAgent(io, opts.config, 'GET', '/api/status');
      if (answer.status !== 200) throw apiFailure(answer);
      const status = answer.body as AgentStatusAnswer;
      io.stdout.write(opts.json ? `${JSON.stringify(status, null, 2)}\n` : describeStatus(status));
      if (status.printers.some((p) => !CAN_PRINT.has(p.state))) context.exitCode = EXIT_NOT_READY;
      return;
    }
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
      if (!CAN_PRINT.has(condition.state)) context.exitCode = EXIT_NOT_READY;
    } finally {
      await printer.close();
    }
  }

  program
    .command('test-print')
    .description('have the running agent print its test page (queued like any job)')
    .option('--role <role>', 'the printer role to print on (default: receipt)')
    .option('--config <file>', 'config file of the agent to ask (as run and doctor)')
    .action(async (opts: { role?: string; config?: string }) => {
      const answer = await askAgent(io, opts.config, 'POST', '/api/test-print', {
        ...(opts.role !== undefined ? { role: opts.role } : {}),
      });
      if (answer.status !== 202) throw apiFailure(answer);
      const job = (answer.body as { job: { id: number; jobId: string; printer: string } }).job;
      io.stdout.write(`test page queued on ${job.printer}: job ${job.id} (${job.jobId})\n`);
    });

  const drawer = program
    .command('drawer')
    .description('the cash drawer on the receipt printer (issue 41)');
  drawer
    .command('open')
    .description(
      "have the running agent open the cash drawer (a kick-out pulse on the printer's drawer connector, between jobs)",
    )
    .option('--printer <role>', 'the printer role whose drawer opens (default: receipt)')
    .option('--config <file>', 'config file of the agent to ask (as run and doctor)')
    .action(async (opts: { printer?: string; config?: string }) => {
      const answer = await askAgent(io, opts.config, 'POST', '/api/drawer/open', {
        ...(opts.printer !== undefined ? { printer: opts.printer } : {}),
      });
      if (answer.status !== 200) {
        const failure = apiFailure(answer);
        if (failure.code === 'PRINTER_NOT_READY') {
          io.stderr.write(`${failure.code}: ${failure.message}\n`);
          context.exitCode = EXIT_NOT_READY;
          return;
        }
        throw failure;
      }
      const opened = (answer.body as { drawer: { printer: string; pin: number } }).drawer;
      io.stdout.write(`drawer opened on printer ${opened.printer} (pin ${opened.pin})\n`);
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
