/**
 * GET /api/v1/scans/:scanId/overlays (issue 42, item 5): a stored scan's overlays and points, made
 * again from its stored photo by the models in use, in the shape analyze's verbose=1 gives them.
 * Who may is as for GET /scans/:scanId; nothing is stored or charged; a photo gone is 404, one the
 * models in use refuse is their own 422; a caller may ask OVERLAYS_PER_MINUTE times a minute.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { OVERLAYS_PER_MINUTE } from '../../src/core/services/scans.js';
import { makeJpeg, makePng, truncate } from '../fixtures/images/make.js';
import { createKey, expectError, httpTest, imageForm, signIn, type HttpTest } from './helpers.js';

let t: HttpTest;
let owner: { cookie: string };
let photo: Buffer;

/** Analyses `image` as `headers`' caller (verbose when asked); returns the answer's data. */
async function analyze(headers: Record<string, string>, image: Buffer, fields: Record<string, string> = {}) {
  const upload = imageForm(image, fields);
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/analyze', payload: upload.payload, headers: { ...upload.headers, ...headers } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as { scanId: string; result: { overlays?: Record<string, string>; points?: unknown[]; modelVersion: string } };
}

const overlaysOf = (scanId: string, headers: Record<string, string> = {}) => t.app.inject({ url: `/api/v1/scans/${scanId}/overlays`, headers });

beforeAll(async () => {
  t = await httpTest();
  owner = { cookie: (await signIn(t.app)).cookie };
  await t.app.inject({ method: 'POST', url: '/api/v1/licenses', headers: owner, payload: { code: t.issueCode({ kind: 'pack', scans: 100 }) } });
  photo = await makePng({ width: 300, height: 260 });
});
afterAll(() => t.cleanup());
afterEach(() => {
  t.analyzer.setScene('tread');
  t.analyzer.succeed();
  // each test starts with a fresh minute: the limit is the limit test's business
  t.clock.advance(61_000);
});

