/**
 * Logs: pino to stdout, a child logger per room; as JSON lines, or under systemd as one readable
 * line per event with a syslog priority prefix (`<4>printer: printer state state=paper-out`), so
 * `journalctl -p warning` and a person reading the journal both work (issue 17). Secrets (storeKey,
 * broker password) are scrubbed from every line by value, wherever they would appear: a message,
 * an error text, a nested field, a field name, a child logger's bindings. Whole envelopes are never
 * logged by the rooms.
 *
 * How (issue 13, item 9): every secret is scrubbed whatever its length (the spec's sample store
 * key is `K1`), so the scrub must not break the line it works on. It runs on the finished line
 * (pino's `streamWrite` hook), after interpolation and bindings: a line holding no form of a
 * secret is written as it is; any other line is parsed, every string value and field name is
 * scrubbed, and the line is written again as JSON. Replacing inside the JSON text instead would
 * turn `"level":30` into `"level":***` for a secret `30`. Overlapping matches of several secrets
 * are merged into one `***`, so no tail of one secret survives another's replacement. A number
 * whose digits hold a secret becomes the scrubbed string. Short secrets over-scrub (`K1` also
 * masks `PK1`): that is the price of never printing them.
 */
import { fstatSync } from 'node:fs';
import { pino } from 'pino';

export type Logger = pino.Logger;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const SCRUBBED = '***';

/**
 * `journal`: readable lines with a `<N>` syslog priority, for systemd's journal. `json`: pino's
 * JSON lines (log shippers). `auto`: `journal` when stdout is the journal's stream (systemd sets
 * JOURNAL_STREAM to its device and inode), else `json`.
 */
export const LOG_FORMATS = ['auto', 'json', 'journal'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * Whether file descriptor `fd` is the stream systemd connected to the journal: JOURNAL_STREAM holds
 * its `device:inode` (systemd.exec(5)); a child process that inherited the variable but writes
 * elsewhere (a pipe, a file) does not match.
 */
export function isJournalStream(env: NodeJS.ProcessEnv, fd = 1): boolean {
  const match = /^(\d+):(\d+)$/.exec(env.JOURNAL_STREAM ?? '');
  if (!match) return false;
  try {
    const stat = fstatSync(fd, { bigint: true });
    return stat.dev === BigInt(match[1]!) && stat.ino === BigInt(match[2]!);
  } catch {
    return false;
  }
}

/** The format to write: `auto` decided by where stdout goes. */
export function resolveLogFormat(format: LogFormat, env: NodeJS.ProcessEnv): 'json' | 'journal' {
  if (format !== 'auto') return format;
  return isJournalStream(env) ? 'journal' : 'json';
}

/** syslog priorities (sd-daemon(3)) of pino's levels: fatal 2, error 3, warn 4, info 6, below 7. */
export function syslogPriority(level: number): number {
  if (level >= 60) return 2;
  if (level >= 50) return 3;
  if (level >= 40) return 4;
  if (level >= 30) return 6;
  return 7;
}

/** Control characters (a newline would start a journal entry of its own) as JSON escapes. */
function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are what is replaced
  return text.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
}

function fieldValue(value: unknown): string {
  if (typeof value === 'string')
    return /^[^\s"=\\]+$/.test(value) ? oneLine(value) : JSON.stringify(value);
  if (value !== null && typeof value === 'object') {
    const err = value as { type?: unknown; message?: unknown; code?: unknown };
    // An error made plain (`{type, message, code}`): its message is what a person needs.
    if (typeof err.message === 'string' && typeof err.type === 'string')
      return JSON.stringify(
        typeof err.code === 'string' ? `${err.code}: ${err.message}` : err.message,
      );
    return JSON.stringify(value);
  }
  return String(value);
}

/**
 * A pino JSON line as a journal line: `<priority>room: message key=value ...`. journald adds the
 * time and the unit; `service` (the unit's own name) is left out.
 */
export function journalLine(line: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return `<6>${oneLine(line.trimEnd())}\n`;
  }
  const { level, time: _time, service: _service, room, msg, ...fields } = record;
  let out = `<${syslogPriority(typeof level === 'number' ? level : 30)}>`;
  if (typeof room === 'string') out += `${oneLine(room)}: `;
  out += typeof msg === 'string' ? oneLine(msg) : '';
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    out += ` ${oneLine(key)}=${fieldValue(value)}`;
  }
  return `${out}\n`;
}

/** Field depth beyond which values are logged as pino writes them (the line scrub still runs). */
const MAX_DEPTH = 8;

/** The same text as it appears inside a JSON string. */
const jsonEscaped = (text: string) => JSON.stringify(text).slice(1, -1);

