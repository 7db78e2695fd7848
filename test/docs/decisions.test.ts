/**
 * The decisions are hand-kept in three files, grouped by topic (docs/decisions.md, and beside what
 * they govern bench/DECISIONS.md and test/DECISIONS.md). Code, tests and commits cite them as
 * "decision N", so these fail when a number is missing or given twice, when an entry has no status
 * or issue, when a status names a decision that does not exist (or an earlier one), and when a
 * "decision N" cited anywhere in the repository does not exist.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DECISION_FILES = ['docs/decisions.md', 'bench/DECISIONS.md', 'test/DECISIONS.md'];
/** Where "decision N" may be cited. */
const CITING = ['src', 'test', 'bench', 'packaging', 'docs', 'README.md', '.ci', 'systemd'];
const BINARY = /\.(png|jpe?g|gif|gz|xz|deb|node|sqlite|db|wasm|bin)$/i;

interface Decision {
  n: number;
  file: string;
  line: number;
  /** The first line's text after `N. **` (a title may go on over the next lines). */
  title: string;
  /** `active`, `active, amended by N[, M]` or `superseded by N[, M]`. */
  status: string | undefined;
  statusLines: number;
  issue: string | undefined;
}

const ENTRY = /^(\d+)\. \*\*(.*)$/;
const STATUS_LINE = /^Status: (.+) \(([^()]+)\)$/;
const STATUS = /^(?:active|active, amended by (\d+(?:, \d+)*)|superseded by (\d+(?:, \d+)*))$/;

/**
 * Entries start with `N. **Title.**` at the start of a line (the title may wrap), go on with
 * indented lines and end with their `Status: ... (issue N)` line, before the next entry or heading.
 */
function parseDecisions(text: string, file: string): Decision[] {
  const decisions: Decision[] = [];
  let current: Decision | undefined;
  text.split('\n').forEach((line, i) => {
    const start = ENTRY.exec(line);
    if (start) {
      current = {
        n: Number(start[1]),
        file,
        line: i + 1,
        title: start[2]!,
        status: undefined,
        statusLines: 0,
        issue: undefined,
      };
      decisions.push(current);
      return;
    }
    if (line.startsWith('#')) {
      current = undefined;
      return;
    }
    const status = STATUS_LINE.exec(line);
    if (status && current) {
      current.status = status[1];
      current.issue = status[2];
      current.statusLines++;
    }
  });
  return decisions;
}

/** The numbers a status names: the amending or superseding decisions. */
function statusNumbers(status: string): number[] {
  const m = STATUS.exec(status);
  const list = m?.[1] ?? m?.[2];
  return list ? list.split(', ').map(Number) : [];
}

/** A cited "decision N", "decisions N, M and K-L", "docs/decisions.md N-M", across line breaks. */
const GAP = String.raw`[\s*/#]*`;
const ITEM = String.raw`\d+(?:\s*[-–]\s*\d+)?`;
const CITATION = new RegExp(
  String.raw`\bdecisions?(\.md)?\s${GAP}(${ITEM}(?:${GAP}(?:,|\band\b)${GAP}${ITEM})*)`,
  'gi',
);

interface Citation {
  where: string;
  text: string;
  numbers: number[];
  /** Written as `decisions.md N`: the number must be in docs/decisions.md itself. */
  inDocsFile: boolean;
}

function citations(text: string, where: string): Citation[] {
  const found: Citation[] = [];
  for (const m of text.matchAll(CITATION)) {
    const numbers: number[] = [];
    for (const item of m[2]!.matchAll(/(\d+)(?:\s*[-–]\s*(\d+))?/g)) {
      const from = Number(item[1]);
      const to = item[2] === undefined ? from : Number(item[2]);
      if (to < from) numbers.push(NaN);
      for (let n = from; n <= to && n - from < 1000; n++) numbers.push(n);
    }
    const line = text.slice(0, m.index).split('\n').length;
    found.push({
      where: `${where}:${line}`,
      text: m[0].replace(/\s+/g, ' '),
      numbers,
      inDocsFile: m[1] !== undefined,
    });
  }
  return found;
}

/** Whether `path` is a file now (another process may be adding and removing files meanwhile). */
function isFile(path: string): boolean {
  try {
    return statSync(join(ROOT, path)).isFile();
  } catch {
    return false;
  }
}

/** The text files at or under `path`, leaving out node_modules and dot folders below it. */
function filesUnder(path: string): string[] {
  if (isFile(path)) return [path];
  let names: string[];
  try {
    names = readdirSync(join(ROOT, path), { recursive: true, encoding: 'utf8' });
  } catch {
    return [];
  }
  return names
    .filter((p) => !p.split('/').some((part) => part === 'node_modules' || part.startsWith('.')))
    .map((p) => join(path, p))
    .filter((p) => !BINARY.test(p) && isFile(p));
}

const decisions = DECISION_FILES.flatMap((file) =>
  parseDecisions(readFileSync(join(ROOT, file), 'utf8'), file),
);
const byNumber = new Map(decisions.map((d) => [d.n, d]));
const max = Math.max(...decisions.map((d) => d.n));

