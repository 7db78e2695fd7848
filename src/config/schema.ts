/**
 * The agent's configuration file as one zod schema: the single source of truth for validation,
 * defaults, the JSON schema given to editors (`config schema`) and the reference table
 * (`config reference`, docs/config-reference.md). Every field carries `.describe()`, because the
 * descriptions are the documentation: JSON cannot hold comments.
 *
 * Secrets (`storeKey`, `mqtt.password`) may be given inline or as file paths; the file forms are
 * read by `load.ts`, which also derives `storeId` and `mqtt.clientId`. Nothing here reads a secret.
 *
 * Rooms: this file imports `protocol/` and four leaf modules that describe data the config points
 * at (`receipt/options.ts` for the receipt section, `receipt/profile.ts` for profile ids and their
 * code pages, `printer/printer-url.ts` for the printer URL grammar, `jobs/routing.ts` for the
 * routing rules' vocabulary). None of them imports
 * `config/`, so the dependency stays one-way (docs/decisions.md, Configuration).
 */
import { z } from 'zod';
import { isAgentError } from '../errors.js';
import { CLOCK_MODES } from '../host/clock-sync.js';
import { DEFAULT_STATE_DIR } from '../host/paths.js';
import { defaultLayout, LAYOUTS, ORDER_TYPE_NAMES, PAYMENT_KINDS } from '../jobs/routing.js';
import { LOG_FORMATS, LOG_LEVELS } from '../logging.js';
import { parsePrinterUrl, printerUrlForms } from '../printer/printer-url.js';
import { STORE_KEY_MAX } from '../protocol/envelope.js';
import { ANTI_REPLAY_DEFAULT_DAYS, DEDUPE_LEDGER_DAYS } from '../protocol/limits.js';
import { moneyFormatSchema } from '../protocol/money.js';
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_PRINTER_ROLE,
  DEFAULT_TOPIC_PREFIX,
} from '../protocol/print-protocol.js';
import { DEFAULT_SIGNATURE_SCHEME, SIGNATURE_SCHEMES } from '../protocol/signing.js';
import { appIdSchema } from '../protocol/store-id.js';
import { text, typeError } from '../protocol/validation.js';
import { LOGO_ALIGNS, LOGO_WIDTH_MM, receiptOptionsSchema } from '../receipt/options.js';
import { loadProfiles, type PrinterProfile } from '../receipt/profile.js';
import { crossFieldIssues } from './cross-field-rules.js';
import { CONFIG_VERSION } from './migrations.js';

export const MAX_PRINTERS = 8;
/** order-api §8: "interval between queries: recommended at least 10 seconds". */
export const MIN_QUERY_INTERVAL_SEC = 10;
/** order-api §8: "data delay: up to 5 minutes". */
export const QUERY_DATA_DELAY_MINUTES = 5;
/** order-api §8: "pageSize maximum: 100". */
export const MAX_PAGE_SIZE = 100;

export const CONFIRM_MODES = ['process-id', 'status', 'none'] as const;
export const POSSIBLE_DUPLICATE_POLICIES = ['reprint-marked', 'hold'] as const;

/** Fields whose values are secrets: never printed, logged or echoed in an error. */
export const SECRET_FIELDS = [
  'storeKey',
  'mqtt.password',
  'console.token',
  'console.metricsToken',
] as const;
/** Files that hold secrets: the agent warns when group or others can read them. */
export const SECRET_FILE_FIELDS = [
  'storeKeyFile',
  'mqtt.passwordFile',
  'mqtt.tls.keyFile',
  'keys.storePrivateKeyFile',
  'console.keyFile',
  'console.tokenFile',
  'console.metricsTokenFile',
] as const;
/** Fields that are file system paths: relative ones resolve against the config file's folder. */
export const PATH_FIELDS = [
  'storeKeyFile',
  'mqtt.passwordFile',
  'mqtt.tls.caFile',
  'mqtt.tls.certFile',
  'mqtt.tls.keyFile',
  'keys.servicePublicKeyFile',
  'keys.storePrivateKeyFile',
  'catchUp.caFile',
  'stateDir',
  'console.certFile',
  'console.keyFile',
  'console.tokenFile',
  'console.metricsTokenFile',
  'receipt.logo.file',
] as const;

