/** Runs the CLI as a child process, the way a person or a script would. */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `printer-agent ARGS` through tsx (source) or node (compiled `dist/`). */
export function runCli(
  args: readonly string[],
  options: { input?: string; compiled?: boolean; cwd?: string; env?: NodeJS.ProcessEnv } = {},
): CliResult {
  const entry = options.compiled
    ? [join(ROOT, 'dist', 'cli.js')]
    : ['--import', 'tsx', join(ROOT, 'src', 'cli.ts')];
  const result = spawnSync(process.execPath, [...entry, ...args], {
    cwd: options.cwd ?? ROOT,
    env: options.env ?? process.env,
    input: options.input ?? '',
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
