/** PUT /api/v1/sync/scans/:scanId, the hub's upsert, driven directly as a desktop would. */
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/services/support/ids.js';
import { toSyncScan } from '../../src/core/sync/wire.js';
import { makeJpeg } from '../fixtures/images/make.js';
import { createKey, expectError, form, signIn } from '../http/helpers.js';
import { freshSchema, TEST_DATABASE_URL } from '../hub/pg.js';
import { makeScan, randomId } from '../support/store.js';
import { hubAccount, removeNode, startNode, type Node } from './nodes.js';

let hub: Node;
let key: string;
let jpeg: Buffer;
beforeAll(async () => {
  hub = await startNode();
  ({ key } = await hubAccount(hub));
  jpeg = await makeJpeg({ width: 320, height: 256 });
});
afterAll(() => removeNode(hub));

function wire(overrides: Parameters<typeof makeScan>[0] = {}) {
  const scan = makeScan({ id: randomId(), source: 'session', ...overrides });
  return toSyncScan({ ...scan, image: { ...scan.image, sha256: sha256Hex(jpeg), bytes: jpeg.length } });
}

function put(scan: ReturnType<typeof wire>, options: { image?: Buffer; apiKey?: string; cookie?: string; path?: string; on?: Node } = {}) {
  const body = form([{ name: 'scan', value: JSON.stringify(scan) }, ...(options.image ? [{ name: 'image', data: options.image }] : [])]);
  const auth: Record<string, string> = options.cookie ? { cookie: options.cookie } : { 'x-api-key': options.apiKey ?? key };
  return (options.on ?? hub).app.inject({
    method: 'PUT',
    url: `/api/v1/sync/scans/${options.path ?? scan.scanId}`,
    payload: body.payload,
    headers: { ...body.headers, ...auth },
  });
}

it('stores a new scan with its image once, however often it is sent', async () => {
  const scan = wire({ vehicle: 'VW Golf', position: 'FL' });
  const first = await put(scan, { image: jpeg });
  expect(first.statusCode).toBe(200);
  expect(first.json().data).toMatchObject({ scanId: scan.scanId, vehicle: 'VW Golf', position: 'FL' });
  expect((await put(scan, { image: jpeg })).statusCode).toBe(200);
  expect((await put(scan)).statusCode).toBe(200);
  const list = await hub.app.inject({ method: 'GET', url: '/api/v1/sync/scans', headers: { 'x-api-key': key } });
  expect(list.json().data.items.filter((s: { scanId: string }) => s.scanId === scan.scanId)).toHaveLength(1);
  const thumb = await hub.app.inject({
    method: 'GET',
    url: `/api/v1/scans/${scan.scanId}/image?variant=thumbnail`,
    headers: { 'x-api-key': key },
  });
  expect(thumb.headers['content-type']).toBe('image/jpeg');
});

it('asks for the image (409) the first time a live scan comes without it', async () => {
  expectError(await put(wire()), 409, 'CONFLICT');
});

it('keeps the tombstone of a scan it never saw, without an image', async () => {
  const scan = wire({ deletedAt: new Date('2026-11-21T13:00:00Z') });
  expect((await put(scan)).statusCode).toBe(200);
  expectError(await hub.app.inject({ method: 'GET', url: `/api/v1/scans/${scan.scanId}`, headers: { 'x-api-key': key } }), 404, 'NOT_FOUND');
});

it('refuses what it cannot trust', async () => {
  const scan = wire();
  expect(expectError(await put(scan, { image: await makeJpeg({ width: 320, height: 256, shade: 30 }) }), 400, 'VALIDATION_ERROR')).toMatch(/sha256/);
  expectError(await put(scan, { image: jpeg, path: randomId() }), 400, 'VALIDATION_ERROR');
  expectError(await put({ ...scan, measurementMm: -1 }, { image: jpeg }), 400, 'VALIDATION_ERROR');
  // The hash is checked before any decoding: foreign bytes never reach the decoder ...
  const garbage = Buffer.from('not an image');
  expect(expectError(await put(scan, { image: garbage }), 400, 'VALIDATION_ERROR')).toMatch(/sha256/);
  // ... and bytes that match their hash but are no image are refused as such.
  const described = { ...scan, image: { ...scan.image, sha256: sha256Hex(garbage), bytes: garbage.length } };
  const notAnImage = await put(described, { image: garbage });
  expectError(notAnImage, 415, 'UNSUPPORTED_MEDIA_TYPE');
  // Refusals of the scan itself are marked, so the desktop skips that scan instead of retrying it.
  expect(notAnImage.headers['x-tirewear-scan-refused']).toBe('1');
  expect((await put(scan, { image: garbage })).headers['x-tirewear-scan-refused']).toBe('1');
  expect((await put({ ...scan, measurementMm: -1 }, { image: jpeg })).headers['x-tirewear-scan-refused']).toBe('1');

  const { cookie } = await signIn(hub.app);
  expectError(await put(scan, { image: jpeg, cookie }), 403, 'FORBIDDEN');

  const json = await hub.app.inject({
    method: 'PUT',
    url: `/api/v1/sync/scans/${scan.scanId}`,
    payload: { scan },
    headers: { 'x-api-key': key },
  });
  expectError(json, 400, 'VALIDATION_ERROR');
  // ... but not a request that is wrong as a whole.
  expect(json.headers['x-tirewear-scan-refused']).toBeUndefined();
  expect((await put(wire())).headers['x-tirewear-scan-refused']).toBeUndefined();
});

