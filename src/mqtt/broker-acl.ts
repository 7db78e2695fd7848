/**
 * The broker's access rules for per-store credentials (issue 19): each store's user reads only its
 * own `print` and `command` topics and writes only its own `job` and `status` topics; the order
 * service's user writes every store's `print` and `command` and reads every store's `job` and
 * `status`. Written for Mosquitto's `acl_file` and for EMQX's `acl.conf`.
 *
 * The broker user of a store is its storeId (print-protocol §1), so one set of rules serves every
 * store through the brokers' user-name placeholders (`%u`, `${username}`): adding a store adds a
 * password, never a rule. Topics come from `topics()` of the protocol, with the placeholder or `+`
 * in the store's level. Pure: no I/O.
 */
import { topics } from '../protocol/print-protocol.js';

type TopicName = keyof ReturnType<typeof topics>;

/**
 * print-protocol §2: who publishes on each topic. Typed by `topics()`: a topic added there does
 * not compile here until its direction is written down, so no rule silently misses it.
 */
export const TOPIC_DIRECTION: Readonly<Record<TopicName, 'to-store' | 'from-store'>> = {
  print: 'to-store',
  command: 'to-store',
  job: 'from-store',
  status: 'from-store',
};

/** What a store's user may do, for one store level (a storeId, a placeholder or `+`). */
export function storeGrants(
  prefix: string,
  storeLevel: string,
): { reads: string[]; writes: string[] } {
  const t = topics(prefix, storeLevel);
  const names = Object.keys(TOPIC_DIRECTION) as TopicName[];
  return {
    reads: names.filter((name) => TOPIC_DIRECTION[name] === 'to-store').map((name) => t[name]),
    writes: names.filter((name) => TOPIC_DIRECTION[name] === 'from-store').map((name) => t[name]),
  };
}

/**
 * A prefix the rules can carry. Stricter than the config's `mqtt.prefix`: `%` starts a Mosquitto
 * pattern substitution (`%c` would hand the rule to whoever picks that client id), `${` an EMQX
 * placeholder, `$` a broker-reserved first level, and space or `"` would break a rule's line.
 */
export function prefixProblem(prefix: string): string | null {
  return /^[A-Za-z0-9._-]{1,64}(\/[A-Za-z0-9._-]{1,64}){0,7}$/.test(prefix)
    ? null
    : 'must be 1 to 8 topic levels of letters, digits, dot, dash or underscore joined by /';
}

/**
 * The service's user name. It must hold a character no storeId has (print-protocol §1: letters,
 * digits, dash, underscore), so no store can ever be provisioned under the service's name and get
 * its rights; letters, digits, dot, dash, underscore and @ suit both brokers' files.
 */
export function serviceUserProblem(name: string): string | null {
  if (!/^[A-Za-z0-9._@-]{1,64}$/.test(name))
    return 'must be 1 to 64 letters, digits, dot, dash, underscore or @';
  if (!/[.@]/.test(name))
    return 'must contain a dot or an @ (e.g. order-service.hq), which no store id has, so a store can never be given the service name';
  return null;
}

/** Mosquitto `acl_file` lines every store shares: `%u` is the connected user, the storeId. */
export function mosquittoStoreRules(prefix: string): string[] {
  const { reads, writes } = storeGrants(prefix, '%u');
  return [...reads.map((t) => `pattern read ${t}`), ...writes.map((t) => `pattern write ${t}`)];
}

/** Mosquitto `acl_file` lines of the service's user: every store's level as `+`. */
export function mosquittoServiceRules(prefix: string, serviceUser: string): string[] {
  const { reads, writes } = storeGrants(prefix, '+');
  return [
    `user ${serviceUser}`,
    ...reads.map((t) => `topic write ${t}`),
    ...writes.map((t) => `topic read ${t}`),
  ];
}

/**
 * The whole Mosquitto `acl_file`. Pattern lines apply to every user whatever `user` line precedes
 * them, so they come first; anything not granted is denied (Mosquitto's default with an acl_file).
 * Mosquitto checks `read` when it delivers, not at SUBSCRIBE: a store may subscribe to another
 * store's topic and is granted, but never receives a message on it.
 */
export function mosquittoAclFile(prefix: string, serviceUser: string): string {
  return [
    '# printer-agent (print-protocol §2). Each store: broker user = its storeId.',
    '# A store reads its own print and command topics and writes its own job and status topics.',
    ...mosquittoStoreRules(prefix),
    '',
    "# The order service writes every store's print and command topics, reads job and status.",
    ...mosquittoServiceRules(prefix, serviceUser),
    '',
  ].join('\n');
}

/** EMQX's topic placeholder for the connected user name, written as EMQX reads it. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: EMQX's placeholder, not a JavaScript one
const EMQX_USERNAME = '${username}';

const quoted = (list: string[]) => `[${list.map((t) => `"${t}"`).join(', ')}]`;

/** EMQX `acl.conf` rules for the stores: `${username}` is the connected user, the storeId. */
export function emqxStoreRules(prefix: string): string[] {
  const { reads, writes } = storeGrants(prefix, EMQX_USERNAME);
  return [
    `{allow, all, subscribe, ${quoted(reads)}}.`,
    `{allow, all, publish, ${quoted(writes)}}.`,
  ];
}

/** EMQX `acl.conf` rules of the service's user. */
export function emqxServiceRules(prefix: string, serviceUser: string): string[] {
  const { reads, writes } = storeGrants(prefix, '+');
  const who = `{username, "${serviceUser}"}`;
  return [
    `{allow, ${who}, publish, ${quoted(reads)}}.`,
    `{allow, ${who}, subscribe, ${quoted(writes)}}.`,
  ];
}

/**
 * The whole EMQX `acl.conf`, ending in `{deny, all}.`: EMQX's shipped file ends in
 * `{allow, all}.`, and `authorization.no_match` must be `deny` too (docs/store-credentials.md).
 */
export function emqxAclFile(prefix: string, serviceUser: string): string {
  return [
    '%% printer-agent (print-protocol §2). Each store: broker user = its storeId.',
    '%% A store subscribes to its own print and command topics and publishes its own job and status.',
    ...emqxStoreRules(prefix),
    '',
    "%% The order service publishes every store's print and command topics, subscribes to job and status.",
    ...emqxServiceRules(prefix, serviceUser),
    '',
    '%% Everything else is refused.',
    '{deny, all}.',
    '',
  ].join('\n');
}
