/**
 * Printer control: initialize (`ESC @`), select or deselect the printer (`ESC =`), record and run
 * a macro (`GS :`, `GS ^`), and page mode, which the emulator does not lay out: `ESC L` warns and
 * data goes on in standard mode, and the page-mode-only commands are ignored in standard mode
 * as a printer ignores them.
 */
import type { Command, CommandFamily, Execution } from './command.js';

/** `ESC FF`, `ESC T`, `ESC W`, `GS $`, `GS \`: page-mode commands, ignored in standard mode. */
function pageModeOnly(x: Execution, { frame, name }: Command): void {
  if (!x.state.pageMode) return;
  x.warn(frame, `${name}: page mode is not emulated`);
}

export const printerControl: CommandFamily = {
  // ESC @ clears the print buffer and restores the power-on modes; the receive buffer, macros
  // and NV data are kept (ESC/POS reference, "ESC @").
  'ESC @'(x, { frame }) {
    const lost = x.paper.clearLine();
    if (lost > 0) {
      x.warn(frame, `ESC @ discarded ${lost} unprinted character(s) of the line buffer`);
    }
    x.reset();
  },
  'ESC ='(x, { n }) {
    x.state.enabled = (n & 1) !== 0;
  },
  'GS :'(x) {
    const kept = x.kept;
    if (kept.macroRecording) {
      kept.macroRecording = false;
    } else {
      kept.macro = [];
      kept.macroRecording = true;
    }
  },
  'GS ^'(x, { frame, bytes: b }) {
    if (b[4] === 1) x.warn(frame, 'GS ^: waiting for the FEED button is not emulated');
    const frames = x.kept.macro;
    for (let r = 0; r < b[2]!; r++) for (const f of frames) x.run(f);
    // (A recorded macro holds no GS ^: the executor refuses to record one, so this cannot recurse.)
  },
  'ESC L'(x, { frame }) {
    x.state.pageMode = true;
    x.warn(frame, 'page mode is not emulated: data is laid out as in standard mode');
  },
  'ESC S'(x) {
    x.state.pageMode = false;
  },
  'ESC FF': pageModeOnly,
  'ESC T': pageModeOnly,
  'ESC W': pageModeOnly,
  'GS $': pageModeOnly,
  'GS \\': pageModeOnly,
};
