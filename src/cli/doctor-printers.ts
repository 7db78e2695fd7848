/**
 * `doctor`'s printer lines (issue 43 item 5). While the agent runs it holds its printers: a USB
 * printer is open by one process at a time, and a network printer serves one connection, so a
 * second status query from doctor goes unanswered and read `unknown` however well the printer
 * was. So doctor first asks the running agent, over its local API as `printer-agent status` does,
 * and takes each printer's state as the agent sees it; only a printer no running agent of this
 * config serves is asked directly.
 */
import type { ConfigFile } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import { openPrinter } from '../printer/open-printer.js';
import { getProfile } from '../receipt/profile.js';
import { type AgentEndpoint, agentUrl, askAgentAt } from './agent-client.js';

/** One line of the checklist (the shape of doctor's CheckLine). */
export interface PrinterCheck {
  status: 'ok' | 'warn' | 'FAIL';
  name: string;
  detail: string;
  fix?: string;
}

const PRINTER_TIMEOUT_MS = 10_000;
/** Refused at once when nothing listens; an agent that is up answers its status in milliseconds. */
const AGENT_TIMEOUT_MS = 5000;

/** What `/api/status` says of the agent and its printers (console/first-view.ts `PageStatus`). */
interface AgentStatus {
  storeId?: string;
  agent?: { version?: string; startedAt?: string };
  config?: { modifiedAt?: string };
  printers: Array<{ id: string; state: string; paper?: string; checkedAt?: string | null }>;
}

/** What doctor learnt from the local API. */
export type AgentView =
  /** Nothing answers (or the API is off): no agent of this config holds the printers. */
  | { kind: 'absent' }
  /** The agent answered with its status. */
  | { kind: 'running'; url: string; status: AgentStatus }
  /** An agent answers there, but for another store: it is not this config's. */
  | { kind: 'other'; url: string; storeId: string }
  /** Something answers but will not show its status (a token doctor cannot read). */
  | { kind: 'refused'; url: string; reason: string };

function isAgentStatus(body: unknown): body is AgentStatus {
  const printers = (body as { printers?: unknown } | null)?.printers;
  return (
    Array.isArray(printers) &&
    printers.every(
      (p) =>
        typeof (p as { id?: unknown }).id === 'string' &&
        typeof (p as { state?: unknown }).state === 'string',
    )
  );
}

/**
 * Asks the local API of `endpoint` for the agent's status. `storeId`: this config's store, when
 * doctor could tell it; an agent of another store answering there is not this config's agent.
 */
export async function askRunningAgent(
  endpoint: AgentEndpoint,
  storeId: string | undefined,
): Promise<AgentView> {
  if (!endpoint.console.enabled) return { kind: 'absent' };
  const url = agentUrl(endpoint);
  let answer: Awaited<ReturnType<typeof askAgentAt>>;
  try {
    answer = await askAgentAt(endpoint, 'GET', '/api/status', { timeoutMs: AGENT_TIMEOUT_MS });
  } catch {
    // Refused or no answer (a hung agent is asked around, like no agent at all), or the pinned
    // certificate unreadable (the files' lines above say so): no agent's view to take.
    return { kind: 'absent' };
  }
  if (answer.status === 401 || answer.status === 403) {
    const why =
      answer.localTokenProblem !== undefined
        ? `this user cannot read the agent's local token (${answer.localTokenProblem})`
        : `HTTP ${answer.status}`;
    return { kind: 'refused', url, reason: why };
  }
  // Another program on the port, or an agent too old to answer this: not an agent's view.
  if (answer.status !== 200 || !isAgentStatus(answer.body)) return { kind: 'absent' };
  const status = answer.body;
  if (storeId !== undefined && status.storeId !== undefined && status.storeId !== storeId)
    return { kind: 'other', url, storeId: status.storeId };
  return { kind: 'running', url, status };
}

/**
 * The line saying which agent answered, so the printer lines below are read as its view.
 * `configModifiedAt`: the config file's modification time now; a time other than the one the
 * agent read the file at means it runs the settings from before.
 */
export function agentLine(
  view: AgentView,
  configPath: string,
  configModifiedAt?: Date,
): PrinterCheck[] {
  if (view.kind === 'absent') return [];
  if (view.kind === 'other')
    return [
      {
        status: 'warn',
        name: 'agent',
        detail: `${view.url} answers for store ${view.storeId}, not this config's: another agent's local API; the printers are asked directly`,
        fix: `give each agent its own console.port (printer-agent config set console.port N --config ${configPath})`,
      },
    ];
  if (view.kind === 'refused')
    return [
      {
        status: 'warn',
        name: 'agent',
        detail: `an agent answers at ${view.url} but refused its status to doctor (${view.reason}): its printers are not checked, since it holds them`,
        fix: view.reason.startsWith('HTTP')
          ? 'the agent refused the token of console.tokenFile: check it is the file the agent was started with (restart the agent after changing it)'
          : 'run doctor as root (sudo printer-agent doctor): root reads the local token the agent writes in its state dir',
      },
    ];
  const { agent, config } = view.status;
  const read = config?.modifiedAt !== undefined ? Date.parse(config.modifiedAt) : Number.NaN;
  const line: PrinterCheck = {
    status: 'ok',
    name: 'agent',
    detail: `running at ${view.url}${agent?.version ? `, version ${agent.version}` : ''}${agent?.startedAt ? `, up since ${agent.startedAt}` : ''}: the printer lines are its view (it holds the printers)`,
  };
  // The agent reads its config once, at start: a change since is not in effect. Compared for
  // equality with the time the agent read, never with its start: the file's time is the
  // kernel's, the start the agent's clock, and a Pi's clock steps at boot (decision 303). An
  // agent that does not say (before 0.2.0) is not judged.
  if (configModifiedAt && !Number.isNaN(read) && configModifiedAt.getTime() !== read)
    return [
      {
        ...line,
        status: 'warn',
        detail: `${line.detail}; ${configPath} changed since it started (modified ${configModifiedAt.toISOString()}, it read the file of ${new Date(read).toISOString()}): it runs the settings from before`,
        fix: 'sudo systemctl restart printer-agent',
      },
    ];
  return [line];
}

