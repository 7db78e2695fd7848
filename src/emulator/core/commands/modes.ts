/**
 * Print modes and layout: font, emphasis, underline, size, reverse, upside-down and rotated
 * printing, character spacing (`ESC !`, `ESC E`, `GS !`, ...), and where text goes on the line:
 * alignment, left margin and print area width (enabled only at the beginning of a line), absolute
 * and relative print position, tab stops and line spacing.
 */
import { DEFAULT_LINE_SPACING } from '../print-state.js';
import { type CommandFamily, type Execution, u16 } from './command.js';

function currentFont(x: Execution) {
  return x.state.modes.fontB ? x.paper.geometry.fontB : x.paper.geometry.fontA;
}

export const modes: CommandFamily = {
  // bit0 font B, bit3 emphasized, bit4 double height, bit5 double width, bit7 underline
  'ESC !'(x, { n }) {
    const m = x.state.modes;
    m.fontB = (n & 0x01) !== 0;
    m.emphasized = (n & 0x08) !== 0;
    m.height = n & 0x10 ? 2 : 1;
    m.width = n & 0x20 ? 2 : 1;
    m.underline = n & 0x80 ? 1 : 0;
  },
  'ESC E'(x, { n }) {
    x.state.modes.emphasized = (n & 1) !== 0;
  },
  'ESC G'(x, { n }) {
    x.state.modes.doubleStrike = (n & 1) !== 0;
  },
  'ESC -'(x, { frame, n }) {
    if (![0, 1, 2, 48, 49, 50].includes(n)) return x.warn(frame, 'ESC - n out of range');
    x.state.modes.underline = (n % 48) as 0 | 1 | 2;
  },
  'GS B'(x, { n }) {
    x.state.modes.reverse = (n & 1) !== 0;
  },
  'ESC M'(x, { frame, n }) {
    const m = x.state.modes;
    if (n === 0 || n === 48) m.fontB = false;
    else if (n === 1 || n === 49) m.fontB = true;
    else x.warn(frame, `font ${n} not available: ignored`);
  },
  'GS !'(x, { frame, n }) {
    const m = x.state.modes;
    const w = (n >> 4) + 1;
    const h = (n & 0x0f) + 1;
    if (w > 8 || h > 8) return x.warn(frame, 'GS ! size out of range 1-8: ignored');
    m.width = w;
    m.height = h;
    m.kanjiWidth = w;
    m.kanjiHeight = h;
  },
  'ESC {'(x, { n }) {
    x.state.modes.upsideDown = (n & 1) !== 0;
  },
  'ESC V'(x, { n }) {
    x.state.modes.rotated = n === 1 || n === 2 || n === 49 || n === 50;
  },
  'ESC SP'(x, { n }) {
    x.state.modes.charSpacing = n;
  },
  'ESC a'(x, { frame, n }) {
    x.atLineStart(frame, () => {
      const align = ({ 0: 'left', 1: 'center', 2: 'right' } as const)[n % 48];
      if (n > 50 || (n > 2 && n < 48) || !align) return x.warn(frame, 'ESC a n out of range');
      x.state.align = align;
      x.syncPaper();
    });
  },
  'GS L'(x, { frame, bytes }) {
    x.atLineStart(frame, () => {
      const st = x.state;
      st.leftMargin = Math.min(u16(bytes, 2), x.paper.geometry.dotsPerLine - 12);
      st.areaWidth = Math.min(st.areaWidth, x.paper.geometry.dotsPerLine - st.leftMargin);
      x.syncPaper();
    });
  },
  'GS W'(x, { frame, bytes }) {
    x.atLineStart(frame, () => {
      const st = x.state;
      const max = x.paper.geometry.dotsPerLine - st.leftMargin;
      st.areaWidth = Math.max(12, Math.min(u16(bytes, 2), max));
      x.syncPaper();
    });
  },
  'ESC $'(x, { frame, bytes }) {
    if (!x.paper.setPosition(u16(bytes, 2))) x.warn(frame, 'ESC $ beyond the print area: ignored');
  },
  'ESC \\'(x, { frame, bytes }) {
    const d = u16(bytes, 2);
    if (!x.paper.moveBy(d >= 0x8000 ? d - 0x10000 : d)) {
      x.warn(frame, 'ESC \\ outside the print area: ignored');
    }
  },
  'ESC D'(x, { bytes: b }) {
    const m = x.state.modes;
    const cell = (currentFont(x).width + m.charSpacing) * m.width;
    const stops: number[] = [];
    for (let i = 2; i < b.length && b[i] !== 0; i++) stops.push(b[i]! * cell);
    x.state.tabs = stops;
  },
  'ESC 2'(x) {
    x.state.lineSpacing = DEFAULT_LINE_SPACING;
    x.syncPaper();
  },
  'ESC 3'(x, { n }) {
    x.state.lineSpacing = n;
    x.syncPaper();
  },
};
