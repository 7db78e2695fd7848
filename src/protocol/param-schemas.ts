import { createParamsSchema } from './create-params.js';
import { commandSchema, inboundInstructionSchema } from './print-protocol.js';
import { queryParamsSchema } from './query.js';

/**
 * The schema of `param` for each kind of envelope, by the name integrators use on the CLI. `print`
 * is what travels on `/print` (print-protocol v1.1 §4: `storeId` required), as the inbox opens it.
 */
export const PARAM_SCHEMAS = {
  create: createParamsSchema,
  query: queryParamsSchema,
  print: inboundInstructionSchema,
  command: commandSchema,
} as const;
export type ParamKind = keyof typeof PARAM_SCHEMAS;
export const PARAM_KINDS = Object.keys(PARAM_SCHEMAS) as ParamKind[];
