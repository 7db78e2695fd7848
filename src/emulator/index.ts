/**
 * The loopback printer emulator (issue 4): a virtual Epson-compatible ESC/POS printer as pure
 * logic. Endpoints (in-process stream, TCP, serial pty, device file) and the CLI build on this.
 */
export { BARCODE_SYMBOLOGIES, decodeCode128, SYMBOL_TYPES } from './barcodes.js';
export {
  type CodePage,
  type CodePageTable,
  EPSON_CODE_PAGES,
  INTERNATIONAL_CHARACTER_SETS,
} from './code-pages.js';
export { hex } from './command-syntax.js';
export {
  type DecoderHandlers,
  type DecoderOptions,
  EscPosDecoder,
  type HostQuery,
} from './decoder.js';
export type {
  Alignment,
  DecodeWarning,
  FontName,
  PaperCode,
  PaperEvent,
  PaperImage,
  PaperLine,
  PaperOptions,
  TextRun,
  TextStyle,
  Ticket,
} from './paper.js';
export { paperGeometry, VirtualPaper } from './paper.js';
export { matchRealtime, type RealtimeCommand, RealtimeScanner } from './realtime.js';
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
} from './render.js';
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
} from './status.js';
export {
  FAULTS,
  type FaultName,
  VirtualPrinter,
  type VirtualPrinterEvents,
  type VirtualPrinterOptions,
} from './virtual-printer.js';
