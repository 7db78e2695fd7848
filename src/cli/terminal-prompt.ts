/**
 * Questions on a terminal, for a command that asks instead of failing (`setup`, issue 41): one
 * readline interface in raw mode, answers echoed except secrets. Used only when standard input is
 * a TTY: a script cannot answer, so it gets a usage error naming the flags instead.
 *
 * A secret is hidden by muting the interface's output while it is typed (readline echoes through
 * its output in raw mode, and the terminal's own echo is off): the key never shows on the screen,
 * in a `script` log or in scroll-back.
 */
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { Writable } from 'node:stream';
import { AgentError } from '../errors.js';
import type { CliOutput } from './io.js';

export interface Prompter {
  /** One answer, trimmed; `fallback` when the answer is empty. */
  ask(question: string, options?: { secret?: boolean; fallback?: string }): Promise<string>;
  /** A line for the person at the terminal (not part of the command's output). */
  say(text: string): void;
  close(): void;
}

export function terminalPrompter(input: Readable, output: CliOutput): Prompter {
  let muted = false;
  const echo = Object.assign(
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        if (!muted) output.write(chunk);
        done();
      },
    }),
    { columns: output.columns },
  );
  const lines = createInterface({ input, output: echo, terminal: true, historySize: 0 });
  let pending: ((error: AgentError) => void) | null = null;
  const stop = (why: string) => {
    const fail = pending;
    pending = null;
    fail?.(new AgentError('INPUT_INVALID', `setup: ${why}; nothing was written`));
  };
  // Raw mode delivers Ctrl-C as a key: without a listener readline would only pause the input,
  // and the question would wait for ever.
  lines.on('SIGINT', () => {
    output.write('\n');
    stop('cancelled (Ctrl-C)');
  });
  lines.on('close', () => stop('standard input closed before the answer'));
  return {
    ask: (question, options = {}) =>
      new Promise<string>((resolve, reject) => {
        pending = reject;
        const hint = options.fallback !== undefined ? ` [${options.fallback}]` : '';
        const done = (answer: string) => {
          pending = null;
          if (options.secret) {
            muted = false;
            output.write('\n');
          }
          const trimmed = answer.trim();
          resolve(trimmed === '' && options.fallback !== undefined ? options.fallback : trimmed);
        };
        if (options.secret) {
          output.write(`${question}${hint}: `);
          muted = true;
          lines.question('', done);
        } else lines.question(`${question}${hint}: `, done);
      }),
    say: (text) => output.write(`${text}\n`),
    close: () => {
      pending = null;
      lines.close();
    },
  };
}
