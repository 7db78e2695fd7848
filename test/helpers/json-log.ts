/**
 * The JSON log lines of a process the test started (pino: one object per line), read as they
 * arrive. Each line is parsed once: a condition polled by `waitFor` every few milliseconds for a
 * minute must not split and parse the whole output again at every poll, which takes the CPU the
 * process under test needs on a busy 2-core machine.
 */

export type LogRecord = Record<string, unknown>;

export class JsonLog {
  private readonly parsed: LogRecord[] = [];
  /** Where the next unparsed line starts in the text. */
  private offset = 0;

  /** `text` returns everything the process wrote so far; it only ever grows. */
  constructor(private readonly text: () => string) {}

  /**
   * Every record so far, complete lines only; parses what arrived since the last call. Lines that
   * are not JSON objects (a stack trace, a line mixed with another stream's) are skipped.
   */
  records(): readonly LogRecord[] {
    const text = this.text();
    const end = text.lastIndexOf('\n');
    if (end >= this.offset) {
      for (const line of text.slice(this.offset, end).split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          this.parsed.push(JSON.parse(line) as LogRecord);
        } catch {
          // not a whole record
        }
      }
      this.offset = end + 1;
    }
    return this.parsed;
  }

  /** How many records so far: a mark for `since`. */
  mark(): number {
    return this.records().length;
  }

  /** The records after `mark`. */
  since(mark: number): LogRecord[] {
    return this.records().slice(mark);
  }

  /**
   * A live selection: the returned function gives the records matching `test` so far, looking
   * only at the records that arrived since its last call.
   */
  select(test: (record: LogRecord) => boolean): () => readonly LogRecord[] {
    const hits: LogRecord[] = [];
    let seen = 0;
    return () => {
      const all = this.records();
      for (; seen < all.length; seen++) if (test(all[seen]!)) hits.push(all[seen]!);
      return hits;
    };
  }
}
