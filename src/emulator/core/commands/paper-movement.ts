/**
 * The printer's mechanical actions: feeding paper by lines or dots (forward and back), cutting
 * (the cut ends a ticket), kicking the cash drawer (`ESC p`) and sounding the buzzer (`ESC B` of
 * the Chinese clones, `ESC ( A` of Epson). Feeds, cuts, pulses and beeps become events on the
 * ticket.
 */
import type { Command, CommandFamily, Execution } from './command.js';

const CUT_MODES = [0, 1, 48, 49, 65, 66, 97, 98, 103, 104];
const PARTIAL_CUT_MODES = [1, 49, 66, 98, 104];

/** `ESC i` / `ESC m`: the old one-byte partial cuts. */
function partialCut(x: Execution, { frame, name }: Command): void {
  x.atLineStart(frame, () => x.cut({ type: 'cut', cut: 'partial', command: name }));
}

export const paperMovement: CommandFamily = {
  'ESC d'(x, { name, n }) {
    const had = x.paper.flushLine();
    x.paper.blankLines(Math.max(0, n - (had ? 1 : 0)), n * x.state.lineSpacing);
    x.paper.addEvent({ type: 'feed', command: name, lines: n });
  },
  'ESC J'(x, { name, n }) {
    const had = x.paper.flushLine();
    const lines = Math.round(n / Math.max(1, x.state.lineSpacing));
    x.paper.blankLines(Math.max(0, lines - (had ? 1 : 0)), n);
    x.paper.addEvent({ type: 'feed', command: name, dots: n });
  },
  'ESC e'(x, { name, n }) {
    x.paper.flushLine();
    x.paper.addEvent({ type: 'feed', command: name, lines: -n });
  },
  'ESC K'(x, { name, n }) {
    x.paper.flushLine();
    x.paper.addEvent({ type: 'feed', command: name, dots: -n });
  },

  // Cuts: enabled only at the beginning of a line in standard mode (ESC/POS reference).
  'GS V'(x, { frame, name, bytes: b, n }) {
    x.atLineStart(frame, () => {
      const partial = PARTIAL_CUT_MODES.includes(n);
      if (!CUT_MODES.includes(n)) return x.warn(frame, `GS V ${n}: unknown cut mode, ignored`);
      const feed = b.length > 3 ? { feedDots: b[3]! } : {};
      x.cut({ type: 'cut', cut: partial ? 'partial' : 'full', command: name, ...feed });
    });
  },
  'ESC i': partialCut,
  'ESC m': partialCut,

  'ESC p'(x, { frame, bytes: b, n }) {
    const pin = n === 0 || n === 48 ? 2 : n === 1 || n === 49 ? 5 : undefined;
    if (!pin) return x.warn(frame, `ESC p: no drawer connector pin for m=${n}`);
    x.paper.addEvent({ type: 'drawer', pin, onMs: b[3]! * 2, offMs: b[4]! * 2, realtime: false });
  },
  // Chinese clones: n beeps of t x 50 ms.
  'ESC B'(x, { name, bytes: b, n }) {
    x.paper.addEvent({
      type: 'buzzer',
      command: name,
      count: n,
      onMs: b[3]! * 50,
      offMs: b[3]! * 50,
    });
  },
  'ESC ( A'(x, { bytes: b }) {
    const fn = b[5];
    if (fn === 0x30 && b.length >= 9) {
      // fn 48: n (sound), c (count), t (cycle, t x 100 ms).
      x.paper.addEvent({
        type: 'buzzer',
        command: 'ESC ( A',
        count: b[7]!,
        onMs: b[8]! * 100,
        offMs: 0,
      });
    } else if (fn === 0x61 && b.length >= 10) {
      // fn 97 (TM-U230): n, c times (t1 x 100 ms on, t2 x 100 ms off).
      x.paper.addEvent({
        type: 'buzzer',
        command: 'ESC ( A',
        count: b[7]!,
        onMs: b[8]! * 100,
        offMs: b[9]! * 100,
      });
    }
    // fn 98 / 99 configure automatic beeping on printer events: nothing to print.
  },
};