// ---------------------------------------------------------------------------------------------
// Building blocks. Messages are rules ("must be ..."), like protocol/validation.ts, and never
// contain the value: a wrong value may be a secret typed into the wrong field.

/** A whole number in `[min, max]`; `why` says where a bound comes from when it is not obvious. */
function wholeNumber(min: number, max: number, why?: string) {
  const range = `must be between ${min} and ${max}${why ? ` (${why})` : ''}`;
  return z
    .number({ error: typeError('a number') })
    .refine(Number.isInteger, 'must be a whole number')
    .min(min, { error: range })
    .max(max, { error: range })
    .meta({ type: 'integer' }); // the refinement is invisible to the JSON schema; say it there
}

function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

const filePath = () =>
  z.string({ error: typeError('a file path') }).min(1, 'must be a file path, not empty');

/** Role names double as the `printer` field of instructions (print-protocol §4). */
const role = () =>
  z
    .string({ error: typeError('a string') })
    .regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 letters, digits, dot, dash or underscore');

function mqttUrlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be a URL like mqtts://broker.example.com:8883';
  }
  if (url.protocol !== 'mqtt:' && url.protocol !== 'mqtts:') return null; // the regex reports it
  if (!url.hostname) return 'must name the broker host';
  // Credentials in a URL end up in logs and `ps`; they have their own (redacted) fields.
  if (url.username || url.password)
    return 'must not carry credentials: use mqtt.username and mqtt.password or mqtt.passwordFile';
  if ((url.pathname && url.pathname !== '/') || url.search || url.hash)
    return 'must be only scheme, host and port';
  return null;
}

function httpUrlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be a URL like https://orders.example.com';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must start with https://';
  if (url.username || url.password) return 'must not carry credentials';
  if (url.search || url.hash) return 'must have no query or fragment';
  return null;
}

/** The profiles shipped in config/printers/, or the reason they cannot be read. */
function profiles(): Map<string, PrinterProfile> | string {
  try {
    return loadProfiles();
  } catch (error) {
    return isAgentError(error) ? error.message : String(error);
  }
}

// ---------------------------------------------------------------------------------------------
// Sections.

const tlsSchema = z
  .strictObject({
    caFile: filePath()
      .optional()
      .describe('PEM file of the CA that signed the broker certificate (default: system CAs).'),
    certFile: filePath()
      .optional()
      .describe('PEM client certificate, for brokers that authenticate clients by certificate.'),
    keyFile: filePath()
      .optional()
      .describe('PEM private key of the client certificate (secret file: keep it 0600).'),
    rejectUnauthorized: z
      .boolean({ error: typeError('true or false') })
      .default(true)
      .describe('Verify the broker certificate. Turn off only for a test broker.'),
  })
  .describe('TLS settings for mqtts:// URLs.');

