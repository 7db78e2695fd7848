/**
 * Tickets as text and JSON.
 *
 * Plain text (`renderText`) is column-exact: each line starts with its indent (left margin plus
 * alignment padding: floor((C - w) / 2) spaces when centred, C - w when right-aligned, for a
 * content width w in a line of C columns), gaps from HT / ESC $ are spaces, and trailing spaces
 * are dropped. Every printed character is written once; a character wider than one column
 * (double width, CJK) is written as itself but occupies its columns in the position computation,
 * so the columns after it are still counted right. Codes and images become one line each:
 * `[QR: content]`, `[BARCODE CODE128: content]`, `[PDF417: content]`, `[IMAGE 576x120]` (printed
 * dots), flush left; control characters in code content are escaped (`\n`, `\x1D`). Cuts, feeds,
 * drawer pulses and buzzer events are not shown (they are in the JSON).
 *
 * Styled text (`renderStyledText`) is the plain text plus zero-width style marks around each run:
 *   `**bold**`  `__underline__` (1 dot)  `[u2]thick underline[/u2]` (2 dots)
 *   `[2x2]size[/2x2]` (width x height when not 1x1)  `[rev]reverse[/rev]`  `[fontB]small[/fontB]`
 *   `[upside]upside-down[/upside]`  `[rot90]rotated[/rot90]`
 * nested in that order (size outermost, bold innermost): `[2x2]**TOTAL**[/2x2]`. Inside styled text
 * a literal `\` or `[` is written `\\` / `\[`, and so is a `*` or `_` that could be read as a mark
 * (next to another one, or in a bold / underlined run): `\*\*\* COPY \*\*\*`.
 *
 * A user-defined character (`ESC &`, `ESC %`) is written as the private-use character standing
 * for its font and code (U+E000 + code in font A, U+E100 + code in font B): the emulator cannot
 * know what its glyph means. A host that does (its own encoder's ₱) may replace it.
 *
 * JSON (`ticketToJson`) keeps everything: lines with runs, codes with their settings and data,
 * images and user-defined glyphs as base64 of packed rows (optionally also as `#`/`.` rows),
 * events, warnings.
 */
import type {
  PaperCode,
  PaperEvent,
  PaperImage,
  PaperLine,
  PaperUserDefined,
  TextRun,
  Ticket,
} from './paper.js';

export type Item =
  | { kind: 'line'; line: PaperLine }
  | { kind: 'code'; code: PaperCode }
  | { kind: 'image'; image: PaperImage };

/** Lines, codes and images of a ticket in print order. */
export function printOrder(ticket: Ticket): Item[] {
  const extras = [
    ...ticket.codes.map((code) => ({
      at: code.atLine,
      seq: code.seq,
      item: { kind: 'code', code } as Item,
    })),
    ...ticket.images.map((image) => ({
      at: image.atLine,
      seq: image.seq,
      item: { kind: 'image', image } as Item,
    })),
  ].sort((a, b) => a.at - b.at || a.seq - b.seq);
  const out: Item[] = [];
  let e = 0;
  ticket.lines.forEach((line, i) => {
    while (e < extras.length && extras[e]!.at <= i) out.push(extras[e++]!.item);
    out.push({ kind: 'line', line });
  });
  while (e < extras.length) out.push(extras[e++]!.item);
  return out;
}

function placeholder(item: Exclude<Item, { kind: 'line' }>): string {
  if (item.kind === 'image') {
    const { image } = item;
    return `[IMAGE ${image.width * image.scaleX}x${image.height * image.scaleY}]`;
  }
  const { code } = item;
  const label = code.kind === 'barcode' ? `BARCODE ${code.symbology}` : code.symbology;
  return `[${label}: ${escapeControls(code.content)}]`;
}

