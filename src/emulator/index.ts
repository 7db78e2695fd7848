/**
 * The loopback printer emulator (issue 4), and the room's front door: other rooms and tests import
 * from here, never from a file behind it. It has three layers. `core/` is a virtual
 * Epson-compatible ESC/POS printer as pure logic, bytes in and paper and replies out: the
 * streaming decoder with one handler table per command family (`core/commands/`), the virtual
 * paper, status replies, faults and the rendering of tickets to text and JSON. `link/` is how a
 * host reaches it: the link with back-pressure, slow link and disconnect, the endpoints
 * (in-process stream, TCP, serial pty, device file) and slow printing. `control/` is what the CLI
 * assembles around it: run-time control over HTTP and stdin, and the ticket files.
 */

export {
  attachLineProtocol,
  type ControlResult,
  describeStatus,
  EmulatorControl,
  type EmulatorParts,
  type EmulatorStatus,
  HELP,
  type LinkChange,
  type TicketListItem,
} from './control/control.js';
export {
  type ControlServer,
  type ControlServerOptions,
  startControlServer,
} from './control/control-server.js';
export {
  type TicketFiles,
  TicketWriter,
  type TicketWriterOptions,
  type WrittenTicket,
} from './control/ticket-writer.js';
export { BARCODE_SYMBOLOGIES, decodeCode128, SYMBOL_TYPES } from './core/barcodes.js';
export {
  type CodePage,
  type CodePageTable,
  EPSON_CODE_PAGES,
  INTERNATIONAL_CHARACTER_SETS,
} from './core/code-pages.js';
export { hex } from './core/command-syntax.js';
export { type DecoderHandlers, type DecoderOptions, EscPosDecoder } from './core/decoder.js';
export type { HostQuery } from './core/host-query.js';
export type {
  Alignment,
  DecodeWarning,
  FontName,
  PaperCode,
  PaperEvent,
  PaperImage,
  PaperLine,
  PaperOptions,
  PaperUserDefined,
  TextRun,
  TextStyle,
  Ticket,
} from './core/paper.js';
export { paperGeometry, userDefinedChar, VirtualPaper } from './core/paper.js';
export { matchRealtime, type RealtimeCommand, RealtimeScanner } from './core/realtime.js';
export {
  bitmapRows,
  renderJson,
  renderLine,
  renderStyledLine,
  renderStyledText,
  renderText,
  type TicketJson,
  type TicketJsonOptions,
  ticketSummary,
  ticketToJson,
} from './core/render.js';
export {
  asbChanged,
  asbStatus,
  BUFFER_CLEARED_REPLY,
  DEFAULT_IDENTITY,
  drawerStatus,
  isOffline,
  isRealtimeStatusByte,
  NORMAL_STATE,
  type PrinterIdentity,
  type PrinterState,
  paperSensorStatus,
  printerIdReply,
  processIdReply,
  realtimeStatus,
  respondToQuery,
  respondToRealtime,
} from './core/status.js';
export {
  FAULT_FIELDS,
  FAULTS,
  type FaultName,
  VirtualPrinter,
  type VirtualPrinterEvents,
  type VirtualPrinterOptions,
} from './core/virtual-printer.js';
export { duplexPair } from './link/duplex-pair.js';
export {
  createInProcessLink,
  type Endpoint,
  type EndpointKind,
  type InProcessLink,
  type LinkTarget,
  listenTcp,
  openDeviceEndpoint,
  openSerialEndpoint,
  PtyEndpoint,
  type PtyEndpointOptions,
  type TcpEndpoint,
  type TcpOptions,
} from './link/endpoints.js';
export {
  type LinkCloseReason,
  type LinkOptions,
  LinkSlot,
  PrinterLink,
} from './link/link.js';
export { DOTS_PER_MM, PrintSpeedLimiter } from './link/print-speed.js';
export { hasSocat, type PtyPair, SocatMissingError, startPtyPair } from './link/pty-pair.js';
export { bytesToSvg, type PreviewOptions, ticketsSvg } from './preview/svg.js';

/** The preview as PNG; resvg (a native module) is loaded on the first call only. */
export async function svgToPng(svg: string, scale = 1): Promise<Buffer> {
  const png = await import('./preview/png.js');
  return png.svgToPng(svg, scale);
}