export function printerFix(url: string, state: string, causes: readonly string[]): string {
  const text = causes.join(' ');
  if (state === 'disconnected') {
    if (/EACCES|permission/i.test(text))
      return 'add the service user to group lp (sudo usermod -aG lp printer-agent), then restart the agent';
    if (url.startsWith('tcp:'))
      return `check the printer is on and reachable at ${url} (same network, port 9100 open)`;
    return `check the cable and that ${url} names the device (ls -l /dev/usb /dev/serial/by-id)`;
  }
  if (state === 'paper-out') return 'load a paper roll and close the cover';
  if (state === 'cover-open') return 'close the printer cover';
  if (state === 'offline') return 'bring the printer online (cover, paper, cooling down)';
  return 'clear the error on the printer (switch it off and on)';
}

/** The line for a printer in `state`, from the agent's view or doctor's own query. */
function stateLine(
  name: string,
  url: string,
  state: string,
  causes: readonly string[],
  suffix: string,
): PrinterCheck {
  const shown = causes.length > 0 ? ` (${causes.join(', ')})` : '';
  const detail = `${url}: ${state}${shown}${suffix}`;
  if (state === 'ready') return { status: 'ok', name, detail };
  if (state === 'paper-near-end')
    return { status: 'warn', name, detail, fix: 'load a new paper roll soon' };
  if (state === 'unknown')
    return {
      status: 'warn',
      name,
      detail: `${detail}: the printer does not report its status`,
    };
  return { status: 'FAIL', name, detail, fix: printerFix(url, state, causes) };
}

/** Asks the printer itself: only when no running agent of this config holds it. */
async function askPrinter(p: ConfigFile['printers'][number]): Promise<PrinterCheck> {
  const name = `printer ${p.id}`;
  let profile: ReturnType<typeof getProfile>;
  try {
    profile = getProfile(p.profile);
  } catch (error) {
    return {
      status: 'FAIL',
      name,
      detail: `${p.url}: ${errorMessage(error)}`,
      fix: `set printers[].profile to a known profile (printer-agent printers identify ${p.url} proposes one)`,
    };
  }
  const printer = openPrinter(p.url, {
    realtimeStatus: profile.realtimeStatus,
    confirm: p.confirm ?? profile.confirm,
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${PRINTER_TIMEOUT_MS} ms`)),
        PRINTER_TIMEOUT_MS,
      );
    });
    const condition = await Promise.race([printer.status(), timeout]);
    return stateLine(name, p.url, condition.state, condition.causes, '');
  } catch (error) {
    return {
      status: 'FAIL',
      name,
      detail: `${p.url}: ${errorMessage(error)}`,
      fix: printerFix(p.url, 'disconnected', [errorMessage(error)]),
    };
  } finally {
    clearTimeout(timer);
    await printer.close().catch(() => undefined);
  }
}

/**
 * One line per configured printer: the running agent's view of it when the agent answered and
 * serves it, else the printer's own answer.
 */
export async function printerChecks(
  printers: ConfigFile['printers'],
  view: AgentView,
): Promise<PrinterCheck[]> {
  const out: PrinterCheck[] = [];
  for (const p of printers) {
    const name = `printer ${p.id}`;
    if (view.kind === 'refused') {
      out.push({
        status: 'warn',
        name,
        detail: `${p.url}: not checked: the running agent holds it and did not show doctor its state (see agent above)`,
      });
      continue;
    }
    const seen =
      view.kind === 'running' ? view.status.printers.find((s) => s.id === p.id) : undefined;
    if (!seen) {
      // No agent, or one started before this printer was configured: nobody holds it.
      out.push(await askPrinter(p));
      continue;
    }
    const paper = seen.paper !== undefined && seen.paper !== 'ok' ? ` (paper ${seen.paper})` : '';
    const when = seen.checkedAt ? `, checked ${seen.checkedAt}` : '';
    const line = stateLine(
      name,
      p.url,
      seen.state,
      [],
      `${paper}, as the running agent sees it${when}`,
    );
    // Right after a start the agent may not have read the printer yet: say so, not "no status".
    if (seen.state === 'unknown')
      line.detail = `${p.url}: unknown as the running agent sees it${when}: it has no status from the printer yet, or the printer does not report one`;
    out.push(line);
  }
  return out;
}