describe('the decisions', () => {
  it('parse entries, status lines and citations as written', () => {
    const text = [
      '## Topic',
      '',
      '7. **A title.** Text that cites decision 3 and',
      '   decisions 1, 2 and 4-5.',
      '',
      'Status: active, amended by 9 (issue 2)',
      '',
      '9. **Another.** Cites docs/decisions.md 6-7. Status: not a status line',
      '',
      'Status: superseded by 12, 13 (issues 41-42)',
    ].join('\n');
    assert.deepEqual(
      parseDecisions(text, 'f').map(({ n, line, title, status, issue }) => ({
        n,
        line,
        title,
        status,
        issue,
      })),
      [
        {
          n: 7,
          line: 3,
          title: 'A title.** Text that cites decision 3 and',
          status: 'active, amended by 9',
          issue: 'issue 2',
        },
        {
          n: 9,
          line: 8,
          title: 'Another.** Cites docs/decisions.md 6-7. Status: not a status line',
          status: 'superseded by 12, 13',
          issue: 'issues 41-42',
        },
      ],
    );
    assert.deepEqual(statusNumbers('superseded by 12, 13'), [12, 13]);
    assert.deepEqual(statusNumbers('active'), []);
    assert.deepEqual(
      citations(text, 'f').map(({ where, numbers, inDocsFile }) => ({
        where,
        numbers,
        inDocsFile,
      })),
      [
        { where: 'f:3', numbers: [3], inDocsFile: false },
        { where: 'f:4', numbers: [1, 2, 4, 5], inDocsFile: false },
        { where: 'f:8', numbers: [6, 7], inDocsFile: true },
      ],
    );
    assert.deepEqual(
      citations(' * kept (decision\n * 157) and // decisions 206 and 211', 'c').map(
        (c) => c.numbers,
      ),
      [[157], [206, 211]],
    );
  });

  it(`numbers 1 to the highest each appear exactly once across ${DECISION_FILES.join(', ')}`, () => {
    assert.ok(decisions.length > 300, `only ${decisions.length} decisions parsed`);
    const seen = new Map<number, string[]>();
    for (const d of decisions) seen.set(d.n, [...(seen.get(d.n) ?? []), `${d.file}:${d.line}`]);
    const twice = [...seen].filter(([, at]) => at.length > 1).map(([n, at]) => `${n} (${at})`);
    const missing: number[] = [];
    for (let n = 1; n <= max; n++) if (!seen.has(n)) missing.push(n);
    assert.deepEqual(twice, [], 'numbers given twice');
    assert.deepEqual(missing, [], 'numbers missing');
  });

  it('every decision has one status (active, amended or superseded by a later decision) and an issue', () => {
    const problems: string[] = [];
    for (const d of decisions) {
      const at = `${d.file}:${d.line} decision ${d.n}`;
      if (d.statusLines !== 1) {
        problems.push(`${at}: ${d.statusLines} status lines`);
        continue;
      }
      if (!STATUS.test(d.status!)) problems.push(`${at}: status "${d.status}"`);
      for (const m of statusNumbers(d.status!))
        if (!byNumber.has(m) || m <= d.n) problems.push(`${at}: names ${m}, no later decision`);
      if (!/^issues? \d+(?:-\d+)?$/.test(d.issue!)) problems.push(`${at}: issue "${d.issue}"`);
    }
    assert.deepEqual(problems, []);
  });

  it('each file\'s "Superseded here" line lists its superseded decisions', () => {
    for (const file of DECISION_FILES) {
      const expected = decisions
        .filter((d) => d.file === file && d.status?.startsWith('superseded by '))
        .sort((a, b) => a.n - b.n)
        .map((d) => `${d.n} (by ${statusNumbers(d.status!).join(', ')})`);
      const line = /^Superseded here: (.*)\.$/m.exec(readFileSync(join(ROOT, file), 'utf8'));
      assert.ok(line, `${file} has no "Superseded here:" line`);
      assert.equal(line[1], expected.length > 0 ? expected.join(', ') : 'none', file);
    }
  });

  it('docs/decisions.md says where the other decision files are', () => {
    const docs = readFileSync(join(ROOT, 'docs/decisions.md'), 'utf8');
    for (const file of DECISION_FILES.slice(1))
      assert.ok(docs.includes(`(../${file})`), `docs/decisions.md does not link ${file}`);
  });

  it(`every "decision N" cited in ${CITING.join(', ')} exists`, () => {
    const self = relative(ROOT, fileURLToPath(import.meta.url));
    const files = CITING.flatMap(filesUnder).filter((f) => f !== self);
    assert.ok(files.length > 100, `only ${files.length} files read`);
    const problems: string[] = [];
    let count = 0;
    for (const file of files) {
      let text: string;
      try {
        text = readFileSync(join(ROOT, file), 'utf8');
      } catch {
        continue; // removed since the scan
      }
      for (const c of citations(text, file)) {
        count++;
        for (const n of c.numbers) {
          const d = byNumber.get(n);
          if (!d) problems.push(`${c.where}: "${c.text}": no decision ${n}`);
          else if (c.inDocsFile && d.file !== 'docs/decisions.md')
            problems.push(`${c.where}: "${c.text}": decision ${n} is in ${d.file}`);
        }
      }
    }
    assert.ok(count > 50, `only ${count} citations found`);
    assert.deepEqual(problems, []);
  });
});
