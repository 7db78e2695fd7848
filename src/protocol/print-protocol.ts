/**
 * Our MQTT contract (print-protocol.md, version v1 amended as v1.1): topics, the print
 * instruction, commands, job events and status. The instruction's `order` is validated with the
 * create-parameter schema.
 */
import { z } from 'zod';
import { createParamsSchema, createParamsTwin, storedCreateParamsSchema } from './create-params.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from './limits.js';
import { timestamp } from './time.js';
import { identifier, int, text, typeError, withCompiledTwin } from './validation.js';

export const PROTOCOL_VERSION = 'v1';
export const DEFAULT_TOPIC_PREFIX = 'printer-agent/v1';
export { DEFAULT_MAX_MESSAGE_BYTES };
export const DEFAULT_PRINTER_ROLE = 'receipt';

/** print-protocol §2. The storeKey never appears in a topic: only the derived storeId does. */
export function topics(prefix: string, storeId: string) {
  const base = `${prefix}/${storeId}`;
  return {
    print: `${base}/print`,
    command: `${base}/command`,
    job: `${base}/job`,
    status: `${base}/status`,
  } as const;
}

/** jobId, orderNo, commandId: no look-alike of another (print-protocol v1.2 §10). */
const id = () => identifier(1, 64);
const printerRole = () =>
  z
    .string({ error: 'must be a string' })
    .regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 letters, digits, dot, dash or underscore');

/** print-protocol §1: a store's id on the broker (a topic level). */
export const storeIdSchema = z
  .string({ error: typeError('a string') })
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, dash or underscore');

const instructionShape = {
  storeId: storeIdSchema.optional(),
  jobId: id(),
  orderNo: id(),
  pickUpNo: text(1, 50).nullish(),
  takeoutNo: text(1, 50).nullish(),
  createTime: timestamp,
  order: createParamsSchema,
  printer: printerRole().default(DEFAULT_PRINTER_ROLE),
  copies: int(1, 5).default(1),
};
/** The same with the create parameters' twin, for the compiled fast paths (`withCompiledTwin`). */
const instructionTwinShape = { ...instructionShape, order: createParamsTwin };

/**
 * print-protocol §4, as stored and rendered: `storeId` is optional here, because jobs stored by an
 * agent before v1.1 and instruction files given to `render` do not carry it. What arrives over
 * MQTT is opened with `inboundInstructionSchema`, which requires it.
 */
export const printInstructionSchema = withCompiledTwin(
  z.object(instructionShape),
  z.object(instructionTwinShape),
);

/**
 * An instruction this agent already stored, read back to print it: v1.2 §10's look-alike rule
 * (ids, `paymentTransactionId`) is a rule for what arrives, and a paid order acknowledged before
 * the upgrade that brought it must still print (decision 238).
 */
const storedShape = {
  ...instructionShape,
  jobId: text(1, 64),
  orderNo: text(1, 64),
  order: storedCreateParamsSchema,
};
export const storedInstructionSchema = withCompiledTwin(
  z.object(storedShape),
  z.object(storedShape),
);
export type PrintInstruction = z.output<typeof printInstructionSchema>;
export type PrintInstructionInput = z.input<typeof printInstructionSchema>;

/**
 * print-protocol v1.1 §4: an instruction received over MQTT names its store inside the signed
 * param, so a genuine instruction for one store cannot be re-wrapped in another store's envelope.
 * The inbox compares it with its own storeId (IDENTITY_MISMATCH when it differs).
 */
export const inboundInstructionSchema = withCompiledTwin(
  z.object({ ...instructionShape, storeId: storeIdSchema, printer: printerRole().optional() }),
  z.object({ ...instructionTwinShape, storeId: storeIdSchema, printer: printerRole().optional() }),
);
/** `printer` stays absent when the service left it out: the store's routing decides (§4). */
export type InboundInstruction = z.output<typeof inboundInstructionSchema>;

export const COMMAND_TYPES = ['reprint', 'test-print', 'status'] as const;
export type CommandType = (typeof COMMAND_TYPES)[number];

/**
 * print-protocol §5. Unknown types are rejected, not ignored. v1.1: `storeId` inside the signed
 * param, checked by the agent like an instruction's.
 */
export const commandSchema = z.discriminatedUnion(
  'type',
  [
    z.object({
      storeId: storeIdSchema,
      commandId: id(),
      type: z.literal('reprint'),
      orderNo: id(),
      printer: printerRole().optional(),
    }),
    z.object({
      storeId: storeIdSchema,
      commandId: id(),
      type: z.literal('test-print'),
      printer: printerRole().optional(),
    }),
    z.object({ storeId: storeIdSchema, commandId: id(), type: z.literal('status') }),
  ],
  { error: `must be one of ${COMMAND_TYPES.join(', ')}` },
);
export type Command = z.output<typeof commandSchema>;