it('takes gauge readings up to 30 mm, the bound of PUT /measurement and PATCH, and refuses 35 mm in the error envelope (docs/API.md §9, item 9)', async () => {
  const measured = { measurementMm: 35, measuredAt: new Date('2026-11-20T10:00:00Z') };
  const refused = await put(wire(measured), { image: jpeg });
  expect(expectError(refused, 400, 'VALIDATION_ERROR')).toMatch(/^scan\.measurementMm/);
  // about the scan itself: the desk skips it rather than retrying
  expect(refused.headers['x-tirewear-scan-refused']).toBe('1');
  const taken = await put(wire({ ...measured, measurementMm: 30 }), { image: jpeg });
  expect(taken.statusCode).toBe(200);
  expect(taken.json().data.measurementMm).toBe(30);
});

it('files images under its own names whatever the wire names, and refuses a vehicle with control characters', async () => {
  const hostile = wire({ deletedAt: new Date('2026-11-21T13:00:00Z') });
  const named = { ...hostile, image: { ...hostile.image, originalKey: 'scans/ab/victim.jpg', thumbnailKey: 'scans/ab/victim.thumb.jpg' } };
  expect((await put(named as never)).statusCode).toBe(200);
  const stored = (await hub.server.core.store.scans.get(hostile.scanId))!;
  expect(stored.image.originalKey).not.toContain('victim');
  expect(stored.image.thumbnailKey).not.toContain('victim');

  const live = wire({ vehicle: 'AB\u0000-123' });
  const refused = await put(live, { image: jpeg });
  expect(expectError(refused, 400, 'VALIDATION_ERROR')).toMatch(/vehicle must not contain control characters/);
  expect(refused.headers['x-tirewear-scan-refused']).toBe('1');
});

it('refuses a scan id that belongs to another hub account', async () => {
  const scan = wire();
  expect((await put(scan, { image: jpeg })).statusCode).toBe(200);
  const other = await hubAccount(hub);
  expectError(await put(scan, { image: jpeg, apiKey: other.key }), 403, 'FORBIDDEN');
});

/** Where the hub keeps its data: SQLite always, PostgreSQL too when a test database is configured. */
const HUB_STORES: Array<[string, boolean]> = [['SQLite', false], ...(TEST_DATABASE_URL ? [['PostgreSQL', true] as [string, boolean]] : [])];

describe.each(HUB_STORES)('another shop of the same account (%s)', (_name, postgres) => {
  it("refuses a scan id another shop (key) of the account pushed first, until that shop's key is revoked", async () => {
    const schema = postgres ? await freshSchema() : null;
    const on = schema ? await startNode({ config: { databaseUrl: schema.url } }) : hub;
    try {
      const { cookie: office } = await signIn(on.app);
      const main = await createKey(on.app, office, 'Main Street');
      const elm = await createKey(on.app, office, 'Elm Road');
      const scan = wire();
      expect((await put(scan, { image: jpeg, apiKey: main, on })).statusCode).toBe(200);

      const edit = { ...scan, measurementMm: 9.9, measuredAt: new Date('2026-11-21T15:00:00Z').toISOString() };
      const refused = await put(edit, { apiKey: elm, on });
      expect(expectError(refused, 403, 'FORBIDDEN')).toMatch(/another shop of this hub account \("Main Street"\)/);
      expect(refused.headers['x-tirewear-scan-refused']).toBe('1');
      const deletion = { ...scan, deletedAt: new Date('2026-11-21T15:00:00Z').toISOString() };
      expectError(await put(deletion, { apiKey: elm, on }), 403, 'FORBIDDEN');
      const stored = await on.app.inject({ method: 'GET', url: `/api/v1/scans/${scan.scanId}`, headers: { 'x-api-key': main } });
      expect(stored.json().data).toMatchObject({ scanId: scan.scanId, measurementMm: null });

      // A shop that replaced its key: once the first key is revoked, the new one carries on.
      const keys = (await on.app.inject({ method: 'GET', url: '/api/v1/keys', headers: { cookie: office } })).json().data.items;
      const mainId = (keys as Array<{ id: string; name: string }>).find((k) => k.name === 'Main Street')!.id;
      expect((await on.app.inject({ method: 'DELETE', url: `/api/v1/keys/${mainId}`, headers: { cookie: office } })).statusCode).toBe(200);
      const carried = await put(edit, { apiKey: elm, on });
      expect(carried.statusCode).toBe(200);
      expect(carried.json().data).toMatchObject({ measurementMm: 9.9 });
    } finally {
      if (schema) {
        await removeNode(on);
        await schema.drop();
      }
    }
  });
});