describe('GET /scans/:scanId/overlays', () => {
  it("answers analyze's verbose extras for a stored scan, made again from its photo: free, nothing stored", async () => {
    const verbose = await analyze(owner, photo, { verbose: '1' });
    const plain = await analyze(owner, photo);
    expect(plain.result.overlays).toBeUndefined();
    const account = async () => (await t.app.inject({ url: '/api/v1/account', headers: owner })).json().data;
    const count = async () => (await t.app.inject({ url: '/api/v1/scans?limit=100', headers: owner })).json().data.items.length as number;
    const [before, scansBefore, callsBefore] = [await account(), await count(), t.analyzer.calls];

    const res = await overlaysOf(plain.scanId, owner);
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data as { overlays: Record<string, string>; points: unknown[] };
    // the same names and points as verbose=1 on analyze of the same photo
    expect(Object.keys(data).sort()).toEqual(['overlays', 'points']);
    expect(Object.keys(data.overlays).sort()).toEqual(['depthHeatmap', 'mask']);
    for (const url of Object.values(data.overlays)) expect(url).toMatch(/^data:image\/png;base64,/);
    expect(data.overlays).toEqual(verbose.result.overlays);
    expect(data.points).toEqual(verbose.result.points);
    expect(data.points.length).toBeGreaterThan(0);
    // the analyzer read the stored photo again; no allowance header, nothing charged, no scan added
    expect(t.analyzer.calls).toBe(callsBefore + 1);
    expect(Object.keys(res.headers).filter((h) => h.startsWith('x-ratelimit'))).toEqual([]);
    expect(await account()).toEqual(before);
    expect(await count()).toBe(scansBefore);
    // the scan itself is as it was
    const scan = (await t.app.inject({ url: `/api/v1/scans/${plain.scanId}`, headers: owner })).json().data;
    expect(scan.result).toEqual(plain.result);
    expect(scan.result.overlays).toBeUndefined();
  });

  it('follows the owner rules of GET /scans/:scanId', async () => {
    const { scanId } = await analyze(owner, photo);
    const key = await createKey(t.app, owner.cookie);
    expect((await overlaysOf(scanId, { 'x-api-key': key })).statusCode).toBe(200);
    const signedOut = await overlaysOf(scanId);
    expect(expectError(signedOut, 401, 'INVALID_SESSION')).toMatch(/sign in/i);
    expectError(await overlaysOf(scanId, { cookie: (await signIn(t.app)).cookie }), 403, 'FORBIDDEN');
    expectError(await overlaysOf(scanId, { 'x-api-key': 'tw_nope' }), 401, 'INVALID_API_KEY');
    // an anonymous scan: whoever holds its id
    const walkIn = await analyze({}, photo);
    expect((await overlaysOf(walkIn.scanId)).statusCode).toBe(200);
    // unknown, malformed, deleted
    expectError(await overlaysOf('no-such-scan', owner), 404, 'NOT_FOUND');
    expectError(await overlaysOf('bad%20id!', owner), 404, 'NOT_FOUND');
    const calls = t.analyzer.calls;
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/scans/${scanId}`, headers: owner })).statusCode).toBe(200);
    expectError(await overlaysOf(scanId, owner), 404, 'NOT_FOUND');
    // none of the refusals ran the models
    expect(t.analyzer.calls).toBe(calls);
  });

  it('is 404 when the photo is gone (removed by retention, or by hand), naming the photo', async () => {
    const { scanId } = await analyze(owner, photo);
    const stored = (await t.core.store.scans.get(scanId))!;
    await t.core.images.delete(stored.image.originalKey);
    const message = expectError(await overlaysOf(scanId, owner), 404, 'NOT_FOUND');
    expect(message).toMatch(/photo of this scan is no longer stored/);
    // the scan itself is still there
    expect((await t.app.inject({ url: `/api/v1/scans/${scanId}`, headers: owner })).statusCode).toBe(200);
  });

  it("is the analyzer's own 422 when the models in use cannot read the stored photo, saying so", async () => {
    const { scanId, result } = await analyze(owner, photo);
    for (const scene of ['no_tire', 'tread_not_visible'] as const) {
      t.analyzer.setScene(scene);
      const res = await overlaysOf(scanId, owner);
      const message = expectError(res, 422, scene === 'no_tire' ? 'NO_TIRE_DETECTED' : 'TREAD_NOT_VISIBLE');
      expect(message).toContain(`The current model version (${t.analyzer.modelVersion}) cannot read this stored photo`);
      expect(message).toContain(`model ${result.modelVersion}`);
    }
    t.analyzer.setScene('tread');
    // the scan's stored result is untouched by the refusal
    expect((await t.app.inject({ url: `/api/v1/scans/${scanId}`, headers: owner })).json().data.result).toEqual(result);
  });

  it('is 503 MODEL_UNAVAILABLE when the models cannot be loaded, and 422 IMAGE_UNREADABLE for a stored file that no longer decodes', async () => {
    const { scanId } = await analyze(owner, photo);
    t.analyzer.fail(() => new AppError('MODEL_UNAVAILABLE', 'The tread models could not be loaded.'));
    expectError(await overlaysOf(scanId, owner), 503, 'MODEL_UNAVAILABLE');
    t.analyzer.succeed();
    const stored = (await t.core.store.scans.get(scanId))!;
    await t.core.images.put(stored.image.originalKey, Buffer.from('no longer a photo'.repeat(40)));
    expect(expectError(await overlaysOf(scanId, owner), 422, 'IMAGE_UNREADABLE')).toMatch(/stored photo of this scan cannot be read/);
    await t.core.images.put(stored.image.originalKey, truncate(await makeJpeg({ width: 320, height: 256 })));
    expectError(await overlaysOf(scanId, owner), 422, 'IMAGE_UNREADABLE');
  });

  it(`allows ${OVERLAYS_PER_MINUTE} a minute per caller, then 429 TOO_MANY_ATTEMPTS with Retry-After; its own count, not the capture check's`, async () => {
    const { scanId } = await analyze(owner, photo);
    const key = await createKey(t.app, owner.cookie);
    for (let i = 0; i < OVERLAYS_PER_MINUTE; i++) {
      // the account's session and key share one count
      const res = await overlaysOf(scanId, i % 2 === 0 ? owner : { 'x-api-key': key });
      expect(res.statusCode, `request ${i + 1}`).toBe(200);
    }
    const calls = t.analyzer.calls;
    const limited = await overlaysOf(scanId, owner);
    expect(expectError(limited, 429, 'TOO_MANY_ATTEMPTS')).toMatch(new RegExp(`at most ${OVERLAYS_PER_MINUTE} a minute`));
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(t.analyzer.calls).toBe(calls);
    // the capture check keeps its own count, and another caller its own
    const check = imageForm(await makeJpeg({ width: 320, height: 256 }));
    expect(
      (await t.app.inject({ method: 'POST', url: '/api/v1/analyze/check', payload: check.payload, headers: { ...check.headers, ...owner } })).statusCode,
    ).toBe(200);
    const walkIn = await analyze({}, photo);
    expect((await overlaysOf(walkIn.scanId)).statusCode).toBe(200);
    // a minute later the account may again
    t.clock.advance(60_000);
    expect((await overlaysOf(scanId, owner)).statusCode).toBe(200);
  });
});
