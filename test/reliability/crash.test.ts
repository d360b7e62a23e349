/**
 * Power cut mid-scan: the server runs in its own process under a mixed load (pro, free with a
 * pack, anonymous), is killed with SIGKILL at a random moment, and the data dir is audited:
 * the database passes integrity_check, every stored scan is charged once and has its image
 * and thumbnail, every 200 a client received is stored, and the server starts again on it.
 * Three kills in a row on the same data dir; the last start sweeps what the kills left over.
 */
import { fork } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, expect, test } from 'vitest';
import { SQLITE_FILE_NAME } from '../../src/core/storage/index.js';
import { LEFTOVER_MIN_AGE_MS, type SweepReport } from '../../src/core/services/support/leftovers.js';
import { makeJpeg, makePng } from '../fixtures/images/make.js';
import { issueTestCode, makeTestLicenseKeys } from '../support/licenses.js';
import { accountKey, auditDataDir, kill, loadAndKill, missingScans, type ServerProcess } from './crash-cycle.js';
import { analyze } from './http.js';

const keys = makeTestLicenseKeys();
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function startServer(dataDir: string): Promise<ServerProcess & { swept: Promise<SweepReport | null> }> {
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
  const swept = new Promise<SweepReport | null>((resolve) => {
    child.on('message', (m: { swept?: SweepReport | null }) => 'swept' in m && resolve(m.swept ?? null));
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m: { ready?: string; failed?: string }) => (m.ready ? resolve(m.ready) : reject(new Error(m.failed))));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { child, url, swept };
}

/** Every file under `dir` as if written `ms` ago: the restart comes after the sweep's safety age. */
async function age(dir: string, ms: number): Promise<void> {
  const then = new Date(Date.now() - ms);
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) await utimes(path.join(entry.parentPath, entry.name), then, then);
  }
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

  // Leftovers of the kills (plus one of each kind for certain), all aged past the safety age,
  // referenced files too: the next start removes the leftovers and nothing a scan refers to.
  await mkdir(path.join(dataDir, 'images', 'scans', 'ff'), { recursive: true });
  await writeFile(path.join(dataDir, 'images', 'scans', 'ff', 'ff00000000000000000000000000000f.jpg'), images[0]!);
  await writeFile(path.join(dataDir, 'images', 'scans', 'ff', '.ff00000000000000000000000000000f.jpg.0123456789ab.tmp'), 'cut');
  await age(path.join(dataDir, 'images'), LEFTOVER_MIN_AGE_MS + 60_000);
  // ... and the database made before them, as a shop's is (a photo older than its database is
  // never taken for its leftover)
  const db = new Database(path.join(dataDir, SQLITE_FILE_NAME));
  db.prepare('UPDATE schema_migrations SET applied_at = applied_at - ?').run(2 * LEFTOVER_MIN_AGE_MS);
  db.close();
  const before = await auditDataDir(dataDir);

  const { child, url, swept } = await startServer(dataDir);
  expect(await swept).toMatchObject({ orphanImages: before.orphanFiles.length, tempFiles: before.tempFiles.length, failed: 0 });
  const after = await auditDataDir(dataDir);
  expect({ orphans: after.orphanFiles, temps: after.tempFiles, missing: after.scansMissingFiles }).toEqual({
    orphans: [],
    temps: [],
    missing: [],
  });
  expect(await missingScans(url, received, [pro, free])).toEqual([]);
  expect((await analyze(url, images[0]!, { 'x-api-key': pro })).status).toBe(200);
  await kill(child);
}, 60_000);
