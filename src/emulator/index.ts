/**
 * The loopback printer emulator (issue 4): a virtual Epson-compatible ESC/POS printer as pure
 * logic, and on top of it the links (back-pressure, slow link, slow print, disconnect), the
 * endpoints (in-process stream, TCP, serial pty, device file), the ticket files and the control
 * interface that the CLI assembles.
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
  attachLineProtocol,
  type ControlResult,
  describeStatus,
  EmulatorControl,
  type EmulatorParts,
  type EmulatorStatus,
  type LinkChange,
  type TicketListItem,
} from './control.js';
export {
  type ControlServer,
  type ControlServerOptions,
  startControlServer,
} from './control-server.js';
export {
  type DecoderHandlers,
  type DecoderOptions,
  EscPosDecoder,
  type HostQuery,
} from './decoder.js';
export { duplexPair } from './duplex-pair.js';
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
} from './endpoints.js';
export {
  type LinkCloseReason,
  type LinkOptions,
  LinkSlot,
  PrinterLink,
} from './link.js';
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
export { DOTS_PER_MM, PrintSpeedLimiter } from './print-speed.js';
export { hasSocat, type PtyPair, SocatMissingError, startPtyPair } from './pty-pair.js';
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
  type TicketFiles,
  TicketWriter,
  type TicketWriterOptions,
  type WrittenTicket,
} from './ticket-writer.js';
export {
  FAULT_FIELDS,
  FAULTS,
  type FaultName,
  VirtualPrinter,
  type VirtualPrinterEvents,
  type VirtualPrinterOptions,
} from './virtual-printer.js';
