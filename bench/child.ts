/** The server as a child process (bench/server.ts), so its memory and CPU are its own. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { withServerMallocEnv } from '../scripts/malloc-env.mjs';
import type { ServerMessage, ServerOptions } from './server.js';

export interface BenchServer {
  child: ChildProcess;
  url: string;
}

/**
 * The server starts with the glibc tunables `npm run serve` sets (scripts/malloc-env.mjs), so the
 * bench and the long runs measure the shipped server. `env` adds to that, e.g. UV_THREADPOOL_SIZE
 * (such variables only work from process start); a variable given an empty value is removed.
 */
export async function startBenchServer(options: ServerOptions, env: Record<string, string> = {}): Promise<BenchServer> {
  const entry = path.join(import.meta.dirname, 'server.ts');
  const childEnv: NodeJS.ProcessEnv = withServerMallocEnv({ ...process.env, ...env });
  for (const [name, value] of Object.entries(env)) if (value === '') delete childEnv[name];
  const child = spawn(process.execPath, ['--import', 'tsx', entry, JSON.stringify(options)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: childEnv,
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m: ServerMessage) => {
      if ('ready' in m) resolve(m.ready);
      else if ('failed' in m) reject(new Error(m.failed));
    });
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  return { child, url };
}

/** Graceful stop (requests in flight finish, the database closes). */
export async function stopBenchServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.send('stop');
  await exited;
}

/** The server's own view of its memory. */
export function memoryOf(child: ChildProcess): Promise<NodeJS.MemoryUsage> {
  return new Promise((resolve) => {
    const listen = (m: ServerMessage) => {
      if (!('memory' in m)) return;
      child.off('message', listen);
      resolve(m.memory);
    };
    child.on('message', listen);
    child.send('memory');
  });
}
