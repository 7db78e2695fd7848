/**
 * Issue 43 item 6: what a store's Pi shows must name what is on the Pi. The package installs the
 * program under /usr/lib/printer-agent, the docs under /usr/share/doc/printer-agent and the udev
 * rules under /usr/lib/udev/rules.d (packaging/build-deb.ts); `docs/...`, `config/config.*.json`,
 * `systemd/...` and `dist/cli.js` exist only in a source checkout. So:
 * - no string in src/ (messages, help, the generated reference) names such a path;
 * - the template (installed as /etc/printer-agent/config.json) names none either, and its
 *   `"$schema"` is a file the package installs;
 * - every reference to a page's heading, `README "X"`, `docs/install.md "X"` or, as a Pi shows it,
 *   `/usr/share/doc/printer-agent/install.md "X"` (in src/, systemd/, packaging/debian/, the README
 *   and docs/*.md), is a heading of that page, and an installed path a page the package installs;
 *   every `see "X"` of a page is one of its own headings; every relative link of the README and
 *   docs/*.md reaches a file, and its `#anchor` a heading of it;
 * - docs/printers.md's "Raspberry Pi permissions" gives the installed package's commands, and the
 *   source install's only labelled as such.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { DOC_DIR, installedDocs } from '../../packaging/doc-files.js';
import { ROOT } from '../helpers/cli.js';

/** Paths that exist in a source checkout only. */
const REPO_ONLY =
  /(?<![\w/.-])(docs\/[\w./-]+|config\/config\.(?:example|schema)\.json|\.\/config\.schema\.json|systemd\/[\w.-]+|dist\/cli\.js|packaging\/[\w./-]*)/g;

/**
 * Occurrences in files this change could not edit (other work was under way in them), each with
 * the text to put instead. Remove an entry once its file is changed: the test fails on a stale one.
 */
