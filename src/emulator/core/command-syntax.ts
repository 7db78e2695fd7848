/**
 * The syntax of ESC/POS: for every command the emulator knows, its name and how many bytes it
 * takes. This is all the framer needs to cut a byte stream into commands without executing them,
 * which is what a printer does when it receives data into its buffer; the meaning of each command
 * lives in its family's handler table (commands/).
 *
 * Lengths follow Epson's ESC/POS command reference. Where the length depends on the parameters
 * (`GS ( X pL pH`, `GS v 0`, `ESC *`, `GS k`, ...), a function reads the bytes it needs and, when
 * they have not arrived yet, says how many it needs (`{ need }`), so a command split across
 * chunks is simply waited for.
 */

/** Byte `i` of the command (0 = the prefix byte), or undefined when it has not arrived yet. */
export type Peek = (i: number) => number | undefined;

/** Total length of the command in bytes, or the number of bytes needed before it can be told. */
export type LengthResult = number | { need: number };

export interface CommandSpec {
  /** Printable name, e.g. `ESC !`, `GS ( k`, `DLE EOT`. */
  name: string;
  length: number | ((peek: Peek) => LengthResult);
  /** Real-time command (DLE EOT/ENQ/DC4): processed on arrival, see realtime.ts. */
  realtime?: boolean;
}

export const DLE = 0x10;
export const ESC = 0x1b;
export const FS = 0x1c;
export const GS = 0x1d;

/** `X ( c pL pH d1..dk`: five header bytes and pL + 256 pH bytes (ESC (, FS (, GS ( families). */
function lengthPrefixed(peek: Peek): LengthResult {
  const pL = peek(3);
  const pH = peek(4);
  if (pL === undefined || pH === undefined) return { need: 5 };
  return 5 + pL + 256 * pH;
}

/** Reads a little-endian 16-bit value at `i`; undefined when not all there. */
function u16(peek: Peek, i: number): number | undefined {
  const lo = peek(i);
  const hi = peek(i + 1);
  return lo === undefined || hi === undefined ? undefined : lo + 256 * hi;
}

const specs: Array<[number, number, CommandSpec]> = [];

function def(prefix: number, second: string | number, name: string, length: CommandSpec['length']) {
  const code = typeof second === 'string' ? second.charCodeAt(0) : second;
  specs.push([prefix, code, { name, length }]);
}

// Real-time commands (10 04 n, 10 05 n, 10 14 fn ...). At a command position the framer takes
// them whole, even with an out-of-range parameter, which the printer ignores.
specs.push([
  DLE,
  0x04,
  {
    name: 'DLE EOT',
    realtime: true,
    length: (p) => {
      const n = p(2);
      if (n === undefined) return { need: 3 };
      return n === 7 || n === 8 ? 4 : 3;
    },
  },
]);
specs.push([DLE, 0x05, { name: 'DLE ENQ', realtime: true, length: 3 }]);
specs.push([
  DLE,
  0x14,
  {
    name: 'DLE DC4',
    realtime: true,
    length: (p) => {
      const fn = p(2);
      if (fn === undefined) return { need: 3 };
      // fn 1 m t, fn 2 1 8, fn 3 a b, fn 7 m, fn 8 1 3 20 1 6 2 8.
      return ({ 1: 5, 2: 5, 3: 5, 7: 4, 8: 10 } as Record<number, number>)[fn] ?? 3;
    },
  },
]);

