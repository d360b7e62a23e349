/**
 * The data folder stops taking writes (disk full, read-only, locked): the caller gets a clear
 * 503 STORAGE_UNAVAILABLE in the envelope, nothing is charged, no image or temp file is left
 * behind, and the same upload succeeds once storage is back. (Tests run as root, so chmod
 * cannot make a folder read-only here: the image folder is placed under a regular file, and
 * the database is locked by another connection. scripts/disk-full.ts fills a real tmpfs.)
 */
import { spawnSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { afterEach, expect, test } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { Config } from '../../src/core/config.js';
import { testConfig } from '../support/config.js';
import { createCore, type Core } from '../../src/core/core.js';
import { buildServer } from '../../src/core/http/app.js';
import { createLogger } from '../../src/core/logger.js';
import type { AppError } from '../../src/core/errors.js';
import { mapError } from '../../src/core/storage/sqlite/db.js';
import { SQLITE_FILE_NAME, openSqliteStore } from '../../src/core/storage/index.js';
import { makeJpeg } from '../fixtures/images/make.js';
import { FakeAnalyzer } from '../support/fake-analyzer.js';
import { makeTestLicenseKeys } from '../support/licenses.js';
import { BOUNDARY, multipart } from './corpus.js';
import { readLedger } from './ledger.js';

const keys = makeTestLicenseKeys();
let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function serve(
  imagesDir: (dataDir: string) => string,
): Promise<{ app: FastifyInstance; core: Core; analyzer: FakeAnalyzer; config: Config; db: string }> {
  const dataDir = path.join(os.tmpdir(), `tirewear-storage-${process.pid}-${Math.random().toString(36).slice(2)}`);
  await mkdir(dataDir, { recursive: true });
  const config = testConfig(dataDir, keys.publicKeyPem, { imagesDir: imagesDir(dataDir) });
  const clock = new ManualClock();
  const db = path.join(dataDir, SQLITE_FILE_NAME);
  // A short busy timeout, so a locked database fails in milliseconds rather than five seconds.
  const store = openSqliteStore({ file: db, clock, busyTimeoutMs: 50 });
  const analyzer = new FakeAnalyzer();
  const core = await createCore(config, { clock, store, analyzer, logger: createLogger({ level: 'silent' }) });
  const app = await buildServer(core, { logger: false });
  cleanup.push(async () => {
    await app.close();
    await core.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  return { app, core, analyzer, config, db };
}

const upload = (app: FastifyInstance, image: Buffer, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url: '/api/v1/analyze',
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, ...headers },
    payload: multipart(image),
  });

function expectUnavailable(res: { statusCode: number; json(): any }): void {
  expect(res.statusCode).toBe(503);
  expect(res.json()).toMatchObject({ success: false, error: { code: 'STORAGE_UNAVAILABLE' } });
  // 5xx never leak internals: no paths, no errno names.
  expect(res.json().error.message).not.toMatch(/\/|ENOTDIR|ENOSPC|SQLITE/);
}

test('an image folder that cannot be written: 503 STORAGE_UNAVAILABLE, nothing charged, and the retry succeeds once it can', async () => {
  const { app, config, db } = await serve((dataDir) => path.join(dataDir, 'blocked', 'images'));
  await writeFile(path.join(config.dataDir, 'blocked'), 'a file where the folder should be');
  const image = await makeJpeg({ width: 320, height: 256 });

  expectUnavailable(await upload(app, image, { 'idempotency-key': 'pos-1' }));
  expect(await readLedger(db, config.imagesDir)).toMatchObject({ integrity: 'ok', scans: 0, charged: 0, reservations: 0 });
  // health says so for a minute, not "ok" from a database that still answers a ping
  const health = (await app.inject({ url: '/api/v1/health' })).json().data;
  expect(health).toMatchObject({ status: 'degraded', problem: expect.stringMatching(/image folder cannot be written/) });

  await rm(path.join(config.dataDir, 'blocked'));
  const retry = await upload(app, image, { 'idempotency-key': 'pos-1' });
  expect(retry.statusCode).toBe(200);
  expect(retry.headers['x-ratelimit-remaining']).toBe('2');
  expect(await readLedger(db, config.imagesDir)).toMatchObject({ scans: 1, charged: 1, orphanFiles: [], tempFiles: [] });
});

test('a database that refuses the commit: 503 STORAGE_UNAVAILABLE, the written image and thumbnail removed, nothing charged', async () => {
  const { app, analyzer, config, db } = await serve((dataDir) => path.join(dataDir, 'images'));
  const image = await makeJpeg({ width: 320, height: 256 });
  const release = analyzer.hold();
  const pending = upload(app, image);
  await analyzer.started(1);

  // Another process holds the write lock while the analysis finishes and the commit runs.
  const other = new Database(db);
  other.exec('BEGIN IMMEDIATE');
  release();
  const res = await pending;
  other.exec('ROLLBACK');
  other.close();

  expectUnavailable(res);
  const ledger = await readLedger(db, config.imagesDir);
  expect(ledger).toMatchObject({ integrity: 'ok', scans: 0, charged: 0, orphanFiles: [], tempFiles: [] });
  // The hold could not be released while the database was locked either; it expires with housekeeping.
  expect(ledger.reservations).toBeLessThanOrEqual(1);
  expect((await upload(app, image)).statusCode).toBe(200);
  // a busy database passes within seconds: health does not call it trouble
  expect((await app.inject({ url: '/api/v1/health' })).json().data).toMatchObject({ status: 'ok' });
});

/** As root, a read-only file system can be mounted for real (chmod does not stop root); otherwise skipped, saying so. */
function mountReadOnly(dir: string): boolean {
  if (process.getuid?.() !== 0) {
    console.warn('skipped: a read-only mount needs root');
    return false;
  }
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tirewear-ro', dir]);
  if (mounted.status !== 0) console.warn(`skipped: could not mount a read-only tmpfs (${String(mounted.stderr).trim()})`);
  return mounted.status === 0;
}

test('an image folder on a read-only file system: 503 saying it cannot be written, not a 500 (mkdir answers ENOENT there)', async (context) => {
  const { app, config, db } = await serve((dataDir) => path.join(dataDir, 'ro', 'images'));
  await mkdir(path.join(config.dataDir, 'ro'), { recursive: true });
  if (!mountReadOnly(path.join(config.dataDir, 'ro'))) return context.skip();
  try {
    const res = await upload(app, await makeJpeg({ width: 320, height: 256 }));
    expectUnavailable(res);
    expect(res.json().error.message).toMatch(/cannot be written \(read-only/);
    expect(res.headers['x-ratelimit-remaining']).toBe('3');
    expect(await readLedger(db, config.imagesDir)).toMatchObject({ scans: 0, charged: 0, reservations: 0 });
  } finally {
    spawnSync('umount', [path.join(config.dataDir, 'ro')]);
  }
});

test('each SQLite failure of the machine is a 503 saying which (full, read-only, damaged, busy), the cause kept for the log', () => {
  const failure = (code: string) => mapError(Object.assign(new Error(`${code}: /data/tirewear.db`), { code })) as AppError;
  expect(failure('SQLITE_FULL').message).toMatch(/^The disk holding the database is full/);
  expect(failure('SQLITE_READONLY_DBMOVED').message).toMatch(/read-only/);
  expect(failure('SQLITE_CORRUPT').message).toMatch(/damaged.*from a backup/);
  expect(failure('SQLITE_NOTADB').message).toMatch(/damaged/);
  expect(failure('SQLITE_BUSY_SNAPSHOT').message).toBe('The database is busy; try again shortly');
  for (const code of ['SQLITE_FULL', 'SQLITE_IOERR_WRITE', 'SQLITE_CANTOPEN', 'SQLITE_CORRUPT']) {
    const error = failure(code);
    expect(error).toMatchObject({ code: 'STORAGE_UNAVAILABLE', status: 503 });
    expect((error.cause as { code: string }).code).toBe(code);
    expect(error.message).not.toMatch(/SQLITE|\/data/);
  }
  const bug = Object.assign(new Error('no such column'), { code: 'SQLITE_ERROR' });
  expect(mapError(bug)).toBe(bug);
});
