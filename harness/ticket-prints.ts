/**
 * The prints on one ticket's decoded text: each receipt's order number (its `Order no.` line) and
 * the markings printed above it since the previous receipt. What the fault suite and the fleet
 * simulation count prints and unmarked duplicates by.
 */
export type PrintMarking = 'POSSIBLE DUPLICATE' | 'REPRINT' | 'LATE';

export interface TicketPrint {
  orderNo: string;
  markings: PrintMarking[];
}

export function printsOnTicket(text: string): TicketPrint[] {
  const found: TicketPrint[] = [];
  let from = 0;
  for (const m of text.matchAll(/^Order no\.\s+(\S+)\s*$/gm)) {
    const lines = text
      .slice(from, m.index)
      .split('\n')
      .map((l) => l.trim());
    const markings: PrintMarking[] = [];
    if (lines.some((l) => l === 'POSSIBLE DUPLICATE')) markings.push('POSSIBLE DUPLICATE');
    if (lines.some((l) => /^REPRINT #\d+$/.test(l))) markings.push('REPRINT');
    if (lines.some((l) => l === 'LATE')) markings.push('LATE');
    found.push({ orderNo: m[1]!, markings });
    from = (m.index ?? 0) + m[0].length;
  }
  return found;
}
