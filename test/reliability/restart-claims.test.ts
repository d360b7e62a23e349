/**
 * A desk that crashed mid-scan: its database holds the allowance hold and the Idempotency-Key
 * claim of the request it was working on. The next start releases both before it listens (the
 * data-folder lock says no one else is working on them), so the POS's retry with the same key
 * is analysed at once instead of 409 "still being processed" for ten minutes, and the free
 * allowance is not shown as spent.
 */
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, expect, test } from 'vitest';
import { createLogger } from '../../src/core/logger.js';
import { startServer } from '../../src/core/server.js';
import { SQLITE_FILE_NAME } from '../../src/core/storage/index.js';
import { makeJpeg } from '../fixtures/images/make.js';
import { testConfig } from '../support/config.js';
import { FakeAnalyzer } from '../support/fake-analyzer.js';
import { makeTestLicenseKeys } from '../support/licenses.js';
import { createKey, imageForm, signIn } from '../http/helpers.js';

const keys = makeTestLicenseKeys();
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tirewear-restart-'));
  dirs.push(dir);
  return dir;
}

test("a start after a crash releases the last run's holds and in-flight Idempotency-Key claims, and keeps finished ones", async () => {
  const before = await dataDir();
  const analyzer = new FakeAnalyzer();
  const first = await startServer(testConfig(before, keys.publicKeyPem, { port: 0 }), { analyzer }, { logger: false });
  const jpeg = await makeJpeg({ width: 640, height: 480 });
  const { cookie } = await signIn(first.app);
  const key = await createKey(first.app, cookie);
  const headers = (idempotencyKey: string) => ({ 'x-api-key': key, 'idempotency-key': idempotencyKey });
  const send = (app: typeof first.app, idempotencyKey: string) => {
    const upload = imageForm(jpeg);
    return app.inject({ method: 'POST', url: '/api/v1/analyze', headers: { ...upload.headers, ...headers(idempotencyKey) }, payload: upload.payload });
  };
  const done = await send(first.app, 'RO-1-FL');
  expect(done.statusCode).toBe(200);

  // RO-2 is being analysed when the power goes: the database as a kill -9 leaves it (WAL included).
  const release = analyzer.hold();
  const inFlight = send(first.app, 'RO-2-FR');
  await analyzer.started(2);
  const after = await dataDir();
  for (const suffix of ['', '-wal']) await copyFile(path.join(before, SQLITE_FILE_NAME + suffix), path.join(after, SQLITE_FILE_NAME + suffix));
  await mkdir(path.join(after, 'images'), { recursive: true });
  release();
  expect((await inFlight).statusCode).toBe(200);
  await first.close();

  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, next) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      next();
    },
  });
  const second = await startServer(
    testConfig(after, keys.publicKeyPem, { port: 0 }),
    { analyzer: new FakeAnalyzer(), logger: createLogger({ level: 'info', destination }) },
    { logger: false },
  );
  try {
    expect(lines).toContainEqual(expect.objectContaining({ holds: 1, claims: 1 }));
    const account = (await second.app.inject({ url: '/api/v1/account', headers: { 'x-api-key': key } })).json().data;
    expect(account.allowance).toMatchObject({ limit: 10, used: 1, remaining: 9 });

    const retried = await send(second.app, 'RO-2-FR');
    expect(retried.statusCode).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(retried.headers['x-ratelimit-remaining']).toBe('8');
    // a finished request still replays, charged once
    const replayed = await send(second.app, 'RO-1-FL');
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.json().data.scanId).toBe(done.json().data.scanId);
  } finally {
    await second.close();
  }
});
