/**
 * Stage 3 of the decoder: executes frames in order against the printer's state and the paper.
 * It owns the virtual paper, the print state (what `ESC @` resets) and what `ESC @` keeps, the
 * frame being executed (every paper warning is attributed to it), and the few actions that reach
 * beyond one command: a cut that ends a ticket, a query for the host, a reset. What each command
 * means lives in its family's handler table (commands/); text and control bytes in
 * commands/text.ts. The decoder above it owns the byte stream and the receive buffer.
 */

import { errorMessage } from '../../errors.js';
import { commandName, hex } from './command-syntax.js';
import type { Execution, ExecutorOptions, PendingChar } from './commands/command.js';
import { executeCommand } from './commands/index.js';
import { controlByte, flushMultiByte, printText } from './commands/text.js';
import type { Frame } from './framer.js';
import type { HostQuery } from './host-query.js';
import { type PaperGeometry, type Ticket, VirtualPaper } from './paper.js';
import { freshKeptState, type KeptState, type PrintState, powerOnState } from './print-state.js';

/** What execution hands back to the decoder. */
export interface ExecutorHost {
  /** Total bytes received: where a ticket cut outside any frame ends. */
  received(): number;
  /** A cut ended a ticket. */
  ticket(ticket: Ticket): void;
  /** An in-order query reached execution. */
  query(query: HostQuery): void;
}

export class CommandExecutor implements Execution {
  readonly paper: VirtualPaper;
  state: PrintState;
  readonly kept: KeptState = freshKeptState();
  /** Frame being executed: warnings raised by the paper are attributed to it. */
  executing: Frame | undefined;
  /** A double-byte or UTF-8 character whose first bytes have arrived. */
  pendingChar: PendingChar | undefined;

  constructor(
    geometry: PaperGeometry,
    readonly options: Readonly<ExecutorOptions>,
    private readonly host: ExecutorHost,
  ) {
    this.paper = new VirtualPaper(geometry, (message) => {
      const f = this.executing;
      this.paper.warn({ offset: f?.offset ?? -1, bytes: f ? hex(f.bytes) : '', message });
    });
    this.state = powerOnState(geometry, options);
    this.syncPaper();
  }

  run(frame: Frame): void {
    const outer = this.executing;
    this.executing = frame;
    try {
      this.execute(frame);
    } catch (err) {
      this.warn(frame, `internal error: ${errorMessage(err)}`);
    } finally {
      this.executing = outer;
    }
  }

  private execute(frame: Frame): void {
    const name = frame.kind === 'command' ? frame.spec.name : '';
    if (this.kept.macroRecording && name !== 'GS :') {
      // A macro that runs a macro would replay itself without end: never recorded.
      if (name === 'GS ^') this.warn(frame, 'GS ^ inside a macro definition: ignored');
      else this.kept.macro.push(frame);
      return;
    }
    if (!this.state.enabled && name !== 'ESC =') return; // ESC = 0: the printer ignores data.
    if (frame.kind !== 'text') flushMultiByte(this);
    switch (frame.kind) {
      case 'text':
        printText(this, frame);
        return;
      case 'control':
        controlByte(this, frame);
        return;
      case 'unknown':
        this.warn(frame, `unknown command ${commandName(frame.bytes)}: skipped`);
        return;
      case 'command':
        executeCommand(this, frame, name);
        return;
    }
  }

  warn(frame: Frame, message: string): void {
    this.paper.warn({ offset: frame.offset, bytes: hex(frame.bytes), message });
  }

  /** Commands enabled only at the beginning of a line: elsewhere the printer ignores them. */
  atLineStart(frame: Frame, run: () => void): void {
    if (!this.paper.atLineStart) {
      const name = frame.kind === 'command' ? frame.spec.name : '';
      this.warn(frame, `${name} is only processed at the beginning of a line (Epson): ignored`);
      return;
    }
    run();
  }

  /** Ends the ticket after the frame being executed. */
  cut(event: { type: 'cut'; cut: 'full' | 'partial'; command: string; feedDots?: number }): void {
    const f = this.executing;
    const ticket = this.paper.cut(event, f ? f.offset + f.bytes.length : this.host.received());
    this.host.ticket(ticket);
  }

  query(q: HostQuery): void {
    this.host.query(q);
  }

  /** Power-on modes again (`ESC @`): the half-received character goes, what `ESC @` keeps stays. */
  reset(): void {
    this.pendingChar = undefined;
    this.state = powerOnState(this.paper.geometry, this.options);
    this.syncPaper();
  }

  /** Drops the half-received character and the unprinted line (`DLE DC4 fn 8`). */
  clearLine(): void {
    this.pendingChar = undefined;
    this.paper.clearLine();
  }

  /** Passes alignment, margin, print area and line spacing on to the paper's next line. */
  syncPaper(): void {
    const st = this.state;
    this.paper.settings = { align: st.align, leftMargin: st.leftMargin, areaWidth: st.areaWidth };
    this.paper.lineSpacing = st.lineSpacing;
  }
}
