/**
 * The text twin: the layout rendered as plain text, column for column what the paper shows.
 * Tests compare it with golden files and with what the emulator decodes from our bytes; the CLI
 * and logs show it. Styles do not show here (double-width text is written once, at its position);
 * a QR code is one line `[QR: content]` and the empty line its feed leaves; an image (a band of
 * the logo) is one line `[IMAGE 576x120]`, its width and height in dots, as the emulator writes
 * it (`GS v 0` feeds its own height: no empty line); a cut ends the text;
 * a tear-off feed is blank lines; the buzzer shows nothing (a sound leaves no mark on the paper,
 * as the emulator's text shows none: it is an event in its JSON).
 */
import type { Layout } from './layout.js';

export function layoutToText(layout: Layout): string {
  const lines: string[] = [];
  for (const command of layout.commands) {
    switch (command.kind) {
      case 'line':
        lines.push(withoutTrailingSpaces(command.segments.map((s) => s.text).join('')));
        break;
      case 'qr':
        // The encoder ends the QR with a line feed, which feeds one empty line on paper.
        lines.push(`[QR: ${command.data}]`, '');
        break;
      case 'image':
        lines.push(`[IMAGE ${command.width}x${command.height}]`);
        break;
      case 'feed':
        for (let i = 0; i < command.lines; i++) lines.push('');
        break;
      case 'cut':
      case 'buzzer':
        break;
    }
  }
  return `${lines.join('\n')}\n`;
}

/** `line` without its trailing spaces (spaces only: / +$/ tries a match at every space, issue 16). */
function withoutTrailingSpaces(line: string): string {
  let end = line.length;
  while (end > 0 && line.charCodeAt(end - 1) === 0x20) end--;
  return line.slice(0, end);
}
