import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeJpeg } from '../fixtures/images/make.js';
import { expectError, httpTest, imageForm, signIn, type HttpTest } from './helpers.js';

let t: HttpTest;
let owner: { cookie: string };
let other: { cookie: string };
const ids: string[] = [];

async function scan(headers: Record<string, string>, fields: Record<string, string> = {}, shade = 100): Promise<string> {
  const upload = imageForm(await makeJpeg({ width: 320, height: 256, shade }), fields);
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/analyze', payload: upload.payload, headers: { ...upload.headers, ...headers } });
  expect(res.statusCode).toBe(200);
  return res.json().data.scanId as string;
}

beforeAll(async () => {
  t = await httpTest();
  owner = await signIn(t.app);
  other = await signIn(t.app);
  ids.push(await scan(owner, { vehicle: 'VW Golf', position: 'FL' }, 60));
  t.clock.advance(60_000);
  ids.push(await scan(owner, { vehicle: 'Ford Transit' }, 120));
  t.clock.advance(60_000);
  ids.push(await scan(owner, { vehicle: 'VW Polo' }, 200));
});
afterAll(() => t.cleanup());

describe('GET /scans', () => {
  it('lists the account scans newest first, with cursor paging', async () => {
    const first = (await t.app.inject({ url: '/api/v1/scans?limit=2', headers: owner })).json().data;
    expect(first.items.map((s: { scanId: string }) => s.scanId)).toEqual([ids[2], ids[1]]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const next = (await t.app.inject({ url: `/api/v1/scans?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`, headers: owner })).json().data;
    expect(next.items.map((s: { scanId: string }) => s.scanId)).toEqual([ids[0]]);
    expect(next.nextCursor).toBeNull();
  });

  it('filters by vehicle and date, and never shows another account its scans', async () => {
    const vw = (await t.app.inject({ url: '/api/v1/scans?vehicle=vw', headers: owner })).json().data.items;
    expect(vw).toHaveLength(2);
    const day = (await t.app.inject({ url: '/api/v1/scans?from=2026-11-21&to=2026-11-21', headers: owner })).json().data.items;
    expect(day).toHaveLength(3);
    const later = (await t.app.inject({ url: '/api/v1/scans?from=2026-11-22', headers: owner })).json().data.items;
    expect(later).toHaveLength(0);
    expect((await t.app.inject({ url: '/api/v1/scans', headers: other })).json().data.items).toEqual([]);
  });

  it('refuses bad filters naming them', async () => {
    expect(expectError(await t.app.inject({ url: '/api/v1/scans?limit=500', headers: owner }), 400, 'VALIDATION_ERROR')).toMatch(/limit/);
    expect(expectError(await t.app.inject({ url: '/api/v1/scans?wear=bald', headers: owner }), 400, 'VALIDATION_ERROR')).toMatch(/wear/);
    expect(expectError(await t.app.inject({ url: '/api/v1/scans?from=yesterday', headers: owner }), 400, 'VALIDATION_ERROR')).toMatch(/from/);
  });
});

describe('one scan', () => {
  it('GET /scans/:scanId gives the stored result and image links', async () => {
    const res = await t.app.inject({ url: `/api/v1/scans/${ids[0]}`, headers: owner });
    expect(res.json().data).toMatchObject({
      scanId: ids[0],
      vehicle: 'VW Golf',
      position: 'FL',
      measurementMm: null,
      image: { width: 320, height: 256, mime: 'image/jpeg', url: `/api/v1/scans/${ids[0]}/image`, thumbnailUrl: `/api/v1/scans/${ids[0]}/image?variant=thumbnail` },
    });
  });

  it('another account gets 403, an unknown id 404', async () => {
    expectError(await t.app.inject({ url: `/api/v1/scans/${ids[0]}`, headers: other }), 403, 'FORBIDDEN');
    expectError(await t.app.inject({ url: `/api/v1/scans/${ids[0]}/image`, headers: other }), 403, 'FORBIDDEN');
    expectError(await t.app.inject({ url: `/api/v1/scans/${ids[0]}` }), 403, 'FORBIDDEN');
    expectError(await t.app.inject({ url: '/api/v1/scans/0123456789abcdef0123456789abcdef', headers: owner }), 404, 'NOT_FOUND');
  });

  it('an anonymous scan is readable by its id alone', async () => {
    const id = await scan({}, {}, 150);
    expect((await t.app.inject({ url: `/api/v1/scans/${id}` })).statusCode).toBe(200);
  });

  it('serves the image and a JPEG thumbnail as bytes', async () => {
    const original = await t.app.inject({ url: `/api/v1/scans/${ids[1]}/image`, headers: owner });
    expect(original.statusCode).toBe(200);
    expect(original.headers['content-type']).toBe('image/jpeg');
    expect((await sharp(original.rawPayload).metadata()).width).toBe(320);
    const thumb = await t.app.inject({ url: `/api/v1/scans/${ids[1]}/image?variant=thumbnail`, headers: owner });
    expect(thumb.headers['content-type']).toBe('image/jpeg');
    expect(thumb.rawPayload.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    expectError(await t.app.inject({ url: `/api/v1/scans/${ids[1]}/image?variant=huge`, headers: owner }), 400, 'VALIDATION_ERROR');
  });

  it('PUT /measurement keeps the gauge reading, null clears it, nonsense is 400', async () => {
    const url = `/api/v1/scans/${ids[1]}/measurement`;
    const put = (payload: unknown) => t.app.inject({ method: 'PUT', url, headers: owner, payload: payload as object });
    const res = await put({ measurementMm: 4.25 });
    expect(res.json().data).toMatchObject({ measurementMm: 4.25, measuredAt: expect.any(String) });
    expect((await put({ measurementMm: null })).json().data.measurementMm).toBeNull();
    expect(expectError(await put({ measurementMm: -1 }), 400, 'VALIDATION_ERROR')).toMatch(/measurementMm/);
    expectError(await put({ measurementMm: 'deep' }), 400, 'VALIDATION_ERROR');
    expectError(await put({}), 400, 'VALIDATION_ERROR');
    expectError(await t.app.inject({ method: 'PUT', url, headers: other, payload: { measurementMm: 3 } }), 403, 'FORBIDDEN');
  });

  it('GET /scans/export is a CSV attachment with estimate and measurement', async () => {
    await t.app.inject({ method: 'PUT', url: `/api/v1/scans/${ids[0]}/measurement`, headers: owner, payload: { measurementMm: 6.5 } });
    const res = await t.app.inject({ url: '/api/v1/scans/export', headers: owner });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="tirewear-scans-2026-11-21\.csv"$/);
    expect(res.body).toContain(ids[0]);
    expect(res.body).toContain('6.5');
    expectError(await t.app.inject({ url: '/api/v1/scans/export' }), 401, 'INVALID_SESSION');
  });

  it('DELETE removes the scan and its image', async () => {
    const id = await scan(owner, {}, 90);
    expectError(await t.app.inject({ method: 'DELETE', url: `/api/v1/scans/${id}`, headers: other }), 403, 'FORBIDDEN');
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/scans/${id}`, headers: owner })).json()).toEqual({ success: true, data: {} });
    expectError(await t.app.inject({ url: `/api/v1/scans/${id}`, headers: owner }), 404, 'NOT_FOUND');
    expectError(await t.app.inject({ url: `/api/v1/scans/${id}/image`, headers: owner }), 404, 'NOT_FOUND');
  });
});
