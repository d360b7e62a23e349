/**
 * Bursts over real sockets: 64 uploads at once against small allowances give exactly the
 * allowance in successes and charges; a full queue answers SERVER_BUSY, before reading the
 * upload, and charges nothing; concurrent retries of one Idempotency-Key are analysed once;
 * one license code redeemed many times at once credits exactly once.
 */
import net from 'node:net';
import path from 'node:path';
import { expect, test } from 'vitest';
import { SQLITE_FILE_NAME } from '../../src/core/storage/index.js';
import { makeJpeg } from '../fixtures/images/make.js';
import type { TestCore } from '../support/core.js';
import { servePerTest } from '../support/serve.js';
import { apiKeyFor, redeem, signedIn } from './accounts.js';
import { BOUNDARY } from './corpus.js';
import { analyze, call, count } from './http.js';
import { readLedger } from './ledger.js';

const BURST = 64;
/** Within what one caller may hold at once (three quarters of the 68 upload slots), so every upload is metered. */
const ONE_CALLER = 48;
const serve = servePerTest();
const ledger = (t: TestCore) => readLedger(path.join(t.dataDir, SQLITE_FILE_NAME), t.config.imagesDir);

test(`${ONE_CALLER} uploads at once with one API key: exactly the 10 free scans plus the pack's 5, the rest 429`, async () => {
  const { t, app, url } = await serve();
  const cookie = await signedIn(app);
  await redeem(app, cookie, t.issueCode({ kind: 'pack', scans: 5 }));
  const key = await apiKeyFor(app, cookie);
  const image = await makeJpeg({ width: 320, height: 256 });

  const answers = await Promise.all(Array.from({ length: ONE_CALLER }, () => analyze(url, image, { 'x-api-key': key })));

  expect(count(answers)).toEqual({ 200: 15, 429: ONE_CALLER - 15 });
  for (const refused of answers.filter((a) => a.status === 429)) {
    expect(refused.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
  }
  const account = (await call(url, 'GET', '/api/v1/account', { headers: { cookie } })).body.data;
  expect(account.allowance).toMatchObject({ used: 10, remaining: 0 });
  expect(account.packCredit).toBe(0);
  expect(await ledger(t)).toMatchObject({ integrity: 'ok', scans: 15, charged: 15, reservations: 0, orphanFiles: [] });
});

test(`${ONE_CALLER} anonymous uploads at once from one address: exactly 3 succeed`, async () => {
  const { t, url } = await serve();
  const image = await makeJpeg({ width: 320, height: 256 });
  const answers = await Promise.all(Array.from({ length: ONE_CALLER }, () => analyze(url, image)));
  expect(count(answers)).toEqual({ 200: 3, 429: ONE_CALLER - 3 });
  expect(await ledger(t)).toMatchObject({ scans: 3, charged: 3, reservations: 0 });
});

test('a burst beyond the queue answers SERVER_BUSY with Retry-After, and only the analysed scans are charged', async () => {
  const { t, app, url } = await serve({ analysisConcurrency: 1, analysisQueueLimit: 3 });
  const cookie = await signedIn(app);
  await redeem(app, cookie, t.issueCode({ kind: 'pro', expiresAt: '2027-12-31T00:00:00Z' }));
  const key = await apiKeyFor(app, cookie);
  const image = await makeJpeg({ width: 320, height: 256 });
  const release = t.analyzer.hold();

  // While the one running analysis is held, the three queue places fill and everyone else is refused at once.
  let settled = 0;
  const requests = Array.from({ length: BURST }, () => analyze(url, image, { 'x-api-key': key }).then((answer) => (settled++, answer)));
  for (let i = 0; i < 4000 && settled < BURST - 4; i++) await new Promise((r) => setTimeout(r, 5));
  expect(settled).toBe(BURST - 4);
  release();
  const answers = await Promise.all(requests);

  expect(count(answers)).toEqual({ 200: 4, 503: BURST - 4 });
  for (const busy of answers.filter((a) => a.status === 503)) {
    expect(busy.body.error.code).toBe('SERVER_BUSY');
    expect(Number(busy.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  }
  expect(await ledger(t)).toMatchObject({ scans: 4, charged: 4, reservations: 0, orphanFiles: [] });
});

test('with every upload slot taken, a new upload is refused before its body is sent; freed slots are usable again', async () => {
  // One running and one waiting analysis, so four uploads may be held at once.
  const { t, app, url } = await serve({ analysisConcurrency: 1, analysisQueueLimit: 1 });
  const key = await apiKeyFor(app, await signedIn(app));
  const image = await makeJpeg({ width: 320, height: 256 });
  const release = t.analyzer.hold();
  const running = analyze(url, image);
  const waiting = analyze(url, image);
  await t.analyzer.started(1);
  const port = Number(new URL(url).port);
  const head = (extra = '') =>
    `POST /api/v1/analyze HTTP/1.1\r\nHost: localhost\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: 9000000\r\n${extra}\r\n`;

  // Two stalled uploads (headers, no body) fill the remaining slots; the next gets no chance to send 9 MB.
  // (One caller holds three of the four slots at most: the second is another caller's, with a key.)
  const stalled = [net.connect(port, '127.0.0.1'), net.connect(port, '127.0.0.1')];
  stalled[0]!.write(head());
  stalled[1]!.write(head(`X-API-Key: ${key}\r\n`));
  await new Promise((r) => setTimeout(r, 100));
  const next = net.connect(port, '127.0.0.1');
  next.write(head());
  let refusal = '';
  for (let i = 0; i < 2000 && !refusal.includes('}'); i++) {
    await new Promise((r) => setTimeout(r, 5));
    refusal += next.read()?.toString() ?? '';
  }
  expect(refusal).toMatch(/^HTTP\/1\.1 503 [\s\S]*retry-after: \d+[\s\S]*"code":"SERVER_BUSY"/i);

  for (const socket of [...stalled, next]) socket.destroy();
  release();
  expect((await running).status).toBe(200);
  expect((await waiting).status).toBe(200);
  expect((await analyze(url, image)).status).toBe(200);
});

test('a POS retrying one Idempotency-Key 16 times at once is analysed and charged once', async () => {
  const { t, app, url } = await serve();
  const key = await apiKeyFor(app, await signedIn(app));
  const image = await makeJpeg({ width: 320, height: 256 });
  const release = t.analyzer.hold();
  const first = analyze(url, image, { 'x-api-key': key, 'idempotency-key': 'pos-order-42' });
  await t.analyzer.started(1);

  // While the first runs, every retry is told to come back (409), none starts a second analysis.
  const retries = await Promise.all(Array.from({ length: 15 }, () => analyze(url, image, { 'x-api-key': key, 'idempotency-key': 'pos-order-42' })));
  expect(count(retries)).toEqual({ 409: 15 });
  release();
  const scanId = (await first).body.data.scanId;

  const later = await Promise.all(Array.from({ length: 16 }, () => analyze(url, image, { 'x-api-key': key, 'idempotency-key': 'pos-order-42' })));
  expect(later.every((a) => a.status === 200 && a.body.data.scanId === scanId)).toBe(true);
  expect(t.analyzer.calls).toBe(1);
  expect(await ledger(t)).toMatchObject({ scans: 1, charged: 1, reservations: 0 });
});

test('one pack code redeemed 16 times at once by one account and by four accounts credits 100 scans once', async () => {
  const { t, app, url } = await serve();
  const cookies = [await signedIn(app), await signedIn(app), await signedIn(app), await signedIn(app)];
  const code = t.issueCode({ kind: 'pack', scans: 100 });

  const sameAccount = await Promise.all(
    Array.from({ length: 16 }, () => call(url, 'POST', '/api/v1/licenses', { headers: { cookie: cookies[0]! }, json: { code } })),
  );
  expect(count(sameAccount)).toEqual({ 200: 1, 409: 15 });

  const other = t.issueCode({ kind: 'pack', scans: 100 });
  const manyAccounts = await Promise.all(
    Array.from({ length: 16 }, (_, i) => call(url, 'POST', '/api/v1/licenses', { headers: { cookie: cookies[i % 4]! }, json: { code: other } })),
  );
  expect(count(manyAccounts)).toEqual({ 200: 1, 409: 15 });
  expect(manyAccounts.filter((a) => a.status === 409).every((a) => a.body.error.code === 'LICENSE_ALREADY_REDEEMED')).toBe(true);

  const credits = await Promise.all(cookies.map(async (cookie) => (await call(url, 'GET', '/api/v1/account', { headers: { cookie } })).body.data.packCredit));
  expect(credits.reduce((a, b) => a + b, 0)).toBe(200);
});