it('pushes held at once are bounded as analyze uploads are: past the bound SERVER_BUSY, before the body is read', async () => {
  const small = await startNode({ config: { analysisConcurrency: 1, analysisQueueLimit: 1 } }); // 4 uploads at once
  try {
    const { key: smallKey } = await hubAccount(small);
    const { key: otherShop } = await hubAccount(small);
    // four pushes whose bodies never finish, each holding its slot (one shop holds three of the four at most)
    const bodies = Array.from({ length: 4 }, () => new PassThrough());
    const held = bodies.map((body, i) => {
      body.write('--x\r\nContent-Disposition: form-data; name="scan"\r\n\r\n{');
      return small.app.inject({
        method: 'PUT',
        url: `/api/v1/sync/scans/${randomId()}`,
        payload: body,
        headers: { 'x-api-key': i === 3 ? otherShop : smallKey, 'content-type': 'multipart/form-data; boundary=x' },
      });
    });
    // once the server has taken them in (their key checked: milliseconds; a second is plenty), a fifth is refused
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const busy = await put(wire(), { image: jpeg, apiKey: smallKey, on: small });
    expect(expectError(busy, 503, 'SERVER_BUSY')).toMatch(/busy/);
    expect(Number(busy.headers['retry-after'])).toBeGreaterThan(0);
    for (const body of bodies) body.end('"}\r\n--x--\r\n'); // they end (and are refused: not a scan)
    expect((await Promise.all(held)).map((answer) => answer.statusCode)).toEqual([400, 400, 400, 400]);
    // once they are gone, pushes are taken again
    expect((await put(wire(), { image: jpeg, apiKey: smallKey, on: small })).statusCode).toBe(200);
  } finally {
    await removeNode(small);
  }
});

it('GET /sync/scans takes its documented template sent blank (apiKeyId=&cursor=&limit=) as no filter', async () => {
  const { cookie } = await hubAccount(hub);
  const blank = await hub.app.inject({ url: '/api/v1/sync/scans?apiKeyId=&cursor=&limit=', headers: { cookie } });
  expect(blank.statusCode).toBe(200);
  expect(blank.json().data).toEqual((await hub.app.inject({ url: '/api/v1/sync/scans', headers: { cookie } })).json().data);
});

it("keeps why a desk's result was preliminary, and refuses a reason of no list (docs/API.md §2 preliminaryReasons)", async () => {
  const scan = wire();
  const reasons = ['models_disagree', 'unlike_shop_photos'] as const;
  const kept = { ...scan, result: { ...scan.result, isPreliminary: true, preliminaryReasons: [...reasons] } };
  expect((await put(kept, { image: jpeg })).statusCode).toBe(200);
  const read = await hub.app.inject({ method: 'GET', url: `/api/v1/scans/${scan.scanId}`, headers: { 'x-api-key': key } });
  expect(read.json().data.result.preliminaryReasons).toEqual(reasons);
  // a desk of an earlier version sends none
  expect((await put(wire(), { image: jpeg })).statusCode).toBe(200);
  for (const bad of [['bald'], [7], 'models_disagree', ['models_disagree', 'models_disagree', 'models_disagree', 'models_disagree', 'models_disagree']]) {
    const other = wire();
    const refused = await put({ ...other, result: { ...other.result, preliminaryReasons: bad as never } }, { image: jpeg });
    expect(expectError(refused, 400, 'VALIDATION_ERROR')).toMatch(/preliminaryReasons/);
  }
});