export const JOB_STATES = [
  'queued',
  'waiting',
  'printing',
  'printed',
  'unconfirmed',
  'failed',
  'rejected',
  'duplicate',
] as const;
export type JobState = (typeof JOB_STATES)[number];

const reasonSchema = z.object({
  code: z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'must be an upper snake case code'),
  message: z.string(),
});

/**
 * print-protocol §6. `jobId` is null for a rejected message whose param could not be read;
 * `commandId` is set instead of `orderNo` semantics when the event answers a command.
 */
export const jobEventSchema = z.object({
  /**
   * v1.1: unique per event, identical on every redelivery of it (it is written with the event into
   * the outbox), so consumers count distinct events under QoS 1's at-least-once delivery.
   */
  eventId: z.string().min(1),
  jobId: z.string().nullable(),
  commandId: z.string().nullish(),
  orderNo: z.string().nullable(),
  state: z.enum(JOB_STATES),
  printer: z.string().nullable(),
  attempt: int(0, Number.MAX_SAFE_INTEGER),
  at: z.iso.datetime(),
  reason: reasonSchema.nullable(),
  /** Markings printed on this copy (REPRINT, POSSIBLE DUPLICATE, LATE); empty when none. */
  markings: z.array(z.string()).optional(),
  /**
   * Things the service should know that did not stop the job: e.g. CONTENT_CUT (free text cut at
   * the receipt's maximum length), CLOCK_UNSYNCHRONIZED (the age check was skipped).
   */
  warnings: z.array(reasonSchema).optional(),
});
export type JobEvent = z.output<typeof jobEventSchema>;
/** A job event before the job store gives it its `eventId` (when it writes it to the outbox). */
export type NewJobEvent = Omit<JobEvent, 'eventId'>;

export const PRINTER_STATES = [
  'ready',
  'paper-near-end',
  'paper-out',
  'cover-open',
  'offline',
  'error',
  'disconnected',
  'unknown',
] as const;
export type PrinterState = (typeof PRINTER_STATES)[number];

export const printerStatusSchema = z.object({
  id: z.string(),
  /** The roles this printer serves (issue 18: which paper goes where); absent from older agents. */
  roles: z.array(z.string()).optional(),
  state: z.enum(PRINTER_STATES),
  paper: z.enum(['ok', 'near-end', 'out', 'unknown']),
  coverOpen: z.boolean().nullable(),
  /**
   * The cash drawer's sensor, kick-out connector pin 3 (`DLE EOT 1` bit 2): whether it reads high;
   * null when the printer does not report it; absent from older agents. Which level means open
   * depends on the drawer (many printers read high with no drawer attached).
   */
  drawerPinHigh: z.boolean().nullable().optional(),
  queue: z.object({
    pending: int(0, Number.MAX_SAFE_INTEGER),
    oldestPendingSec: int(0, Number.MAX_SAFE_INTEGER),
  }),
  lastPrintedAt: z.iso.datetime().nullable(),
});

/** print-protocol §7: the retained status, or the last will `{"online":false,...,"at":null}`. */
export const statusSchema = z.discriminatedUnion('online', [
  z.object({
    online: z.literal(true),
    storeId: z.string(),
    agent: z.object({ version: z.string(), startedAt: z.iso.datetime() }),
    printers: z.array(printerStatusSchema),
    /**
     * print-protocol v1.1 §4: jobs for roles no configured printer serves (NO_PRINTER_FOR_ROLE),
     * per role; absent when there are none.
     */
    unrouted: z
      .array(
        z.object({
          role: z.string(),
          pending: int(0, Number.MAX_SAFE_INTEGER),
          oldestPendingSec: int(0, Number.MAX_SAFE_INTEGER),
        }),
      )
      .optional(),
    /** Set while the agent cannot work normally (database full or failing...): code and message. */
    fault: reasonSchema.nullish(),
    /**
     * Problems that do not stop printing (LOGO_UNREADABLE: receipts print without the store's
     * logo), each code and message; absent when there are none.
     */
    warnings: z.array(reasonSchema).optional(),
    at: z.iso.datetime(),
  }),
  z.object({ online: z.literal(false), storeId: z.string(), at: z.iso.datetime().nullable() }),
]);
export type AgentStatus = z.output<typeof statusSchema>;
export type PrinterStatus = z.output<typeof printerStatusSchema>;

/** The retained last will of print-protocol §7. */
export function lastWill(storeId: string): AgentStatus {
  return { online: false, storeId, at: null };
}
