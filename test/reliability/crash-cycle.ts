/**
 * One power cut, as the crash test and scripts/crash.ts do it many times: start the server on
 * a data dir, load it with a mix of callers, SIGKILL it at a random moment, audit the dir.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { SQLITE_FILE_NAME } from '../../src/core/storage/index.js';
import { analyze, call } from './http.js';
import { readLedger, type Ledger } from './ledger.js';

export interface ServerProcess {
  child: ChildProcess;
  url: string;
}

export function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Register, sign in, optionally redeem a license, create an API key, over the running server. */
export async function accountKey(url: string, code: string | null): Promise<string> {
  const email = `crash-${Math.random().toString(36).slice(2)}@example.com`;
  const password = 'correct horse battery';
  await call(url, 'POST', '/api/v1/auth/register', { json: { email, password } });
  const login = await call(url, 'POST', '/api/v1/auth/login', { json: { email, password } });
  const cookie = String(login.headers['set-cookie']?.[0]).split(';')[0]!;
  if (code && (await call(url, 'POST', '/api/v1/licenses', { headers: { cookie }, json: { code } })).status !== 200) {
    throw new Error('license redemption failed');
  }
  return (await call(url, 'POST', '/api/v1/keys', { headers: { cookie }, json: { name: 'POS' } })).body.data.key;
}

/** Scan ids some caller can still read; the acknowledged scans that did not survive. */
export async function missingScans(url: string, scanIds: Iterable<string>, apiKeys: readonly string[]): Promise<string[]> {
  const missing: string[] = [];
  for (const scanId of scanIds) {
    let found = false;
    for (const key of [...apiKeys, null]) {
      const headers: Record<string, string> = key ? { 'x-api-key': key } : {};
      if ((await call(url, 'GET', `/api/v1/scans/${scanId}`, { headers })).status === 200) {
        found = true;
        break;
      }
    }
    if (!found) missing.push(scanId);
  }
  return missing;
}

/**
 * Loads `server` with `workers` clients cycling through `callers` and `images` until `successes`
 * scans were acknowledged, then kills it. Acknowledged scan ids are added to `received`.
 */
export async function loadAndKill(options: {
  server: ServerProcess;
  callers: ReadonlyArray<Record<string, string>>;
  images: readonly Buffer[];
  workers: number;
  successes: number;
  received: Set<string>;
}): Promise<void> {
  let stop = false;
  let acknowledged = 0;
  const worker = async (n: number) => {
    for (let i = 0; !stop; i++) {
      const k = n + i;
      const answer = await analyze(options.server.url, options.images[k % options.images.length]!, options.callers[k % options.callers.length]).catch(
        () => null,
      );
      if (answer?.status === 200) {
        options.received.add(answer.body.data.scanId);
        acknowledged++;
      }
    }
  };
  const running = Array.from({ length: options.workers }, (_, n) => worker(n));
  for (let i = 0; i < 12_000 && acknowledged < options.successes; i++) await new Promise((r) => setTimeout(r, 5));
  await kill(options.server.child);
  stop = true;
  await Promise.all(running);
}

export function auditDataDir(dataDir: string): Promise<Ledger> {
  return readLedger(path.join(dataDir, SQLITE_FILE_NAME), path.join(dataDir, 'images'));
}