// ESC commands.
def(ESC, 0x0c, 'ESC FF', 2);
def(ESC, ' ', 'ESC SP', 3);
def(ESC, '!', 'ESC !', 3);
def(ESC, '$', 'ESC $', 4);
def(ESC, '%', 'ESC %', 3);
def(ESC, '&', 'ESC &', (p) => {
  // ESC & y c1 c2 [x d1..d(y*x)] for each character c1..c2 (define user-defined characters).
  const y = p(2);
  const c1 = p(3);
  const c2 = p(4);
  if (y === undefined || c1 === undefined || c2 === undefined) return { need: 5 };
  let at = 5;
  for (let c = c1; c <= c2; c++) {
    const x = p(at);
    if (x === undefined) return { need: at + 1 };
    at += 1 + x * y;
  }
  return at;
});
def(ESC, '(', 'ESC (', lengthPrefixed);
def(ESC, '*', 'ESC *', (p) => {
  // ESC * m nL nH d1..dk: k = n for 8-dot modes (m 0, 1), 3n for 24-dot modes (m 32, 33).
  const m = p(2);
  const n = u16(p, 3);
  if (m === undefined || n === undefined) return { need: 5 };
  return 5 + n * (m >= 32 ? 3 : 1);
});
def(ESC, '-', 'ESC -', 3);
def(ESC, '2', 'ESC 2', 2);
def(ESC, '3', 'ESC 3', 3);
def(ESC, '<', 'ESC <', 2);
def(ESC, '=', 'ESC =', 3);
def(ESC, '?', 'ESC ?', 3);
def(ESC, '@', 'ESC @', 2);
// Not Epson: the buzzer of common Chinese printers (ESC B n t: n beeps of t x 50 ms).
def(ESC, 'B', 'ESC B', 4);
def(ESC, 'D', 'ESC D', (p) => {
  // ESC D n1..nk NUL, k <= 32. The list also ends at a value not greater than the previous one;
  // that byte is then ordinary data (ESC/POS reference, "ESC D").
  let prev = 0;
  for (let i = 2; i < 2 + 33; i++) {
    const n = p(i);
    if (n === undefined) return { need: i + 1 };
    if (n === 0) return i + 1;
    if (n <= prev || i === 2 + 32) return i;
    prev = n;
  }
  return 2 + 32;
});
def(ESC, 'E', 'ESC E', 3);
def(ESC, 'G', 'ESC G', 3);
def(ESC, 'J', 'ESC J', 3);
def(ESC, 'K', 'ESC K', 3);
def(ESC, 'L', 'ESC L', 2);
def(ESC, 'M', 'ESC M', 3);
def(ESC, 'R', 'ESC R', 3);
def(ESC, 'S', 'ESC S', 2);
def(ESC, 'T', 'ESC T', 3);
def(ESC, 'U', 'ESC U', 3);
def(ESC, 'V', 'ESC V', 3);
def(ESC, 'W', 'ESC W', 10);
def(ESC, '\\', 'ESC \\', 4);
def(ESC, 'a', 'ESC a', 3);
def(ESC, 'c', 'ESC c', 4);
def(ESC, 'd', 'ESC d', 3);
def(ESC, 'e', 'ESC e', 3);
def(ESC, 'i', 'ESC i', 2);
def(ESC, 'm', 'ESC m', 2);
def(ESC, 'p', 'ESC p', 5);
def(ESC, 'r', 'ESC r', 3);
def(ESC, 't', 'ESC t', 3);
def(ESC, 'u', 'ESC u', 3);
def(ESC, 'v', 'ESC v', 2);
def(ESC, '{', 'ESC {', 3);

// FS commands (Kanji / double-byte and NV images).
def(FS, '!', 'FS !', 3);
def(FS, '&', 'FS &', 2);
def(FS, '(', 'FS (', lengthPrefixed);
def(FS, '-', 'FS -', 3);
def(FS, '.', 'FS .', 2);
// FS 2 c1 c2 d1..d72: define a user Kanji character, 24x24 dots (printer dependent).
def(FS, '2', 'FS 2', 4 + 72);
def(FS, '?', 'FS ?', 4);
def(FS, 'C', 'FS C', 3);
def(FS, 'S', 'FS S', 4);
def(FS, 'W', 'FS W', 3);
def(FS, 'g', 'FS g', (p) => {
  // FS g 1 m a1 a2 a3 a4 nL nH d1..dk writes NV user memory; FS g 2 m a1..a4 nL nH reads it.
  const fn = p(2);
  if (fn === undefined) return { need: 3 };
  const n = u16(p, 8);
  if (n === undefined) return { need: 10 };
  return fn === 1 ? 10 + n : 10;
});
def(FS, 'p', 'FS p', 4);
def(FS, 'q', 'FS q', (p) => {
  // FS q n [xL xH yL yH d1..dk] x n, k = x * y * 8 (define NV bit images).
  const n = p(2);
  if (n === undefined) return { need: 3 };
  let at = 3;
  for (let i = 0; i < n; i++) {
    const x = u16(p, at);
    const y = u16(p, at + 2);
    if (x === undefined || y === undefined) return { need: at + 4 };
    at += 4 + x * y * 8;
  }
  return at;
});

