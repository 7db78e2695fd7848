/**
 * `printer-agent setup` asking on a terminal for what its flags did not give (issue 41 item 3):
 * each answer is checked by the same rules as the flag (the schema through `draftProblems`, the
 * key and secret rules) and asked again, with the rule, until it passes. The store key and the
 * broker password are typed hidden. Only reached when standard input is a TTY.
 */
import { MAX_PRINTERS } from '../config/schema.js';
import { printerUrlExamples } from '../printer/printer-url.js';
import { STORE_KEY_MAX } from '../protocol/envelope.js';
import { DEFAULT_PRINTER_ROLE } from '../protocol/print-protocol.js';
import {
  draftProblems,
  PASSWORD_MAX,
  type PrinterAnswer,
  printerLabel,
  publicKeyProblem,
  type SetupAnswers,
  type SetupPaths,
  secretProblem,
} from './setup-draft.js';
import type { Prompter } from './terminal-prompt.js';

/** The values setup cannot do without, by the flag that gives each. */
export const REQUIRED_FLAGS = [
  '--app-id',
  '--store-key-file',
  '--broker',
  '--service-key',
  '--printer',
] as const;
export type RequiredFlag = (typeof REQUIRED_FLAGS)[number];

/** The flags among REQUIRED_FLAGS the answers still lack. */
export function missingFlags(a: SetupAnswers): RequiredFlag[] {
  const given: Record<RequiredFlag, boolean> = {
    '--app-id': a.appId !== undefined,
    '--store-key-file': a.storeKey !== undefined,
    '--broker': a.broker !== undefined,
    '--service-key': a.serviceKey !== undefined,
    '--printer': a.printers.length > 0,
  };
  return REQUIRED_FLAGS.filter((flag) => !given[flag]);
}

/** Splits `ROLE[,ROLE...]=VALUE`; null when there is no `=` with text on both sides. */
export function splitRoles(text: string): { roles: string[]; value: string } | null {
  const at = text.indexOf('=');
  if (at <= 0 || at === text.length - 1) return null;
  return { roles: text.slice(0, at).split(','), value: text.slice(at + 1) };
}

/** The roles of `p` that another printer of `others` already serves. */
export function takenRoles(p: PrinterAnswer, others: readonly PrinterAnswer[]): string[] {
  const taken = new Set(others.flatMap((o) => o.roles));
  return p.roles.filter((role, i) => taken.has(role) || p.roles.indexOf(role) !== i);
}

interface Context {
  prompter: Prompter;
  paths: SetupPaths;
  /** A path typed at the prompt, as the file system sees it (relative to where setup runs). */
  resolvePath(path: string): string;
}

/** Asks until `check` finds no problem; returns the accepted answer. */
async function askUntil(
  prompter: Prompter,
  question: string,
  check: (answer: string) => string | null,
  options: { secret?: boolean; fallback?: string } = {},
): Promise<string> {
  for (;;) {
    const answer = await prompter.ask(question, options);
    const problem = check(answer);
    if (problem === null) return answer;
    prompter.say(`  ${problem}`);
  }
}

/** The first schema problem the answers have under `flag`, as a line for the person. */
function firstProblem(a: SetupAnswers, paths: SetupPaths, flag: string): string | null {
  const problem = draftProblems(a, paths).find((p) => p.flag === flag);
  return problem ? problem.message : null;
}

/** Asks for each missing value, and the optional broker account when its flags were not given. */
export async function interview(
  a: SetupAnswers,
  missing: readonly RequiredFlag[],
  given: { brokerUser: boolean },
  context: Context,
): Promise<void> {
  const { prompter, paths } = context;
  const needs = (flag: RequiredFlag) => missing.includes(flag);
  prompter.say(
    "printer-agent setup: the store's settings (Ctrl-C stops; nothing is written until the end)",
  );
  if (needs('--app-id'))
    a.appId = await askUntil(prompter, 'application id (appId, from the order service)', (v) =>
      firstProblem({ ...a, appId: v }, paths, '--app-id'),
    );
  if (needs('--store-key-file'))
    a.storeKey = await askUntil(
      prompter,
      'store key (typed hidden)',
      (v) => secretProblem(v, STORE_KEY_MAX),
      { secret: true },
    );
  if (needs('--broker'))
    a.broker = await askUntil(prompter, 'broker URL (mqtts://HOST:8883)', (v) =>
      firstProblem({ ...a, broker: v }, paths, '--broker'),
    );
  if (!given.brokerUser) {
    const user = await askUntil(
      prompter,
      'broker user name (printer-agent broker provision; Enter for none)',
      (v) => (v === '' ? null : firstProblem({ ...a, brokerUser: v }, paths, '--broker-user')),
    );
    if (user !== '') {
      a.brokerUser = user;
      a.brokerPassword = await askUntil(
        prompter,
        'broker password (typed hidden)',
        (v) => secretProblem(v, PASSWORD_MAX),
        { secret: true },
      );
    }
  }
  if (needs('--service-key')) {
    const file = await askUntil(prompter, "the order service's public key file (PEM)", (v) =>
      v === '' ? 'must name a file' : publicKeyProblem(context.resolvePath(v)),
    );
    a.serviceKey = context.resolvePath(file);
  }
  if (needs('--printer')) await askPrinters(a, context);
}

async function askPrinters(a: SetupAnswers, { prompter, paths }: Context): Promise<void> {
  prompter.say(`printers: ${printerUrlExamples()} (printer-agent printers scan lists them)`);
  const receipt = await askUntil(prompter, `${DEFAULT_PRINTER_ROLE} printer URL`, (v) =>
    firstProblem(
      { ...a, printers: [{ roles: [DEFAULT_PRINTER_ROLE], url: v }] },
      paths,
      `--printer ${DEFAULT_PRINTER_ROLE}`,
    ),
  );
  a.printers = [{ roles: [DEFAULT_PRINTER_ROLE], url: receipt }];
  while (a.printers.length < MAX_PRINTERS) {
    const candidate = (text: string): PrinterAnswer | null => {
      const split = splitRoles(text);
      return split ? { roles: split.roles, url: split.value } : null;
    };
    const answer = await askUntil(
      prompter,
      'another printer as ROLE=URL (kitchen=tcp://...; Enter when done)',
      (v) => {
        if (v === '') return null;
        const p = candidate(v);
        if (!p) return 'must be ROLE=URL, e.g. kitchen=tcp://192.168.1.51:9100';
        const taken = takenRoles(p, a.printers);
        if (taken.length > 0) return `role ${taken.join(', ')} has a printer already`;
        return firstProblem(
          { ...a, printers: [...a.printers, p] },
          paths,
          `--printer ${printerLabel(p)}`,
        );
      },
    );
    const next = candidate(answer);
    if (!next) return;
    a.printers.push(next);
  }
}