const PENDING: ReadonlyArray<{ file: string; text: string; instead: string }> = [];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Every string literal and template text of src/ (comments are for developers: not read). */
function sourceStrings(): { file: string; line: number; text: string }[] {
  const found: { file: string; line: number; text: string }[] = [];
  for (const path of sourceFiles(join(ROOT, 'src'))) {
    const source = ts.createSourceFile(
      path,
      readFileSync(path, 'utf8'),
      ts.ScriptTarget.Latest,
      true,
    );
    const visit = (node: ts.Node) => {
      if (
        ts.isStringLiteralLike(node) ||
        ts.isTemplateHead(node) ||
        ts.isTemplateMiddle(node) ||
        ts.isTemplateTail(node)
      )
        found.push({
          file: relative(ROOT, path),
          line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
          text: (node as ts.LiteralLikeNode).text,
        });
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** What the package installs, as absolute paths, read from packaging/build-deb.ts. */
function installedFiles(): Set<string> {
  const build = readFileSync(join(ROOT, 'packaging', 'build-deb.ts'), 'utf8');
  const files = new Set<string>();
  for (const m of build.matchAll(/copy\(\s*'([^']+)',\s*'([^']+)'/g)) files.add(`/${m[2]}`);
  assert.match(
    build,
    /for \(const \{ from, to \} of installedDocs\(ROOT\)\) copy\(from, to\)/,
    'packaging/build-deb.ts: the docs loop this test reads has changed; adapt it',
  );
  for (const { to } of installedDocs(ROOT)) files.add(`/${to}`);
  assert.ok(files.has(`/${DOC_DIR}/README.md`), [...files].join(', '));
  return files;
}

/** A page's headings, any level, outside code blocks (where `#` starts a shell comment). */
function headingsOf(text: string): string[] {
  const headings: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = !fenced && /^#{1,6} (.+)$/.exec(line)?.[1];
    if (heading) headings.push(heading.trim());
  }
  return headings;
}

/** `"Trust boundaries"` names `Trust boundaries (print-protocol v1.1 and v1.2)`: a heading's start. */
function namesHeading(name: string, headings: readonly string[]): boolean {
  return headings.some((h) => h === name || h.startsWith(`${name} (`));
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The README and every page of docs/, by their path in the repository. */
function pages(): Map<string, string> {
  return new Map(
    installedDocs(ROOT).map(({ from }) => [from, readFileSync(join(ROOT, from), 'utf8')]),
  );
}

/**
 * A reference to a page's heading: `README "X"`, `README's "X"`, `docs/install.md "X"`, or the
 * installed path `/usr/share/doc/printer-agent/install.md "X"`. Groups: the installed directory
 * when the path is one, the page's file name (none: the README), the heading.
 */
const PAGE_REF =
  /(?:\bREADME(?:\.md)?|(\/usr\/share\/doc\/printer-agent\/|(?<![\w/.-])docs\/)([\w.-]+\.md))(?:'s)?:? ["'“]([^"'”]+)["'”]/g;

interface PageRef {
  where: string;
  installed: boolean;
  page: string;
  heading: string;
}

function pageRefs(where: string, text: string): PageRef[] {
  return [...text.matchAll(PAGE_REF)].map((m) => ({
    where,
    installed: m[1] === '/usr/share/doc/printer-agent/',
    page: !m[2] || m[2] === 'README.md' ? 'README.md' : `docs/${m[2]}`,
    heading: m[3]!,
  }));
}

/** The references that name no heading of their page, or a page that is not installed. */
function wrongRefs(refs: readonly PageRef[], all: Map<string, string>): string[] {
  const installed = installedFiles();
  return refs.flatMap((r) => {
    const text = all.get(r.page);
    if (text === undefined) return [`${r.where}: ${r.page}: no such page`];
    if (r.installed && !installed.has(`/${DOC_DIR}/${r.page.split('/').pop()}`))
      return [`${r.where}: ${r.page}: not installed by the package`];
    return namesHeading(r.heading, headingsOf(text))
      ? []
      : [`${r.where}: "${r.heading}": no such heading in ${r.page}`];
  });
}

describe('paths only a source checkout has', () => {
  it('no string in src/ names one (messages, help, generated docs printed on a Pi)', () => {
    const strings = sourceStrings();
    const offending: string[] = [];
    for (const s of strings)
      for (const m of s.text.matchAll(REPO_ONLY)) {
        if (PENDING.some((p) => p.file === s.file && s.text.includes(p.text))) continue;
        offending.push(`${s.file}:${s.line}: ${m[0]} in ${JSON.stringify(s.text)}`);
      }
    assert.deepEqual(offending, [], 'name the installed path or the command that prints it');
    const stale = PENDING.filter(
      (p) => !strings.some((s) => s.file === p.file && s.text.includes(p.text)),
    );
    assert.deepEqual(stale, [], 'fixed: remove these entries from PENDING');
  });

  it('the template names none, and its "$schema" is a file the package installs', () => {
    const text = readFileSync(join(ROOT, 'config', 'config.example.json'), 'utf8');
    const template = JSON.parse(text) as Record<string, unknown>;
    const schema = template.$schema;
    assert.equal(typeof schema, 'string', 'the template names its schema for editors');
    const url = new URL(schema as string);
    assert.equal(
      url.protocol,
      'file:',
      `${schema}: a relative path resolves in /etc/printer-agent`,
    );
    assert.ok(
      installedFiles().has(url.pathname),
      `${url.pathname} is not installed by the package`,
    );
    assert.deepEqual(text.match(REPO_ONLY), null);
  });

  it('docs/printers.md\'s "Raspberry Pi permissions" gives the package\'s commands; the source ones are labelled', () => {
    const page = readFileSync(join(ROOT, 'docs', 'printers.md'), 'utf8');
    const start = page.indexOf('\n## Raspberry Pi permissions\n');
    assert.ok(start >= 0, 'docs/printers.md has a "Raspberry Pi permissions" section');
    const end = page.indexOf('\n## ', start + 1);
    const section = page.slice(start, end < 0 ? undefined : end);
    assert.doesNotMatch(section, /dist\/cli\.js/, 'the package puts printer-agent on PATH');
    const rules = /\/usr\/lib\/udev\/rules\.d\/[\w.-]+/.exec(section)?.[0];
    assert.ok(rules && installedFiles().has(rules), `${rules}: the rules the package installs`);
    const firstRepoPath = section.search(REPO_ONLY);
    const label = section.search(/from source/i);
    assert.ok(
      firstRepoPath < 0 || (label >= 0 && label < firstRepoPath),
      'repository paths only after a "from source" label',
    );
  });
});

describe('references to the docs', () => {
  const all = pages();

  it('every page "X" in src/, systemd/ and packaging/debian/ is a heading of that page', () => {
    const texts: { where: string; text: string }[] = sourceStrings().map((s) => ({
      where: `${s.file}:${s.line}`,
      text: s.text,
    }));
    for (const dir of ['systemd', join('packaging', 'debian')])
      for (const name of readdirSync(join(ROOT, dir)))
        texts.push({ where: join(dir, name), text: readFileSync(join(ROOT, dir, name), 'utf8') });
    const refs = texts.flatMap(({ where, text }) => pageRefs(where, text));
    assert.ok(refs.length >= 3, 'the pattern still finds the references');
    assert.ok(
      refs.some((r) => r.installed),
      'installed paths (/usr/share/doc/printer-agent/X.md "Y") are found',
    );
    assert.deepEqual(wrongRefs(refs, all), []);
  });

  it('every page "X" and see "X" of the README and docs/*.md is a heading of its page', () => {
    // docs/decisions.md records what was decided then: its references name the pages of that day.
    const current = [...all].filter(([path]) => path !== 'docs/decisions.md');
    const refs = current.flatMap(([path, text]) => pageRefs(path, text));
    assert.deepEqual(wrongRefs(refs, all), []);
    const own = current.flatMap(([path, text]) =>
      [...text.matchAll(/see "([^"]+)"/g)]
        .map((m) => m[1]!)
        .filter((name) => !namesHeading(name, headingsOf(text)))
        .map((name) => `${path}: see "${name}": no such heading`),
    );
    assert.ok(
      [...all.get('README.md')!.matchAll(/see "([^"]+)"/g)].length >= 2,
      'the pattern still finds the references',
    );
    assert.deepEqual(own, []);
  });

  it('every relative link of the README and docs/*.md reaches a file, and its #anchor a heading', () => {
    const wrong: string[] = [];
    let links = 0;
    for (const [path, text] of all) {
      const outsideCode = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
      for (const m of outsideCode.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
        links++;
        const [file, anchor] = target.split('#') as [string, string | undefined];
        const resolved = file === '' ? join(ROOT, path) : join(ROOT, dirname(path), file);
        // The project's contracts and design live beside the repository (../shared/), not in a
        // clone of it: such a link must name that folder, and is not followed.
        if (!resolved.startsWith(`${ROOT}/`)) {
          if (!resolved.startsWith(join(ROOT, '..', 'shared', '/')))
            wrong.push(`${path}: ${target}: leaves the repository, not for ../shared/`);
          continue;
        }
        if (!existsSync(resolved)) {
          wrong.push(`${path}: ${target}: no such file`);
          continue;
        }
        if (anchor === undefined) continue;
        const headings = headingsOf(readFileSync(resolved, 'utf8'));
        if (!headings.some((h) => anchorOf(h) === anchor))
          wrong.push(`${path}: ${target}: no heading with that anchor`);
      }
    }
    assert.ok(links >= 20, 'the pattern still finds the links');
    assert.deepEqual(wrong, []);
  });
});
