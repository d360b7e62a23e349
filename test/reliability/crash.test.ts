/**
 * Power cut mid-scan: the server runs in its own process under a mixed load (pro, free with a
 * pack, anonymous), is killed with SIGKILL at a random moment, and the data dir is audited:
 * the database passes integrity_check, every stored scan is charged once and has its image
 * and thumbnail, every 200 a client received is stored, and the server starts again on it.
 * Three kills in a row on the same data dir.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { SQLITE_FILE_NAME } from '../../src/core/storage/index.js';
import { makeJpeg, makePng } from '../fixtures/images/make.js';
import { issueTestCode, makeTestLicenseKeys } from '../support/licenses.js';
import { analyze, call } from './http.js';
import { readLedger } from './ledger.js';

const keys = makeTestLicenseKeys();
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function startServer(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(path.join(import.meta.dirname, 'fixtures', 'serve-fake.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: {
      ...process.env,
      TIREWEAR_DATA_DIR: dataDir,
      TIREWEAR_PORT: '0',
      TIREWEAR_LICENSE_PUBLIC_KEY: keys.publicKeyPem,
      TIREWEAR_RENDERER_DIR: '',
      TIREWEAR_LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m: { ready?: string; failed?: string }) => (m.ready ? resolve(m.ready) : reject(new Error(m.failed))));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { child, url };
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Register, sign in, optionally redeem, create a key, over the running server. */
async function account(url: string, code: string | null): Promise<string> {
  const email = `crash-${Math.random().toString(36).slice(2)}@example.com`;
  const password = 'correct horse battery';
  await call(url, 'POST', '/api/v1/auth/register', { json: { email, password } });
  const login = await call(url, 'POST', '/api/v1/auth/login', { json: { email, password } });
  const cookie = String(login.headers['set-cookie']?.[0]).split(';')[0]!;
  if (code) expect((await call(url, 'POST', '/api/v1/licenses', { headers: { cookie }, json: { code } })).status).toBe(200);
  return (await call(url, 'POST', '/api/v1/keys', { headers: { cookie }, json: { name: 'POS' } })).body.data.key;
}

test('kill -9 under load, three times: the database is sound, charges match scans, files are whole', async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tirewear-crash-'));
  dirs.push(dataDir);
  const images = [await makeJpeg({ width: 640, height: 480 }), await makePng({ width: 400, height: 300 })];
  const received = new Set<string>();
  let pro = '';
  let free = '';

  for (let round = 0; round < 3; round++) {
    const { child, url } = await startServer(dataDir);
    if (round === 0) {
      pro = await account(url, issueTestCode(keys, { kind: 'pro', expiresAt: '2099-01-01T00:00:00Z' }));
      free = await account(url, issueTestCode(keys, { kind: 'pack', scans: 5 }));
    } else {
      // Everything acknowledged before the last kill is there after the restart.
      for (const scanId of received) {
        const res = await call(url, 'GET', `/api/v1/scans/${scanId}`, { headers: { 'x-api-key': pro } });
        if (res.status !== 200) expect((await call(url, 'GET', `/api/v1/scans/${scanId}`, { headers: { 'x-api-key': free } })).status).toBe(200);
      }
    }

    let stop = false;
    let successes = 0;
    const callers: Array<Record<string, string>> = [{ 'x-api-key': pro }, { 'x-api-key': free }, {}];
    const worker = async (n: number) => {
      for (let i = 0; !stop; i++) {
        const answer = await analyze(url, images[(n + i) % images.length]!, callers[(n + i) % callers.length]).catch(() => null);
        if (answer?.status === 200) {
          received.add(answer.body.data.scanId);
          successes++;
        }
      }
    };
    const workers = Array.from({ length: 6 }, (_, n) => worker(n));
    const target = 8 + Math.floor(Math.random() * 8);
    for (let i = 0; i < 4000 && successes < target; i++) await new Promise((r) => setTimeout(r, 5));
    await kill(child);
    stop = true;
    await Promise.all(workers);

    const ledger = await readLedger(path.join(dataDir, SQLITE_FILE_NAME), path.join(dataDir, 'images'));
    expect(ledger.integrity).toBe('ok');
    expect(ledger.charged).toBe(ledger.scans);
    expect(ledger.scansMissingFiles).toEqual([]);
    expect(ledger.scans).toBeGreaterThanOrEqual(received.size);
  }

  const { child, url } = await startServer(dataDir);
  expect((await analyze(url, images[0]!, { 'x-api-key': pro })).status).toBe(200);
  await kill(child);
}, 60_000);
