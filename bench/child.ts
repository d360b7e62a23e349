/** The server as a child process (bench/server.ts), so its memory and CPU are its own. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { generateLicenseKeyPair } from '../src/core/licensing/codes.js';
import { withServerMallocEnv } from '../scripts/malloc-env.mjs';
import { setUpAccount } from './account.js';
import { proCode } from './cli.js';
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

/**
 * A server on the shipped models and a fresh data dir, with a pro account and its API key made over
 * the API (the long runs' set-up: scripts/fuzz.ts, scripts/soak.ts). The caller stops the server
 * and removes `dataDir`; if the set-up fails, both are done here.
 */
export async function startProServer(label: string, analyzer: ServerOptions['analyzer']): Promise<{ server: BenchServer; dataDir: string; apiKey: string }> {
  const keys = generateLicenseKeyPair();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `tirewear-${label}-`));
  let server: BenchServer | null = null;
  try {
    server = await startBenchServer({
      dataDir,
      modelsDir: path.join(import.meta.dirname, '..', 'models'),
      licensePublicKeyPem: keys.publicKeyPem,
      analyzer,
      logFile: path.join(dataDir, 'server.log'),
    });
    const apiKey = await setUpAccount(server.url, proCode(keys.privateKeyPem, label));
    return { server, dataDir, apiKey };
  } catch (error) {
    if (server && server.child.exitCode === null) await stopBenchServer(server.child);
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}
