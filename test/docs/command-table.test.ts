/**
 * The README's command table against commander's own definitions of the commands (issue 42 item
 * 15: the render row listed `--format text|escpos|hex` long after svg and png existed). Each row
 * names its command (or a `|` list of subcommands) and some of its options:
 * - every command a person can run (not hidden, no subcommands of its own) has a row;
 * - every command a row names exists, and every option it shows is one of that command's;
 * - a value list (`--format text|escpos|hex`) is exactly the option's choices when commander
 *   knows them, and otherwise a list of values the option accepts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import type { Command, Option } from 'commander';
import { buildProgram } from '../../src/cli/program.js';
import { ROOT } from '../helpers/cli.js';

interface Row {
  text: string;
  commands: string[];
}

/** The table's rows: the first cell of each `| \`printer-agent ...\` |` line of the section. */
function tableRows(readme: string): Row[] {
  const start = readme.indexOf('\n## Command line\n');
  const end = readme.indexOf('\n## ', start + 1);
  assert.ok(start >= 0 && end > start, 'the README has a "Command line" section');
  const rows: Row[] = [];
  for (const line of readme.slice(start, end).split('\n')) {
    const cell = /^\| `printer-agent ([^`]+)` +\|/.exec(line)?.[1];
    if (!cell) continue;
    const text = cell.replace(/\\\|/g, '|');
    // The command's words: lower-case names (or `|` lists of them) up to the first argument.
    const words: string[][] = [];
    for (const word of text.split(/\s+/)) {
      if (!/^[a-z][a-z-]*(\|[a-z][a-z-]*)*$/.test(word)) break;
      words.push(word.split('|'));
    }
    const commands = words.reduce<string[]>(
      (paths, alternatives) => paths.flatMap((p) => alternatives.map((a) => `${p} ${a}`.trim())),
      [''],
    );
    rows.push({ text, commands });
  }
  return rows;
}

/** Every command by its path (`printers identify`), hidden ones left out. */
function commandsOf(program: Command): Map<string, Command> {
  const found = new Map<string, Command>();
  const walk = (command: Command, path: string[]) => {
    for (const sub of command.commands) {
      if ((sub as unknown as { _hidden?: boolean })._hidden) continue;
      const at = [...path, sub.name()];
      found.set(at.join(' '), sub);
      walk(sub, at);
    }
  };
  walk(program, []);
  return found;
}

function optionOf(command: Command, flag: string): Option | undefined {
  return command.options.find((o) => o.long === flag);
}

describe("README's command table", async () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const rows = tableRows(readme);
  const io = {
    stdout: new PassThrough(),
    stderr: new PassThrough(),
    stdin: new PassThrough(),
    readStdin: () => Buffer.alloc(0),
    env: {},
    cwd: ROOT,
  };
  const commands = commandsOf(await buildProgram({ io, exitCode: 0 }, []));

  it('has a row for every command a person runs', () => {
    const named = new Set(rows.flatMap((r) => r.commands));
    const missing = [...commands]
      .filter(([, command]) => command.commands.length === 0)
      .map(([path]) => path)
      .filter((path) => !named.has(path));
    assert.deepEqual(missing, []);
  });

  it('names only commands and options that exist', () => {
    const wrong: string[] = [];
    for (const row of rows) {
      for (const path of row.commands) {
        const command = commands.get(path);
        if (!command) {
          wrong.push(`${path}: no such command`);
          continue;
        }
        for (const flag of row.text.match(/--[a-z][a-z-]*/g) ?? [])
          if (!optionOf(command, flag)) wrong.push(`${path}: no option ${flag}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('lists the values an option takes as commander defines them', () => {
    const wrong: string[] = [];
    let lists = 0;
    for (const row of rows) {
      for (const [, flag, list] of row.text.matchAll(
        /(--[a-z][a-z-]*) ([a-z0-9]+(?:\|[a-z0-9]+)+)/g,
      )) {
        const values = list!.split('|');
        for (const path of row.commands) {
          const option = commands.get(path) && optionOf(commands.get(path)!, flag!);
          if (!option) continue; // reported by the test above
          lists++;
          if (option.argChoices) {
            if ([...values].sort().join() !== [...option.argChoices].sort().join())
              wrong.push(
                `${path} ${flag}: ${list}, but its choices are ${option.argChoices.join('|')}`,
              );
            continue;
          }
          for (const value of values) {
            try {
              option.parseArg?.(value, undefined);
            } catch {
              wrong.push(`${path} ${flag}: does not take ${value}`);
            }
          }
        }
      }
    }
    assert.ok(lists >= 3, 'the render, broker and identify rows list values');
    assert.deepEqual(wrong, []);
  });
});