// GS commands.
def(GS, '!', 'GS !', 3);
def(GS, '$', 'GS $', 4);
def(GS, '(', 'GS (', lengthPrefixed);
def(GS, '*', 'GS *', (p) => {
  // GS * x y d1..d(x*y*8): define a downloaded bit image.
  const x = p(2);
  const y = p(3);
  if (x === undefined || y === undefined) return { need: 4 };
  return 4 + x * y * 8;
});
def(GS, '/', 'GS /', 3);
def(GS, '8', 'GS 8', (p) => {
  // GS 8 L p1 p2 p3 p4 m fn ...: GS ( L with a 32-bit length.
  const c = p(2);
  if (c === undefined) return { need: 3 };
  if (c !== 0x4c) return 2;
  const b = [p(3), p(4), p(5), p(6)];
  if (b.some((v) => v === undefined)) return { need: 7 };
  const [p1, p2, p3, p4] = b as number[];
  return 7 + p1! + p2! * 0x100 + p3! * 0x10000 + p4! * 0x1000000;
});
def(GS, ':', 'GS :', 2);
def(GS, 'B', 'GS B', 3);
def(GS, 'C', 'GS C', (p) => {
  // Counter printing: GS C 0 n m, GS C 1 aL aH bL bH n r, GS C 2 nL nH, GS C ; sa;sb;sn;sr;sc;
  const fn = p(2);
  if (fn === undefined) return { need: 3 };
  if (fn === 0x30) return 5;
  if (fn === 0x31) return 9;
  if (fn === 0x32) return 5;
  if (fn !== 0x3b) return 2;
  let semis = 0;
  for (let i = 3; i < 3 + 40; i++) {
    const b = p(i);
    if (b === undefined) return { need: i + 1 };
    if (b === 0x3b && ++semis === 5) return i + 1;
  }
  return 3 + 40;
});
def(GS, 'E', 'GS E', 3);
def(GS, 'H', 'GS H', 3);
def(GS, 'I', 'GS I', 3);
def(GS, 'L', 'GS L', 4);
def(GS, 'P', 'GS P', 4);
def(GS, 'Q', 'GS Q', (p) => {
  // GS Q 0 m xL xH yL yH d1..dk, k = x * y: variable vertical size bit image (old models).
  const x = u16(p, 4);
  const y = u16(p, 6);
  if (x === undefined || y === undefined) return { need: 8 };
  return 8 + x * y;
});
def(GS, 'T', 'GS T', 3);
def(GS, 'V', 'GS V', (p) => {
  // GS V m (m = 0, 1, 48, 49) or GS V m n (m = 65, 66, 97, 98, 103, 104).
  const m = p(2);
  if (m === undefined) return { need: 3 };
  return [65, 66, 97, 98, 103, 104].includes(m) ? 4 : 3;
});
def(GS, 'W', 'GS W', 4);
def(GS, '\\', 'GS \\', 4);
def(GS, '^', 'GS ^', 5);
def(GS, 'a', 'GS a', 3);
def(GS, 'b', 'GS b', 3);
def(GS, 'c', 'GS c', 2);
def(GS, 'f', 'GS f', 3);
def(GS, 'g', 'GS g', (p) => {
  // GS g 0 m nL nH (initialise a maintenance counter), GS g 2 m nL nH (transmit it).
  const fn = p(2);
  if (fn === undefined) return { need: 3 };
  return fn === 0x30 || fn === 0x32 ? 6 : 2;
});
def(GS, 'h', 'GS h', 3);
def(GS, 'j', 'GS j', 3);
def(GS, 'k', 'GS k', (p) => {
  const m = p(2);
  if (m === undefined) return { need: 3 };
  if (m >= 65) {
    // Form B: GS k m n d1..dn.
    const n = p(3);
    return n === undefined ? { need: 4 } : 4 + n;
  }
  // Form A: GS k m d1..dk NUL. The data also ends at any other control byte, which is not
  // consumed (the printer "processes the following data as normal data"), or after 255 bytes.
  for (let i = 3; i < 3 + 256; i++) {
    const b = p(i);
    if (b === undefined) return { need: i + 1 };
    if (b === 0) return i + 1;
    if (b < 0x20) return i;
  }
  return 3 + 255;
});
def(GS, 'r', 'GS r', 3);
def(GS, 'v', 'GS v', (p) => {
  // GS v 0 m xL xH yL yH d1..dk, k = x (bytes) * y (dots).
  const c = p(2);
  if (c === undefined) return { need: 3 };
  if (c !== 0x30) return 2;
  const x = u16(p, 4);
  const y = u16(p, 6);
  if (x === undefined || y === undefined) return { need: 8 };
  return 8 + x * y;
});
def(GS, 'w', 'GS w', 3);
def(GS, 'z', 'GS z', (p) => {
  // GS z 0 t1 t2: online recovery wait time.
  const c = p(2);
  if (c === undefined) return { need: 3 };
  return c === 0x30 ? 5 : 2;
});

const table = new Map<number, CommandSpec>(specs.map(([a, b, spec]) => [(a << 8) | b, spec]));
const names = new Set(specs.map(([, , spec]) => spec.name));

/** The spec of the command that starts with `prefix second`, if the emulator knows it. */
export function lookupCommand(prefix: number, second: number): CommandSpec | undefined {
  return table.get((prefix << 8) | second);
}

/** Whether the emulator knows a command of that name (`ESC !`, `GS (`). */
export function isCommandName(name: string): boolean {
  return names.has(name);
}

export function isCommandPrefix(b: number): boolean {
  return b === DLE || b === ESC || b === FS || b === GS;
}

/** Names the command in `bytes` for messages: `ESC !`, `GS ( k`, `GS v 0`, or hex when unknown. */
export function commandName(bytes: Uint8Array): string {
  const [a, b, c] = bytes;
  if (a === undefined) return '';
  const prefix = { [DLE]: 'DLE', [ESC]: 'ESC', [FS]: 'FS', [GS]: 'GS' }[a];
  if (!prefix || b === undefined) return hex(bytes.subarray(0, 1));
  const second = b >= 0x21 && b <= 0x7e ? String.fromCharCode(b) : hex([b]);
  if ((b === 0x28 || (a === GS && (b === 0x38 || b === 0x76))) && c !== undefined) {
    return `${prefix} ${second} ${String.fromCharCode(c)}`;
  }
  return `${prefix} ${second}`;
}

/** `1B 21 30`: bytes as upper-case hex pairs, the way the notes and manuals write them. */
export function hex(bytes: ArrayLike<number>): string {
  return Array.from(bytes, (b) => b.toString(16).toUpperCase().padStart(2, '0')).join(' ');
}
