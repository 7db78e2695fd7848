/**
 * The AsyncAPI 3.0 document of the print protocol (print-protocol.md v1.1) from the agent's side:
 * it receives signed print instructions and commands, and sends job events and its retained
 * status (with the last will). Topics are the ones `topics()` builds; schemas come from the zod
 * schemas the agent validates with (contract-documents.ts), in AsyncAPI's default schema format
 * (a superset of JSON Schema draft-07).
 */
import type { z } from 'zod';
import {
  CONTRACT_VERSION,
  createParamsDocument,
  envelopeDocument,
  type JsonSchema,
  type SchemaOptions,
  toJsonSchema,
} from './contract-documents.js';
import { createParamsSchema } from './create-params.js';
import { ANTI_REPLAY_DEFAULT_DAYS, DEFAULT_MAX_MESSAGE_BYTES, MAX_JSON_DEPTH } from './limits.js';
import {
  COMMAND_TYPES,
  commandSchema,
  DEFAULT_TOPIC_PREFIX,
  inboundInstructionSchema,
  jobEventSchema,
  statusSchema,
  topics,
} from './print-protocol.js';

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const MQTT_BINDING = '0.2.0';

function schemas(): Record<string, JsonSchema> {
  const refs = new Map<z.core.$ZodType, string>([
    [createParamsSchema, '#/components/schemas/CreateParams'],
  ]);
  const o: SchemaOptions = { dialect: 'draft-07', refs };
  const [online, offline] = statusSchema.options;
  return {
    CreateParams: createParamsDocument(
      createParamsSchema,
      o,
      "The create parameters (order-api 2.9) exactly as the merchant sent them to the service, with the service's rules (order-api 4.2, §8).",
    ),
    PrintInstruction: {
      ...toJsonSchema(inboundInstructionSchema, o),
      description:
        "A print instruction (print-protocol §4). storeId must be the receiving store's own " +
        '(else rejected, IDENTITY_MISMATCH). A receipt is printed once per orderNo and printer ' +
        "role whichever way it arrives (a repeat is answered `duplicate`); without printer the store's " +
        `routing decides. An instruction whose createTime (service time) is older than the anti-replay ` +
        `age (default ${ANTI_REPLAY_DEFAULT_DAYS} days) is reported failed, STALE_ORDER, not printed.`,
    },
    Command: {
      ...toJsonSchema(commandSchema, o),
      description: `A command (print-protocol §5): ${COMMAND_TYPES.join(', ')}. Deduplicated by commandId and answered with a job event; unknown types are rejected.`,
    },
    PrintEnvelope: envelopeDocument(
      schemaRef('PrintInstruction'),
      o,
      "The signed envelope of a print instruction (print-protocol §3): the same appId and storeKey as the merchant's create, param signed with the service private key.",
    ),
    CommandEnvelope: envelopeDocument(
      schemaRef('Command'),
      o,
      'The signed envelope of a command (print-protocol §3, §5), signed with the service private key.',
    ),
    JobEvent: {
      ...toJsonSchema(jobEventSchema, o),
      description:
        'A job event (print-protocol §6). Delivery is at least once: count distinct eventIds. ' +
        'jobId is null for a rejected message whose param could not be read; commandId is set ' +
        'for the answer to a command. reason.code is one of the error codes of printer-agent ' +
        '(error-codes.md, installed as /usr/share/doc/printer-agent/error-codes.md; new codes may ' +
        'appear).',
    },
    AgentStatus: {
      ...toJsonSchema(online, o),
      description:
        "The agent's status (print-protocol §7), retained: published on every change, on " +
        '(re)connect and periodically.',
    },
    AgentOffline: {
      ...toJsonSchema(offline, o),
      description:
        'The agent is offline (print-protocol §7), retained: the last will set at connect, ' +
        'published by the broker when the agent vanishes (at null), or sent by the agent when it ' +
        'stops (at its time).',
    },
  };
}

function message(name: string, title: string, payload: string, summary: string): JsonSchema {
  return {
    name,
    title,
    summary,
    contentType: 'application/json',
    payload: schemaRef(payload),
  };
}

const messageRef = (name: string) => ({ $ref: `#/components/messages/${name}` });
const channelRef = (name: string) => ({ $ref: `#/channels/${name}` });
const channelMessageRef = (channel: string, name: string) => ({
  $ref: `#/channels/${channel}/messages/${name}`,
});

function mqtt(retain: boolean): JsonSchema {
  return { mqtt: { qos: 1, retain, bindingVersion: MQTT_BINDING } };
}

