/** PUT /api/v1/sync/scans/:scanId, the hub's upsert, driven directly as a desktop would. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/services/ids.js';
import { toSyncScan } from '../../src/core/sync/wire.js';
import { makeJpeg } from '../fixtures/images/make.js';
import { expectError, form, signIn } from '../http/helpers.js';
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

function put(scan: ReturnType<typeof wire>, options: { image?: Buffer; apiKey?: string; cookie?: string; path?: string } = {}) {
  const body = form([
    { name: 'scan', value: JSON.stringify(scan) },
    ...(options.image ? [{ name: 'image', data: options.image }] : []),
  ]);
  const auth: Record<string, string> = options.cookie ? { cookie: options.cookie } : { 'x-api-key': options.apiKey ?? key };
  return hub.app.inject({
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
  expectError(
    await hub.app.inject({ method: 'GET', url: `/api/v1/scans/${scan.scanId}`, headers: { 'x-api-key': key } }),
    404,
    'NOT_FOUND',
  );
});

it('refuses what it cannot trust', async () => {
  const scan = wire();
  expect(expectError(await put(scan, { image: await makeJpeg({ width: 320, height: 256, shade: 30 }) }), 400, 'VALIDATION_ERROR')).toMatch(/sha256/);
  expectError(await put(scan, { image: jpeg, path: randomId() }), 400, 'VALIDATION_ERROR');
  expectError(await put({ ...scan, measurementMm: -1 } as never, { image: jpeg }), 400, 'VALIDATION_ERROR');
  // The hash is checked before any decoding: foreign bytes never reach the decoder ...
  const garbage = Buffer.from('not an image');
  expect(expectError(await put(scan, { image: garbage }), 400, 'VALIDATION_ERROR')).toMatch(/sha256/);
  // ... and bytes that match their hash but are no image are refused as such.
  const described = { ...scan, image: { ...scan.image, sha256: sha256Hex(garbage), bytes: garbage.length } };
  expectError(await put(described, { image: garbage }), 415, 'UNSUPPORTED_MEDIA_TYPE');

  const { cookie } = await signIn(hub.app);
  expectError(await put(scan, { image: jpeg, cookie }), 403, 'FORBIDDEN');

  const json = await hub.app.inject({
    method: 'PUT',
    url: `/api/v1/sync/scans/${scan.scanId}`,
    payload: { scan },
    headers: { 'x-api-key': key },
  });
  expectError(json, 400, 'VALIDATION_ERROR');
});

it("refuses a scan id that belongs to another hub account", async () => {
  const scan = wire();
  expect((await put(scan, { image: jpeg })).statusCode).toBe(200);
  const other = await hubAccount(hub);
  expectError(await put(scan, { image: jpeg, apiKey: other.key }), 403, 'FORBIDDEN');
});
