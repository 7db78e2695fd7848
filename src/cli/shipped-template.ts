/**
 * The package's config template (`config/config.example.json`, installed as
 * `/etc/printer-agent/config.json`, issue 43 item 5): recognised so that `doctor` says the config
 * is still the template instead of probing its placeholder hosts, and `setup` replaces it without
 * `--force` (decision 247).
 *
 * The sure sign is a host no store can use: the second-level domains example.com, example.net and
 * example.org and the top-level `.example` and `.invalid` are reserved for documentation (RFC 2606,
 * RFC 6761), and the template's broker and order service live under example.com. The template's
 * other sample values (app id `A1`, printer 192.168.1.50...) could be a real store's, so they are
 * named as still to fill only while the config is the template. test/doctor/doctor-template.test.ts
 * holds these samples against the template file, so the two cannot drift apart.
 */
import { getAt } from '../config/load.js';
import type { ConfigFile } from '../config/schema.js';

const RESERVED_DOMAINS = ['example.com', 'example.net', 'example.org'];
const RESERVED_TLDS = ['example', 'invalid'];

/** Whether `host` is reserved for documentation, so that no real broker or service has it. */
export function isExampleHost(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (RESERVED_DOMAINS.some((d) => name === d || name.endsWith(`.${d}`))) return true;
  return RESERVED_TLDS.some((tld) => name === tld || name.endsWith(`.${tld}`));
}

/** The host of `url` when it is a documentation host, else undefined (not a URL: undefined). */
export function exampleHostOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const host = new URL(url).hostname;
    return isExampleHost(host) ? host : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The template's store-specific sample values: a config that is the template still holds them,
 * and each is a field to fill. Not proof on their own (a store may well have a printer at
 * 192.168.1.50), so only named once the broker has shown the config to be the template.
 */
export const TEMPLATE_SAMPLES: ReadonlyArray<{ field: string; value: string }> = [
  { field: 'appId', value: 'A1' },
  { field: 'mqtt.username', value: 'store-0001' },
  { field: 'printers[1].url', value: 'tcp://192.168.1.50:9100' },
  { field: 'receipt.header[0]', value: 'Sample Store' },
  { field: 'catchUp.restaurantNo', value: 'R0001' },
  { field: 'catchUp.branchIdentifier', value: 'B-MAKATI-01' },
];

/** `printers[1].url` -> ['printers', '1', 'url']. */
function pathOf(field: string): string[] {
  return field.replace(/\[(\d+)\]/g, '.$1').split('.');
}

export interface Placeholder {
  field: string;
  /** Why it counts as a placeholder, for the line that names it. */
  why: string;
}

export interface TemplateCheck {
  /** The broker is a documentation host: the config is (still) the package's template. */
  isTemplate: boolean;
  /** Every field holding a placeholder: documentation hosts always, samples when the template. */
  placeholders: Placeholder[];
}

/** What of `file` is still the template's. */
export function templateCheck(file: ConfigFile): TemplateCheck {
  const placeholders: Placeholder[] = [];
  const host = (field: string, url: string | undefined) => {
    const example = exampleHostOf(url);
    if (example !== undefined) placeholders.push({ field, why: `${example}, a placeholder` });
  };
  host('mqtt.url', file.mqtt.url);
  const isTemplate = placeholders.length > 0;
  // Off, catch-up never contacts its URL: nothing to fill there.
  if (file.catchUp.enabled) host('catchUp.baseUrl', file.catchUp.baseUrl);
  for (const [i, p] of file.printers.entries()) host(`printers[${i}].url`, p.url);
  if (isTemplate)
    for (const sample of TEMPLATE_SAMPLES) {
      if (placeholders.some((p) => p.field === sample.field)) continue;
      if (getAt(file, pathOf(sample.field)) === sample.value)
        placeholders.push({ field: sample.field, why: `${sample.value}, the template's sample` });
    }
  return { isTemplate, placeholders };
}
