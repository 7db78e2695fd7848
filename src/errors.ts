/**
 * The error-code catalogue. Every error that crosses a room boundary carries one of these codes,
 * so callers branch on `code` and `retryable`, never on message text. The same codes appear in
 * job events (`reason.code`, print-protocol §6); docs/error-codes.md is generated from this table
 * (`npm run docs`), so `summary` is what integrators read.
 *
 * Messages must never contain secrets (storeKey, private keys, passwords): they end up in logs,
 * job events and CLI output.
 */
export const ERROR_CODES = {
  // Opening an envelope (print-protocol §3, order-api 2.1).
  TOO_LARGE: { retryable: false, summary: 'message body exceeds the size limit' },
  ENVELOPE_INVALID: { retryable: false, summary: 'body is not a valid request envelope' },
  SIGNATURE_INVALID: { retryable: false, summary: 'signature does not verify over param' },
  IDENTITY_MISMATCH: { retryable: false, summary: 'appId or storeKey is not the expected one' },
  PARAM_NOT_JSON: { retryable: false, summary: 'param is not a JSON object string' },
  PARAM_INVALID: { retryable: false, summary: 'param breaks a rule of the schema' },
  // Keys.
  KEY_FILE_MISSING: { retryable: false, summary: 'key file cannot be read' },
  KEY_INVALID: { retryable: false, summary: 'key is not a usable RSA key in PEM form' },
  KEY_TOO_SHORT: { retryable: false, summary: 'RSA key shorter than 2048 bits' },
  // Receipts and printer profiles.
  PROFILE_INVALID: {
    retryable: false,
    summary: 'a printer profile file breaks the profile schema',
  },
  PROFILE_MISSING: { retryable: false, summary: 'no printer profile with this id' },
  RENDER_FAILED: { retryable: false, summary: 'the receipt cannot be rendered from this order' },
  LOGO_UNREADABLE: {
    retryable: false,
    summary:
      'the store logo (receipt.logo.file) is missing, unreadable, not a PNG or SVG image, or too large: config check and doctor fail; the running agent prints receipts without it and shows it in its status (`warnings`)',
  },
  FONT_MISSING: {
    retryable: false,
    summary:
      "a character needs drawing (a raster line) and no installed font has it: it prints as '?'; the running agent says so once in its journal and its status (`warnings`), doctor lists the scripts its fonts lack",
  },
  // Printers and their links.
  PRINTER_URL_INVALID: { retryable: false, summary: 'a printer URL cannot be understood' },
  PRINTER_UNREACHABLE: { retryable: true, summary: 'the printer link cannot be opened' },
  PRINTER_DISCONNECTED: { retryable: true, summary: 'the printer link dropped' },
  PRINTER_NOT_READY: { retryable: true, summary: 'the printer reports a state it cannot print in' },
  TRANSPORT_TIMEOUT: { retryable: true, summary: 'the printer did not take the bytes in time' },
  // Job store and spooler (reliability guarantees 1, 4, 5, 11). Reason codes of job events.
  STORE_FULL: {
    retryable: true,
    summary: 'the job database has no room (disk full or size limit): do not ack, retry later',
  },
  STORE_FAILED: {
    retryable: true,
    summary: 'the job database cannot be read or written: do not ack, retry later',
  },
  NODE_UNSUPPORTED: {
    retryable: false,
    summary:
      'the Node.js running the agent cannot load its native SQLite driver (another module ABI): run it on Node.js 20 or on 22 or newer; a config-class exit (78), so systemd does not restart it every 2 s',
  },
  JOB_NOT_FOUND: { retryable: false, summary: 'no stored job (or stored receipt) matches' },
  JOB_STATE_CONFLICT: { retryable: false, summary: 'the job is not in a state that allows this' },
  DUPLICATE: {
    retryable: false,
    summary: 'a job for this orderNo, jobId or commandId is already stored; not printed again',
  },
  PAPER_OUT: { retryable: true, summary: 'the printer is out of paper' },
  COVER_OPEN: { retryable: true, summary: 'the printer cover is open' },
  PRINTER_OFFLINE: { retryable: true, summary: 'the printer is offline or in an error state' },
  PRINT_FAILED: {
    retryable: true,
    summary: 'printing failed for an unexpected reason; the job may have printed in part',
  },
  UNCONFIRMED: {
    retryable: false,
    summary: 'the bytes were sent but the printer did not confirm the job; not re-sent',
  },
  JOB_INTERRUPTED: {
    retryable: true,
    summary:
      'the agent stopped while the job was printing; printed again marked POSSIBLE DUPLICATE',
  },
  NEEDS_ATTENTION: {
    retryable: false,
    summary: 'the job is held for a person (interrupted while printing): `jobs retry` releases it',
  },
  // Configuration (issue 7). Messages name the file and each `path: rule`, never a secret.
  CONFIG_MISSING: { retryable: false, summary: 'the config file is missing or cannot be read' },
  CONFIG_INVALID: {
    retryable: false,
    summary: 'the config file is not valid JSON or breaks a rule of the config schema',
  },
  CONFIG_TOO_NEW: {
    retryable: false,
    summary:
      "the config file's version is newer than this agent knows: refused by every command (exit 78), upgrade printer-agent",
  },
  // The broker.
  BROKER_UNAVAILABLE: {
    retryable: true,
    summary: 'the MQTT broker cannot be reached or refused a publish',
  },
  // Catch-up through the order service's query API (print-protocol §8, order-api 4.1).
  QUERY_FAILED: {
    retryable: true,
    summary: 'a catch-up query got no usable answer (unreachable, timeout, malformed); retried',
  },
  QUERY_REJECTED: {
    retryable: false,
    summary:
      'a catch-up answer was refused (unsigned, badly signed, over a cap) or the order service answered with a failure code',
  },
  STALE_ORDER: {
    retryable: false,
    summary:
      'the order is older than the anti-replay age (freshness.maxAgeDays) or, pulled by catch-up, than catchUp.maxAgeMinutes: reported, not printed',
  },
  // Routing, paper length and the clock (print-protocol v1.1 §4, §9). The last two are warnings
  // carried by job events (`warnings`): the job went on.
  NO_PRINTER_FOR_ROLE: {
    retryable: true,
    summary:
      'no configured printer serves the role the job names: it waits, counted in the status, and prints once a printer with that role is configured',
  },
  CONTENT_CUT: {
    retryable: false,
    summary:
      'free text (custom print content, remark) was longer than the receipt allows: cut, marked on the paper and reported (in the `warnings` of its job event)',
  },
  CLOCK_UNSYNCHRONIZED: {
    retryable: false,
    summary:
      "the system clock is not known to be synchronized: the instruction's age was not checked (in the `warnings` of its job event)",
  },
  // The agent itself.
  INTERNAL_ERROR: {
    retryable: true,
    summary:
      'an unexpected error inside the agent (a bug, not an outage): logged and shown in the status; the agent keeps running',
  },
  // Command line and input files.
  INPUT_INVALID: { retryable: false, summary: 'a command-line argument or input file is invalid' },
  AGENT_UNREACHABLE: {
    retryable: true,
    summary:
      "the running agent's local API does not answer (the agent is stopped, or console.enabled is false)",
  },
} as const satisfies Record<string, { retryable: boolean; summary: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** One rule broken by one field, e.g. `{ path: 'order.productInfo[3].quantity', message: 'must be between 1 and 1000' }`. */
export interface FieldIssue {
  path: string;
  message: string;
}

export class AgentError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  /** Field-level details for validation errors; empty otherwise. */
  readonly issues: readonly FieldIssue[];
  /** Facts for the caller's policy (e.g. `sentBytes` of an interrupted print); never secrets. */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    code: ErrorCode,
    message: string,
    options: {
      issues?: readonly FieldIssue[];
      cause?: unknown;
      retryable?: boolean;
      details?: Record<string, unknown>;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AgentError';
    this.code = code;
    this.retryable = options.retryable ?? ERROR_CODES[code].retryable;
    this.issues = options.issues ?? [];
    this.details = options.details ?? {};
  }

  /** The `reason` object of a job event (print-protocol §6). */
  toReason(): { code: ErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }
}

export function isAgentError(value: unknown): value is AgentError {
  return value instanceof AgentError;
}

/**
 * The message of anything thrown or rejected: an Error's message, else the value as text. The one
 * way the rooms turn an unknown `catch` value into words for a log line or a reason.
 */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return String(error);
  } catch {
    return 'unprintable error';
  }
}