/**
 * The forms a secret can take in a logged value: as is, JSON-escaped once and twice (a message
 * quoting a JSON body, or a JSON body quoting a JSON string), and percent-encoded (a URL). Longest
 * first; for a secret of plain letters and digits they are all the same text.
 */
export function secretForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret === '') continue;
    const once = jsonEscaped(secret);
    for (const form of [secret, once, jsonEscaped(once), encodeURIComponent(secret)])
      forms.add(form);
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/** `text` with every occurrence of every form replaced; overlapping occurrences become one. */
export function scrubText(text: string, forms: readonly string[]): string {
  const spans: [number, number][] = [];
  for (const form of forms) {
    // From the next character, not after the match: `aa` occurs twice in `aaa`.
    for (let i = text.indexOf(form); i >= 0; i = text.indexOf(form, i + 1))
      spans.push([i, i + form.length]);
  }
  if (spans.length === 0) return text;
  spans.sort((a, b) => a[0] - b[0]);
  let out = '';
  let from = 0;
  let [start, end] = spans[0]!;
  for (const [s, e] of spans.slice(1)) {
    if (s <= end) {
      end = Math.max(end, e);
      continue;
    }
    out += text.slice(from, start) + SCRUBBED;
    from = end;
    [start, end] = [s, e];
  }
  return out + text.slice(from, start) + SCRUBBED + text.slice(end);
}

function scrubValue(value: unknown, forms: readonly string[]): unknown {
  if (typeof value === 'string') return scrubText(value, forms);
  if (typeof value === 'number') {
    const text = String(value);
    const scrubbed = scrubText(text, forms);
    return scrubbed === text ? value : scrubbed;
  }
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, forms));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[scrubText(k, forms)] = scrubValue(v, forms);
    return out;
  }
  return value;
}

/**
 * One finished log line with every secret form scrubbed; the line stays one JSON object. pino's
 * own `level` and `time` are kept as they are: numbers and a timestamp it makes, never a secret.
 */
export function scrubLine(line: string, forms: readonly string[]): string {
  // As written, a value's forms appear JSON-escaped once more.
  if (!forms.some((f) => line.includes(f) || line.includes(jsonEscaped(f)))) return line;
  const newline = line.endsWith('\n') ? '\n' : '';
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    // Not JSON (never from pino): scrub the text, whatever that does to it.
    return scrubText(line, [...forms, ...forms.map(jsonEscaped)]);
  }
  if (record === null || typeof record !== 'object' || Array.isArray(record))
    return `${JSON.stringify(scrubValue(record, forms))}${newline}`;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) {
    if (k === 'level' || k === 'time') out[k] = v;
    else out[scrubText(k, forms)] = scrubValue(v, forms);
  }
  return `${JSON.stringify(out)}${newline}`;
}

/**
 * Errors become `{type, message, code}`: the stack and the cause chain are left out, so a line
 * stays short and an error's details (which may quote a request) stay out of the log.
 */
function plainErrors(value: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    return { type: value.name, message: value.message, code: (value as { code?: unknown }).code };
  }
  if (Array.isArray(value)) return value.map((v) => plainErrors(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = plainErrors(v, depth + 1);
  return out;
}

export function createLogger(options: {
  level: LogLevel;
  secrets?: readonly string[];
  /** The program writing the log; default `printer-agent` (the agent). */
  service?: string;
  destination?: pino.DestinationStream;
  /** Default `json`; `auto` is decided against this process's stdout (`resolveLogFormat`). */
  format?: LogFormat;
  env?: NodeJS.ProcessEnv;
}): Logger {
  const forms = secretForms(options.secrets ?? []);
  const journal =
    resolveLogFormat(options.format ?? 'json', options.env ?? process.env) === 'journal';
  // Secrets are scrubbed on the JSON line, whose structure the scrub keeps; the journal line is
  // made from the scrubbed record.
  const scrub = forms.length > 0 ? (line: string) => scrubLine(line, forms) : null;
  const streamWrite =
    journal && scrub ? (line: string) => journalLine(scrub(line)) : journal ? journalLine : scrub;
  return pino(
    {
      level: options.level,
      base: { service: options.service ?? 'printer-agent' },
      timestamp: pino.stdTimeFunctions.isoTime,
      // pino's own `err` serializer would take the `{type, message, code}` made below for an
      // error-like object and log it as `{"type":"Object","stack":""}`: errors are made plain
      // here, whatever their key.
      serializers: { err: (value: unknown) => plainErrors(value) },
      hooks: {
        logMethod(args, method) {
          if (forms.length === 0) return method.apply(this, args);
          return method.apply(this, args.map((a) => plainErrors(a)) as Parameters<typeof method>);
        },
        ...(streamWrite ? { streamWrite } : {}),
      },
    },
    options.destination ?? pino.destination({ fd: 1, sync: false }),
  );
}