const mqttSchema = z
  .strictObject({
    url: z
      .string({ error: typeError('a string') })
      .regex(/^mqtts?:\/\//, 'must start with mqtt:// or mqtts://')
      .superRefine((value, ctx) => {
        const problem = mqttUrlProblem(value);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .describe('Broker URL, mqtts://HOST:PORT (TLS) or mqtt://HOST:PORT; no credentials.'),
    protocolVersion: z
      .literal([5, 4], { error: 'must be 5 (MQTT 5) or 4 (MQTT 3.1.1)' })
      .default(5)
      .describe('5 for MQTT 5; 4 for MQTT 3.1.1 (older brokers, the embedded demo broker).'),
    prefix: z
      .string({ error: typeError('a string') })
      .regex(
        /^[^/+#\s]{1,64}(\/[^/+#\s]{1,64}){0,7}$/,
        'must be topic levels joined by / without +, #, spaces or empty levels',
      )
      .default(DEFAULT_TOPIC_PREFIX)
      .describe('Topic prefix: the agent uses {prefix}/{storeId}/print, /command, /job, /status.'),
    keepaliveSec: wholeNumber(5, 1200)
      .default(30)
      .describe(
        'MQTT keepalive in seconds; the broker publishes the offline last will about 1.5x later.',
      ),
    clientId: z
      .string({ error: typeError('a string') })
      .regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 letters, digits, dot, dash or underscore')
      .optional()
      .describe(
        'Fixed client id of the persistent session. Default: printer-agent-{storeId}. Two agents ' +
          'with one id throw each other off the broker.',
      ),
    sessionExpirySec: wholeNumber(60, 4294967295)
      .default(86400)
      .describe(
        'MQTT 5 session expiry: how long the broker keeps instructions for a stopped agent. ' +
          'Longer gaps are filled by catch-up.',
      ),
    username: z
      .string({ error: typeError('a string') })
      .min(1, 'must not be empty')
      .max(256, 'must be at most 256 characters')
      .optional()
      .describe('Broker user name (per-store credentials, ACL limited to the store subtree).'),
    password: z
      .string({ error: typeError('a string') })
      .min(1, 'must not be empty')
      .max(1024, 'must be at most 1024 characters')
      .optional()
      .describe('SECRET. Broker password. Prefer mqtt.passwordFile.'),
    passwordFile: filePath()
      .optional()
      .describe('File whose first line is the broker password (secret file: keep it 0600).'),
    tls: tlsSchema.prefault({}),
    reconnectMinMs: wholeNumber(100, 60000)
      .default(1000)
      .describe('First reconnect delay in ms; doubled after each failure.'),
    reconnectMaxMs: wholeNumber(1000, 600000)
      .default(30000)
      .describe('Longest reconnect delay in ms (cap of the backoff).'),
    maxMessageBytes: wholeNumber(1024, 1048576)
      .default(DEFAULT_MAX_MESSAGE_BYTES)
      .describe('Messages larger than this are rejected unread (print-protocol §3).'),
  })
  .describe('The MQTT broker connection.');

const keysSchema = z
  .strictObject({
    servicePublicKeyFile: filePath().describe(
      'PEM public key of the order service: verifies print instructions and commands.',
    ),
    storePrivateKeyFile: filePath()
      .optional()
      .describe(
        'PEM private key of this store: signs catch-up queries (secret file: keep it 0600). ' +
          'Required when catch-up is enabled.',
      ),
    scheme: z
      .enum(SIGNATURE_SCHEMES, { error: `must be one of ${SIGNATURE_SCHEMES.join(', ')}` })
      .default(DEFAULT_SIGNATURE_SCHEME)
      .describe(
        'Signature scheme, both directions (print-protocol §3). Never chosen by a message.',
      ),
  })
  .describe('RSA keys (PEM, 2048 bits or more) and the signature scheme.');

const printerSchema = z
  .strictObject({
    id: role().describe('Printer id; also its role unless roles is given (receipt, kitchen...).'),
    url: z
      .string({ error: typeError('a string') })
      .superRefine((value, ctx) => {
        try {
          parsePrinterUrl(value);
        } catch (error) {
          if (!isAgentError(error)) throw error;
          // The rule without the URL: the path already names the field, and the value may be a
          // secret pasted into the wrong field (stripping the quoted URL off the message cut it
          // at the first `: ` inside the URL, and `unknown parameter KEY` echoed part of it).
          const rule = error.details.rule;
          ctx.addIssue({
            code: 'custom',
            message: typeof rule === 'string' ? rule : 'must be a printer URL',
          });
        }
      })
      .describe(`Where the printer is: ${printerUrlForms()}.`),
    profile: z
      .string({ error: typeError('a string') })
      .superRefine((value, ctx) => {
        const known = profiles();
        if (typeof known === 'string') ctx.addIssue({ code: 'custom', message: known });
        else if (!known.has(value))
          ctx.addIssue({
            code: 'custom',
            message: `must be a profile in config/printers/: ${[...known.keys()].join(', ')}`,
          });
      })
      .describe('Printer profile id, a file in config/printers/ (columns, code pages, cutter).'),
    roles: z
      .array(role(), { error: typeError('a list of role names') })
      .min(1, 'must name at least one role')
      .max(8, 'must name at most 8 roles')
      .optional()
      .describe('Roles this printer serves (the printer field of instructions). Default: [id].'),
    codepage: z
      .string({ error: typeError('a string') })
      .min(1, 'must not be empty')
      .optional()
      .describe('Code page override; must be one the profile can select (its codepageNumbers).'),
    confirm: z
      .enum(CONFIRM_MODES, { error: `must be one of ${CONFIRM_MODES.join(', ')}` })
      .optional()
      .describe('How a job is confirmed, overriding the profile: process-id, status or none.'),
    statusIntervalMs: wholeNumber(1000, 600000)
      .default(5000)
      .describe('Status poll interval in ms while the printer is idle.'),
    confirmTimeoutSec: wholeNumber(2, 600)
      .default(15)
      .describe(
        'Seconds to wait for the confirmation after the last byte of a job; raise it for slow ' +
          'links or long receipts (a job still on the line when it ends is reported unconfirmed).',
      ),
  })
  .superRefine((printer, ctx) => {
    if (printer.codepage === undefined) return;
    const known = profiles();
    const profile = typeof known === 'string' ? undefined : known.get(printer.profile);
    if (profile && profile.codepageNumbers[printer.codepage] === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['codepage'],
        message: `must be a code page profile ${printer.profile} can select: ${Object.keys(
          profile.codepageNumbers,
        ).join(', ')}`,
      });
    }
  })
  .transform(({ id, url, profile, roles, ...rest }) => ({
    id,
    url,
    profile,
    roles: roles ?? [id],
    ...rest,
  }));

/** A product name or SKU pattern of a routing rule: `*` stands for any run of characters. */
const itemPattern = () =>
  z
    .string({ error: typeError('a string') })
    .min(1, 'must not be empty')
    .max(100, 'must be at most 100 characters');

const routingRuleSchema = z
  .strictObject({
    role: role().describe('The printer role that gets a ticket (a printer must serve it).'),
    layout: z
      .enum(LAYOUTS, { error: `must be one of ${LAYOUTS.join(', ')}` })
      .optional()
      .describe(
        'receipt: the payment receipt; kitchen: the kitchen ticket (no prices, quantities large). ' +
          'Default: receipt for the receipt role, kitchen for any other.',
      ),
    orderTypes: z
      .array(z.enum(ORDER_TYPE_NAMES, { error: `must be one of ${ORDER_TYPE_NAMES.join(', ')}` }), {
        error: typeError('a list of order types'),
      })
      .min(1, 'must name at least one order type')
      .max(3, 'must name at most 3 order types')
      .optional()
      .describe(
        'Only orders of these types (table, queue, takeout). Orders pulled by catch-up have no ' +
          'type and always match. Default: every order.',
      ),
    items: z
      .array(itemPattern(), { error: typeError('a list of product name patterns') })
      .min(1, 'must name at least one pattern')
      .max(50, 'must name at most 50 patterns')
      .optional()
      .describe(
        'Product name patterns (`*` any characters, case ignored): the ticket lists only the ' +
          'matching items, and is not printed when none matches.',
      ),
    skus: z
      .array(itemPattern(), { error: typeError('a list of SKU patterns') })
      .min(1, 'must name at least one pattern')
      .max(50, 'must name at most 50 patterns')
      .optional()
      .describe(
        'SKU code patterns, like items (an item matches by name or SKU). Only orders pulled by ' +
          'catch-up carry SKU codes.',
      ),
  })
  .transform((r) => ({
    role: r.role,
    layout: r.layout ?? defaultLayout(r.role),
    orderTypes: r.orderTypes ?? null,
    items: r.items ?? null,
    skus: r.skus ?? null,
  }));

const markingsSchema = z
  .strictObject({
    lateAfterMinutes: wholeNumber(1, 1440)
      .nullable()
      .default(15)
      .describe('A receipt printed this long after it was stored is marked LATE; null: never.'),
    possibleDuplicatePolicy: z
      .enum(POSSIBLE_DUPLICATE_POLICIES, {
        error: `must be one of ${POSSIBLE_DUPLICATE_POLICIES.join(', ')}`,
      })
      .default('reprint-marked')
      .describe(
        'A job interrupted while printing: reprint-marked prints it again marked POSSIBLE ' +
          'DUPLICATE; hold keeps it for a person (`jobs retry`).',
      ),
  })
  .describe('Markings printed on receipts that came late or may be duplicates.');

const logoSchema = z
  .strictObject({
    file: filePath().describe(
      "PNG or SVG file of the logo (relative: to the config file's folder). At most 1 MB and " +
        '4 million pixels; an SVG is drawn with shapes only (no linked or embedded images).',
    ),
    widthMm: wholeNumber(LOGO_WIDTH_MM.min, LOGO_WIDTH_MM.max)
      .optional()
      .describe(
        "Printed width in millimetres; the height follows the image's proportions, at most 480 " +
          "dots (60 mm at 203 dpi; a taller logo prints narrower). Default: the printer's whole " +
          'print width (72 mm on 80 mm paper, 48 mm on 58 mm), never wider.',
      ),
    align: z
      .enum(LOGO_ALIGNS, { error: `must be one of ${LOGO_ALIGNS.join(', ')}` })
      .default('center')
      .describe('Where the logo sits across the paper.'),
  })
  .describe(
    'The store logo, printed first on every payment receipt (not on kitchen tickets), in black ' +
      'and white dots made once when the agent starts. A missing or unusable file fails ' +
      '`config check` and `doctor`; the running agent prints without it and reports ' +
      'LOGO_UNREADABLE in its status warnings.',
  );

// The receipt section is the renderer's own options schema (one source of truth), made strict
// so a misspelt key is reported instead of silently ignored. The logo is named here by its file;
// the renderer gets the converted image (receipt/logo.ts), never the path.
const receiptShape = receiptOptionsSchema.shape;
const receiptSchema = z
  .strictObject({
    ...receiptShape,
    money: z
      .strictObject(moneyFormatSchema.shape)
      .prefault({})
      .describe(receiptShape.money.description ?? 'How amounts in cents are printed.'),
    markings: markingsSchema.prefault({}),
    logo: logoSchema.optional(),
  })
  .describe('What the receipts look like.');

const catchUpSchema = z
  .strictObject({
    enabled: z
      .boolean({ error: typeError('true or false') })
      .default(true)
      .describe(
        'Poll the order service query API to print orders the broker did not deliver ' +
          '(reliability guarantee 7). Needs baseUrl and keys.storePrivateKeyFile.',
      ),
    baseUrl: z
      .string({ error: typeError('a string') })
      .superRefine((value, ctx) => {
        const problem = httpUrlProblem(value);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional()
      .describe(
        'Base URL of the order service; queries go to {baseUrl}/open-api/order/list. Must be ' +
          'https:// (certificate verified, see caFile); http:// only to a loopback host ' +
          '(127.0.0.0/8, ::1, localhost) or with allowInsecureHttp (print-protocol §8).',
      ),
    intervalSec: wholeNumber(MIN_QUERY_INTERVAL_SEC, 86400)
      .default(60)
      .describe('Seconds between two catch-up rounds.'),
    minIntervalSec: wholeNumber(MIN_QUERY_INTERVAL_SEC, 3600, 'order-api §8: at least 10 s')
      .default(MIN_QUERY_INTERVAL_SEC)
      .describe('Least seconds between any two queries, pages and reconnect rounds included.'),
    pageSize: wholeNumber(1, MAX_PAGE_SIZE, 'order-api §8: at most 100')
      .default(MAX_PAGE_SIZE)
      .describe('Orders per query page.'),
    maxAgeMinutes: wholeNumber(5, 10080)
      .default(60)
      .describe('Orders older than this are not printed by catch-up (job reason STALE_ORDER).'),
    windowMinutes: wholeNumber(QUERY_DATA_DELAY_MINUTES, 1440, 'order-api §8: up to 5 min delay')
      .default(QUERY_DATA_DELAY_MINUTES)
      .describe('Each round queries again this far back, for orders the service lists late.'),
    timeZone: z
      .string({ error: typeError('a string') })
      .refine(isTimeZone, 'must be an IANA time zone such as Asia/Manila')
      .optional()
      .describe(
        "IANA zone of the service's createTime, for time ranges, the stale check and the " +
          'anti-replay age of instructions (freshness). Default: the host time zone.',
      ),
    caFile: filePath()
      .optional()
      .describe(
        "PEM file of the CA that signed the order service's certificate (default: the system " +
          'CAs). https only.',
      ),
    responseSignature: z
      .enum(['required', 'off'], { error: 'must be one of "required", "off"' })
      .default('required')
      .describe(
        'required: every query answer must carry X-Signature, the service key over the exact ' +
          'body (print-protocol §8), else it is refused. off: for a service that does not sign; ' +
          'allowed over https only.',
      ),
    allowInsecureHttp: z
      .boolean({ error: typeError('true or false') })
      .default(false)
      .describe(
        'Lab switch: allow an http:// baseUrl to a host other than loopback. Anyone on the path ' +
          'could then print receipts; logged as a warning at every round. Never in a store.',
      ),
    allowV1Signatures: z
      .boolean({ error: typeError('true or false') })
      .default(false)
      .describe(
        'Accept answers signed version 1 (X-Signature over the body alone, no ' +
          'X-Signature-Version: 2) from an order service older than print-protocol v1.2 §10. Such ' +
          'an answer is not bound to the query: a captured page would be accepted as the answer ' +
          "to any other query, page or store's query. Logged as a warning at every round.",
      ),
    restaurantNo: z
      .string({ error: typeError('a string') })
      .min(1, 'must not be empty')
      .max(64, 'must be at most 64 characters')
      .optional()
      .describe(
        "This store's restaurantNo at the order service: records for another restaurant are refused.",
      ),
    branchIdentifier: z
      .string({ error: typeError('a string') })
      .min(1, 'must not be empty')
      .max(64, 'must be at most 64 characters')
      .optional()
      .describe(
        "This store's branchIdentifier at the order service: records for another branch are refused.",
      ),
  })
  .describe('Catch-up through the order service query API (order-api 4.1).');

const freshnessSchema = z
  .strictObject({
    maxAgeDays: wholeNumber(1, DEDUPE_LEDGER_DAYS, 'shorter than the dedupe ledger keeps an order')
      .default(ANTI_REPLAY_DEFAULT_DAYS)
      .describe(
        'Anti-replay age (print-protocol §4): an MQTT instruction whose createTime is older is ' +
          'stored failed with STALE_ORDER and reported, not printed (`jobs retry` prints it).',
      ),
    clock: z
      .enum(CLOCK_MODES, { error: `must be one of ${CLOCK_MODES.join(', ')}` })
      .default('detect')
      .describe(
        'Whether the system clock can be trusted for the age rule. detect: ask the system ' +
          '(systemd-timesyncd, timedatectl); synchronized: always (a real-time clock); ' +
          'unsynchronized: never check the age. While not known synchronized the rule is skipped ' +
          'and job events say so (CLOCK_UNSYNCHRONIZED): a wrong clock never drops a receipt.',
      ),
  })
  .describe('How old an instruction may be before it is treated as a replay.');

/**
 * The metrics token is never locked out (the lockout would let anyone on the scraper's address
 * blind the monitoring), so it must not be guessable: long, made by a machine.
 */
export const METRICS_TOKEN_MIN = 32;

/** The local API, status page and metrics port (CUPS has 631). */
export const DEFAULT_CONSOLE_PORT = 8631;

const consoleSchema = z
  .strictObject({
    enabled: z
      .boolean({ error: typeError('true or false') })
      .default(true)
      .describe(
        'Serve the local API (printer-agent status, test-print) and the status page. Off: no ' +
          'server and none of its code is loaded.',
      ),
    host: z
      .string({ error: typeError('an IP address') })
      .min(1, 'must be an IP address, not empty')
      .default('127.0.0.1')
      .describe(
        'Address to listen on. Anything but a loopback address (the store LAN) needs certFile, ' +
          'keyFile and tokenFile: HTTPS with a token, never a token over plain HTTP.',
      ),
    port: wholeNumber(1, 65535).default(DEFAULT_CONSOLE_PORT).describe('TCP port.'),
    hostnames: z
      .array(
        z
          .string({ error: typeError('a host name') })
          .regex(/^[A-Za-z0-9.-]{1,253}$/, 'must be a host name'),
        {
          error: typeError('a list of host names'),
        },
      )
      .max(16, 'must list at most 16 names')
      .default([])
      .describe(
        'Names the page is opened by besides the address itself and localhost (e.g. ' +
          'pi-store-12.local): other Host headers are refused (DNS rebinding).',
      ),
    certFile: filePath().optional().describe('PEM certificate for HTTPS.'),
    keyFile: filePath()
      .optional()
      .describe('PEM private key of the certificate (secret file: keep it 0600).'),
    tokenFile: filePath()
      .optional()
      .describe(
        'File whose first line is the access token (secret file: keep it 0600). When set, every ' +
          'request needs it (Authorization: Bearer); required off loopback.',
      ),
    metrics: z
      .boolean({ error: typeError('true or false') })
      .default(false)
      .describe('Serve Prometheus metrics at /metrics (same address and token rules).'),
    metricsTokenFile: filePath()
      .optional()
      .describe(
        "File whose first line is the scraper's own token (secret file: keep it 0600; at least " +
          `${METRICS_TOKEN_MIN} characters, e.g. openssl rand -hex 32). It opens GET /metrics and ` +
          'nothing else, and is never locked out by wrong tokens from its address (others on the ' +
          'same NAT or proxy). Needs metrics: true.',
      ),
  })
  .describe('The local API, status page and metrics (issue 17).');

const drawerSchema = z
  .strictObject({
    openOn: z
      .array(z.enum(PAYMENT_KINDS, { error: `must be one of ${PAYMENT_KINDS.join(', ')}` }), {
        error: typeError('a list of payment kinds'),
      })
      .max(2, 'must name at most 2 payment kinds')
      .default([])
      .describe(
        'Payment receipts of these kinds open the cash drawer on the receipt printer: offline ' +
          '(paymentWay 2, cash at the counter) and/or online. Once per receipt: never on a ' +
          'reprint, a copy marked POSSIBLE DUPLICATE, a kitchen ticket or a test page. Default: ' +
          'none (the drawer opens only with `printer-agent drawer open`).',
      ),
    pin: z
      .union([z.literal(2), z.literal(5)], { error: 'must be 2 or 5' })
      .default(2)
      .describe(
        "Kick-out connector pin the drawer's solenoid is wired to (ESC p: 2 or 5); the pulse " +
          "length is the printer profile's (drawerPulse, default 100 ms).",
      ),
  })
  .describe(
    "The cash drawer on the receipt printer's kick-out connector (issue 41). Its state (pin 3) " +
      'is in the status where the printer reports it.',
  );

const retentionSchema = z
  .strictObject({
    printedDays: wholeNumber(1, 365)
      .default(14)
      .describe('Days a finished job stays in the job store (jobs list, reprint).'),
  })
  .describe('How long finished jobs are kept.');

// ---------------------------------------------------------------------------------------------
// The whole file. Rules spanning fields live in cross-field-rules.ts.

const baseSchema = z.strictObject({
  $schema: z
    .string({ error: typeError('a string') })
    .optional()
    .describe('JSON schema reference for editors; ignored by the agent.'),
  // Migrations run before the schema (load.ts), so a file read by the agent always has the
  // current version here; the rule stays for the schema's other readers (editors, tests).
  version: z
    .literal(CONFIG_VERSION, {
      error: `must be ${CONFIG_VERSION} (run printer-agent config migrate)`,
    })
    .optional()
    .describe(
      `Version of the file's layout: ${CONFIG_VERSION} for this agent, which writes it. A file ` +
        'without it is version 1 (printer-agent 0.1.0): the agent migrates it when it starts, ' +
        'and `printer-agent config migrate` rewrites it, keeping the original beside it ' +
        '(`config.json.v1.bak`). A newer version is refused (CONFIG_TOO_NEW).',
    ),
  appId: appIdSchema.describe(
    "Application id issued by the order service (order-api 2.1), 1 to 64 characters, no ':' (print-protocol v1.2 §10).",
  ),
  storeKey: text(1, STORE_KEY_MAX)
    .optional()
    .describe(
      'SECRET. Store key issued by the order service, 1 to 100 characters. Prefer storeKeyFile.',
    ),
  storeKeyFile: filePath()
    .optional()
    .describe('File whose first line is the store key (secret file: keep it 0600).'),
  storeId: z
    .string({ error: typeError('a string') })
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, dash or underscore')
    .optional()
    .describe(
      'The store on the broker (topic level). Default: first 16 hex digits of ' +
        'sha256(appId:storeKey) (print-protocol §1).',
    ),
  mqtt: mqttSchema,
  keys: keysSchema,
  printers: z
    .array(printerSchema, { error: typeError('a list of printers') })
    .min(1, 'must list at least one printer')
    .max(MAX_PRINTERS, `must list at most ${MAX_PRINTERS} printers`)
    .describe('The printers, 1 to 8. One of them must serve the receipt role.'),
  routing: z
    .array(routingRuleSchema, { error: typeError('a list of routing rules') })
    .min(1, 'must list at least one rule')
    .max(16, 'must list at most 16 rules')
    .prefault([{ role: DEFAULT_PRINTER_ROLE }])
    .describe(
      'Which printer roles get a ticket for each order, one rule per role (issue 18). An ' +
        'instruction that names a printer role prints only there. Default: the payment receipt ' +
        'on the receipt role.',
    ),
  receipt: receiptSchema.prefault({}),
  stateDir: filePath()
    .default(DEFAULT_STATE_DIR)
    .describe('Folder of the job database (systemd StateDirectory=printer-agent).'),
  catchUp: catchUpSchema.prefault({}),
  freshness: freshnessSchema.prefault({}),
  retention: retentionSchema.prefault({}),
  drawer: drawerSchema.prefault({}),
  console: consoleSchema.prefault({}),
  logLevel: z
    .enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` })
    .default('info')
    .describe('Least level written to the log (pino levels).'),
  logFormat: z
    .enum(LOG_FORMATS, { error: `must be one of ${LOG_FORMATS.join(', ')}` })
    .default('auto')
    .describe(
      'How log lines are written to stdout. `journal`: one readable line per event with a syslog ' +
        'priority prefix (`<4>`), so `journalctl -p warning` works; `json`: pino JSON lines, for a ' +
        'log shipper; `auto`: `journal` when stdout is the systemd journal (JOURNAL_STREAM), else `json`.',
    ),
});

export const agentConfigSchema = baseSchema
  .check(
    z.superRefine(
      (value, ctx) => {
        for (const issue of crossFieldIssues(value))
          ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
      },
      { when: () => true },
    ),
  )
  .describe('printer-agent configuration (one JSON file, default /etc/printer-agent/config.json).');

/** The validated file: defaults applied, secrets possibly still as file paths. */
export type ConfigFile = z.output<typeof agentConfigSchema>;
/** What a config file may contain (defaults omitted). */
export type ConfigFileInput = z.input<typeof agentConfigSchema>;
export type PrinterConfig = ConfigFile['printers'][number];

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
};

/**
 * Messages for the issues zod words itself (wrong type, unknown key, bounds without a custom
 * message), in the same `must be ...` voice as ours. Passed per parse, so it never overrides a
 * message a field sets.
 */
export function configErrorMessage(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined
        ? 'is required'
        : `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
    case 'unrecognized_keys':
      return `unknown setting${issue.keys.length > 1 ? 's' : ''} ${issue.keys
        .map((k) => JSON.stringify(k))
        .join(', ')} (see printer-agent config reference)`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'too_small':
      return `must be at least ${String(issue.minimum)}`;
    case 'too_big':
      return `must be at most ${String(issue.maximum)}`;
    default:
      return undefined;
  }
}
