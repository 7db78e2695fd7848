/**
 * Routing at the store (issue 18, print-protocol v1.1 §4): which printer roles get a ticket for an
 * order, in which layout, with which of its items. One instruction from the service, or one order
 * pulled by catch-up, becomes one job per route; each is stored, deduped per (orderNo, role),
 * printed, confirmed and reported on its own. An instruction that names a role prints only there.
 *
 * Decisions (docs/decisions.md 175-177):
 * - An order record (catch-up) of a service that sends no order type: an `orderTypes` condition
 *   counts as met, because a kitchen that misses the ticket of a paid order is worse than one
 *   ticket too many. Where the order's instruction is stored, or the record carries `orderType`
 *   (our extension, the reference service sends it), catch-up routes by that type, exactly as
 *   MQTT did (issue 40, decision 227).
 * - Create parameters carry no SKU: `skus` patterns match only items that have one (records).
 * - An order no rule takes still prints its payment receipt on the `receipt` role: nothing a
 *   customer paid for goes unprinted because of a routing table.
 */
import type { OrderRecord } from '../protocol/order-record.js';
import { DEFAULT_PRINTER_ROLE, type PrintInstruction } from '../protocol/print-protocol.js';

export const LAYOUTS = ['receipt', 'kitchen'] as const;
export type Layout = (typeof LAYOUTS)[number];

export const ORDER_TYPE_NAMES = ['table', 'queue', 'takeout'] as const;
export type OrderTypeName = (typeof ORDER_TYPE_NAMES)[number];

/**
 * How an order was paid, by order-api 2.9 `paymentWay` (1 online, 2 offline: cash at the counter):
 * the vocabulary of the cash drawer setting (`drawer.openOn`, render-job.ts).
 */
export const PAYMENT_KINDS = ['offline', 'online'] as const;
export type PaymentKind = (typeof PAYMENT_KINDS)[number];

/** order-api 2.9 `orderType`: 1 table code order, 2 queue order, 3 takeout order. */
const ORDER_TYPE_BY_CODE: Record<number, OrderTypeName> = { 1: 'table', 2: 'queue', 3: 'takeout' };

export interface RoutingRule {
  role: string;
  layout: Layout;
  /** Only orders of these types; null: every order. */
  orderTypes: readonly OrderTypeName[] | null;
  /** Product name patterns (`*` any run of characters, case-insensitive); null: no name filter. */
  items: readonly string[] | null;
  /** SKU code patterns, same syntax; null: no SKU filter. */
  skus: readonly string[] | null;
}

/** One job an order becomes. */
export interface Route {
  role: string;
  layout: Layout;
  /** Indexes of the order's items this ticket lists; null: all of them. */
  items: readonly number[] | null;
}

/** What routing reads of an order, from an instruction's create parameters or an order record. */
export interface RoutableOrder {
  /** order-api `orderType`; null when the source has none (order records). */
  orderType: number | null;
  items: ReadonlyArray<{ name: string | null; sku: string | null }>;
}

/** An instruction's create parameters: an order type, product names, no SKU (order-api 2.9). */
export function routableInstruction(instruction: Pick<PrintInstruction, 'order'>): RoutableOrder {
  return {
    orderType: instruction.order.orderType,
    items: instruction.order.productInfo.map((p) => ({ name: p.productName, sku: null })),
  };
}

/**
 * An order record (order-api 2.5): dish names and SKU codes (2.6); the order type only where the
 * service sends it (our extension, decision 227), else unknown.
 */
export function routableRecord(record: OrderRecord): RoutableOrder {
  return {
    orderType: record.orderType ?? null,
    items: record.skuList.map((s) => ({
      name: s.productName ?? s.skuName ?? null,
      sku: s.skuNo ?? null,
    })),
  };
}

/** Today's behaviour, and the default: a payment receipt on the receipt role, nothing else. */
export const DEFAULT_ROUTING: readonly RoutingRule[] = [
  { role: DEFAULT_PRINTER_ROLE, layout: 'receipt', orderTypes: null, items: null, skus: null },
];

/** The layout a role prints in when no rule says: receipts on `receipt`, tickets elsewhere. */
export function defaultLayout(role: string): Layout {
  return role === DEFAULT_PRINTER_ROLE ? 'receipt' : 'kitchen';
}

/** The routes of an order under `rules`, in rule order; never empty (see the decisions above). */
export function routeOrder(order: RoutableOrder, rules: readonly RoutingRule[]): Route[] {
  const routes: Route[] = [];
  const type = order.orderType === null ? null : (ORDER_TYPE_BY_CODE[order.orderType] ?? null);
  for (const rule of rules) {
    if (rule.orderTypes !== null && type !== null && !rule.orderTypes.includes(type)) continue;
    if (rule.items === null && rule.skus === null) {
      routes.push({ role: rule.role, layout: rule.layout, items: null });
      continue;
    }
    const names = (rule.items ?? []).map(pattern);
    const skus = (rule.skus ?? []).map(pattern);
    const matched: number[] = [];
    order.items.forEach((item, index) => {
      const byName = item.name !== null && names.some((p) => p.test(item.name!));
      const bySku = item.sku !== null && skus.some((p) => p.test(item.sku!));
      if (byName || bySku) matched.push(index);
    });
    if (matched.length > 0) routes.push({ role: rule.role, layout: rule.layout, items: matched });
  }
  if (routes.length === 0)
    routes.push({ role: DEFAULT_PRINTER_ROLE, layout: 'receipt', items: null });
  return routes;
}

/** An instruction that names its role: one job there, the whole order, in the role's layout. */
export function namedRoute(role: string, rules: readonly RoutingRule[]): Route {
  const rule = rules.find((r) => r.role === role);
  return { role, layout: rule?.layout ?? defaultLayout(role), items: null };
}

/**
 * The job id of one route's job. The receipt role's job, and the one job of an instruction that
 * names its role, keep the instruction's jobId (what integrations saw before routing existed);
 * every other role's is `<jobId>#<role>`, a pure function of the two, so a redelivered
 * instruction meets its own jobs again whatever the routing table became meanwhile. A role name
 * has no `#`: the service finds the instruction's jobId before the last one.
 */
export function routedJobId(jobId: string, role: string, named: boolean): string {
  return named || role === DEFAULT_PRINTER_ROLE ? jobId : `${jobId}#${role}`;
}

/** `*` stands for any run of characters; everything else is literal; case is ignored. */
function pattern(glob: string): RegExp {
  const literal = glob.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${literal.join('.*')}$`, 'is');
}