function escapeControls(s: string): string {
  let out = '';
  for (const c of s) {
    const code = c.charCodeAt(0);
    if (code >= 0x20 && code !== 0x7f) out += c;
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\t') out += '\\t';
    else out += `\\x${code.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function join(lines: string[]): string {
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/** One line of plain text: indent, characters and gaps, no trailing spaces. */
export function renderLine(line: PaperLine): string {
  return `${' '.repeat(line.indent)}${line.text}`.trimEnd();
}

export function renderText(ticket: Ticket): string {
  return join(
    printOrder(ticket).map((it) => (it.kind === 'line' ? renderLine(it.line) : placeholder(it))),
  );
}

// Styled text ---------------------------------------------------------------------------------

function marks(run: TextRun): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (run.width !== 1 || run.height !== 1) {
    const size = `${run.width}x${run.height}`;
    out.push([`[${size}]`, `[/${size}]`]);
  }
  if (run.font === 'B') out.push(['[fontB]', '[/fontB]']);
  if (run.upsideDown) out.push(['[upside]', '[/upside]']);
  if (run.rotated) out.push(['[rot90]', '[/rot90]']);
  if (run.reverse) out.push(['[rev]', '[/rev]']);
  if (run.underline === 2) out.push(['[u2]', '[/u2]']);
  if (run.underline === 1) out.push(['__', '__']);
  if (run.bold) out.push(['**', '**']);
  return out;
}

function escapeStyled(text: string, marked: boolean): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' || c === '[') {
      out += `\\${c}`;
    } else if ((c === '*' || c === '_') && (marked || text[i - 1] === c || text[i + 1] === c)) {
      out += `\\${c}`;
    } else {
      out += c;
    }
  }
  return out;
}

/** One line with style marks; positions as in the plain line, marks taking no columns. */
export function renderStyledLine(line: PaperLine): string {
  let out = ' '.repeat(line.indent);
  let cursor = line.indent;
  for (const run of line.runs) {
    if (run.column > cursor) out += ' '.repeat(run.column - cursor);
    cursor = Math.max(cursor, run.column + run.columns);
    const m = marks(run);
    let body = run.text;
    let trailing = '';
    if (!run.reverse && run.underline === 0) {
      // Spaces at the end of a run show nothing on paper: keep them outside the marks.
      const trimmed = body.replace(/ +$/, '');
      trailing = body.slice(trimmed.length);
      body = trimmed;
    }
    if (body === '' || m.length === 0) {
      out += escapeStyled(body, false) + trailing;
      continue;
    }
    const marked = run.bold || run.underline === 1;
    out += m.map(([open]) => open).join('');
    out += escapeStyled(body, marked);
    out += m
      .map(([, close]) => close)
      .reverse()
      .join('');
    out += trailing;
  }
  return out.trimEnd();
}

export function renderStyledText(ticket: Ticket): string {
  return join(
    printOrder(ticket).map((it) =>
      it.kind === 'line' ? renderStyledLine(it.line) : placeholder(it),
    ),
  );
}

// JSON ------------------------------------------------------------------------------------------

export interface TicketJsonOptions {
  /**
   * Also give images and user-defined glyphs as rows of `#` (black) and `.` (white).
   * Default false.
   */
  imageRows?: boolean;
}

export interface TicketJson {
  index: number;
  cut: boolean;
  byteStart: number;
  byteEnd: number | null;
  lines: PaperLine[];
  codes: Array<Omit<PaperCode, 'data'> & { data: string }>;
  images: Array<Omit<PaperImage, 'data'> & { data: string; rows?: string[] }>;
  events: PaperEvent[];
  warnings: Ticket['warnings'];
  userDefined: Array<Omit<PaperUserDefined, 'data'> & { data: string; rows?: string[] }>;
}

/** A JSON-ready copy of the ticket: code data as hex, image data as base64. */
export function ticketToJson(ticket: Ticket, options: TicketJsonOptions = {}): TicketJson {
  return {
    index: ticket.index,
    cut: ticket.cut,
    byteStart: ticket.byteStart,
    byteEnd: ticket.byteEnd,
    lines: ticket.lines.map((l) => ({
      ...l,
      runs: l.runs.map((r) => ({ ...r })),
      ...(l.userDefined ? { userDefined: l.userDefined.map((u) => ({ ...u })) } : {}),
    })),
    codes: ticket.codes.map((c) => ({
      ...c,
      options: { ...c.options },
      data: Buffer.from(c.data).toString('hex'),
    })),
    images: ticket.images.map((img) => ({
      ...img,
      data: Buffer.from(img.data).toString('base64'),
      ...(options.imageRows ? { rows: bitmapRows(img) } : {}),
    })),
    events: ticket.events.map((e) => ({ ...e })),
    warnings: ticket.warnings.map((w) => ({ ...w })),
    userDefined: ticket.userDefined.map((u) => ({
      ...u,
      data: Buffer.from(u.data).toString('base64'),
      ...(options.imageRows ? { rows: bitmapRows(u) } : {}),
    })),
  };
}

export function renderJson(ticket: Ticket, options: TicketJsonOptions = {}): string {
  return `${JSON.stringify(ticketToJson(ticket, options), null, 2)}\n`;
}

/** Image rows as text, `#` for a black dot, `.` for white (data dots, unscaled). */
export function bitmapRows(image: Pick<PaperImage, 'width' | 'height' | 'data'>): string[] {
  const stride = Math.ceil(image.width / 8);
  const rows: string[] = [];
  for (let y = 0; y < image.height; y++) {
    let row = '';
    for (let x = 0; x < image.width; x++) {
      const byte = image.data[y * stride + (x >> 3)] ?? 0;
      row += byte & (0x80 >> (x & 7)) ? '#' : '.';
    }
    rows.push(row);
  }
  return rows;
}

/** One line per ticket for a log: `ticket 1: 23 lines, 1 code, 1 image, partial cut, 0 warnings`. */
export function ticketSummary(ticket: Ticket): string {
  const cut = ticket.events.find((e) => e.type === 'cut');
  const parts = [
    `${ticket.lines.length} lines`,
    `${ticket.codes.length} code${ticket.codes.length === 1 ? '' : 's'}`,
    `${ticket.images.length} image${ticket.images.length === 1 ? '' : 's'}`,
    cut && cut.type === 'cut' ? `${cut.cut} cut` : 'not cut',
    `${ticket.warnings.length} warning${ticket.warnings.length === 1 ? '' : 's'}`,
  ];
  return `ticket ${ticket.index + 1}: ${parts.join(', ')}`;
}
