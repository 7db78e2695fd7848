/**
 * The Debian package's changelog, made from CHANGELOG.md (Keep a Changelog) so the two never
 * disagree: each `## [X.Y.Z] - YYYY-MM-DD` becomes one entry, each list item under it one `*`
 * line prefixed with its section (Added, Changed, Fixed...). `apt changelog printer-agent` and
 * `zless /usr/share/doc/printer-agent/changelog.gz` show it on the Pi. Our versions carry no
 * Debian revision (a native package), so the file is `changelog.gz` (Debian policy 12.7).
 */

export interface ChangelogVersion {
  version: string;
  /** YYYY-MM-DD */
  date: string;
  /** "Added: text" lines, in the file's order. */
  items: string[];
}

const VERSION_HEADING = /^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})\s*$/;

/** The released versions of a Keep a Changelog file, newest first (as the file orders them). */
export function parseChangelog(markdown: string): ChangelogVersion[] {
  const versions: ChangelogVersion[] = [];
  let section = '';
  let item: string | null = null;
  const flush = () => {
    if (item !== null) versions.at(-1)?.items.push(`${section}: ${item}`);
    item = null;
  };
  for (const line of markdown.split('\n')) {
    const heading = VERSION_HEADING.exec(line);
    if (heading) {
      flush();
      versions.push({ version: heading[1]!, date: heading[2]!, items: [] });
      section = '';
      continue;
    }
    if (line.startsWith('## ')) {
      // `## [Unreleased]` and anything else that is not a release: nothing under it is shipped.
      flush();
      versions.push({ version: '', date: '', items: [] });
      continue;
    }
    if (line.startsWith('### ')) {
      flush();
      section = line.slice(4).trim();
      continue;
    }
    if (line.startsWith('- ')) {
      flush();
      item = line.slice(2).trim();
    } else if (item !== null && line.startsWith('  ') && line.trim() !== '') {
      item += ` ${line.trim()}`;
    } else if (line.trim() === '') flush();
  }
  flush();
  return versions.filter((v) => v.version !== '');
}

/** Debian's changelog text (deb-changelog(5)) for these versions. */
export function debianChangelog(
  versions: readonly ChangelogVersion[],
  maintainer: string,
  distribution = 'stable',
): string {
  return versions
    .map((v) => {
      const items = v.items.map((text) => wrap(`  * ${text}`, '    ')).join('\n');
      // RFC 5322 date, as dpkg-parsechangelog wants; noon UTC of the release day.
      const date = new Date(`${v.date}T12:00:00Z`).toUTCString().replace('GMT', '+0000');
      return `printer-agent (${v.version}) ${distribution}; urgency=medium\n\n${items}\n\n -- ${maintainer}  ${date}\n`;
    })
    .join('\n');
}

/** Wraps at 78 columns, the continuation lines indented. */
function wrap(text: string, indent: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/(?<=\S) +/)) {
    if (line !== '' && line.length + 1 + word.length > 78) {
      lines.push(line);
      line = `${indent}${word.trimStart()}`;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.join('\n');
}
