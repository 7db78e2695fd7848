/**
 * Documentation generated from the schema, so it cannot drift from what the agent accepts:
 * the JSON schema for editors (`config schema`, config/config.schema.json) and the reference
 * table (`config reference`, docs/config-reference.md). `npm run config:docs` rewrites both, and
 * a test fails when the committed files differ from the output.
 */
import { z } from 'zod';
import { CONFIG_PATH_ENV, DEFAULT_CONFIG_PATH, ENV_OVERRIDES } from './env.js';
import { agentConfigSchema } from './schema.js';

/** The config file's JSON schema (draft 2020-12), as accepted on input: defaults are optional. */
export function configJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(agentConfigSchema, {
    io: 'input',
    // Refinements (URL rules, cross-field rules) cannot be expressed; zod still enforces them.
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return { ...schema, title: 'printer-agent configuration' };
}

interface Node {
  type?: string | string[];
  properties?: Record<string, Node>;
  required?: string[];
  items?: Node;
  default?: unknown;
  description?: string;
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  anyOf?: Node[];
}

interface Row {
  key: string;
  type: string;
  default: string;
  description: string;
}

function range(min: number | undefined, max: number | undefined, unit = ''): string {
  if (min !== undefined && max !== undefined) return `, ${min} to ${max}${unit}`;
  if (max !== undefined) return `, at most ${max}${unit}`;
  if (min === 1 && unit === ' chars') return ', not empty';
  if (min !== undefined && min > 0) return `, at least ${min}${unit}`;
  return '';
}

function typeOf(node: Node): string {
  if (node.enum) return `one of ${node.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  // A literal (`version`, each half of `drawer.pin`): its value says more than its type.
  if (node.const !== undefined) return JSON.stringify(node.const);
  // nullable() comes out as anyOf [T, null].
  if (node.anyOf) return node.anyOf.map(typeOf).join(' or ');
  const types = Array.isArray(node.type) ? node.type : node.type ? [node.type] : ['any'];
  return (
    types
      .map((t) => (t === 'array' ? `list of ${node.items ? typeOf(node.items) : 'any'}` : t))
      .join(' or ') +
    range(node.minimum, node.maximum) +
    range(node.minLength, node.maxLength, ' chars') +
    range(node.minItems, node.maxItems, ' items')
  );
}

function collect(node: Node, prefix: string, out: Row[]): void {
  const required = new Set(node.required ?? []);
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const key = prefix ? `${prefix}.${name}` : name;
    out.push({
      key,
      type: typeOf(child),
      default:
        child.default !== undefined
          ? `\`${JSON.stringify(child.default)}\``
          : required.has(name)
            ? '**required**'
            : '',
      description: child.description ?? '',
    });
    if (child.properties) collect(child, key, out);
    if (child.items?.properties) collect(child.items, `${key}[]`, out);
  }
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The Markdown reference: every field with its type, default and description, then the env. */
export function configReference(): string {
  const rows: Row[] = [];
  collect(configJsonSchema() as Node, '', rows);
  const lines = [
    '# Configuration reference',
    '',
    '<!-- Generated from src/config/schema.ts by `npm run config:docs`; do not edit by hand. -->',
    '',
    `One JSON file: \`--config FILE\`, else \`$${CONFIG_PATH_ENV}\`, else \`${DEFAULT_CONFIG_PATH}\`.`,
    'Start from the template (`/usr/share/printer-agent/config.example.json`); check it with `printer-agent config check`, print',
    'the effective configuration (secrets shown as `***`) with `printer-agent config show`, change',
    'one value with `printer-agent config set KEY VALUE` or remove it with `printer-agent config',
    'unset KEY` (validated whole, then written keeping the owner, group and mode), and give editors',
    'the JSON schema from `printer-agent config schema` (installed as `/usr/share/doc/printer-agent/config.schema.json`).',
    '',
    '`version` is the layout of the file; a file without it is version 1 (printer-agent 0.1.0).',
    'An older file is migrated: `printer-agent config migrate` rewrites it (the original kept as',
    '`config.json.v1.bak`), as `run` does at start when it can write the file. A newer version is',
    'refused (CONFIG_TOO_NEW, exit 78).',
    '',
    'Secrets (`storeKey`, `mqtt.password`) may be written inline, but the `...File` forms keep them',
    'out of the config: the agent reads the first line of the file, trimmed, and warns when group',
    'or others can read a secret file. Relative file paths resolve against the config file folder.',
    'Unknown keys are errors, so a misspelt key is reported rather than ignored.',
    '',
    '| key | type | default | description |',
    '| --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| \`${cell(r.key)}\` | ${cell(r.type)} | ${cell(r.default)} | ${cell(r.description)} |`,
    ),
    '',
    '## Environment overrides',
    '',
    'For deployment: set by the systemd unit or a drop-in, they win over the file. An empty value',
    'counts as unset; relative paths resolve against the working directory.',
    '',
    '| variable | sets | meaning |',
    '| --- | --- | --- |',
    ...ENV_OVERRIDES.map((o) => `| \`${o.name}\` | \`${o.path}\` | ${cell(o.description)} |`),
    `| \`${CONFIG_PATH_ENV}\` | (the file itself) | Config file path when \`--config\` is not given. |`,
    '',
  ];
  return lines.join('\n');
}
