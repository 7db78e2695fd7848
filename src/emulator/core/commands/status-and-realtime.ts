/**
 * Status and real-time: the queries answered in order with the data (`GS r`, `ESC v`, `ESC u`,
 * `GS I`, `GS a`, the process id of `GS ( H`), handed to the host when execution reaches them, so
 * they wait behind everything received before them; the `GS ( D` switch of the real-time drawer
 * pulse; and the real-time commands that reach execution at all (only with `realtimeInData` off
 * and invalid parameters: the valid ones are answered by the decoder as they arrive).
 */

import type { Command, CommandFamily, Execution } from './command.js';

/** A real-time command with invalid parameters: the printer ignores it. */
function invalidRealtime(x: Execution, { frame, name }: Command): void {
  x.warn(frame, `${name} with invalid parameters: ignored`);
}

export const statusAndRealtime: CommandFamily = {
  'GS r'(x, { frame, n }) {
    const kind = ({ 1: 'paper-sensor', 2: 'drawer', 4: 'ink' } as const)[n % 48];
    if (!kind) return x.warn(frame, `GS r ${n}: unknown status type`);
    x.query({ kind, command: `GS r ${n}` });
  },
  'ESC v'(x, { name }) {
    x.query({ kind: 'paper-sensor', command: name });
  },
  'ESC u'(x, { name }) {
    x.query({ kind: 'drawer', command: name });
  },
  'GS I'(x, { n }) {
    x.query({ kind: 'printer-id', n });
  },
  'GS a'(x, { n }) {
    x.query({ kind: 'asb', n });
  },
  // fn 48: GS ( H 06 00 30 30 d1 d2 d3 d4 -> reply 37 22 d1..d4 00 once printed.
  'GS ( H'(x, { bytes: b }) {
    if (b[5] === 0x30 && b.length >= 11) x.query({ kind: 'process-id', id: b.slice(7, 11) });
  },
  // Enable/disable real-time commands: m = 20, then pairs [a b]; a = 1 is DLE DC4 fn 1.
  'GS ( D'(x, { bytes: b }) {
    for (let i = 6; i + 1 < b.length; i += 2) {
      if (b[i] === 1) x.kept.realtimePulseEnabled = b[i + 1] === 1;
    }
  },
  'DLE EOT': invalidRealtime,
  'DLE ENQ': invalidRealtime,
  'DLE DC4': invalidRealtime,
};
