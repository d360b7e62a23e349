/** Running one of the command-line tools (src/core/cli) as a user does, under tsx. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface CliRun {
  /** The exit code; -1 when the tool was killed (the timeout). */
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `tool` (a file of src/core/cli) with `args`, from the repository root, with `env` added to this
 * process's. A tool still running after `timeoutMs` (a server that should have refused its flags)
 * is killed, and its code is then -1.
 */
export function runCli(tool: string, args: readonly string[], options: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<CliRun> {
  return promisify(execFile)(process.execPath, ['--import', 'tsx', `src/core/cli/${tool}.ts`, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...options.env },
    timeout: options.timeoutMs ?? 0,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number | null; stdout: string; stderr: string }) => ({ stdout: error.stdout, stderr: error.stderr, code: error.code ?? -1 }),
  );
}
