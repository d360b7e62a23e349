/**
 * Power cut mid-scan: the server runs in its own process under a mixed load (pro, free with a
 * pack, anonymous), is killed with SIGKILL at a random moment, and the data dir is audited:
 * the database passes integrity_check, every stored scan is charged once and has its image
 * and thumbnail, every 200 a client received is stored, and the server starts again on it.
 * Three kills in a row on the same data dir.
 */
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { makeJpeg, makePng } from '../fixtures/images/make.js';
import { issueTestCode, makeTestLicenseKeys } from '../support/licenses.js';
import { accountKey, auditDataDir, kill, loadAndKill, missingScans, type ServerProcess } from './crash-cycle.js';
import { analyze } from './http.js';

const keys = makeTestLicenseKeys();
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function startServer(dataDir: string): Promise<ServerProcess> {
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

test('kill -9 under load, three times: the database is sound, charges match scans, files are whole', async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tirewear-crash-'));
  dirs.push(dataDir);
  const images = [await makeJpeg({ width: 640, height: 480 }), await makePng({ width: 400, height: 300 })];
  const received = new Set<string>();
  let pro = '';
  let free = '';

  for (let round = 0; round < 3; round++) {
    const server = await startServer(dataDir);
    if (round === 0) {
      pro = await accountKey(server.url, issueTestCode(keys, { kind: 'pro', expiresAt: '2099-01-01T00:00:00Z' }));
      free = await accountKey(server.url, issueTestCode(keys, { kind: 'pack', scans: 5 }));
    } else {
      // Everything acknowledged before the last kill is there after the restart.
      expect(await missingScans(server.url, received, [pro, free])).toEqual([]);
    }
    await loadAndKill({
      server,
      callers: [{ 'x-api-key': pro }, { 'x-api-key': free }, {}],
      images,
      workers: 6,
      successes: 8 + Math.floor(Math.random() * 8),
      received,
    });

    const ledger = await auditDataDir(dataDir);
    expect(ledger.integrity).toBe('ok');
    expect(ledger.charged).toBe(ledger.scans);
    expect(ledger.scansMissingFiles).toEqual([]);
    expect(ledger.scans).toBeGreaterThanOrEqual(received.size);
  }

  const { child, url } = await startServer(dataDir);
  expect(await missingScans(url, received, [pro, free])).toEqual([]);
  expect((await analyze(url, images[0]!, { 'x-api-key': pro })).status).toBe(200);
  await kill(child);
}, 60_000);
