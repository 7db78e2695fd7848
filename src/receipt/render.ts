/**
 * The receipt room's front door: an order (print instruction or order record) and a printer
 * profile in; the model, the layout (the payment receipt or a kitchen ticket), ESC/POS bytes and
 * the text twin out, with every warning.
 */
import { AgentError, errorMessage } from '../errors.js';
import type { OrderRecord } from '../protocol/order-record.js';
import type { PrintInstruction } from '../protocol/print-protocol.js';
import { charsetFor } from './charset.js';
import { encodeLayout, type RasterImages, rasterLinesInTurns } from './encode.js';
import { receiptFromInstruction } from './from-instruction.js';
import { receiptFromRecord } from './from-record.js';
import { layoutKitchenTicket } from './kitchen-layout.js';
import { type Layout, type LayoutNotice, layoutReceipt, layoutTestPage } from './layout.js';
import type { Receipt, ReceiptMarkings } from './model.js';
import type { ReceiptOptions } from './options.js';
import type { PrinterProfile } from './profile.js';
import type { LineRasterizer } from './raster-text.js';
import { layoutToText } from './text.js';

export type ReceiptSource =
  | { kind: 'instruction'; instruction: PrintInstruction }
  | { kind: 'record'; record: OrderRecord };

/**
 * What to print of the order: the customer's payment receipt, or a kitchen ticket for a printer
 * role (kitchen-layout.ts) listing `items` (indexes into the model's `items`; null: all), with how
 * long ago the order was placed when the job prints late.
 */
export type RenderDocument =
  | { layout: 'receipt' }
  | {
      layout: 'kitchen';
      role: string;
      items?: readonly number[] | null;
      placedMinutesAgo?: number | null;
    };

export interface RenderInput {
  source: ReceiptSource;
  profile: PrinterProfile;
  options: ReceiptOptions;
  markings?: ReceiptMarkings;
  /** Absent: the receipt. */
  document?: RenderDocument;
}

export interface Rendered {
  receipt: Receipt;
  layout: Layout;
  bytes: Uint8Array;
  text: string;
  /** Model and layout warnings together: attach them to the job. */
  warnings: string[];
  /** What the job's events must report (CONTENT_CUT): code and message each. */
  notices: LayoutNotice[];
}

export function toReceipt(source: ReceiptSource): Receipt {
  return source.kind === 'instruction'
    ? receiptFromInstruction(source.instruction)
    : receiptFromRecord(source.record);
}

/** Model, layout and charset of a receipt or ticket: everything but the bytes. */
function prepare(input: RenderInput) {
  const receipt = toReceipt(input.source);
  const rasterizer = input.options.rasterizer ?? null;
  const charset = charsetFor(input.profile, { raster: rasterizer });
  const doc = input.document ?? { layout: 'receipt' };
  const layout =
    doc.layout === 'kitchen'
      ? layoutKitchenTicket({
          receipt,
          profile: input.profile,
          charset,
          role: doc.role,
          items: doc.items,
          placedMinutesAgo: doc.placedMinutesAgo,
          markings: input.markings,
        })
      : layoutReceipt({
          receipt,
          profile: input.profile,
          charset,
          options: input.options,
          markings: input.markings,
        });
  return { receipt, layout, charset, rasterizer };
}

function finish(
  input: RenderInput,
  { receipt, layout, charset }: ReturnType<typeof prepare>,
  raster: LineRasterizer | RasterImages | null,
): Rendered {
  return {
    receipt,
    layout,
    bytes: encodeLayout(layout, input.profile, charset, raster),
    text: layoutToText(layout),
    warnings: [...receipt.warnings, ...layout.warnings],
    notices: layout.notices,
  };
}

/** What a render throws: AgentErrors as they are, anything else as RENDER_FAILED. */
function renderFailure(cause: unknown): AgentError {
  if (cause instanceof AgentError) return cause;
  return new AgentError('RENDER_FAILED', `cannot render the receipt: ${errorMessage(cause)}`, {
    cause,
  });
}

/** Renders at once; raster lines, if any, in one render (previews, the CLI, tests). */
export function renderReceipt(input: RenderInput): Rendered {
  try {
    const prepared = prepare(input);
    return finish(input, prepared, prepared.rasterizer);
  } catch (cause) {
    throw renderFailure(cause);
  }
}

/**
 * The same bytes, with raster lines drawn one per turn of the event loop (encode.ts
 * `rasterLinesInTurns`): what the agent prints with.
 */
export async function renderReceiptInTurns(input: RenderInput): Promise<Rendered> {
  try {
    const prepared = prepare(input);
    const images =
      prepared.rasterizer === null
        ? null
        : await rasterLinesInTurns(
            prepared.layout,
            input.profile,
            prepared.charset,
            prepared.rasterizer,
          );
    return finish(input, prepared, images);
  } catch (cause) {
    throw renderFailure(cause);
  }
}

/** The `test-print` page for a printer profile (print-protocol §5). */
export function renderTestPage(
  profile: PrinterProfile,
  options: ReceiptOptions,
  agentVersion: string,
): Omit<Rendered, 'receipt'> {
  const rasterizer = options.rasterizer ?? null;
  const charset = charsetFor(profile, { raster: rasterizer });
  const layout = layoutTestPage({ profile, charset, options, agentVersion });
  return {
    layout,
    bytes: encodeLayout(layout, profile, charset, rasterizer),
    text: layoutToText(layout),
    warnings: layout.warnings,
    notices: layout.notices,
  };
}
