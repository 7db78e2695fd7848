/**
 * Logs: pino JSON to stdout (journald keeps them), a child logger per room. Secrets (storeKey,
 * broker password) are scrubbed from every line by value, wherever they would appear: a message,
 * an error text, a nested field. Whole envelopes are never logged by the rooms.
 */
import { pino } from 'pino';

export type Logger = pino.Logger;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

function scrub(value: unknown, secrets: readonly string[], depth = 0): unknown {
  if (typeof value === 'string') {
    let out = value;
    for (const s of secrets) if (s.length >= 4) out = out.split(s).join('***');
    return out;
  }
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    return {
      type: value.name,
      message: scrub(value.message, secrets),
      code: (value as { code?: unknown }).code,
    };
  }
  if (Array.isArray(value)) return value.map((v) => scrub(v, secrets, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrub(v, secrets, depth + 1);
  return out;
}

export function createLogger(options: {
  level: LogLevel;
  secrets?: readonly string[];
  /** The program writing the log; default `printer-agent` (the agent). */
  service?: string;
  destination?: pino.DestinationStream;
}): Logger {
  const secrets = (options.secrets ?? []).filter((s) => s.length >= 4);
  return pino(
    {
      level: options.level,
      base: { service: options.service ?? 'printer-agent' },
      timestamp: pino.stdTimeFunctions.isoTime,
      hooks: {
        logMethod(args, method) {
          if (secrets.length === 0) return method.apply(this, args);
          return method.apply(
            this,
            args.map((a) => scrub(a, secrets)) as Parameters<typeof method>,
          );
        },
      },
    },
    options.destination ?? pino.destination({ fd: 1, sync: false }),
  );
}