/** The AsyncAPI 3.0 document of the print protocol. */
export function printProtocolDocument(): JsonSchema {
  // The addresses as the code builds them, with the storeId level as a channel parameter.
  const address = topics(DEFAULT_TOPIC_PREFIX, '{storeId}');
  const parameters = {
    storeId: {
      description:
        "The store's id on the broker (print-protocol §1): by default the first 16 hex digits " +
        'of sha256(appId + ":" + storeKey); a config value may override it (1 to 64 letters, ' +
        'digits, dash or underscore). Never the storeKey.',
    },
  };
  const channel = (
    key: keyof typeof address,
    title: string,
    description: string,
    messages: Record<string, JsonSchema>,
  ) => ({ address: address[key], title, description, parameters, messages });
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'printer-agent print protocol',
      version: CONTRACT_VERSION,
      description: [
        'How print instructions reach a store and what the store reports back ' +
          '(print-protocol.md v1.1), from the side of the printer agent. Bodies are UTF-8 JSON ' +
          `over MQTT (3.1.1 or 5), QoS 1. Topics are under a configurable prefix, by default ` +
          `\`${DEFAULT_TOPIC_PREFIX}\`; one store is one \`{prefix}/{storeId}/\` subtree, so a ` +
          'broker ACL can give each store exactly its own.',
        'Instructions and commands are signed envelopes: `param` is a JSON object serialized ' +
          'into a string, its content described by `contentMediaType` and `contentSchema` (JSON ' +
          'Schema 2019-09 keywords; a draft-07 validator ignores them and does not look inside ' +
          'the string, so check the parsed `param` against `contentSchema` yourself). The agent ' +
          'verifies the signature over the exact string before parsing it, checks appId and ' +
          'storeKey against its own, refuses bodies over its size limit (default ' +
          `${DEFAULT_MAX_MESSAGE_BYTES} bytes) and JSON nested deeper than ${MAX_JSON_DEPTH} ` +
          'levels, and reports every refusal as a job event with state `rejected`; nothing ' +
          'refused is printed.',
        'Receivers ignore fields they do not know; new optional fields may appear within this ' +
          'version.',
      ].join('\n\n'),
    },
    defaultContentType: 'application/json',
    channels: {
      print: channel(
        'print',
        'Print instructions',
        'Service to agent, QoS 1, never retained: a retained instruction would print again after every reconnect.',
        { printInstruction: messageRef('printInstruction') },
      ),
      command: channel('command', 'Commands', 'Service to agent, QoS 1, never retained.', {
        command: messageRef('command'),
      }),
      job: channel('job', 'Job events', 'Agent to service, QoS 1, not retained.', {
        jobEvent: messageRef('jobEvent'),
      }),
      status: channel(
        'status',
        'Agent status',
        'Agent to service, QoS 1, retained: the latest status, or the offline message (also the last will).',
        {
          agentStatus: messageRef('agentStatus'),
          agentOffline: messageRef('agentOffline'),
        },
      ),
    },
    operations: {
      receivePrintInstruction: {
        action: 'receive',
        channel: channelRef('print'),
        summary: 'Print the payment receipt of an order.',
        messages: [channelMessageRef('print', 'printInstruction')],
        bindings: mqtt(false),
        reply: { channel: channelRef('job'), messages: [channelMessageRef('job', 'jobEvent')] },
      },
      receiveCommand: {
        action: 'receive',
        channel: channelRef('command'),
        summary: 'Reprint a stored receipt, print a test page, or publish the status now.',
        messages: [channelMessageRef('command', 'command')],
        bindings: mqtt(false),
        reply: { channel: channelRef('job'), messages: [channelMessageRef('job', 'jobEvent')] },
      },
      sendJobEvent: {
        action: 'send',
        channel: channelRef('job'),
        summary: 'Report each step of a job, or the refusal of a message.',
        messages: [channelMessageRef('job', 'jobEvent')],
        bindings: mqtt(false),
      },
      sendStatus: {
        action: 'send',
        channel: channelRef('status'),
        summary: 'Publish the retained status; the broker publishes the last will.',
        messages: [
          channelMessageRef('status', 'agentStatus'),
          channelMessageRef('status', 'agentOffline'),
        ],
        bindings: mqtt(true),
      },
    },
    components: {
      schemas: schemas(),
      messages: {
        printInstruction: message(
          'printInstruction',
          'Print instruction',
          'PrintEnvelope',
          'A signed print instruction (print-protocol §3, §4).',
        ),
        command: message(
          'command',
          'Command',
          'CommandEnvelope',
          'A signed command (print-protocol §3, §5).',
        ),
        jobEvent: message('jobEvent', 'Job event', 'JobEvent', 'A job event (print-protocol §6).'),
        agentStatus: message(
          'agentStatus',
          'Agent status',
          'AgentStatus',
          'The online status (print-protocol §7).',
        ),
        agentOffline: message(
          'agentOffline',
          'Agent offline (last will)',
          'AgentOffline',
          'The offline status and last will (print-protocol §7).',
        ),
      },
    },
  };
}
